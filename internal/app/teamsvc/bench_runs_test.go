package teamsvc_test

import (
	"encoding/json"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/testkit"
	"github.com/kaizenhq/kaizen/team"
)

// BenchmarkReviewFixRunStored drives a whole CP-2 run (start, BLOCK, fix,
// APPROVE) through the engine on SQLite: three claims and three reports,
// each stepping the persisted run in its transaction. Compare with
// team.BenchmarkReviewFixRun (the state machine alone).
func BenchmarkReviewFixRunStored(b *testing.B) {
	bb := testkit.Open(b, "sqlite")
	ctx := b.Context()
	if _, err := bb.E.CreateTeam(ctx, kaizen.TeamInput{Name: "alpha", Members: runMembers()}); err != nil {
		b.Fatal(err)
	}
	work := func(member, result string) {
		r, err := bb.E.ClaimTask(ctx, kaizen.ClaimInput{Team: "alpha", Member: member})
		if err != nil || r.Task == nil {
			b.Fatalf("claim %s: %v", member, err)
		}
		var raw json.RawMessage
		if result != "" {
			raw = json.RawMessage(result)
		}
		if _, err := bb.E.ReportTask(ctx, kaizen.ReportInput{Team: "alpha", Task: r.Task.ID, Member: member, Epoch: r.Epoch, Status: team.StatusCompleted, Result: raw}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := bb.E.StartRun(ctx, kaizen.StartRunInput{Team: "alpha", Pattern: team.CP2, Input: json.RawMessage(`{"artifact":"login.go"}`)}); err != nil {
			b.Fatal(err)
		}
		work("rev", block)
		work("ann", "")
		work("rev", approve)
	}
}
