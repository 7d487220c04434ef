package explore

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

func TestExtractPlan(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		text string
		want []string
	}{
		{"marker and numbers", "Plan:\n1. Get an overview of the layout\n2. Search for the Tracker type\n3. Read the key files\n\nLet me start.", []string{"Get an overview of the layout", "Search for the Tracker type", "Read the key files"}},
		{"chinese marker", "计划：\n1. 查看目录结构\n2. 搜索 Tracker 的用法\n3. 阅读关键文件", []string{"查看目录结构", "搜索 Tracker 的用法", "阅读关键文件"}},
		{"numbered list without marker", "I will:\n1) list the source files\n2) grep for FooBar callers\nthen decide.", []string{"list the source files", "grep for FooBar callers"}},
		{"bullets after a marker", "Steps:\n- read the config loader\n- check `LoadConfig` callers", []string{"read the config loader", "check `LoadConfig` callers"}},
		{"blank lines between items", "Plan:\n1. read the first file\n\n2. read the second file", []string{"read the first file", "read the second file"}},
		{"one step is not a plan", "Plan:\n1. read everything carefully", nil},
		{"short steps are dropped", "1. a\n2. b\n3. c", nil},
		{"no list", "I'll look around first.", nil},
	}
	for _, c := range cases {
		var got []string
		for _, s := range extractPlan(c.text) {
			got = append(got, s.Text)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: steps %q, want %q", c.name, got, c.want)
		}
	}
	kw := stepKeywords("Read `tracker.go` and the ExplorationTracker and HTTPServer types, not 'ab'")
	if want := []string{"tracker.go", "explorationtracker", "httpserver"}; !slices.Equal(kw, want) {
		t.Errorf("keywords %q, want %q", kw, want)
	}
}

// planSession starts a bootstrap-like session that has been asked for a
// plan in round 1 and captured the given one.
func planSession(t *testing.T, strategy string, plan string) *Tracker {
	t.Helper()
	tr := newTracker(t, strategy, func(b *Budget) { b.MaxIterations = 40; b.SearchBudget = 40 })
	tr.s.Strategy.Reflection = false
	tr.Tick(t0)
	if n := tr.Nudge(); kindOf(n) != NudgePlanning {
		t.Fatalf("round 1 nudge %v, want planning", kindOf(n))
	}
	tr.RecordThought(plan)
	if len(tr.s.Plan.Steps) == 0 {
		t.Fatal("plan not captured")
	}
	tr.EndRound()
	return tr
}

const fiveStepPlan = "Plan:\n1. Get an overview of the directory structure\n2. Search for `Tracker` usages\n" +
	"3. Read tracker.go closely\n4. Read strategy.go and bus.go\n5. Submit the patterns worth keeping"

// TestDefectPlanDeviation: the peer's deviation was 1 − covered/total, so an
// agent following its plan step by step looked "deviating" (> 0.6) until it
// had covered 3 of 5 steps, and got a replan nudge as soon as the cooldown
// allowed. Here deviation is the share of recent rounds matching no step.
func TestDefectPlanDeviation(t *testing.T) {
	t.Parallel()
	tr := planSession(t, "bootstrap", fiveStepPlan)
	tr.s.Strategy.Nudges.ReplanInterval = 0 // isolate the drift trigger from the periodic one
	followed := [][]ToolCall{
		{{Name: "LS", Args: map[string]any{"path": "."}}},
		{{Name: "LS", Args: map[string]any{"path": "explore"}}}, // same step again: on plan, nothing new covered
		{grep("Tracker")},
		{grep("func (t *Tracker)")},
		{read("explore/tracker.go")},
	}
	for i, calls := range followed {
		nudge, _ := round(t, tr, calls...)
		if nudge != nil {
			t.Fatalf("round %d: nudge %s while following the plan", tr.Iteration(), nudge.Kind)
		}
		p := tr.PlanProgress()
		peerDeviation := 1 - float64(p.Covered)/float64(p.Steps)
		if p.Deviation != 0 {
			t.Fatalf("round %d: deviation %v while on plan", tr.Iteration(), p.Deviation)
		}
		if i == 1 && peerDeviation <= 0.6 {
			t.Fatalf("round %d: peer formula %v would not have fired; the test lost its point", tr.Iteration(), peerDeviation)
		}
	}
	// Drift: three rounds of calls that match no step.
	for range 3 {
		round(t, tr, ToolCall{Name: "TodoWrite", Args: map[string]any{"todos": fmt.Sprint(tr.Iteration())}})
	}
	if p := tr.PlanProgress(); p.OffPlan != 3 || p.Deviation != 0.6 || p.Unplanned != 3 {
		t.Fatalf("after drifting: %+v", p)
	}
	tr.Tick(t0)
	if n := tr.Nudge(); kindOf(n) != NudgeReplan {
		t.Fatalf("nudge %v after three off-plan rounds, want replan", kindOf(n))
	}
	tr.RecordThought("Plan:\n1. Read nudge.go for texts\n2. Read plan.go for deviation")
	tr.EndRound()
	// Bootstrap allows one replan: drifting again brings none.
	for range 5 {
		tr.Tick(t0)
		if n := tr.Nudge(); kindOf(n) == NudgeReplan {
			t.Fatalf("round %d: second replan for bootstrap (max_replans 1)", tr.Iteration())
		}
		tr.RecordToolCall(ToolCall{Name: "TodoWrite", Args: map[string]any{"n": tr.Iteration()}})
		tr.EndRound()
	}
	if got := tr.PlanProgress(); got.Replans != 1 || got.Versions != 2 {
		t.Fatalf("plan progress %+v", got)
	}
}

func TestReplanCaps(t *testing.T) {
	t.Parallel()
	drift := func(tr *Tracker) NudgeKind {
		tr.Tick(t0)
		n := tr.Nudge()
		if kindOf(n) == NudgeReplan {
			tr.RecordThought("Plan:\n1. Read the tracker again\n2. Search for the budget")
		}
		tr.RecordToolCall(ToolCall{Name: "TodoWrite", Args: map[string]any{"n": tr.Iteration()}})
		tr.EndRound()
		return kindOf(n)
	}
	t.Run("analyst: at most two replans, min gap 3", func(t *testing.T) {
		t.Parallel()
		tr := planSession(t, "analyst", fiveStepPlan)
		tr.s.Strategy.Transitions[1].OnMetrics = Condition{} // stay in EXPLORE
		var at []int
		for range 20 {
			if drift(tr) == NudgeReplan {
				at = append(at, tr.Iteration())
			}
		}
		if len(at) != 2 || at[1]-at[0] < 3 {
			t.Fatalf("replans in rounds %v, want two at least 3 apart", at)
		}
	})
	t.Run("bootstrap: none after 65% of the budget", func(t *testing.T) {
		t.Parallel()
		tr := planSession(t, "bootstrap", fiveStepPlan)
		setMetrics(t, tr, map[string]int{"iteration": 25}) // floor(0.65·40) = 26
		var at []int
		for range 6 {
			if drift(tr) == NudgeReplan {
				at = append(at, tr.Iteration())
			}
		}
		if len(at) != 0 {
			t.Fatalf("replans in rounds %v after the cutoff", at)
		}
	})
	t.Run("muted in PRODUCE", func(t *testing.T) {
		t.Parallel()
		tr := planSession(t, "bootstrap", fiveStepPlan)
		tr.s.Phase = "PRODUCE"
		tr.s.Strategy.Transitions = tr.s.Strategy.Transitions[:1]
		for range 6 {
			if k := drift(tr); k == NudgeReplan {
				t.Fatalf("replan in PRODUCE at round %d", tr.Iteration())
			}
		}
	})
}

func TestQuality(t *testing.T) {
	t.Parallel()
	tr := newTracker(t, "producer", nil)
	tr.Tick(t0)
	tr.RecordThought("looking")
	tr.RecordToolCall(read("a.go"))
	tr.RecordToolCall(read("b.go"))
	tr.EndRound()
	tr.Tick(t0)
	tr.RecordToolCall(ToolCall{Name: "Read", Status: StatusError})
	tr.EndRound()
	// no plan: 100·(0.4·(1/2) + 0.2·0 + 0.2·(3/2/3) + 0.2·1) = 50
	if q := tr.Quality(); q.Score != 50 || q.HasPlan {
		t.Fatalf("quality %+v, want 50 without a plan", q)
	}
	p := planSession(t, "bootstrap", fiveStepPlan)
	round(t, p, ToolCall{Name: "LS", Args: map[string]any{"path": "."}}, grep("Tracker"))
	// 2 rounds, 1 thought, 0 reflections, 2 calls, observed; plan 2/5 covered, deviation 0:
	// plan score 0.6·0.4 + 0.4·1 = 0.64; 100·(0.3·0.5 + 0 + 0.15·(1/3) + 0.15 + 0.25·0.64) = 51
	if q := p.Quality(); q.Score != 51 || !q.HasPlan || math.Abs(q.PlanScore-0.64) > 1e-9 {
		t.Fatalf("quality %+v, want 51 with a plan", q)
	}
}
