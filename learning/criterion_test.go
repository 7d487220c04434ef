package learning_test

import (
	"testing"

	"github.com/kaizenhq/kaizen/learning"
)

func event(typ learning.FeedbackType, raw float64, ageDays float64) learning.FeedbackEvent {
	return learning.FeedbackEvent{Criterion: "type_safe", Type: typ, RawValue: raw, Timestamp: epoch.Add(-days(ageDays))}
}

func criterionOf(events ...learning.FeedbackEvent) learning.Criterion {
	return criterionWith(learning.DefaultConfig(), events...)
}

func criterionWith(cfg learning.Config, events ...learning.FeedbackEvent) learning.Criterion {
	c := learning.Criterion{Name: "type_safe"}
	for _, e := range events {
		c.Apply(e, cfg.EventWeight(e), cfg.HalfLifeDays)
	}
	return c
}

// TestCriterionWeight checks the seed's formula: helpfulSum and harmfulSum
// add the events' raw values, decayed; weight = max(0.1, h/(h+x)).
func TestCriterionWeight(t *testing.T) {
	t.Parallel()
	cfg := learning.DefaultConfig()
	cases := []struct {
		name   string
		events []learning.FeedbackEvent
		want   float64
	}{
		{"no evidence", nil, 1},
		{"neutral only", []learning.FeedbackEvent{event(learning.Neutral, 0.6, 0)}, 1},
		{"one harmful hits the floor", []learning.FeedbackEvent{event(learning.Harmful, 0.3, 0)}, learning.WeightFloor},
		{"one helpful", []learning.FeedbackEvent{event(learning.Helpful, 0.9, 0)}, 1},
		// 1.0 / (1.0 + 0.3)
		{"helpful vs harmful", []learning.FeedbackEvent{event(learning.Helpful, 1, 0), event(learning.Harmful, 0.3, 0)}, 1 / 1.3},
		// the check: a helpful 1.0 that is 90 days old (0.5) and a
		// fresh harmful 0.3: 0.5 / 0.8 = 0.625
		{"old helpful, fresh harmful", []learning.FeedbackEvent{event(learning.Helpful, 1, 90), event(learning.Harmful, 0.3, 0)}, 0.625},
		// one helpful of 0.7 and two harmful of 0.38: 0.7 / 1.46 = 0.4795
		{"one helpful, two harmful", []learning.FeedbackEvent{event(learning.Helpful, 0.7, 0), event(learning.Harmful, 0.38, 0),
			event(learning.Harmful, 0.38, 0)}, 0.7 / 1.46},
	}
	for _, c := range cases {
		w := cfg.Weight(criterionOf(c.events...), epoch)
		if diff := w.RawWeight - c.want; diff > 1e-12 || diff < -1e-12 {
			t.Errorf("%s: weight %v, want %v", c.name, w.RawWeight, c.want)
		}
		if c.name == "one helpful, two harmful" {
			// The formula gives 0.4795; with 2 of 3 events harmful (> 0.3)
			// the criterion is also deprecated, so its effective weight is 0.
			if w.RawWeight < 0.47945 || w.RawWeight > 0.47955 || !w.Deprecated || w.Weight != 0 {
				t.Errorf("0.7 against 2 × 0.38: raw %v deprecated %v weight %v, want 0.4795, true, 0", w.RawWeight, w.Deprecated, w.Weight)
			}
		} else if w.Weight != w.RawWeight {
			t.Errorf("%s: weight %v differs from the raw weight %v", c.name, w.Weight, w.RawWeight)
		}
	}
	// The strength variant (an option): harmful events weigh 1 − raw.
	strength := learning.DefaultConfig()
	strength.HarmfulWeight = "strength"
	w := strength.Weight(criterionWith(strength, event(learning.Helpful, 1, 0), event(learning.Harmful, 0.3, 0)), epoch)
	if diff := w.Weight - 1/1.7; diff > 1e-12 || diff < -1e-12 {
		t.Errorf("strength variant: %v, want 1/1.7", w.Weight)
	}
}

// A worse failure is stronger evidence of harm (the peer adds the raw score
// of a harmful outcome, making a 0.14 failure count less than a 0.40 one).
func TestHarmfulStrengthGrowsWithBadness(t *testing.T) {
	t.Parallel()
	bad := learning.FeedbackEvent{Type: learning.Harmful, RawValue: 0.14}
	meh := learning.FeedbackEvent{Type: learning.Harmful, RawValue: 0.40}
	if bad.Strength() <= meh.Strength() {
		t.Fatalf("strength(0.14)=%v must exceed strength(0.40)=%v", bad.Strength(), meh.Strength())
	}
}

func TestCriterionDeprecation(t *testing.T) {
	t.Parallel()
	cfg := learning.DefaultConfig()
	cases := []struct {
		helpful, harmful int64
		want             bool
	}{
		{0, 0, false},
		{0, 2, false}, // total 2 < 3
		{2, 1, true},  // 1/3 > 0.3
		{7, 3, false}, // 0.3 is not > 0.3
		{6, 3, true},
		{12, 3, false}, // the seed's example record: 0.2
	}
	for _, c := range cases {
		if got := cfg.ShouldDeprecateCriterion(c.helpful, c.harmful); got != c.want {
			t.Errorf("deprecate(%d helpful, %d harmful) = %v, want %v", c.helpful, c.harmful, got, c.want)
		}
	}
	c := criterionOf(event(learning.Helpful, 0.9, 0), event(learning.Helpful, 0.9, 0), event(learning.Harmful, 0.3, 0))
	w := cfg.Weight(c, epoch)
	if !w.Deprecated || w.Weight != 0 || w.RawWeight <= 0 {
		t.Errorf("deprecated criterion: weight %v raw %v deprecated %v; its influence must drop to 0", w.Weight, w.RawWeight, w.Deprecated)
	}
}

func TestCriterionRevalidation(t *testing.T) {
	t.Parallel()
	c := criterionOf(event(learning.Helpful, 0.9, 30), event(learning.Neutral, 0.6, 1), event(learning.Harmful, 0.2, 10))
	if !c.LastValidated.Equal(epoch.Add(-days(10))) {
		t.Errorf("last_validated %v: want the newest helpful or harmful event", c.LastValidated)
	}
	if c.HelpfulCount != 1 || c.HarmfulCount != 1 || c.NeutralCount != 1 {
		t.Errorf("counts %d/%d/%d", c.HelpfulCount, c.HarmfulCount, c.NeutralCount)
	}
	// Weight from the incremental sums equals the recomputation from events.
	cfg := learning.DefaultConfig()
	events := []learning.FeedbackEvent{event(learning.Helpful, 0.9, 30), event(learning.Neutral, 0.6, 1), event(learning.Harmful, 0.2, 10)}
	a, b := cfg.Weight(c, epoch), cfg.WeightFromEvents(c, events, epoch)
	if d := a.Weight - b.Weight; d > 1e-12 || d < -1e-12 {
		t.Errorf("incremental %v vs recomputed %v", a.Weight, b.Weight)
	}
}

// An outcome's feedback events are a pure projection: one per criterion,
// carrying the outcome's type, raw score, task, time and context, with ids
// that are stable and distinct.
func TestFeedbackEventsProjection(t *testing.T) {
	t.Parallel()
	o := learning.Outcome{ID: "out-01abc", Project: "p", TaskID: "bd-1", Timestamp: epoch, Strategy: "file-based",
		FailureMode: learning.FailureDependencyBlocked, Criteria: []string{"type_safe", "no_bugs"},
		Score: learning.Score{Raw: 0.36, Type: learning.Harmful}}
	events := learning.FeedbackEvents(o)
	if len(events) != 2 {
		t.Fatalf("%d events", len(events))
	}
	for i, e := range events {
		want := learning.FeedbackEvent{ID: "fb-01abc/" + o.Criteria[i], Project: "p", Criterion: o.Criteria[i],
			Type: learning.Harmful, RawValue: 0.36, TaskID: "bd-1", OutcomeID: "out-01abc", Timestamp: epoch,
			Context: "[strategy: file-based] [failure: dependency_blocked]"}
		if e != want {
			t.Errorf("event %d = %+v, want %+v", i, e, want)
		}
	}
	if again := learning.FeedbackEvents(o); again[0] != events[0] || again[1] != events[1] {
		t.Error("the projection must be deterministic")
	}
	if len(learning.FeedbackEvents(learning.Outcome{ID: "out-x"})) != 0 {
		t.Error("an outcome without criteria has no events")
	}
}
