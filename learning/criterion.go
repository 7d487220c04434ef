package learning

import (
	"time"
)

// FeedbackEvent is one criterion judgement of an outcome (see
// FeedbackEvents). RawValue is the outcome's undecayed raw score; decay is
// applied once, when weights are read (the peer stores an already decayed
// value and decays it again).
type FeedbackEvent struct {
	ID        string       `json:"id"`
	Project   string       `json:"project"`
	Criterion string       `json:"criterion"`
	Type      FeedbackType `json:"type"`
	RawValue  float64      `json:"raw_value"`
	TaskID    string       `json:"bead_id"`
	OutcomeID string       `json:"outcome_id,omitempty"`
	Timestamp time.Time    `json:"timestamp"`
	Context   string       `json:"context,omitempty"`
}

// Strength is the evidence an event carries toward its type: the raw score
// for a helpful event, 1−raw for a harmful one (so a worse failure is
// stronger evidence of harm), and nothing for a neutral one. It is the
// "strength" variant of Config.HarmfulWeight; the seed adds the raw score
// for both types (EventWeight), which makes a 0.14 failure weaker harm than
// a 0.40 one; see docs/learning.md.
func (e FeedbackEvent) Strength() float64 {
	switch e.Type {
	case Helpful:
		return e.RawValue
	case Harmful:
		return 1 - e.RawValue
	default:
		return 0
	}
}

// EventWeight is what an event adds to its criterion's decayed sum: its
// raw score (the seed: helpfulSum and harmfulSum both sum raw_value), or
// with HarmfulWeight "strength", Strength. Neutral events add nothing.
func (c Config) EventWeight(e FeedbackEvent) float64 {
	if c.HarmfulWeight == "strength" {
		return e.Strength()
	}
	switch e.Type {
	case Helpful, Harmful:
		return e.RawValue
	}
	return 0
}

// Criterion is the persisted aggregate of one evaluation criterion's
// feedback in a project, maintained incrementally.
type Criterion struct {
	Project       string     `json:"project"`
	Name          string     `json:"criterion"`
	Helpful       DecayedSum `json:"helpful_sum"`
	Harmful       DecayedSum `json:"harmful_sum"`
	HelpfulCount  int64      `json:"helpful_count"`
	HarmfulCount  int64      `json:"harmful_count"`
	NeutralCount  int64      `json:"neutral_count"`
	LastValidated time.Time  `json:"last_validated"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
}

// Apply folds one feedback event into the aggregate. Neutral events are
// counted but carry no evidence. Any helpful or harmful event revalidates
// the criterion: LastValidated moves to the newest such event time.
func (c *Criterion) Apply(e FeedbackEvent, weight, halfLifeDays float64) {
	switch e.Type {
	case Helpful:
		c.HelpfulCount++
		c.Helpful = c.Helpful.Add(weight, e.Timestamp, halfLifeDays)
	case Harmful:
		c.HarmfulCount++
		c.Harmful = c.Harmful.Add(weight, e.Timestamp, halfLifeDays)
	default:
		c.NeutralCount++
		return
	}
	if e.Timestamp.After(c.LastValidated) {
		c.LastValidated = e.Timestamp
	}
}

// CriterionWeight is a criterion's weight at an instant, with the numbers
// it was computed from.
type CriterionWeight struct {
	Criterion     string     `json:"criterion"`
	Weight        float64    `json:"weight"`
	RawWeight     float64    `json:"raw_weight"`
	HelpfulSum    float64    `json:"decayed_helpful"`
	HarmfulSum    float64    `json:"decayed_harmful"`
	HelpfulCount  int64      `json:"helpful_count"`
	HarmfulCount  int64      `json:"harmful_count"`
	NeutralCount  int64      `json:"neutral_count"`
	HarmfulRatio  float64    `json:"harmful_ratio"`
	Deprecated    bool       `json:"deprecated"`
	LastValidated *time.Time `json:"last_validated,omitempty"`
	HalfLifeDays  float64    `json:"half_life_days"`
	At            time.Time  `json:"at"`
}

// WeightFloor keeps a criterion weight from reaching zero.
const WeightFloor = 0.1

// WeightFromSums is the seed's max(0.1, helpful/(helpful+harmful)), and 1.0
// when there is no evidence at all.
func WeightFromSums(helpful, harmful float64) float64 {
	total := helpful + harmful
	if total <= 0 {
		return 1
	}
	return max(WeightFloor, helpful/total)
}

// ShouldDeprecateCriterion is the seed's rule on raw counts: at least
// MinFeedbackForAdjustment helpful+harmful events and a harmful ratio
// strictly above MaxHarmfulRatio.
func (c Config) ShouldDeprecateCriterion(helpful, harmful int64) bool {
	total := helpful + harmful
	if total == 0 || total < int64(c.MinFeedbackForAdjustment) {
		return false
	}
	return float64(harmful)/float64(total) > c.MaxHarmfulRatio
}

// Weight evaluates the criterion at now from its incremental sums. A
// deprecated criterion's effective weight is 0 (its influence is removed);
// RawWeight keeps the floored value for display.
func (c Config) Weight(cr Criterion, now time.Time) CriterionWeight {
	return c.weightFrom(cr, cr.Helpful.At(now, c.HalfLifeDays), cr.Harmful.At(now, c.HalfLifeDays), now)
}

// WeightFromEvents evaluates the criterion by full recomputation, the
// reference for Weight and the path used when now precedes the newest event.
func (c Config) WeightFromEvents(cr Criterion, events []FeedbackEvent, now time.Time) CriterionWeight {
	var h, x []Timed
	for _, e := range events {
		switch e.Type {
		case Helpful:
			h = append(h, Timed{c.EventWeight(e), e.Timestamp})
		case Harmful:
			x = append(x, Timed{c.EventWeight(e), e.Timestamp})
		}
	}
	return c.weightFrom(cr, RecomputeDecayed(h, now, c.HalfLifeDays), RecomputeDecayed(x, now, c.HalfLifeDays), now)
}

func (c Config) weightFrom(cr Criterion, helpful, harmful float64, now time.Time) CriterionWeight {
	w := CriterionWeight{
		Criterion:    cr.Name,
		RawWeight:    WeightFromSums(helpful, harmful),
		HelpfulSum:   helpful,
		HarmfulSum:   harmful,
		HelpfulCount: cr.HelpfulCount,
		HarmfulCount: cr.HarmfulCount,
		NeutralCount: cr.NeutralCount,
		Deprecated:   c.ShouldDeprecateCriterion(cr.HelpfulCount, cr.HarmfulCount),
		HalfLifeDays: c.HalfLifeDays,
		At:           now,
	}
	if n := cr.HelpfulCount + cr.HarmfulCount; n > 0 {
		w.HarmfulRatio = float64(cr.HarmfulCount) / float64(n)
	}
	if !cr.LastValidated.IsZero() {
		lv := cr.LastValidated
		w.LastValidated = &lv
	}
	w.Weight = w.RawWeight
	if w.Deprecated {
		w.Weight = 0
	}
	return w
}

// WeightedScore is a raw score with a criterion weight applied.
type WeightedScore struct {
	Criterion string  `json:"criterion"`
	Raw       float64 `json:"raw"`
	Weight    float64 `json:"weight"`
	Weighted  float64 `json:"weighted"`
}

// ApplyWeight multiplies a raw score by a criterion weight.
func ApplyWeight(criterion string, raw, weight float64) WeightedScore {
	return WeightedScore{Criterion: criterion, Raw: raw, Weight: weight, Weighted: float64(raw * weight)}
}
