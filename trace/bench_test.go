package trace

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

func benchPatterns(n int) []FailurePattern {
	fams := []string{"go test", "go build", "pytest", "npm test", "npm run build", "cargo test", "mvn test", "make lint", "docker compose up", "alembic upgrade"}
	ps := make([]FailurePattern, 0, n)
	for i := 0; i < n; i++ {
		fam := fams[i%len(fams)]
		p := pattern(fmt.Sprintf("p%04d", i), 1+i%7, []string{fmt.Sprintf("pkg%d", i%13)}, "fix "+fmt.Sprint(i))
		p.Family, p.SkillID = fam, "cmd:"+fam
		ps = append(ps, p)
	}
	return ps
}

// BenchmarkCheck1k measures the pre-execution check against 1000 patterns
// (100 per command family) and reports the 95th percentile of one check.
func BenchmarkCheck1k(b *testing.B) {
	ix := NewPatternIndex(benchPatterns(1000))
	cfg := DefaultCheckConfig()
	q := CheckQuery{Command: "cd api && go test ./pkg3/... -run TestX -count=1", Context: map[string]string{ContextCwd: "/src/api"},
		RecentSignatures: []string{"s:0", "l:p0003"}}
	durs := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		ws, _ := ix.Check(q, SessionWarnings{}, cfg)
		durs = append(durs, time.Since(start))
		if len(ws) == 0 {
			b.Fatal("no warning")
		}
	}
	b.StopTimer()
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	b.ReportMetric(float64(durs[len(durs)*95/100].Nanoseconds()), "p95-ns")
}

func BenchmarkNewPatternIndex1k(b *testing.B) {
	ps := benchPatterns(1000)
	for i := 0; i < b.N; i++ {
		NewPatternIndex(ps)
	}
}

func BenchmarkFingerprint(b *testing.B) {
	items := readLabelled(&testing.T{}, "testdata/errors_dev.jsonl")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		it := items[i%len(items)]
		Fingerprint(it.Error, it.Command)
	}
}

func BenchmarkParseCommand(b *testing.B) {
	for i := 0; i < b.N; i++ {
		_, _ = ParseCommand("cd api && GOFLAGS=-mod=mod timeout 60 go test ./... -run TestX -count=1 2>&1 | tee out.log")
	}
}

func BenchmarkFeed(b *testing.B) {
	st, _ := NewAssemblerState("bench")
	cfg := DefaultAssemblyConfig()
	for i := 0; i < b.N; i++ {
		ev := Event{Kind: EventCommand, Command: "go test ./...", ExitCode: code(i % 2), Output: "--- FAIL: TestX (0.00s)\n    x_test.go:3: boom", Time: at(i)}
		st, _, _ = Feed(st, ev, cfg)
	}
}

// BenchmarkFingerprintLargeOutput: a 64 KiB test log with the failure at
// the end (the size Attempt output is bounded to).
func BenchmarkFingerprintLargeOutput(b *testing.B) {
	var sb strings.Builder
	for sb.Len() < MaxTextLen-400 {
		sb.WriteString("=== RUN   TestSomething/case_with_a_long_name\n--- PASS: TestSomething/case_with_a_long_name (0.00s)\n")
	}
	sb.WriteString("--- FAIL: TestRepo (0.01s)\n    repo_test.go:20: dial tcp 127.0.0.1:5432: connect: connection refused\nFAIL\n")
	out := sb.String()
	b.SetBytes(int64(len(out)))
	for i := 0; i < b.N; i++ {
		Fingerprint(out, "go test ./...")
	}
}
