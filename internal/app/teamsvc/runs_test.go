package teamsvc_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/internal/testkit"
	"github.com/kaizenhq/kaizen/team"
)

func runMembers() []team.Member {
	agent := team.Worker{Kind: team.WorkerAgent}
	return []team.Member{
		{Name: "lead", Role: team.RoleCoordinator, Worker: agent},
		{Name: "ann", Role: team.RoleExecutor, Worker: agent},
		{Name: "rev", Role: team.RoleReviewer, Worker: agent},
		{Name: "v1", Role: team.RoleVoter, Worker: agent},
		{Name: "v2", Role: team.RoleVoter, Worker: agent},
		{Name: "v3", Role: team.RoleVoter, Worker: agent},
	}
}

// work claims member's next task and reports it completed with result.
func (b *bundle) work(member string, result string) team.Task {
	b.t.Helper()
	r := b.claim(member)
	if r.Task == nil {
		b.t.Fatalf("%s has no task", member)
	}
	var raw json.RawMessage
	if result != "" {
		raw = json.RawMessage(result)
	}
	t, err := b.E.ReportTask(b.ctx, kaizen.ReportInput{Team: "alpha", Task: r.Task.ID, Member: member, Epoch: r.Epoch,
		Status: team.StatusCompleted, Result: raw})
	if err != nil {
		b.t.Fatal(err)
	}
	return *t
}

func (b *bundle) run(id string) *kaizen.RunInfo {
	b.t.Helper()
	r, err := b.E.GetRun(b.ctx, "", id)
	if err != nil {
		b.t.Fatal(err)
	}
	return r
}

const block = `{"verdict":"BLOCK","findings":{"critical":[{"file":"login.go","line":3,"description":"SQL injection"}]}}`
const approve = `{"verdict":"APPROVE","findings":{}}`

func TestReviewFixRunEndToEndTeachesPlanGuidance(t *testing.T) {
	testkit.ForEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend, runMembers()...)
		ri, err := b.E.StartRun(b.ctx, kaizen.StartRunInput{Team: "alpha", Pattern: team.CP2, Input: json.RawMessage(`{"artifact":"login.go"}`)})
		if err != nil {
			t.Fatal(err)
		}
		id := ri.Run.ID
		if ri.Run.State != "REVIEW" || !strings.Contains(ri.Mermaid, "class REVIEW current") {
			t.Fatalf("started in %s\n%s", ri.Run.State, ri.Mermaid)
		}
		b.work("rev", block) // round 1: BLOCK with a critical finding → fix task
		if st := b.run(id).Run.State; st != "FIX" {
			t.Fatalf("after BLOCK: %s", st)
		}
		fix := b.work("ann", "")
		if fix.RunID != id || !strings.HasPrefix(fix.RunKey, "fix") {
			t.Errorf("fix task %+v", fix)
		}
		b.work("rev", approve)
		got := b.run(id)
		if !got.Finished || got.Run.Outcome == nil || got.Run.Outcome.Status != team.OutcomeSuccess || got.Run.Iteration != 2 {
			t.Fatalf("run %+v", got.Run)
		}
		if len(got.Events) < 4 {
			t.Errorf("%d events persisted", len(got.Events))
		}
		// The outcome reaches the learning system through the job runner.
		if _, err := b.E.RunDueJobs(b.ctx); err != nil {
			t.Fatal(err)
		}
		plan, err := b.E.PlanGuidance(b.ctx, kaizen.PlanInput{Task: "review login"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(plan.Markdown(), "Collaboration pattern CP-2") {
			t.Errorf("plan guidance does not mention CP-2:\n%s", plan.Markdown())
		}
		sel, err := b.E.SelectPatterns(b.ctx, kaizen.SelectInput{TaskType: "review", Complexity: "low", RiskLevel: "low"})
		if err != nil {
			t.Fatal(err)
		}
		if sel.Ranking[0].Pattern != team.CP2 || sel.Ranking[0].Runs != 1 {
			t.Errorf("ranking %+v", sel.Ranking)
		}
	})
}

func TestRunResumesAfterRestart(t *testing.T) {
	dsn := testkit.DSN(t, "sqlite")
	clock := testkit.NewClock(testkit.Start)
	open := func() *bundle {
		cfg := kaizen.DefaultConfig()
		cfg.Home, cfg.DB, cfg.Project, cfg.Now = t.TempDir(), dsn, "proj", clock.Now
		e, err := kaizen.Open(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return &bundle{Bundle: &testkit.Bundle{E: e, Clock: clock, Cfg: cfg}, ctx: t.Context(), t: t}
	}
	b := open()
	if _, err := b.E.CreateTeam(b.ctx, kaizen.TeamInput{Name: "alpha", Members: runMembers()}); err != nil {
		t.Fatal(err)
	}
	ri, err := b.E.StartRun(b.ctx, kaizen.StartRunInput{Team: "alpha", Pattern: team.CP2, Input: json.RawMessage(`{"artifact":"x"}`)})
	if err != nil {
		t.Fatal(err)
	}
	b.work("rev", block)
	b.E.Close()
	b = open()
	defer b.E.Close()
	if st := b.run(ri.Run.ID).Run.State; st != "FIX" {
		t.Fatalf("after restart: %s", st)
	}
	b.work("ann", "")
	b.work("rev", approve)
	if o := b.run(ri.Run.ID).Run.Outcome; o == nil || o.Status != team.OutcomeSuccess {
		t.Fatalf("outcome %+v", o)
	}
}

func TestConsensusTimeoutFiresFromTheJobRunner(t *testing.T) {
	b := setup(t, "sqlite", runMembers()...)
	in := `{"proposal":{"id":"p1","title":"Use JWT"},"voters":["v1","v2","v3"]}`
	ri, err := b.E.StartRun(b.ctx, kaizen.StartRunInput{Team: "alpha", Pattern: team.CP4, Input: json.RawMessage(in)})
	if err != nil {
		t.Fatal(err)
	}
	vote := func(from, v string) {
		_, err := b.E.SendMessage(b.ctx, kaizen.SendInput{Team: "alpha", From: from, To: "lead", Type: team.MsgVote,
			Data: json.RawMessage(`{"proposal_id":"p1","vote":"` + v + `","rationale":"ok","confidence":0.9}`)})
		if err != nil {
			t.Fatal(err)
		}
	}
	vote("v1", "APPROVE")
	vote("v2", "APPROVE")
	before := b.run(ri.Run.ID).Run
	if before.Finished() {
		t.Fatalf("finished before the timeout with 2 of 3 votes: %+v", before.Outcome)
	}
	// Nothing is due before the timeout.
	b.E.RunDueJobs(b.ctx)
	if b.run(ri.Run.ID).Run.Finished() {
		t.Fatal("the timer fired early")
	}
	b.Clock.Advance(5*time.Minute + time.Second)
	if _, err := b.E.RunDueJobs(b.ctx); err != nil {
		t.Fatal(err)
	}
	after := b.run(ri.Run.ID)
	if !after.Finished || after.Run.Outcome.Status != team.OutcomeSuccess {
		t.Fatalf("after the timeout: state %s outcome %+v\n%+v", after.Run.State, after.Run.Outcome, after.Run.Decisions)
	}
}

func TestCompositionRulesInStorage(t *testing.T) {
	testkit.ForEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend, runMembers()...)
		b.add(kaizen.TeamTaskInput{ID: "open", Subject: "still open"})
		_, err := b.E.StartRun(b.ctx, kaizen.StartRunInput{Team: "alpha", Pattern: team.CP10, Input: json.RawMessage(`{"team":"alpha"}`)})
		if !errors.Is(err, team.ErrComposition) || kindOf(err) != app.KindConflict {
			t.Fatalf("CP-10 with open tasks: %v", err)
		}
		swarm := json.RawMessage(`{"issue":"build broken","participants":["ann","rev"]}`)
		if _, err := b.E.StartRun(b.ctx, kaizen.StartRunInput{Team: "alpha", Pattern: team.CP7, Input: swarm}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.E.StartRun(b.ctx, kaizen.StartRunInput{Team: "alpha", Pattern: team.CP7, Input: swarm}); !errors.Is(err, team.ErrSwarmActive) {
			t.Fatalf("second swarm: %v", err)
		}
	})
}

func TestSecondSwarmRefusedAcrossTwoEngines(t *testing.T) {
	dsn := testkit.DSN(t, "postgres")
	e1 := testkit.Open(t, "postgres", func(c *kaizen.Config) { c.DB = dsn }).E
	e2 := testkit.Open(t, "postgres", func(c *kaizen.Config) { c.DB = dsn }).E
	if _, err := e1.CreateTeam(t.Context(), kaizen.TeamInput{Name: "alpha", Members: runMembers()}); err != nil {
		t.Fatal(err)
	}
	swarm := json.RawMessage(`{"issue":"build broken","participants":["ann","rev"]}`)
	errs := make(chan error, 2)
	for _, e := range []*kaizen.Engine{e1, e2} {
		go func() {
			_, err := e.StartRun(t.Context(), kaizen.StartRunInput{Team: "alpha", Pattern: team.CP7, Input: swarm})
			errs <- err
		}()
	}
	var ok, refused int
	for range 2 {
		switch err := <-errs; {
		case err == nil:
			ok++
		case errors.Is(err, team.ErrSwarmActive):
			refused++
		default:
			t.Fatal(err)
		}
	}
	if ok != 1 || refused != 1 {
		t.Fatalf("%d swarms started, %d refused", ok, refused)
	}
}
