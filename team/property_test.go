package team

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

var propMembers = []string{"m1", "m2", "m3"}

// propInputs are valid inputs of every pattern over members m1..m3.
func propInputs() map[PatternID]any {
	roster := []Member{{Name: "m1", Role: RoleExecutor, Worker: Worker{Kind: WorkerAgent}},
		{Name: "m2", Role: RoleSpecialist, Capabilities: []string{"security"}, Worker: Worker{Kind: WorkerAgent}},
		{Name: "m3", Role: RoleWorker, Worker: Worker{Kind: WorkerCommand, Command: "gemini -p"}}}
	return map[PatternID]any{
		CP1: PipelineInput{Requirement: "add login"},
		CP2: ReviewFixInput{Artifact: "login", Produce: true},
		CP3: FanOutInput{Requirement: "review", Workers: []FanOutWorker{{Angle: "security", Member: "m1"}, {Angle: "perf", Member: "m2"}, {Angle: "arch", Member: "m3"}}},
		CP4: ConsensusInput{Proposal: Proposal{ID: "P1", Title: "strategy pattern"}, Voters: propMembers, Proposer: "role:planner"},
		CP5: EscalationInput{Issue: "type mismatch", Options: []string{"pin version", "rewrite"}},
		CP6: IncrementalInput{Plan: []PlanItem{{ID: "a"}, {ID: "b", BlockedBy: []string{"a"}}, {ID: "c", BlockedBy: []string{"a"}}, {ID: "d", BlockedBy: []string{"b"}}}, ReviewEach: true},
		CP7: SwarmInput{Issue: "build broken", Participants: propMembers, Pause: []string{"T9"}},
		CP8: ConsultInput{Requester: "m1", Request: ConsultRequest{Topic: "security", Question: "hash?"}, Members: roster, Voters: propMembers},
		CP9: DualTrackInput{SyncPoints: []SyncPoint{{ID: "SYNC-1", TrackADeliverable: "api", TrackBDeliverable: "stubs"}, {ID: "SYNC-2", TrackADeliverable: "spec", TrackBDeliverable: "impl"}}, SwarmParticipants: propMembers},
		CP10: PostMortemInput{Team: "alpha", Participants: propMembers, Gone: []string{"m4"}, History: map[string][]HistoryItem{"m4": {{Type: MsgError, Summary: "flaky"}}},
			Execution: &ExecutionData{TotalTasks: 3, Completed: 3}},
	}
}

// samplePayloads: good, borderline and bad payloads per type.
var samplePayloads = map[MessageType][]string{
	MsgPlanReady:        {`{"summary":"plan"}`},
	MsgPlanApproved:     {`{}`},
	MsgPlanRevision:     {`{"feedback":"too big"}`, `{}`},
	MsgImplComplete:     {`{"summary":"done"}`},
	MsgTestResult:       {`{"pass_rate":1}`, `{"pass_rate":0.95}`, `{"pass_rate":0.5}`, `{"pass_rate":0.2,"regression":true}`},
	MsgReviewResult:     {`{"verdict":"APPROVE"}`, `{"verdict":"BLOCK","findings":{"critical":[{"description":"x"}]}}`, `{"verdict":"CONDITIONAL","findings":{"low":[{"description":"y"}]}}`, `{"verdict":"BLOCK","design_issue":true}`},
	MsgVote:             {`{"proposal_id":"P1","vote":"APPROVE","rationale":"ok"}`, `{"proposal_id":"P1","vote":"REJECT","rationale":"no","block":true}`, `{"proposal_id":"P1","vote":"ABSTAIN","rationale":"-"}`},
	MsgProposal:         {`{"id":"P1","title":"revised"}`},
	MsgSwarmDiagnosis:   {`{"perspective":"arch","root_cause":"cycle","confidence":0.9,"fix_suggestion":"split pkg/a.go"}`, `{"perspective":"impl","root_cause":"nil","confidence":0.4,"fix_suggestion":"guard"}`},
	MsgConsultResponse:  {`{"recommendation":"bcrypt","confidence":0.95}`, `{"recommendation":"maybe","confidence":0.5}`},
	MsgConsultOutcome:   {`{"applied":true}`, `{"applied":false,"conflicts_with_design":true}`, `{"applied":false}`},
	MsgSyncCheckpoint:   {`{"sync_id":"SYNC-1","status":"ALIGNED"}`, `{"sync_id":"SYNC-1","status":"MISALIGNED","adjust":"A"}`, `{"sync_id":"SYNC-2","status":"MISALIGNED"}`},
	MsgRetroFinding:     {`{"went_well":["a"],"patterns":["p"]}`, `{}`},
	MsgIncrementReady:   {`{"increment":"INCREMENT-1","status":"PASS"}`, `{"increment":"INCREMENT-1","status":"FAIL","failed_gates":["increment_tests_pass"]}`, `{"increment":"INCREMENT-2","status":"FAIL","failed_gates":["syntax_clean"]}`},
	MsgEscalationReport: {`{"resolved":true,"solution":"fix"}`, `{"resolved":false,"diagnosis":"hm"}`, `{"architectural":true}`},
	MsgAnalysisResult:   {`{"findings":[{"description":"sql injection","severity":"high"}],"claims":{"cache":"yes"}}`, `{"claims":{"cache":"no"}}`},
	"security_result":   {`{"findings":[{"description":"xss"}]}`},
	MsgError:            {`{"message":"boom"}`},
}

var payloadTypes = slices.Sorted(maps.Keys(samplePayloads))

func genEvent(t *rapid.T, h *propRun) (Event, bool) {
	r := h.r
	switch rapid.IntRange(0, 5).Draw(t, "kind") {
	case 0, 1: // task change
		keys := slices.Sorted(maps.Keys(r.Tasks))
		if len(keys) == 0 {
			return Event{}, false
		}
		k := rapid.SampledFrom(keys).Draw(t, "task")
		st := rapid.SampledFrom([]TaskStatus{StatusCompleted, StatusCompleted, StatusFailed, StatusInProgress, StatusBlocked, StatusCancelled}).Draw(t, "status")
		ch := &TaskChange{Status: st}
		if exp := r.Tasks[k].Expect; exp != "" && st == StatusCompleted && rapid.Bool().Draw(t, "with result") {
			if ps := samplePayloads[exp]; len(ps) > 0 {
				ch.Result = json.RawMessage(rapid.SampledFrom(ps).Draw(t, "result"))
			}
		}
		return Event{Kind: EventTask, TaskKey: k, Task: ch}, true
	case 2, 3: // message
		typ := rapid.SampledFrom(payloadTypes).Draw(t, "type")
		h.seq++
		m := &Message{Team: "alpha", Seq: h.seq, From: rapid.SampledFrom(append(propMembers, "m4")).Draw(t, "from"), To: "coordinator", Type: typ,
			Data: json.RawMessage(rapid.SampledFrom(samplePayloads[typ]).Draw(t, "data")), CreatedAt: h.now}
		ev := Event{Kind: EventMessage, Message: m}
		if keys := slices.Sorted(maps.Keys(r.Tasks)); len(keys) > 0 && rapid.Bool().Draw(t, "linked") {
			ev.TaskKey = rapid.SampledFrom(keys).Draw(t, "msg task")
		}
		return ev, true
	case 4: // timer
		names := slices.Sorted(maps.Keys(r.Timers))
		if len(names) == 0 {
			return Event{}, false
		}
		n := rapid.SampledFrom(names).Draw(t, "timer")
		h.now = r.Timers[n]
		return Event{Kind: EventTimer, Timer: n, TimerAt: r.Timers[n]}, true
	default: // child or user
		if len(r.Asks) > 0 && rapid.Bool().Draw(t, "user") {
			k := rapid.SampledFrom(slices.Sorted(maps.Keys(r.Asks))).Draw(t, "ask")
			return Event{Kind: EventUser, Reply: &UserReply{Key: k, Choice: rapid.SampledFrom([]string{"APPROVE", "abort", "retry"}).Draw(t, "choice")}}, true
		}
		var running []string
		for _, k := range slices.Sorted(maps.Keys(r.Children)) {
			if r.Children[k].Status == "" {
				running = append(running, k)
			}
		}
		if len(running) == 0 {
			return Event{}, false
		}
		k := rapid.SampledFrom(running).Draw(t, "child")
		st := rapid.SampledFrom([]OutcomeStatus{OutcomeSuccess, OutcomeFailed, OutcomeEscalated, OutcomeDegraded}).Draw(t, "child status")
		return Event{Kind: EventChild, Child: &ChildResult{Key: k, Outcome: Outcome{Status: st}}}, true
	}
}

type propRun struct {
	r   Run
	now time.Time
	seq int64
}

// check asserts the invariants after every step.
func check(t *rapid.T, pr *propRun, cmds []Command, diagram Diagram) {
	r := pr.r
	if r.Iteration > r.MaxIterations || r.Iteration < 0 {
		t.Fatalf("iteration %d outside 0..%d", r.Iteration, r.MaxIterations)
	}
	for _, d := range r.Decisions {
		if d.From != d.To && !diagram.Has(d.From, d.To) {
			t.Fatalf("%s: transition %q → %q is not in the diagram (%s)", r.Pattern, d.From, d.To, d.Reason)
		}
	}
	finishes := 0
	for _, c := range cmds {
		switch c.Kind {
		case CmdSendMessage:
			m := Message{Team: "alpha", From: "coordinator", To: c.Message.To, Type: c.Message.Type, Summary: c.Message.Summary, Data: c.Message.Data}
			if err := ValidateMessage(nil, m); err != nil {
				t.Fatalf("run sent an invalid message: %v", err)
			}
		case CmdCreateTask:
			task := Task{ID: c.Key, Team: "alpha", Subject: c.Task.Subject, Description: c.Task.Description, Owner: c.Task.Owner, Role: c.Task.Role, Status: StatusPending}
			if err := ValidateTask(task); err != nil {
				t.Fatalf("run created an invalid task: %v", err)
			}
			for _, d := range c.Task.BlockedBy {
				if _, ok := r.Tasks[d]; !ok {
					t.Fatalf("task %s blocked by unknown key %s", c.Key, d)
				}
			}
		case CmdStartRun:
			if err := CheckChild(r.Pattern, c.Child.Pattern); err != nil {
				t.Fatal(err)
			}
		case CmdFinishRun:
			finishes++
		}
	}
	if finishes > 1 || (finishes == 1) != (r.Outcome != nil && r.Decisions[len(r.Decisions)-1].To == r.State) {
		t.Fatalf("finish commands %d, outcome %v", finishes, r.Outcome)
	}
	if r.Outcome != nil && (len(r.Timers) > 0 || len(r.Asks) > 0) {
		t.Fatalf("finished run keeps timers %v or asks %v", r.Timers, r.Asks)
	}
}

// goodEvent is what a cooperative team would do next; nil when there is nothing.
func goodEvents(pr *propRun) []Event {
	r := pr.r
	var evs []Event
	for _, n := range slices.Sorted(maps.Keys(r.Timers)) {
		evs = append(evs, Event{Kind: EventTimer, Timer: n, TimerAt: r.Timers[n]})
	}
	for _, k := range slices.Sorted(maps.Keys(r.Asks)) {
		evs = append(evs, Event{Kind: EventUser, Reply: &UserReply{Key: k, Choice: "APPROVE"}})
	}
	for _, k := range slices.Sorted(maps.Keys(r.Children)) {
		if r.Children[k].Status == "" {
			evs = append(evs, Event{Kind: EventChild, Child: &ChildResult{Key: k, Outcome: Outcome{Status: OutcomeSuccess}}})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(r.Tasks)) {
		if t := r.Tasks[k]; !t.Status.Terminal() {
			ch := &TaskChange{Status: StatusCompleted}
			if ps := samplePayloads[t.Expect]; len(ps) > 0 {
				ch.Result = json.RawMessage(ps[0])
			}
			evs = append(evs, Event{Kind: EventTask, TaskKey: k, Task: ch})
		}
	}
	for _, typ := range payloadTypes {
		for _, from := range propMembers {
			pr.seq++
			evs = append(evs, Event{Kind: EventMessage, Message: &Message{Team: "alpha", Seq: pr.seq, From: from, To: "coordinator", Type: typ, Data: json.RawMessage(samplePayloads[typ][0])}})
		}
	}
	return evs
}

func TestPropertyRunsStayBoundedAndTerminate(t *testing.T) {
	t.Parallel()
	inputs := propInputs()
	rapid.Check(t, func(t *rapid.T) {
		p := rapid.SampledFrom(Patterns).Draw(t, "pattern")
		cfg := DefaultConfig()
		r, cmds, err := Start(RunSpec{ID: "r", Pattern: p, Team: "alpha", Config: cfg, Input: mustJSON(t, inputs[p])}, t0)
		if err != nil {
			t.Fatal(err)
		}
		diagram, _ := DiagramFor(p)
		pr := &propRun{r: r, now: t0}
		check(t, pr, cmds, diagram)
		n := rapid.IntRange(0, 60).Draw(t, "events")
		for i := 0; i < n && !pr.r.Finished(); i++ {
			ev, ok := genEvent(t, pr)
			if !ok {
				continue
			}
			before := string(mustJSON(t, pr.r))
			nr, cmds, err := Step(pr.r, ev, pr.now)
			if err != nil {
				t.Fatalf("step %+v: %v", ev, err)
			}
			if string(mustJSON(t, pr.r)) != before {
				t.Fatal("Step modified its input run")
			}
			// Resuming from the persisted run gives the same step.
			var back Run
			if err := json.Unmarshal([]byte(before), &back); err != nil {
				t.Fatal(err)
			}
			nr2, cmds2, err2 := Step(back, ev, pr.now)
			if err2 != nil || string(mustJSON(t, nr2)) != string(mustJSON(t, nr)) || string(mustJSON(t, cmds2)) != string(mustJSON(t, cmds)) {
				t.Fatalf("step after a JSON round trip differs (err %v)", err2)
			}
			pr.r = nr
			check(t, pr, cmds, diagram)
		}
		// Drain: a cooperative team must bring every run to an end.
		for steps := 0; !pr.r.Finished(); steps++ {
			if steps > 400 {
				t.Fatalf("%s did not finish; state %s; decisions %v", p, pr.r.State, pr.r.Decisions)
			}
			progressed := false
			for _, ev := range goodEvents(pr) {
				if ev.Kind == EventTimer {
					pr.now = ev.TimerAt
				}
				nr, cmds, err := Step(pr.r, ev, pr.now)
				if err != nil {
					t.Fatalf("drain step %+v: %v", ev, err)
				}
				if progressKey(t, nr) != progressKey(t, pr.r) {
					pr.r = nr
					check(t, pr, cmds, diagram)
					progressed = true
					break
				}
			}
			if !progressed {
				t.Fatalf("%s stuck in %s", p, pr.r.State)
			}
		}
		if _, _, err := Step(pr.r, Event{Kind: EventTimer, Timer: "x"}, pr.now); err == nil || !strings.Contains(err.Error(), "finished") {
			t.Fatalf("step on a finished run: %v", err)
		}
	})
}

// progressKey is the run without the counters every message moves.
func progressKey(t *rapid.T, r Run) string {
	r.LastSeq, r.Errors, r.UpdatedAt = 0, 0, time.Time{}
	return string(mustJSON(t, r))
}
