package learningsvc

import (
	"context"
	"slices"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// What the learning system learned in a period: the patterns that became
// proven or deprecated, the anti-patterns that appeared, each with the
// observations behind it, and the success trend with its confidence
// interval. The digest service (internal/app/digestsvc) combines it with
// the experience system's changes.

// Observation is one use of a pattern behind a change: the task, its
// result and the feedback it gave.
type Observation struct {
	TaskID  string                `json:"bead_id,omitempty"`
	Success bool                  `json:"success"`
	Type    learning.FeedbackType `json:"type"`
	At      time.Time             `json:"at"`
}

// PatternChange is a pattern whose state changed in the period.
type PatternChange struct {
	ID      string                 `json:"id"`
	Content string                 `json:"content"`
	From    learning.MaturityState `json:"from"`
	To      learning.MaturityState `json:"to"`
	Manual  bool                   `json:"manual"`
	// SuccessCount and FailureCount are the pattern's observations now,
	// with the 95 % Wilson interval of its success rate.
	SuccessCount int64      `json:"success_count"`
	FailureCount int64      `json:"failure_count"`
	SuccessCI95  [2]float64 `json:"success_ci95"`
	// Evidence are the observations of the period behind the change,
	// newest first (at most maxEvidence); EvidenceTotal counts them all.
	Evidence      []Observation `json:"evidence"`
	EvidenceTotal int           `json:"evidence_total"`
}

// AntiPatternChange is an anti-pattern created in the period, with the
// failed observations of its source pattern.
type AntiPatternChange struct {
	ID        string        `json:"id"`
	Content   string        `json:"content"`
	Reason    string        `json:"reason"`
	SourceID  string        `json:"source_id"`
	CreatedAt time.Time     `json:"created_at"`
	Failures  []Observation `json:"failures"`
	// FailureTotal counts the source's failed observations.
	FailureTotal int `json:"failure_total"`
}

// RateInterval is a success rate over a span with its 95 % Wilson interval
// (Low and High are 0 and 1 without outcomes; Rate is 0 then).
type RateInterval struct {
	From      time.Time `json:"from"`
	To        time.Time `json:"to"`
	Total     int       `json:"total"`
	Succeeded int       `json:"succeeded"`
	Rate      float64   `json:"rate"`
	Low       float64   `json:"low"`
	High      float64   `json:"high"`
}

func rateOf(from, to time.Time, total, succeeded int) RateInterval {
	r := RateInterval{From: from, To: to, Total: total, Succeeded: succeeded, High: 1}
	if total > 0 {
		r.Rate = float64(succeeded) / float64(total)
		ci := learning.Wilson95(int64(succeeded), int64(total))
		r.Low, r.High = ci[0], ci[1]
	}
	return r
}

// Trend is the success rate of the period and of the period before it (of
// the same length), and the period in buckets (days for periods up to 14
// days, else weeks ending at the period's end).
type Trend struct {
	Current  RateInterval   `json:"current"`
	Previous RateInterval   `json:"previous"`
	Buckets  []RateInterval `json:"buckets"`
	// Capped: more than maxSeriesOutcomes outcomes; the newest were counted.
	Capped bool `json:"capped"`
}

// PatternsLearned is the learning system's part of a digest.
type PatternsLearned struct {
	NewProven       []PatternChange     `json:"new_proven"`
	NewDeprecated   []PatternChange     `json:"new_deprecated"`
	NewAntiPatterns []AntiPatternChange `json:"new_anti_patterns"`
	Trend           Trend               `json:"trend"`
}

// maxEvidence bounds the observations listed behind one change.
const maxEvidence = 10

// Learned reports what the project's learning system learned between
// since and now (the engine's clock): the patterns that are proven (or
// deprecated) now and were not at since, the anti-patterns created since,
// and the success trend. The state at since is recomputed from the events
// up to since (and a manual override in force then).
func (s *Service) Learned(ctx context.Context, project string, since time.Time) (*PatternsLearned, error) {
	const op = "learned"
	now := s.env.Now()
	out := &PatternsLearned{NewProven: []PatternChange{}, NewDeprecated: []PatternChange{}, NewAntiPatterns: []AntiPatternChange{}}
	err := s.env.View(ctx, op, func(tx store.Tx) error {
		recs, err := tx.PatternsWithMaturity(ctx, project, store.PatternFilter{})
		if err != nil {
			return err
		}
		for _, rec := range recs {
			p := rec.Pattern
			if p.Kind == learning.KindAntiPattern {
				if p.CreatedAt.Before(since) {
					continue
				}
				c := AntiPatternChange{ID: p.ID, Content: p.Content, Reason: p.Reason, SourceID: p.SourceID, CreatedAt: p.CreatedAt,
					Failures: []Observation{}}
				fbs, err := tx.MaturityFeedback(ctx, project, p.SourceID)
				if err != nil {
					return err
				}
				for i := len(fbs) - 1; i >= 0; i-- {
					if f := fbs[i]; !f.Success {
						c.FailureTotal++
						if len(c.Failures) < maxEvidence {
							c.Failures = append(c.Failures, observationOf(f))
						}
					}
				}
				out.NewAntiPatterns = append(out.NewAntiPatterns, c)
				continue
			}
			m := rec.Maturity
			manualAt := m.PromotedAt
			if m.Manual == learning.Deprecated {
				manualAt = m.DeprecatedAt
			}
			manualNew := m.Manual != "" && manualAt != nil && manualAt.After(since)
			// Only helpful or harmful evidence moves the decayed sums, and
			// decay alone never makes a pattern proven or deprecated: a
			// pattern whose newest such evidence precedes the period, and
			// that no manual action changed in it, changed nothing.
			if !manualNew && !m.Helpful.Ref.After(since) && !m.Harmful.Ref.After(since) {
				continue
			}
			nowEval, err := s.evaluate(ctx, tx, m, now)
			if err != nil {
				return err
			}
			if nowEval.State != learning.Proven && nowEval.State != learning.Deprecated {
				continue
			}
			fbs, err := tx.MaturityFeedback(ctx, project, p.ID)
			if err != nil {
				return err
			}
			var before []learning.MaturityFeedback
			var inPeriod []learning.MaturityFeedback
			for _, f := range fbs {
				if f.Timestamp.After(since) {
					inPeriod = append(inPeriod, f)
				} else {
					before = append(before, f)
				}
			}
			if len(inPeriod) == 0 && !manualNew {
				continue // decay alone never makes a pattern proven or deprecated
			}
			past := m
			if manualNew {
				past.Manual = ""
			}
			thenEval := s.lc.Maturity.EvaluateFromEvents(past, before, since)
			if thenEval.State == nowEval.State {
				continue
			}
			c := PatternChange{ID: p.ID, Content: p.Content, From: thenEval.State, To: nowEval.State, Manual: nowEval.Manual,
				SuccessCount: p.SuccessCount, FailureCount: p.FailureCount,
				SuccessCI95: learning.Wilson95(p.SuccessCount, p.Observations()), Evidence: []Observation{}, EvidenceTotal: len(inPeriod)}
			for i := len(inPeriod) - 1; i >= 0 && len(c.Evidence) < maxEvidence; i-- {
				c.Evidence = append(c.Evidence, observationOf(inPeriod[i]))
			}
			if nowEval.State == learning.Proven {
				out.NewProven = append(out.NewProven, c)
			} else {
				out.NewDeprecated = append(out.NewDeprecated, c)
			}
		}
		out.Trend, err = trend(ctx, tx, project, since, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, l := range [][]PatternChange{out.NewProven, out.NewDeprecated} {
		slices.SortStableFunc(l, func(a, b PatternChange) int { return b.EvidenceTotal - a.EvidenceTotal })
	}
	slices.SortStableFunc(out.NewAntiPatterns, func(a, b AntiPatternChange) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return out, nil
}

func observationOf(f learning.MaturityFeedback) Observation {
	return Observation{TaskID: f.TaskID, Success: f.Success, Type: f.Type, At: f.Timestamp}
}

// trend counts the outcomes that finished in the period and in the one
// before it, and buckets the period.
func trend(ctx context.Context, tx store.Tx, project string, since, now time.Time) (Trend, error) {
	span := now.Sub(since)
	prev := since.Add(-span)
	step := 24 * time.Hour
	if span > 14*24*time.Hour {
		step = 7 * 24 * time.Hour
	}
	n := int((span + step - 1) / step)
	n = min(max(n, 1), 60)
	type count struct{ total, ok int }
	buckets := make([]count, n)
	var cur, before count
	t := Trend{}
	for read := 0; ; {
		page, err := tx.ListOutcomes(ctx, project, store.OutcomeFilter{Since: prev, Limit: 1000, Offset: read})
		if err != nil {
			return t, err
		}
		for _, o := range page {
			at := o.Timestamp
			var c *count
			switch {
			case at.After(now) || at.Before(prev):
				continue
			case at.Before(since):
				c = &before
			default:
				c = &cur
				i := n - 1 - int(now.Sub(at)/step)
				if i >= 0 {
					buckets[i].total++
					if o.Success {
						buckets[i].ok++
					}
				}
			}
			c.total++
			if o.Success {
				c.ok++
			}
		}
		read += len(page)
		if len(page) < 1000 {
			break
		}
		if read >= maxSeriesOutcomes {
			t.Capped = true
			break
		}
	}
	t.Current = rateOf(since, now, cur.total, cur.ok)
	t.Previous = rateOf(prev, since, before.total, before.ok)
	for i, b := range buckets {
		to := now.Add(-time.Duration(n-1-i) * step)
		t.Buckets = append(t.Buckets, rateOf(to.Add(-step), to, b.total, b.ok))
	}
	return t, nil
}
