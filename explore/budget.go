package explore

import (
	"math"
)

// Budget bounds one exploration session. The first six fields are the seed's
// budget; the rest make the seed's hard-coded exit rules configurable and
// carry limits that the caller's runtime enforces (tokens, wall time).
type Budget struct {
	// MaxIterations is the soft round cap: reaching it forces the terminal phase.
	MaxIterations int `json:"max_iterations" toml:"max_iterations"`
	// SearchBudget is the number of search rounds allowed in an exploring
	// phase. Only rounds with a search that found something count.
	SearchBudget int `json:"search_budget" toml:"search_budget"`
	// ReadBudget is the number of read rounds allowed in an exploring phase
	// (0: none), so that an exploration that reads without searching also
	// moves on (bootstrap: EXPLORE ends at either budget).
	ReadBudget int `json:"read_budget" toml:"read_budget"`
	// SearchBudgetGrace is the idle grace in the producing phase: that many idle
	// rounds without any submit end it.
	SearchBudgetGrace int `json:"search_budget_grace" toml:"search_budget_grace"`
	// MaxSubmits is the hard submit cap.
	MaxSubmits int `json:"max_submits" toml:"max_submits"`
	// SoftSubmitLimit is the submit count after which a text reply may end production.
	SoftSubmitLimit int `json:"soft_submit_limit" toml:"soft_submit_limit"`
	// IdleRoundsToExit is the number of rounds without a submit (after at
	// least one) that end production.
	IdleRoundsToExit int `json:"idle_rounds_to_exit" toml:"idle_rounds_to_exit"`
	// TerminalGraceRounds: the session exits once this many rounds have been
	// ticked in the terminal phase (seed: 3).
	TerminalGraceRounds int `json:"terminal_grace_rounds" toml:"terminal_grace_rounds"`
	// HardExitRounds: once graceful exit starts at round g, the session exits
	// at round g+HardExitRounds; MaxIterations+HardExitRounds is also the
	// absolute round limit (seed: 2).
	HardExitRounds int `json:"hard_exit_rounds" toml:"hard_exit_rounds"`
	// MaxSessionInputTokens and MaxSessionTokens are token limits for the
	// caller's runtime (0 = none); the tracker only carries them.
	MaxSessionInputTokens int `json:"max_session_input_tokens,omitempty" toml:"max_session_input_tokens"`
	MaxSessionTokens      int `json:"max_session_tokens,omitempty" toml:"max_session_tokens"`
	// TimeoutMS is a wall-time limit for the caller's runtime (0 = none).
	TimeoutMS int64 `json:"timeout_ms,omitempty" toml:"timeout_ms"`
}

// DefaultBudget returns the seed's defaults: 24 iterations, search budget 18,
// grace 10, 10 submits (soft limit 8), 3 idle rounds, terminal grace 3 rounds,
// hard exit 2 rounds after graceful exit starts; and kaizen's read budget of
// 12 rounds (two thirds of the search budget: reading is cheaper to judge
// than searching, and a read-only exploration should not run to the
// iteration cap).
func DefaultBudget() Budget {
	return Budget{
		MaxIterations:       24,
		SearchBudget:        18,
		ReadBudget:          DefaultReadBudget,
		SearchBudgetGrace:   10,
		MaxSubmits:          10,
		SoftSubmitLimit:     8,
		IdleRoundsToExit:    3,
		TerminalGraceRounds: 3,
		HardExitRounds:      2,
	}
}

// DefaultReadBudget is the default read budget (Budget.ReadBudget).
const DefaultReadBudget = 12

func budgetOf(maxIter, search, grace, submits, soft, idle int) Budget {
	b := DefaultBudget()
	b.MaxIterations, b.SearchBudget, b.SearchBudgetGrace = maxIter, search, grace
	b.MaxSubmits, b.SoftSubmitLimit, b.IdleRoundsToExit = submits, soft, idle
	return b
}

// AnalystBudget is the analyst pipeline's budget: 24/18/10, no submits, idle 2,
// session input tokens ceil(24·24000·0.6) and total tokens ceil(that·1.35).
func AnalystBudget() Budget {
	b := budgetOf(24, 18, 10, 0, 0, 2)
	b.MaxSessionInputTokens = int(math.Ceil(24 * 24000 * 0.6))
	b.MaxSessionTokens = int(math.Ceil(float64(b.MaxSessionInputTokens) * 1.35))
	return b
}

// ProducerBudget is the producer pipeline's budget: 24/4/3, 10 submits (soft 10), idle 3.
func ProducerBudget() Budget { return budgetOf(24, 4, 3, 10, 10, 3) }

// EvolverBudget is the evolver's budget: 20/10/4, 8 submits (soft 8), idle 2.
func EvolverBudget() Budget { return budgetOf(20, 10, 4, 8, 8, 2) }

// ConsolidationGateBudget is the consolidation gate's budget: 5/3/1, 5 submits (soft 5), idle 1.
func ConsolidationGateBudget() Budget { return budgetOf(5, 3, 1, 5, 5, 1) }

// ScanBudget is the scan pipeline's produce-stage budget: 24 iterations, 10
// submits (soft 8), idle 2. With summarize set (a scan that only summarizes)
// it is 12 iterations, 3 submits (soft 2). Search budget and grace keep the
// defaults, which the notes do not specify.
func ScanBudget(summarize bool) Budget {
	if summarize {
		return budgetOf(12, 18, 10, 3, 2, 2)
	}
	return budgetOf(24, 18, 10, 10, 8, 2)
}

// PhaseRouterBudget is the budget of the tracker's predecessor (PhaseRouter):
// 30/8/4, 6 submits (soft 4), idle 2, exit after 2 terminal rounds.
func PhaseRouterBudget() Budget {
	b := budgetOf(30, 8, 4, 6, 4, 2)
	b.TerminalGraceRounds = 2
	return b
}

// DefaultContextWindowBudget is the per-round context-window token budget
// ComputeAnalystBudget assumes when given 0.
const DefaultContextWindowBudget = 15000

// ComputeAnalystBudget scales the analyst budget with the size of the code
// base: MaxIterations is 24 up to 40 files, rises linearly to 32 at 100 files
// and to 40 at 200 files, and stays 40 above. SearchBudget is
// round(0.75·MaxIterations), TimeoutMS round(MaxIterations/24·480000) and the
// session input tokens MaxIterations·ceil(cwBudget·0.6). Negative file counts
// count as 0; cwBudget ≤ 0 means DefaultContextWindowBudget.
func ComputeAnalystBudget(fileCount, cwBudget int) Budget {
	if cwBudget <= 0 {
		cwBudget = DefaultContextWindowBudget
	}
	f := float64(max(fileCount, 0))
	var maxIter int
	switch {
	case f <= 40:
		maxIter = 24
	case f <= 100:
		maxIter = int(math.Round(24 + 8*(f-40)/60))
	case f <= 200:
		maxIter = int(math.Round(32 + 8*(f-100)/100))
	default:
		maxIter = 40
	}
	b := AnalystBudget()
	b.MaxIterations = maxIter
	b.SearchBudget = int(math.Round(0.75 * float64(maxIter)))
	b.TimeoutMS = int64(math.Round(float64(maxIter) / 24 * 480000))
	b.MaxSessionInputTokens = maxIter * int(math.Ceil(float64(cwBudget)*0.6))
	b.MaxSessionTokens = int(math.Ceil(float64(b.MaxSessionInputTokens) * 1.35))
	return b
}

// maxBudgetRounds keeps round arithmetic far from integer overflow.
const maxBudgetRounds = 1_000_000

// Validate reports the first invalid field as a *BudgetError.
func (b Budget) Validate() error {
	nonNeg := []struct {
		name string
		v    int
	}{
		{"search_budget", b.SearchBudget},
		{"read_budget", b.ReadBudget},
		{"search_budget_grace", b.SearchBudgetGrace},
		{"max_submits", b.MaxSubmits},
		{"soft_submit_limit", b.SoftSubmitLimit},
		{"idle_rounds_to_exit", b.IdleRoundsToExit},
		{"max_session_input_tokens", b.MaxSessionInputTokens},
		{"max_session_tokens", b.MaxSessionTokens},
	}
	if b.MaxIterations < 1 || b.MaxIterations > maxBudgetRounds {
		return &BudgetError{Field: "max_iterations", Value: b.MaxIterations, Msg: "must be between 1 and 1000000"}
	}
	for _, f := range nonNeg {
		if f.v < 0 {
			return &BudgetError{Field: f.name, Value: f.v, Msg: "must not be negative"}
		}
	}
	if b.TimeoutMS < 0 {
		return &BudgetError{Field: "timeout_ms", Value: b.TimeoutMS, Msg: "must not be negative"}
	}
	if b.SoftSubmitLimit > b.MaxSubmits {
		return &BudgetError{Field: "soft_submit_limit", Value: b.SoftSubmitLimit, Msg: "must not exceed max_submits"}
	}
	if b.TerminalGraceRounds < 1 || b.TerminalGraceRounds > maxBudgetRounds {
		return &BudgetError{Field: "terminal_grace_rounds", Value: b.TerminalGraceRounds, Msg: "must be between 1 and 1000000"}
	}
	if b.HardExitRounds < 1 || b.HardExitRounds > maxBudgetRounds {
		return &BudgetError{Field: "hard_exit_rounds", Value: b.HardExitRounds, Msg: "must be between 1 and 1000000"}
	}
	return nil
}
