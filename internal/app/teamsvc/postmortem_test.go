package teamsvc_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/testkit"
	"github.com/kaizenhq/kaizen/team"
)

// learnOutcomes returns the learning system's outcomes recorded for
// post-mortem patterns (ids with "-learn-").
func (b *bundle) learnOutcomes() (ids, patterns []string, success []bool) {
	b.t.Helper()
	list, err := b.E.ListOutcomes(b.ctx, kaizen.OutcomeQuery{Limit: 100})
	if err != nil {
		b.t.Fatal(err)
	}
	for _, o := range list.Items {
		if strings.Contains(o.TaskID, "-learn-") {
			ids = append(ids, o.TaskID)
			patterns = append(patterns, o.Patterns...)
			success = append(success, o.Success)
		}
	}
	return ids, patterns, success
}

// A post-mortem's reusable patterns go to the learning system, each as a
// pattern observation of its own carrying the outcome of the work (they
// used to share one id, so only the first was recorded); its improvement
// actions become heuristics of the experience system, not outcomes (they
// used to be recorded as failed outcomes, so kaizen plan listed an agreed
// improvement under "likely to fail").
func TestPostMortemPatternsToLearningActionsToHeuristics(t *testing.T) {
	testkit.ForEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend, runMembers()...)
		in := `{"team":"alpha","execution":{"total_tasks":2,"completed":2,"fix_cycles":1},"participants":["ann","rev"]}`
		ri, err := b.E.StartRun(b.ctx, kaizen.StartRunInput{Team: "alpha", Pattern: team.CP10, Input: json.RawMessage(in), Subject: "login endpoint"})
		if err != nil {
			t.Fatal(err)
		}
		for member, data := range map[string]string{
			"ann": `{"patterns":["Keep each fix to one finding","Write the test first"],"suggestions":["Give every HTTP handler an explicit request timeout in the plan","Ask the reviewer for a first pass before the implementation is finished"]}`,
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
		ids, patterns, success := b.learnOutcomes()
		slices.Sort(patterns)
		if len(ids) != 3 || len(slices.Compact(patterns)) != 3 || slices.Contains(success, false) {
			t.Errorf("pattern observations %q with patterns %q, success %v; want three successes", ids, patterns, success)
		}
		hs, err := b.E.ListHeuristics(b.ctx, kaizen.HeuristicQuery{Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		// Each action is in the experience system: a heuristic of its own,
		// or evidence merged into a related one (the experience system's
		// deduplication; two actions of one post-mortem share a trigger).
		var texts []string
		for _, h := range hs.Items {
			if h.Trigger != "login endpoint" || !strings.HasPrefix(h.SourceTaskID, "teamrun-") {
				t.Errorf("heuristic %+v", h)
			}
			d, err := b.E.GetHeuristic(b.ctx, "", h.ID)
			if err != nil {
				t.Fatal(err)
			}
			texts = append(texts, h.Rule)
			for _, ev := range d.Evidence {
				texts = append(texts, ev.Text)
			}
		}
		all := strings.Join(texts, "\n")
		for _, want := range []string{"Give every HTTP handler an explicit request timeout in the plan", "Ask the reviewer for a first pass before the implementation is finished"} {
			if len(hs.Items) == 0 || !strings.Contains(all, want) {
				t.Errorf("action %q not in the experience system: %q", want, texts)
			}
		}
		if !strings.Contains(all, "a late critical finding") {
			t.Errorf("the difficulty is not the heuristics' evidence: %q", texts)
		}
	})
}

// "Nothing notable → minimal report, no memory write": neither the
// learning system nor the experience system gets anything.
func TestPostMortemNothingNotableWritesNoMemory(t *testing.T) {
	b := setup(t, "sqlite", runMembers()...)
	in := `{"execution":{"total_tasks":1,"completed":1},"participants":["ann"]}`
	ri, err := b.E.StartRun(b.ctx, kaizen.StartRunInput{Team: "alpha", Pattern: team.CP10, Input: json.RawMessage(in)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.E.SendMessage(b.ctx, kaizen.SendInput{Team: "alpha", From: "ann", To: "lead", Type: team.MsgRetroFinding, Data: json.RawMessage(`{"went_well":["smooth"]}`)}); err != nil {
		t.Fatal(err)
	}
	o := b.run(ri.Run.ID).Run.Outcome
	if o == nil || !strings.Contains(string(o.Data), `"minimal":true`) {
		t.Fatalf("outcome %+v", o)
	}
	if _, err := b.E.RunDueJobs(b.ctx); err != nil {
		t.Fatal(err)
	}
	if ids, _, _ := b.learnOutcomes(); len(ids) != 0 {
		t.Errorf("pattern observations %q", ids)
	}
	if hs, err := b.E.ListHeuristics(b.ctx, kaizen.HeuristicQuery{}); err != nil || len(hs.Items) != 0 {
		t.Errorf("heuristics %+v %v", hs, err)
	}
}

// Without execution data, participants or an outcome in its input, CP-10
// collects them (the seed's step 1): the team's tasks and bus messages,
// every non-coordinator member, each member's notable bus history (the
// report's source for a member that does not answer), and the work's
// outcome from the failed task.
func TestPostMortemCollectsExecutionData(t *testing.T) {
	b := setup(t, "sqlite", runMembers()...)
	b.add(kaizen.TeamTaskInput{ID: "t1", Subject: "one", Owner: "ann"}, kaizen.TeamTaskInput{ID: "t2", Subject: "two", Owner: "ann"})
	b.work("ann", "")
	r := b.claim("ann")
	if _, err := b.E.ReportTask(b.ctx, kaizen.ReportInput{Team: "alpha", Task: r.Task.ID, Member: "ann", Epoch: r.Epoch, Status: team.StatusFailed, Error: "boom"}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []kaizen.SendInput{
		{Team: "alpha", From: "ann", To: "lead", Type: team.MsgError, Summary: "flaky sandbox", Data: json.RawMessage(`{"message":"flaky"}`)},
		{Team: "alpha", From: "lead", To: "ann", Type: team.MsgFixRequired, Summary: "fix it", Data: json.RawMessage(`{"iteration":1}`)},
	} {
		if _, err := b.E.SendMessage(b.ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	ri, err := b.E.StartRun(b.ctx, kaizen.StartRunInput{Team: "alpha", Pattern: team.CP10})
	if err != nil {
		t.Fatal(err)
	}
	var in team.PostMortemInput
	if err := json.Unmarshal(ri.Run.Input, &in); err != nil {
		t.Fatal(err)
	}
	e := in.Execution
	if in.Team != "alpha" || e == nil || e.TotalTasks != 2 || e.Completed != 1 || e.Failed != 1 || e.Errors != 1 || e.FixCycles != 1 || e.TotalMessages < 2 {
		t.Fatalf("collected %+v execution %+v", in, e)
	}
	if in.WorkSucceeded == nil || *in.WorkSucceeded || len(in.Participants) != 5 || len(in.History["ann"]) != 1 {
		t.Fatalf("collected %+v", in)
	}
	// nobody answers: the timeout reports from the bus history
	b.Clock.Advance(3*60e9 + 1)
	if _, err := b.E.RunDueJobs(b.ctx); err != nil {
		t.Fatal(err)
	}
	o := b.run(ri.Run.ID).Run.Outcome
	if o == nil || !strings.Contains(string(o.Data), `"ann: bus history"`) || !strings.Contains(string(o.Data), "flaky sandbox") {
		t.Fatalf("outcome %+v", o)
	}
	// the next cycle's post-mortem reviews only what happened since
	b.Clock.Advance(time.Minute)
	b.add(kaizen.TeamTaskInput{ID: "t3", Subject: "three", Owner: "ann"})
	b.work("ann", "")
	ri, err = b.E.StartRun(b.ctx, kaizen.StartRunInput{Team: "alpha", Pattern: team.CP10, Input: json.RawMessage(`{"participants":[]}`)})
	if err != nil {
		t.Fatal(err)
	}
	in = team.PostMortemInput{}
	if err := json.Unmarshal(ri.Run.Input, &in); err != nil {
		t.Fatal(err)
	}
	if e := in.Execution; e == nil || e.TotalTasks != 1 || e.Completed != 1 || e.Errors != 0 || in.WorkSucceeded == nil || !*in.WorkSucceeded {
		t.Fatalf("second cycle: %+v %+v", in, in.Execution)
	}
}
