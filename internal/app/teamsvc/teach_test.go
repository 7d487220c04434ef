package teamsvc_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/app/teamsvc"
	"github.com/kaizenhq/kaizen/internal/testkit"
	"github.com/kaizenhq/kaizen/team"
)

// Every run teaches (issue 16): a run of each of the ten patterns, however
// it ends, is recorded in the learning system with its duration, errors,
// retries, success and the collaboration pattern it used; kaizen plan then
// names the patterns, and the selection's ranking follows their outcomes.
func TestEveryPatternRunTeaches(t *testing.T) {
	testkit.ForEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend, composeMembers()...)
		inputs := map[team.PatternID]string{
			team.CP1: `{"requirement":"x"}`,
			team.CP2: `{"artifact":"x"}`,
			team.CP3: `{"requirement":"x","workers":[{"angle":"security","member":"ann"}]}`,
			team.CP4: `{"proposal":{"id":"p","title":"t"},"voters":["v1"]}`,
			team.CP5: `{"issue":"x"}`,
			team.CP6: `{"plan":[{"id":"a"}]}`,
			team.CP7: `{"issue":"x"}`,
			team.CP8: `{"requester":"ann","request":{"topic":"security","question":"q"},"members":[]}`,
			team.CP9: `{"sync_points":[{"id":"S","track_a_deliverable":"a","track_b_deliverable":"b"}]}`,
		}
		ids := map[team.PatternID]string{}
		for _, p := range team.Patterns[:9] {
			ri, err := b.E.StartRun(b.ctx, kaizen.StartRunInput{Team: "alpha", Pattern: p, Input: json.RawMessage(inputs[p])})
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			ids[p] = ri.Run.ID
		}
		// CP-3 times out with no result (an error); the others still open are cancelled
		b.Clock.Advance(5*time.Minute + time.Second)
		if _, err := b.E.RunDueJobs(b.ctx); err != nil {
			t.Fatal(err)
		}
		for _, p := range team.Patterns[:9] {
			if r := b.run(ids[p]); !r.Finished {
				if _, err := b.E.CancelRun(b.ctx, "", ids[p], "test over"); err != nil {
					t.Fatal(err)
				}
			}
		}
		// every task has ended: the post-mortem may run (nobody to ask)
		ri, err := b.E.StartRun(b.ctx, kaizen.StartRunInput{Team: "alpha", Pattern: team.CP10, Input: json.RawMessage(`{"participants":[]}`)})
		if err != nil {
			t.Fatal(err)
		}
		ids[team.CP10] = ri.Run.ID
		if _, err := b.E.RunDueJobs(b.ctx); err != nil {
			t.Fatal(err)
		}
		list, err := b.E.ListOutcomes(b.ctx, kaizen.OutcomeQuery{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range team.Patterns {
			run := b.run(ids[p]).Run
			var found bool
			for _, o := range list.Items {
				if o.TaskID != "teamrun-"+run.ID {
					continue
				}
				found = true
				want := teamsvc.CollaborationPattern(p)
				if o.Strategy != want || len(o.Patterns) != 1 || !slices.Contains(o.Tags, string(p)) ||
					o.Success != run.Outcome.Success || o.DurationMs != run.Outcome.DurationMs || o.ErrorCount != run.Outcome.Errors || o.RetryCount != run.Outcome.Retries {
					t.Errorf("%s: outcome %s %q success %v %d ms %d errors %d retries; run %s %v %d ms %d errors %d retries", p, o.TaskID, o.Strategy, o.Success, o.DurationMs, o.ErrorCount, o.RetryCount,
						run.Outcome.Status, run.Outcome.Success, run.Outcome.DurationMs, run.Outcome.Errors, run.Outcome.Retries)
				}
				if p == team.CP3 && (o.ErrorCount != 1 || o.DurationMs != (5*time.Minute+time.Second).Milliseconds() || o.Success) {
					t.Errorf("CP-3 timeout: errors %d, duration %d ms, success %v", o.ErrorCount, o.DurationMs, o.Success)
				}
			}
			if !found {
				t.Errorf("%s: run %s has no outcome in the learning system", p, run.ID)
			}
		}
		plan, err := b.E.PlanGuidance(b.ctx, kaizen.PlanInput{Task: "add an endpoint"})
		if err != nil {
			t.Fatal(err)
		}
		if md := plan.Markdown(); !strings.Contains(md, "Collaboration pattern CP-10 Post-Mortem") {
			t.Errorf("plan guidance does not name the collaboration patterns:\n%s", md)
		}
		sel, err := b.E.SelectPatterns(b.ctx, kaizen.SelectInput{TaskType: "feature", Complexity: "low", RiskLevel: "low"})
		if err != nil {
			t.Fatal(err)
		}
		if sel.Ranking[0].Pattern != team.CP10 || sel.Ranking[0].Runs != 1 || sel.Ranking[0].Score <= sel.Ranking[len(sel.Ranking)-1].Score {
			t.Errorf("ranking after one success (CP-10) and nine unsuccessful runs: %+v", sel.Ranking)
		}
	})
}
