package explore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

func benchTracker(b *testing.B, name string) *Tracker {
	b.Helper()
	return newTracker(b, name, func(bu *Budget) { bu.MaxIterations = 1_000_000; bu.SearchBudget = 1_000_000 })
}

// BenchmarkRecordToolCall: one call against a warm session whose keys have
// been seen (the common case: repeated reads and searches).
func BenchmarkRecordToolCall(b *testing.B) {
	tr := benchTracker(b, "analyst")
	tr.Tick(t0)
	calls := []ToolCall{
		read("explore/tracker.go"),
		{Name: "Grep", Args: map[string]any{"pattern": "func (t \\*Tracker)"}, Output: "explore/tracker.go:120:func (t *Tracker) Tick(now time.Time) {"},
		{Name: "Bash", Args: map[string]any{"command": "go test ./explore/"}},
		{Name: "LS", Args: map[string]any{"path": "explore"}},
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		tr.RecordToolCall(calls[i%len(calls)])
	}
}

// BenchmarkRecordToolCallNewFile: every call reads a file not seen before.
func BenchmarkRecordToolCallNewFile(b *testing.B) {
	tr := benchTracker(b, "analyst")
	tr.Tick(t0)
	calls := make([]ToolCall, 4096)
	for i := range calls {
		calls[i] = read(fmt.Sprintf("pkg/%d/file.go", i))
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%len(calls) == 0 {
			tr.s.Files = KeySet{}
		}
		tr.RecordToolCall(calls[i%len(calls)])
	}
}

// BenchmarkTickNudge: one tool-less round of the loop's bookkeeping: Tick,
// ShouldExit, Nudge, ToolChoice, PhaseContext and EndRound.
func BenchmarkTickNudge(b *testing.B) {
	tr := benchTracker(b, "bootstrap")
	b.ReportAllocs()
	for b.Loop() {
		tr.Tick(t0)
		tr.ShouldExit()
		tr.Nudge()
		tr.ToolChoice()
		tr.PhaseContext()
		tr.EndRound()
	}
}

// BenchmarkRound: a full round with three tool calls.
func BenchmarkRound(b *testing.B) {
	tr := benchTracker(b, "bootstrap")
	calls := []ToolCall{read("a.go"), grep("Tracker"), read("b.go")}
	b.ReportAllocs()
	for b.Loop() {
		tr.Tick(t0)
		tr.ShouldExit()
		tr.Nudge()
		for _, c := range calls {
			tr.RecordToolCall(c)
		}
		tr.EndRound()
	}
}

func BenchmarkOnTextResponse(b *testing.B) {
	tr := benchTracker(b, "analyst")
	tr.s.Phase = "EXPLORE"
	b.ReportAllocs()
	for b.Loop() {
		tr.Tick(t0)
		tr.OnTextResponse("Here is what I think so far.")
	}
}

// BenchmarkSnapshotRestoreJSON: what a hook process pays to load and store a
// session: JSON decode, Restore, Snapshot, JSON encode.
func BenchmarkSnapshotRestoreJSON(b *testing.B) {
	tr := newTracker(b, "bootstrap", nil)
	for i := range 10 {
		round(b, tr, read(fmt.Sprintf("f%d.go", i)), grep(fmt.Sprint(i)))
	}
	data, _ := json.Marshal(tr.Snapshot())
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		var st State
		if err := json.Unmarshal(data, &st); err != nil {
			b.Fatal(err)
		}
		r, err := Restore(st)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(r.Snapshot()); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkConditionHolds(b *testing.B) {
	tr := newTracker(b, "analyst", nil)
	c := tr.s.Strategy.Transitions[1].OnMetrics
	b.ReportAllocs()
	for b.Loop() {
		c.holds(tr)
	}
}

func BenchmarkReplay(b *testing.B) {
	data, err := os.ReadFile("testdata/bootstrap.happy.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	s, _ := BuiltinStrategy("bootstrap")
	b.ReportAllocs()
	for b.Loop() {
		events, err := ParseEvents(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Replay(s, DefaultBudget(), events); err != nil {
			b.Fatal(err)
		}
	}
}
