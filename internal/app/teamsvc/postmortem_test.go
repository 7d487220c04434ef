package teamsvc_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/testkit"
	"github.com/kaizenhq/kaizen/team"
)

// A post-mortem whose retrospectives name several reusable patterns and
// improvement actions records each in the learning system as an outcome of
// its own: none is lost to another's id (they used to share one, so only
// the first of each kind was recorded).
func TestPostMortemRecordsEveryLearning(t *testing.T) {
	testkit.ForEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend, runMembers()...)
		in := `{"team":"alpha","execution":{"total_tasks":2,"completed":2,"fix_cycles":1},"participants":["ann","rev"]}`
		ri, err := b.E.StartRun(b.ctx, kaizen.StartRunInput{Team: "alpha", Pattern: team.CP10, Input: json.RawMessage(in)})
		if err != nil {
			t.Fatal(err)
		}
		for member, data := range map[string]string{
			"ann": `{"patterns":["Keep each fix to one finding","Write the test first"],"suggestions":["Plan timeouts","Review earlier"]}`,
			"rev": `{"patterns":["Review handlers for timeouts"],"difficult":["a late critical finding"]}`,
		} {
			if _, err := b.E.SendMessage(b.ctx, kaizen.SendInput{Team: "alpha", From: member, To: "lead", Type: team.MsgRetroFinding, Data: json.RawMessage(data)}); err != nil {
				t.Fatal(err)
			}
		}
		if got := b.run(ri.Run.ID); !got.Finished || got.Run.Outcome == nil || got.Run.Outcome.Status != team.OutcomeSuccess {
			t.Fatalf("run %+v", got.Run)
		}
		if _, err := b.E.RunDueJobs(b.ctx); err != nil {
			t.Fatal(err)
		}
		list, err := b.E.ListOutcomes(b.ctx, kaizen.OutcomeQuery{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		// three reusable patterns and two improvement actions: five
		// outcomes, each with its own id and pattern
		var ids, patterns []string
		for _, o := range list.Items {
			if strings.Contains(o.TaskID, "-learn-") {
				ids = append(ids, o.TaskID)
				patterns = append(patterns, o.Patterns...)
			}
		}
		slices.Sort(patterns)
		if len(ids) != 5 || len(slices.Compact(patterns)) != 5 {
			t.Errorf("learning outcomes %q with patterns %q; want five, each its own", ids, patterns)
		}
	})
}
