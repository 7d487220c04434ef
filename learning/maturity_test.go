package learning_test

import (
	"errors"
	"testing"

	"github.com/kaizenhq/kaizen/learning"
)

type fb struct {
	typ     learning.FeedbackType
	ageDays float64
	weight  float64
}

func maturityOf(events ...fb) learning.Maturity {
	m := learning.Maturity{PatternID: "pattern-1"}
	for _, e := range events {
		w := e.weight
		if w == 0 {
			w = 1
		}
		m.Apply(learning.MaturityFeedback{Type: e.typ, Weight: w, Timestamp: epoch.Add(-days(e.ageDays))}, 90)
	}
	return m
}

func repeat(n int, e fb) []fb {
	out := make([]fb, n)
	for i := range out {
		out[i] = e
	}
	return out
}

var (
	h = fb{typ: learning.Helpful}
	x = fb{typ: learning.Harmful}
	n = fb{typ: learning.Neutral}
)

func TestMaturityStates(t *testing.T) {
	t.Parallel()
	mc := learning.DefaultConfig().Maturity
	cases := []struct {
		name   string
		events []fb
		want   learning.MaturityState
	}{
		{"no feedback", nil, learning.Candidate},
		{"2 helpful", repeat(2, h), learning.Candidate},
		{"3 helpful", repeat(3, h), learning.Established},
		{"2 helpful + 1 harmful", append(repeat(2, h), x), learning.Deprecated},
		{"5 helpful 90 days old decay to 2.5", repeat(5, fb{typ: learning.Helpful, ageDays: 90}), learning.Candidate},
		{"4 + 0.991 helpful is proven within epsilon", append(repeat(4, h), fb{typ: learning.Helpful, weight: 0.991}), learning.Proven},
		{"2.99 total is established within epsilon", append(repeat(2, h), fb{typ: learning.Helpful, weight: 0.99}), learning.Established},
		{"2.98 total stays candidate", append(repeat(2, h), fb{typ: learning.Helpful, weight: 0.98}), learning.Candidate},
		{"5 fresh helpful", repeat(5, h), learning.Proven},
		// harmful ratio exactly 0.15 is not < 0.15
		{"ratio 0.15 blocks proven", append(repeat(17, h), repeat(3, x)...), learning.Established},
		{"ratio below 0.15", append(repeat(18, h), repeat(3, x)...), learning.Proven},
		// harmful ratio exactly 0.3 is not > 0.3
		{"ratio 0.3 is not deprecated", append(repeat(7, h), repeat(3, x)...), learning.Established},
		{"ratio above 0.3", append(repeat(6, h), repeat(3, x)...), learning.Deprecated},
		{"neutral carries no evidence", append(repeat(2, h), repeat(5, n)...), learning.Candidate},
		{"old harm decays away", append(repeat(10, h), repeat(5, fb{typ: learning.Harmful, ageDays: 450})...), learning.Proven},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m := maturityOf(c.events...)
			ev := mc.Evaluate(m, epoch)
			if ev.State != c.want {
				t.Errorf("state %s (helpful %.3f, harmful %.3f), want %s", ev.State, ev.DecayedHelpful, ev.DecayedHarmful, c.want)
			}
			if ev.Multiplier != c.want.Multiplier() {
				t.Errorf("multiplier %v", ev.Multiplier)
			}
		})
	}
}

func TestMaturityMultipliers(t *testing.T) {
	t.Parallel()
	want := map[learning.MaturityState]float64{learning.Candidate: 0.5, learning.Established: 1, learning.Proven: 1.5, learning.Deprecated: 0}
	for s, m := range want {
		if s.Multiplier() != m {
			t.Errorf("%s multiplier %v, want %v", s, s.Multiplier(), m)
		}
	}
}

// Ageing alone moves a pattern back: proven today, established later,
// candidate once its evidence has decayed below min_feedback.
func TestMaturityDecaysWithAge(t *testing.T) {
	t.Parallel()
	mc := learning.DefaultConfig().Maturity
	m := maturityOf(repeat(6, h)...)
	for _, c := range []struct {
		after float64
		want  learning.MaturityState
	}{{0, learning.Proven}, {30, learning.Established}, {90, learning.Established}, {100, learning.Candidate}} {
		if got := mc.Evaluate(m, epoch.Add(days(c.after))).State; got != c.want {
			t.Errorf("after %v days: %s, want %s", c.after, got, c.want)
		}
	}
}

func TestManualMaturity(t *testing.T) {
	t.Parallel()
	mc := learning.DefaultConfig().Maturity
	t.Run("promote a candidate pins proven, with a note", func(t *testing.T) {
		m := maturityOf(h)
		notes, err := mc.Promote(&m, epoch, "reviewed by the team")
		if err != nil || len(notes) == 0 {
			t.Fatalf("notes %v err %v", notes, err)
		}
		ev := mc.Evaluate(m, epoch)
		if ev.State != learning.Proven || !ev.Manual || ev.ComputedState != learning.Candidate {
			t.Errorf("eval %+v", ev)
		}
		// Manual overrides win over later feedback (the peer overwrites them).
		m.Apply(learning.MaturityFeedback{Type: learning.Harmful, Weight: 1, Timestamp: epoch}, 90)
		m.Apply(learning.MaturityFeedback{Type: learning.Harmful, Weight: 1, Timestamp: epoch}, 90)
		if mc.Evaluate(m, epoch).State != learning.Proven {
			t.Error("a manual promotion must survive later feedback until reset")
		}
	})
	t.Run("promote twice changes nothing", func(t *testing.T) {
		m := maturityOf(h)
		if _, err := mc.Promote(&m, epoch, ""); err != nil {
			t.Fatal(err)
		}
		first := *m.PromotedAt
		notes, err := mc.Promote(&m, epoch.Add(days(1)), "")
		if err != nil || len(notes) != 1 || !m.PromotedAt.Equal(first) {
			t.Errorf("second promote: notes %v err %v promoted_at %v", notes, err, m.PromotedAt)
		}
	})
	t.Run("deprecated cannot be promoted until reset", func(t *testing.T) {
		m := maturityOf(h)
		if err := learning.Deprecate(&m, epoch, "causes file conflicts in 80% of cases"); err != nil {
			t.Fatal(err)
		}
		if mc.Evaluate(m, epoch).State != learning.Deprecated || m.ManualReason == "" {
			t.Fatal("deprecate with reason")
		}
		if _, err := mc.Promote(&m, epoch, ""); !errors.Is(err, learning.ErrPromoteDeprecated) {
			t.Fatalf("promote deprecated: %v", err)
		}
		learning.Reset(&m, epoch)
		if m.Generation != 1 || m.Manual != "" || m.HelpfulCount != 0 || m.ResetAt == nil {
			t.Fatalf("reset: %+v", m)
		}
		if _, err := mc.Promote(&m, epoch, ""); err != nil {
			t.Fatalf("promote after reset: %v", err)
		}
	})
	t.Run("computed deprecated cannot be promoted", func(t *testing.T) {
		m := maturityOf(append(repeat(2, h), x)...)
		if _, err := mc.Promote(&m, epoch, ""); !errors.Is(err, learning.ErrPromoteDeprecated) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("deprecate needs a reason", func(t *testing.T) {
		m := maturityOf()
		if err := learning.Deprecate(&m, epoch, ""); !errors.Is(err, learning.ErrReasonRequired) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("feedback of an old generation is ignored", func(t *testing.T) {
		m := maturityOf(repeat(3, h)...)
		learning.Reset(&m, epoch)
		m.Apply(learning.MaturityFeedback{Type: learning.Helpful, Weight: 1, Timestamp: epoch, Generation: 0}, 90)
		if m.HelpfulCount != 0 {
			t.Error("generation 0 feedback counted after reset")
		}
		m.Apply(learning.MaturityFeedback{Type: learning.Helpful, Weight: 1, Timestamp: epoch, Generation: 1}, 90)
		if m.HelpfulCount != 1 {
			t.Error("current generation feedback not counted")
		}
	})
}

func TestEvaluateFromEventsMatches(t *testing.T) {
	t.Parallel()
	mc := learning.DefaultConfig().Maturity
	var events []learning.MaturityFeedback
	m := learning.Maturity{}
	for i, typ := range []learning.FeedbackType{learning.Helpful, learning.Harmful, learning.Helpful, learning.Neutral, learning.Helpful} {
		f := learning.MaturityFeedback{Type: typ, Weight: 1, Timestamp: epoch.Add(-days(float64(i * 20)))}
		events = append(events, f)
		m.Apply(f, 90)
	}
	a, b := mc.Evaluate(m, epoch), mc.EvaluateFromEvents(m, events, epoch)
	if a.State != b.State || abs(a.DecayedHelpful-b.DecayedHelpful) > 1e-12 || abs(a.DecayedHarmful-b.DecayedHarmful) > 1e-12 {
		t.Errorf("incremental %+v vs recomputed %+v", a, b)
	}
	// Before the newest event the sums are inexact and the recomputation clamps each event's age.
	past := epoch.Add(-days(30))
	if !m.NeedsRecompute(past) {
		t.Fatal("NeedsRecompute before newest event")
	}
	r := mc.EvaluateFromEvents(m, events, past)
	if r.DecayedHelpful <= 0 {
		t.Errorf("recomputed in the past: %+v", r)
	}
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}
