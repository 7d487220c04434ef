package experience

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func ruleConv(lines ...string) []Turn {
	roles := map[byte]Role{'u': RoleUser, 'a': RoleAssistant, 't': RoleTool, 's': RoleSystem}
	out := make([]Turn, len(lines))
	for i, l := range lines {
		out[i] = Turn{ID: fmt.Sprintf("turn-%d", i+1), Project: "p", TaskID: "bd-1", Role: roles[l[0]], Content: l[2:]}
	}
	return out
}

func ruleTypes(hits []RuleHit) []SignalType {
	out := []SignalType{}
	for _, h := range hits {
		out = append(out, h.Type)
	}
	return out
}

func TestExtractSignalsByRules(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	turns := ruleConv(
		"u:Fix the flaky upload test.",
		"a:I added a 100ms sleep, it should pass now.",
		"t:--- FAIL: TestUpload (0.20s)\n    upload_test.go:31: timeout\nFAIL",
		"a:I made a mistake: the sleep is in the wrong goroutine.",
		"u:No, use a fake clock instead.",
		"u:Works now, thanks!",
	)
	turns[4].TurnID = "client-5"
	got := ExtractSignalsByRules(turns, now)
	type row struct {
		typ  SignalType
		src  SignalSource
		turn string
		conf float64
		evid string
	}
	want := []row{
		{SignalReject, SourceExecution, "turn-3", 0.75, "--- FAIL: TestUpload (0.20s)"},
		{SignalCorrection, SourceSelfCheck, "turn-4", 0.8, "I made a mistake: the sleep is in the wrong goroutine."},
		{SignalCorrection, SourceUser, "client-5", 0.8, "No, use a fake clock instead."},
		{SignalPreference, SourceUser, "client-5", 0.7, "No, use a fake clock instead."},
		{SignalSuccess, SourceUser, "turn-6", 0.85, "Works now, thanks!"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d signals, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Type != w.typ || g.Source != w.src || g.TurnID != w.turn || g.Confidence != w.conf || g.Evidence != w.evid {
			t.Errorf("signal %d = {%s %s %s %v %q}, want %+v", i, g.Type, g.Source, g.TurnID, g.Confidence, g.Evidence, w)
		}
		if g.ID != "" || g.Extractor != ExtractorRules || g.TaskID != "bd-1" || g.Project != "p" || !g.CreatedAt.Equal(now) {
			t.Errorf("signal %d metadata = %+v", i, g)
		}
	}
	if got := ExtractSignalsByRules(nil, now); got == nil || len(got) != 0 {
		t.Errorf("no turns: %v, want empty non-nil", got)
	}
}

func TestExtractSignalsByRulesEvidenceCut(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("错", 150) + "。不对，应该用配置文件里的端口" + strings.Repeat("而不是写死的端口号", 30)
	got := ExtractSignalsByRules(ruleConv("u:改端口", "a:改好了", "u:"+long), time.Time{})
	if len(got) == 0 {
		t.Fatal("no signal")
	}
	for _, s := range got {
		if n := utf8.RuneCountInString(s.Evidence); n > 200 || !utf8.ValidString(s.Evidence) {
			t.Errorf("evidence has %d runes (valid %v)", n, utf8.ValidString(s.Evidence))
		}
		if !strings.HasPrefix(s.Evidence, "不对，应该用配置文件里的端口") {
			t.Errorf("evidence %q does not start at the triggering sentence", s.Evidence)
		}
	}
}

func TestClassifyTurnCases(t *testing.T) {
	t.Parallel()
	base := []string{"u:Add retry logic to the client.", "a:I added retries for every request."}
	zh := []string{"u:给客户端加重试", "a:我给所有请求都加了重试"}
	cases := []struct {
		name  string
		prev  []string
		last  string
		want  []SignalType
		rules []string
	}{
		{"no problem is not a reject", base, "u:No problem, take your time.", []SignalType{}, nil},
		{"不错 is not 不对", zh, "u:不错", []SignalType{SignalSuccess}, []string{"success.approval"}},
		{"bare 不对 rejects", zh, "u:不对", []SignalType{SignalReject}, []string{"reject.negation"}},
		{"不对 with the fix corrects", zh, "u:不对，只有 5xx 才需要重试", []SignalType{SignalCorrection}, []string{"correction.negation_with_fix"}},
		{"thanks but still fails", base, "u:Thanks, but it still fails.", []SignalType{SignalCorrection}, []string{"correction.still_failing"}},
		{"还是报错", zh, "u:谢谢，但是还是报错", []SignalType{SignalCorrection}, []string{"correction.still_failing"}},
		{"still don't understand is confusion", base, "u:I still don't understand why.", []SignalType{SignalConfusion}, []string{"confusion.explicit"}},
		{"also add tests is a constraint", base, "u:Can you also add tests?", []SignalType{SignalConstraint}, []string{"constraint.added"}},
		{"plain question is nothing", base, "u:Could you run the tests again?", []SignalType{}, nil},
		{"success inside a question", zh, "u:可以了吗？", []SignalType{}, nil},
		{"no, use X instead", base, "u:No, use a circuit breaker instead.", []SignalType{SignalCorrection, SignalPreference}, []string{"correction.negation_with_fix", "preference.substitution"}},
		{"不要用X，用Y", zh, "u:不要用 time.Sleep，用 backoff 库", []SignalType{SignalCorrection, SignalPreference}, []string{"correction.substitution", "preference.substitution"}},
		{"don't touch", base, "u:Don't touch the public API.", []SignalType{SignalConstraint}, []string{"constraint.explicit"}},
		{"不要改", zh, "u:不要改配置文件", []SignalType{SignalConstraint}, []string{"constraint.rule"}},
		{"以后都用", zh, "u:以后都用 pnpm", []SignalType{SignalPreference}, []string{"preference.explicit"}},
		{"why did you", base, "u:Why did you retry on 4xx?", []SignalType{SignalConfusion}, []string{"confusion.why"}},
		{"no to a question is an answer", []string{"u:Clean up.", "a:Should I delete the old files?"}, "u:No.", []SignalType{}, nil},
		{"first turn is a goal", nil, "u:Revert the last commit.", []SignalType{}, nil},
		{"first turn may hold a constraint", nil, "u:Add caching, but you must not add dependencies.", []SignalType{SignalConstraint}, []string{"constraint.explicit"}},
		{"restated goal", []string{"u:Export the monthly report as CSV.", "a:I built a PDF export."}, "u:I need the monthly report exported as CSV.", []SignalType{SignalReject}, []string{"reject.restated_goal"}},
		{"repeated question", []string{"u:Where is the retry count configured?", "a:Retries live in the client wrapper."}, "u:So where is the retry count configured?", []SignalType{SignalConfusion}, []string{"confusion.repeated_question"}},
		{"tool failure", base, "t:panic: runtime error: invalid memory address", []SignalType{SignalReject}, []string{"execution.failure"}},
		{"tool zero failures", base, "t:Ran 12 tests, 0 failed\nok", []SignalType{SignalSuccess}, []string{"execution.pass"}},
		{"tool listing", base, "t:a.go\nb.go", []SignalType{}, nil},
		{"assistant plain report", base, "a:I fixed the bug you reported and all tests pass.", []SignalType{}, nil},
		{"assistant self check", base, "a:Oops, my previous change broke the build.", []SignalType{SignalCorrection}, []string{"self_check.mistake"}},
		{"system turn", base, "s:You are a helpful assistant. That's wrong.", []SignalType{}, nil},
		{"empty", base, "u:   ", []SignalType{}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			all := ruleConv(append(slices.Clone(c.prev), c.last)...)
			hits := ClassifyTurn(all[:len(all)-1], all[len(all)-1])
			if got := ruleTypes(hits); !slices.Equal(got, c.want) {
				t.Fatalf("types = %v (%+v), want %v", got, hits, c.want)
			}
			for i, r := range c.rules {
				if hits[i].Rule != r {
					t.Errorf("hit %d rule = %q, want %q", i, hits[i].Rule, r)
				}
			}
		})
	}
}

func FuzzClassifyTurn(f *testing.F) {
	for _, s := range []string{"不对，应该用 X", "still failing", "no, use X instead", "可以了", "--- FAIL\n./a.go:1:2: x",
		"为什么？", "\xff\xfe", "", "错了错了错了", "no", "停", "ok \t", "use, not", "别用用用"} {
		f.Add("u", s, "我先改一下")
		f.Add("t", s, "")
		f.Add("a", s, "?")
	}
	f.Fuzz(func(t *testing.T, role, content, prevContent string) {
		r := map[string]Role{"u": RoleUser, "t": RoleTool, "a": RoleAssistant}[role]
		if r == "" {
			r = RoleUser
		}
		prev := []Turn{{Role: RoleUser, Content: prevContent}, {Role: RoleAssistant, Content: prevContent}}
		hits := ClassifyTurn(prev, Turn{Role: r, Content: content})
		seen := map[SignalType]bool{}
		for _, h := range hits {
			if h.Confidence < MinSignalConfidence || h.Confidence > 1 {
				t.Fatalf("confidence %v out of [0.5,1]: %+v", h.Confidence, h)
			}
			if seen[h.Type] || h.Rule == "" {
				t.Fatalf("duplicate type or empty rule: %+v", hits)
			}
			seen[h.Type] = true
		}
		for _, s := range ExtractSignalsByRules(append(prev, Turn{Role: r, Content: content}), time.Time{}) {
			if utf8.RuneCountInString(s.Evidence) > 200 || !utf8.ValidString(s.Evidence) && utf8.ValidString(content) {
				t.Fatalf("bad evidence %q", s.Evidence)
			}
		}
	})
}

func BenchmarkExtractSignalsByRules(b *testing.B) {
	script := []string{
		"u:Add retry logic to the upload client, it must not retry on 4xx.",
		"a:I added retries with exponential backoff in client.go.",
		"t:--- FAIL: TestUpload (0.20s)\n    upload_test.go:31: got 3 attempts, want 1\nFAIL",
		"a:I made a mistake: the status check is inverted. Fixing it.",
		"u:还是报错，为什么 4xx 也重试了？",
		"a:修好了，现在只对 5xx 重试。",
		"t:ok  \tgithub.com/acme/upload\t0.31s",
		"u:可以了，谢谢。以后都用 table-driven tests。",
	}
	var lines []string
	for len(lines) < 200 {
		lines = append(lines, script...)
	}
	turns := ruleConv(lines[:200]...)
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		ExtractSignalsByRules(turns, now)
	}
}
