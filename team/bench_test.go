package team

import (
	"encoding/json"
	"testing"
)

// BenchmarkReviewFixRun drives a whole CP-2 run (start, BLOCK, fix,
// APPROVE) through Start and Step with the JSON round trip a service does
// between steps: the pure cost of a pattern run, without storage.
func BenchmarkReviewFixRun(b *testing.B) {
	in, _ := json.Marshal(ReviewFixInput{Artifact: "login.go"})
	block, _ := json.Marshal(ReviewResult{Verdict: VerdictBlock, Findings: Findings{Critical: []Finding{{File: "a.go", Line: 1, Description: "x"}}}})
	approve, _ := json.Marshal(ReviewResult{Verdict: VerdictApprove})
	cfg := DefaultConfig()
	b.ReportAllocs()
	for b.Loop() {
		r, _, err := Start(RunSpec{ID: "r", Pattern: CP2, Team: "alpha", Config: cfg, Input: in}, t0)
		if err != nil {
			b.Fatal(err)
		}
		for _, ev := range []Event{
			{Kind: EventTask, TaskKey: "review-1", Task: &TaskChange{Status: StatusCompleted, Result: block}},
			{Kind: EventTask, TaskKey: "fix-1", Task: &TaskChange{Status: StatusCompleted}},
			{Kind: EventTask, TaskKey: "review-2", Task: &TaskChange{Status: StatusCompleted, Result: approve}},
		} {
			raw, _ := json.Marshal(r)
			var back Run
			if err := json.Unmarshal(raw, &back); err != nil {
				b.Fatal(err)
			}
			if r, _, err = Step(back, ev, t0); err != nil {
				b.Fatal(err)
			}
		}
		if r.Outcome == nil || r.Outcome.Status != OutcomeSuccess {
			b.Fatal("not done")
		}
	}
}
