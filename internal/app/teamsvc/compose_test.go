package teamsvc_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/testkit"
	"github.com/kaizenhq/kaizen/team"
)

// Composition rules of seed 004 in storage (the pure rules are tested in
// package team): nesting, escalation and degradation start real child runs
// whose outcomes come back to their parents; a child refused by a rule is
// a failed child.

func composeMembers() []team.Member {
	agent := team.Worker{Kind: team.WorkerAgent}
	return append(runMembers(),
		team.Member{Name: "tess", Role: team.RoleTester, Worker: agent},
		team.Member{Name: "ta", Role: team.RoleTrackA, Worker: agent},
		team.Member{Name: "tb", Role: team.RoleTrackB, Worker: agent},
		team.Member{Name: "pat", Role: team.RolePlanner, Worker: agent})
}

func (b *bundle) runs(q kaizen.RunQuery) []kaizen.RunSummary {
	b.t.Helper()
	rs, err := b.E.ListRuns(b.ctx, q)
	if err != nil {
		b.t.Fatal(err)
	}
	return rs
}

// CP-2 inside each CP-6 increment (review_each): every increment whose
// gate passed runs a Review-Fix Cycle as a child run before the next one.
func TestCP6NestsCP2InEachIncrement(t *testing.T) {
	testkit.ForEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend, composeMembers()...)
		in := `{"plan":[{"id":"model"},{"id":"api","blocked_by":["model"]}],"review_each":true}`
		ri, err := b.E.StartRun(b.ctx, kaizen.StartRunInput{Team: "alpha", Pattern: team.CP6, Input: json.RawMessage(in)})
		if err != nil {
			t.Fatal(err)
		}
		id := ri.Run.ID
		for i, inc := range []string{"INCREMENT-1", "INCREMENT-2"} {
			b.work("ann", "")                                         // implement the increment
			b.work("tess", `{"increment":"`+inc+`","status":"PASS"}`) // its gate
			kids := b.runs(kaizen.RunQuery{Pattern: string(team.CP2)})
			if len(kids) != i+1 || kids[i].ParentID != id || kids[i].State != "REVIEW" {
				t.Fatalf("%s: CP-2 children %+v", inc, kids)
			}
			if st := b.run(id).Run.State; st != "REVIEW" {
				t.Fatalf("%s: parent in %s", inc, st)
			}
			b.work("rev", approve) // the nested review approves
		}
		b.work("tess", `{"pass_rate":1}`) // the final validation
		got := b.run(id)
		if got.Run.Outcome == nil || got.Run.Outcome.Status != team.OutcomeSuccess {
			t.Fatalf("CP-6 %s %+v", got.Run.State, got.Run.Outcome)
		}
		for _, k := range b.runs(kaizen.RunQuery{Pattern: string(team.CP2)}) {
			if k.Outcome == nil || *k.Outcome != team.OutcomeSuccess {
				t.Errorf("child %+v", k)
			}
		}
	})
}

// CP-2 escalates to CP-7 (escalate_to) on a design issue; with a swarm of
// the team already active the child is refused (CP-7 is not re-entrant)
// and CP-2 ends escalated to the user.
func TestCP2EscalatesToCP7(t *testing.T) {
	testkit.ForEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend, composeMembers()...)
		design := `{"verdict":"BLOCK","design_issue":true,"findings":{"high":[{"description":"the module boundary is wrong"}]}}`
		start := func() string {
			ri, err := b.E.StartRun(b.ctx, kaizen.StartRunInput{Team: "alpha", Pattern: team.CP2, Input: json.RawMessage(`{"artifact":"auth","escalate_to":"CP-7"}`)})
			if err != nil {
				t.Fatal(err)
			}
			return ri.Run.ID
		}
		first := start()
		b.work("rev", design)
		if st := b.run(first).Run.State; st != "ESCALATE" {
			t.Fatalf("after a design issue: %s", st)
		}
		swarms := b.runs(kaizen.RunQuery{Pattern: string(team.CP7), ActiveOnly: true})
		if len(swarms) != 1 || swarms[0].ParentID != first {
			t.Fatalf("CP-7 child %+v", swarms)
		}
		second := start()
		b.work("rev", design)
		got := b.run(second).Run
		if got.Outcome == nil || got.Outcome.Status != team.OutcomeEscalated || !strings.Contains(decisionsText(got), "refused") {
			t.Fatalf("second CP-2 with a swarm active: %s %+v\n%s", got.State, got.Outcome, decisionsText(got))
		}
		if n := len(b.runs(kaizen.RunQuery{Pattern: string(team.CP7)})); n != 1 {
			t.Fatalf("%d swarms", n)
		}
	})
}

func decisionsText(r team.Run) string {
	var s []string
	for _, d := range r.Decisions {
		s = append(s, d.From+" → "+d.To+" ["+d.Event+"] "+d.Reason)
	}
	return strings.Join(s, "\n")
}

// CP-9 degrades to CP-1 after two failed alignments at a sync point: a
// CP-1 child plans the remaining work sequentially, and its outcome ends
// the dual-track run (degraded).
func TestCP9DegradesToCP1(t *testing.T) {
	testkit.ForEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend, composeMembers()...)
		in := `{"requirement":"orders API","sync_points":[{"id":"SYNC-1","track_a_deliverable":"schema","track_b_deliverable":"stubs"}]}`
		ri, err := b.E.StartRun(b.ctx, kaizen.StartRunInput{Team: "alpha", Pattern: team.CP9, Input: json.RawMessage(in)})
		if err != nil {
			t.Fatal(err)
		}
		id := ri.Run.ID
		misaligned := `{"sync_id":"SYNC-1","status":"MISALIGNED","conflicts":["field names differ"],"adjust":"B"}`
		b.work("ta", "")
		b.work("tb", "")
		b.work("lead", misaligned) // alignment 1
		b.work("tb", "")           // track B adjusts
		b.work("lead", misaligned) // alignment 2
		if st := b.run(id).Run.State; st != "FALLBACK" {
			t.Fatalf("after 2 misalignments: %s", st)
		}
		kids := b.runs(kaizen.RunQuery{Pattern: string(team.CP1)})
		if len(kids) != 1 || kids[0].ParentID != id || kids[0].State != "PLAN" {
			t.Fatalf("CP-1 child %+v", kids)
		}
		// the sequential pipeline runs to the end
		b.work("pat", `{"summary":"schema, then stubs"}`)
		b.work("ann", "")
		b.work("tess", `{"pass_rate":1}`)
		b.work("tess", approve) // REVIEW-001 (the tester reviews by default)
		got := b.run(id).Run
		if got.Outcome == nil || got.Outcome.Status != team.OutcomeDegraded || !strings.Contains(got.Outcome.Summary, "degraded to CP-1") {
			t.Fatalf("CP-9 %s %+v", got.State, got.Outcome)
		}
	})
}

// The seed's "standard development" as a template: CP-1 whose review
// stage is a nested CP-2, then CP-10 started by the service when CP-1
// finishes (every task has ended then), all in storage.
func TestStandardCompositionTemplate(t *testing.T) {
	testkit.ForEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend, composeMembers()...)
		spec, err := team.ParseCompositionFile([]byte(`
template = "standard"
subject = "add GET /health"
[input.CP-10]
participants = []
`))
		if err != nil {
			t.Fatal(err)
		}
		ri, err := b.E.StartComposition(b.ctx, kaizen.ComposeInput{Team: "alpha", Spec: spec})
		if err != nil {
			t.Fatal(err)
		}
		if c := ri.Run.Compose; c == nil || c.Name != "standard" || len(c.Steps) != 2 || ri.Run.Pattern != team.CP1 {
			t.Fatalf("first step %+v", ri.Run)
		}
		b.work("pat", `{"summary":"one handler"}`)
		b.work("ann", "")    // IMPL-001
		b.work("rev", block) // the nested CP-2: round 1 BLOCK
		b.work("ann", "")    // IMPL-fix-1
		b.work("rev", approve)
		b.work("tess", `{"pass_rate":1}`) // TEST-001 on the reviewed code
		if o := b.run(ri.Run.ID).Run.Outcome; o == nil || o.Status != team.OutcomeSuccess {
			t.Fatalf("CP-1 %+v", o)
		}
		pm := b.runs(kaizen.RunQuery{Pattern: string(team.CP10)})
		if len(pm) != 1 || pm[0].Outcome == nil || *pm[0].Outcome != team.OutcomeSuccess {
			t.Fatalf("CP-10 after CP-1: %+v", pm)
		}
		if kids := b.runs(kaizen.RunQuery{Pattern: string(team.CP2)}); len(kids) != 1 || kids[0].ParentID != ri.Run.ID {
			t.Fatalf("nested CP-2 %+v", kids)
		}
		evs, err := b.E.TeamEvents(b.ctx, "", "alpha", "", 0, 500)
		if err != nil {
			t.Fatal(err)
		}
		var seen bool
		for _, e := range evs {
			seen = seen || strings.Contains(e.Cause, "composition standard: step 2 (CP-10) after CP-1 success")
		}
		if !seen {
			t.Error("no composition event")
		}
	})
}

// A step refused by the composition rules ends the composition: CP-10
// does not start while a task of the team is open.
func TestCompositionStepRefusedWhileTasksOpen(t *testing.T) {
	b := setup(t, "sqlite", composeMembers()...)
	b.add(kaizen.TeamTaskInput{ID: "other", Subject: "unrelated work", Owner: "lead"})
	spec := team.CompositionSpec{Steps: []team.SpecStep{{Pattern: "CP-5", Input: map[string]any{"issue": "x", "agent": "ann"}}, {Pattern: "CP-10"}}}
	ri, err := b.E.StartComposition(b.ctx, kaizen.ComposeInput{Team: "alpha", Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	b.work("ann", `{"resolved":true,"solution":"pin the version"}`)
	if o := b.run(ri.Run.ID).Run.Outcome; o == nil || o.Status != team.OutcomeSuccess {
		t.Fatalf("CP-5 %+v", o)
	}
	if pm := b.runs(kaizen.RunQuery{Pattern: string(team.CP10)}); len(pm) != 0 {
		t.Fatalf("CP-10 started with a task open: %+v", pm)
	}
	evs, err := b.E.TeamEvents(b.ctx, "", "alpha", "", 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	var stopped bool
	for _, e := range evs {
		stopped = stopped || strings.Contains(e.Cause, "composition custom stopped: step 2 (CP-10) refused") && strings.Contains(e.Cause, "other")
	}
	if !stopped {
		t.Error("no event says why the composition stopped")
	}
}

// A swarm pauses the team's work in progress except the affected tasks
// (the seed's step 1) and asks every member but the coordinators; the
// paused work resumes when the swarm ends.
func TestSwarmPausesTheTeamsWork(t *testing.T) {
	b := setup(t, "sqlite", composeMembers()...)
	b.add(kaizen.TeamTaskInput{ID: "busy", Subject: "other work", Owner: "ann"}, kaizen.TeamTaskInput{ID: "stuck", Subject: "the blocked one", Owner: "tess"})
	b.claim("ann")
	b.claim("tess")
	ri, err := b.E.StartRun(b.ctx, kaizen.StartRunInput{Team: "alpha", Pattern: team.CP7, Input: json.RawMessage(`{"issue":"build broken","affected_tasks":["stuck"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	var in team.SwarmInput
	if err := json.Unmarshal(ri.Run.Input, &in); err != nil {
		t.Fatal(err)
	}
	if len(in.Pause) != 1 || in.Pause[0] != "busy" || len(in.Participants) != 9 {
		t.Fatalf("pause %v participants %v", in.Pause, in.Participants)
	}
	if !b.task("busy").Paused || b.task("stuck").Paused {
		t.Fatal("the work in progress is not paused (or the affected task is)")
	}
	if _, err := b.E.CancelRun(b.ctx, "", ri.Run.ID, "solved elsewhere"); err != nil {
		t.Fatal(err)
	}
	if b.task("busy").Paused {
		t.Fatal("not resumed after the swarm")
	}
}

// Cancelling a composition's run ends the composition: not even CP-10
// (whose condition is "always") starts.
func TestCancelledCompositionStops(t *testing.T) {
	b := setup(t, "sqlite", composeMembers()...)
	spec := team.CompositionSpec{Template: "standard", Subject: "add GET /health"}
	ri, err := b.E.StartComposition(b.ctx, kaizen.ComposeInput{Team: "alpha", Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.E.CancelRun(b.ctx, "", ri.Run.ID, "changed our minds"); err != nil {
		t.Fatal(err)
	}
	if n := len(b.runs(kaizen.RunQuery{})); n != 1 {
		t.Fatalf("%d runs after cancelling the composition's first", n)
	}
}
