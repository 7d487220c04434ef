package learning

import (
	"errors"
	"fmt"
	"time"
)

// MaturityState is a pattern's place in the seed's lifecycle.
type MaturityState string

// Maturity states.
const (
	Candidate   MaturityState = "candidate"
	Established MaturityState = "established"
	Proven      MaturityState = "proven"
	Deprecated  MaturityState = "deprecated"
)

// Valid reports whether s is one of the four states.
func (s MaturityState) Valid() bool {
	return s == Candidate || s == Established || s == Proven || s == Deprecated
}

// Multiplier is the seed's score multiplier of a state.
func (s MaturityState) Multiplier() float64 {
	switch s {
	case Established:
		return 1.0
	case Proven:
		return 1.5
	case Deprecated:
		return 0
	default:
		return 0.5
	}
}

// MaturityFeedback is one use of a pattern: whether the task succeeded
// (its observation, counted toward anti-pattern inversion) and the feedback
// type of its outcome (maturity evidence; for an explicit observation,
// helpful on success and harmful on failure). Weight is 1 for every event
// the engine records; Generation ties it to the pattern's evaluation period
// (a reset starts a new generation).
type MaturityFeedback struct {
	ID         string       `json:"id"`
	Project    string       `json:"project"`
	PatternID  string       `json:"pattern_id"`
	Success    bool         `json:"success"`
	Type       FeedbackType `json:"type"`
	Weight     float64      `json:"weight"`
	TaskID     string       `json:"bead_id,omitempty"`
	Timestamp  time.Time    `json:"timestamp"`
	Generation int64        `json:"generation"`
}

// Maturity is the persisted maturity record of a pattern. The decayed sums
// are maintained incrementally; the state is a function of them at a given
// instant unless a manual override (promote or deprecate) is in force.
type Maturity struct {
	Project       string        `json:"project"`
	PatternID     string        `json:"pattern_id"`
	Helpful       DecayedSum    `json:"helpful_sum"`
	Harmful       DecayedSum    `json:"harmful_sum"`
	HelpfulCount  int64         `json:"helpful_count"`
	HarmfulCount  int64         `json:"harmful_count"`
	NeutralCount  int64         `json:"neutral_count"`
	Manual        MaturityState `json:"manual_state,omitempty"`
	ManualReason  string        `json:"manual_reason,omitempty"`
	PromotedAt    *time.Time    `json:"promoted_at,omitempty"`
	DeprecatedAt  *time.Time    `json:"deprecated_at,omitempty"`
	LastValidated time.Time     `json:"last_validated"`
	Generation    int64         `json:"generation"`
	ResetAt       *time.Time    `json:"reset_at,omitempty"`
	UpdatedAt     time.Time     `json:"updated_at"`
}

// Apply folds one feedback event of the current generation into the record.
// Events of another generation are ignored. Neutral events are counted but
// carry no evidence (the peer counts them as harmful here and ignores them
// for criteria; kaizen applies one rule everywhere).
func (m *Maturity) Apply(f MaturityFeedback, halfLifeDays float64) {
	if f.Generation != m.Generation {
		return
	}
	switch f.Type {
	case Helpful:
		m.HelpfulCount++
		m.Helpful = m.Helpful.Add(f.Weight, f.Timestamp, halfLifeDays)
	case Harmful:
		m.HarmfulCount++
		m.Harmful = m.Harmful.Add(f.Weight, f.Timestamp, halfLifeDays)
	default:
		m.NeutralCount++
		return
	}
	if f.Timestamp.After(m.LastValidated) {
		m.LastValidated = f.Timestamp
	}
}

// MaturityEval is a pattern's maturity at an instant.
type MaturityEval struct {
	State          MaturityState `json:"state"`
	ComputedState  MaturityState `json:"computed_state"`
	Manual         bool          `json:"manual"`
	Multiplier     float64       `json:"multiplier"`
	DecayedHelpful float64       `json:"decayed_helpful"`
	DecayedHarmful float64       `json:"decayed_harmful"`
	DecayedTotal   float64       `json:"decayed_total"`
	HarmfulRatio   float64       `json:"harmful_ratio"`
	HelpfulCount   int64         `json:"helpful_count"`
	HarmfulCount   int64         `json:"harmful_count"`
	NeutralCount   int64         `json:"neutral_count"`
	At             time.Time     `json:"at"`
}

// StateFor is the seed's state rule on decayed counts, checked in order:
// deprecated (harmful ratio > deprecation threshold with enough feedback),
// candidate (not enough feedback), proven (enough decayed helpful and a
// harmful ratio below MaxHarmful), else established.
func (c MaturityConfig) StateFor(decayedHelpful, decayedHarmful float64) MaturityState {
	total := decayedHelpful + decayedHarmful
	enough := total >= c.MinFeedback-c.Epsilon && total > 0
	ratio := 0.0
	if total > 0 {
		ratio = decayedHarmful / total
	}
	switch {
	case enough && ratio > c.DeprecationThreshold:
		return Deprecated
	case !enough:
		return Candidate
	case decayedHelpful >= c.MinHelpful-c.Epsilon && ratio < c.MaxHarmful:
		return Proven
	default:
		return Established
	}
}

// Evaluate returns the maturity of m at now from its incremental sums.
func (c MaturityConfig) Evaluate(m Maturity, now time.Time) MaturityEval {
	return c.evaluate(m, m.Helpful.At(now, c.HalfLifeDays), m.Harmful.At(now, c.HalfLifeDays), now)
}

// EvaluateFromEvents is the full recomputation of Evaluate over the events
// of m's current generation.
func (c MaturityConfig) EvaluateFromEvents(m Maturity, events []MaturityFeedback, now time.Time) MaturityEval {
	var h, x []Timed
	for _, f := range events {
		if f.Generation != m.Generation {
			continue
		}
		switch f.Type {
		case Helpful:
			h = append(h, Timed{f.Weight, f.Timestamp})
		case Harmful:
			x = append(x, Timed{f.Weight, f.Timestamp})
		}
	}
	return c.evaluate(m, RecomputeDecayed(h, now, c.HalfLifeDays), RecomputeDecayed(x, now, c.HalfLifeDays), now)
}

// NeedsRecompute reports whether Evaluate at now would differ from the
// per-event recomputation (only when now precedes the newest event).
func (m Maturity) NeedsRecompute(now time.Time) bool {
	return !m.Helpful.Exact(now) || !m.Harmful.Exact(now)
}

func (c MaturityConfig) evaluate(m Maturity, helpful, harmful float64, now time.Time) MaturityEval {
	e := MaturityEval{
		ComputedState:  c.StateFor(helpful, harmful),
		DecayedHelpful: helpful,
		DecayedHarmful: harmful,
		DecayedTotal:   helpful + harmful,
		HelpfulCount:   m.HelpfulCount,
		HarmfulCount:   m.HarmfulCount,
		NeutralCount:   m.NeutralCount,
		At:             now,
	}
	if e.DecayedTotal > 0 {
		e.HarmfulRatio = harmful / e.DecayedTotal
	}
	e.State = e.ComputedState
	if m.Manual != "" {
		e.State, e.Manual = m.Manual, true
	}
	e.Multiplier = e.State.Multiplier()
	return e
}

// ErrPromoteDeprecated is returned when promoting a deprecated pattern; the
// seed requires a reset first.
var ErrPromoteDeprecated = errors.New("a deprecated pattern cannot be promoted; reset it first")

// Promote marks the pattern proven by external validation. It fails on a
// deprecated pattern (manual or computed). Promoting an already proven
// pattern changes nothing and reports it; promoting on little evidence is
// allowed but reported.
func (c MaturityConfig) Promote(m *Maturity, now time.Time, reason string) (notes []string, err error) {
	ev := c.Evaluate(*m, now)
	if ev.State == Deprecated {
		return nil, ErrPromoteDeprecated
	}
	if ev.State == Proven && m.Manual == Proven {
		return []string{"already promoted to proven; nothing changed"}, nil
	}
	if ev.ComputedState == Proven {
		notes = append(notes, "already proven by its feedback; the promotion pins the state")
	}
	if m.HelpfulCount < 3 {
		notes = append(notes, fmt.Sprintf("promoted on little evidence (%d helpful observations)", m.HelpfulCount))
	}
	t := now
	m.Manual, m.ManualReason, m.PromotedAt = Proven, reason, &t
	return notes, nil
}

// ErrReasonRequired is returned by Deprecate without a reason.
var ErrReasonRequired = errors.New("a reason is required to deprecate a pattern")

// Deprecate excludes the pattern (multiplier 0) for the given reason until
// it is reset.
func Deprecate(m *Maturity, now time.Time, reason string) error {
	if reason == "" {
		return ErrReasonRequired
	}
	t := now
	m.Manual, m.ManualReason, m.DeprecatedAt = Deprecated, reason, &t
	return nil
}

// Reset starts a new evaluation period: manual overrides are cleared, the
// counts and decayed sums start from zero, and feedback of earlier
// generations no longer counts (it stays stored for audit).
func Reset(m *Maturity, now time.Time) {
	t := now
	*m = Maturity{
		Project:    m.Project,
		PatternID:  m.PatternID,
		Generation: m.Generation + 1,
		ResetAt:    &t,
		UpdatedAt:  now,
	}
}
