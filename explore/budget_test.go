package explore

import (
	"errors"
	"testing"
)

func TestBudgets(t *testing.T) {
	t.Parallel()
	type six struct{ maxIter, search, grace, submits, soft, idle int }
	sixOf := func(b Budget) six {
		return six{b.MaxIterations, b.SearchBudget, b.SearchBudgetGrace, b.MaxSubmits, b.SoftSubmitLimit, b.IdleRoundsToExit}
	}
	cases := []struct {
		name string
		b    Budget
		want six
	}{
		{"default", DefaultBudget(), six{24, 18, 10, 10, 8, 3}},
		{"analyst", AnalystBudget(), six{24, 18, 10, 0, 0, 2}},
		{"producer", ProducerBudget(), six{24, 4, 3, 10, 10, 3}},
		{"evolver", EvolverBudget(), six{20, 10, 4, 8, 8, 2}},
		{"consolidation gate", ConsolidationGateBudget(), six{5, 3, 1, 5, 5, 1}},
		{"scan", ScanBudget(false), six{24, 18, 10, 10, 8, 2}},
		{"scan summarize", ScanBudget(true), six{12, 18, 10, 3, 2, 2}},
		{"phase router", PhaseRouterBudget(), six{30, 8, 4, 6, 4, 2}},
	}
	for _, c := range cases {
		if got := sixOf(c.b); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
		if err := c.b.Validate(); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if b := DefaultBudget(); b.TerminalGraceRounds != 3 || b.HardExitRounds != 2 {
		t.Errorf("default exit rounds %+v", b)
	}
	// 345600·1.35 is 466560.00000000006 in binary floating point, so the
	// ceiling is 466561, as in the peer's JavaScript.
	if b := AnalystBudget(); b.MaxSessionInputTokens != 345600 || b.MaxSessionTokens != 466561 {
		t.Errorf("analyst tokens %d/%d, want 345600/466561", b.MaxSessionInputTokens, b.MaxSessionTokens)
	}
	if PhaseRouterBudget().TerminalGraceRounds != 2 {
		t.Error("phase router exits after 2 terminal rounds")
	}
	for pipeline, want := range map[string]int{"analyst": 0, "producer": 4, "scan": 18, "evolver": 10, "consolidation_gate": 3, "bootstrap": 18, "": 18} {
		if got := BudgetFor(pipeline).SearchBudget; got != want && pipeline != "analyst" {
			t.Errorf("BudgetFor(%q).SearchBudget = %d, want %d", pipeline, got, want)
		}
	}
}

func TestComputeAnalystBudget(t *testing.T) {
	t.Parallel()
	cases := []struct {
		files, cw       int
		maxIter, search int
		timeoutMS       int64
		inputTokens     int
	}{
		{-5, 0, 24, 18, 480000, 24 * 9000},
		{0, 0, 24, 18, 480000, 24 * 9000},
		{40, 0, 24, 18, 480000, 24 * 9000},
		{41, 0, 24, 18, 480000, 24 * 9000},
		{70, 0, 28, 21, 560000, 28 * 9000},
		{100, 0, 32, 24, 640000, 32 * 9000},
		{101, 0, 32, 24, 640000, 32 * 9000},
		{150, 0, 36, 27, 720000, 36 * 9000},
		{200, 0, 40, 30, 800000, 40 * 9000},
		{5000, 0, 40, 30, 800000, 40 * 9000},
		{10, 20000, 24, 18, 480000, 24 * 12000},
	}
	for _, c := range cases {
		b := ComputeAnalystBudget(c.files, c.cw)
		if b.MaxIterations != c.maxIter || b.SearchBudget != c.search || b.TimeoutMS != c.timeoutMS || b.MaxSessionInputTokens != c.inputTokens {
			t.Errorf("ComputeAnalystBudget(%d, %d) = %d/%d/%d/%d, want %d/%d/%d/%d", c.files, c.cw,
				b.MaxIterations, b.SearchBudget, b.TimeoutMS, b.MaxSessionInputTokens, c.maxIter, c.search, c.timeoutMS, c.inputTokens)
		}
		if err := b.Validate(); err != nil {
			t.Error(err)
		}
	}
}

func TestBudgetValidate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		field  string
		mutate func(*Budget)
	}{
		{"max_iterations", func(b *Budget) { b.MaxIterations = 0 }},
		{"max_iterations", func(b *Budget) { b.MaxIterations = 2_000_000 }},
		{"search_budget", func(b *Budget) { b.SearchBudget = -1 }},
		{"search_budget_grace", func(b *Budget) { b.SearchBudgetGrace = -1 }},
		{"max_submits", func(b *Budget) { b.MaxSubmits = -1 }},
		{"soft_submit_limit", func(b *Budget) { b.SoftSubmitLimit = 11 }},
		{"idle_rounds_to_exit", func(b *Budget) { b.IdleRoundsToExit = -3 }},
		{"terminal_grace_rounds", func(b *Budget) { b.TerminalGraceRounds = 0 }},
		{"hard_exit_rounds", func(b *Budget) { b.HardExitRounds = 0 }},
		{"timeout_ms", func(b *Budget) { b.TimeoutMS = -1 }},
		{"max_session_tokens", func(b *Budget) { b.MaxSessionTokens = -1 }},
	}
	for _, c := range cases {
		b := DefaultBudget()
		c.mutate(&b)
		err := b.Validate()
		var be *BudgetError
		if !errors.As(err, &be) || be.Field != c.field || !errors.Is(err, ErrInvalidBudget) {
			t.Errorf("%s: %v", c.field, err)
		}
	}
}

func TestLoadBudgetTOML(t *testing.T) {
	t.Parallel()
	b, err := LoadBudgetTOML([]byte("max_iterations = 12\nsearch_budget = 6\n"))
	if err != nil || b.MaxIterations != 12 || b.SearchBudget != 6 || b.MaxSubmits != 10 {
		t.Fatalf("%+v %v", b, err)
	}
	for in, want := range map[string]error{
		"max_iteration = 3":   ErrUnknownKey,
		"max_iterations = -1": ErrInvalidBudget,
		"max_iterations = ":   ErrInvalidTOML,
		`max_submits = "ten"`: ErrInvalidTOML,
	} {
		if _, err := LoadBudgetTOML([]byte(in)); !errors.Is(err, want) {
			t.Errorf("LoadBudgetTOML(%q): %v, want %v", in, err, want)
		}
	}
}
