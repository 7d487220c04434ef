package memory

import (
	"time"

	"github.com/kaizenhq/kaizen/learning"
)

// Records are copied on the way in (so a caller's later changes to its
// slices cannot reach the store) and on the way out (so a caller cannot
// change stored state through a returned slice or pointer). String lists
// are never nil once stored: nil and empty both read back as empty.
// Monotonic clock readings are dropped, so times compare by wall clock.

func strs(s []string) []string {
	out := make([]string, len(s))
	copy(out, s)
	return out
}

func wall(t time.Time) time.Time { return t.Round(0) }

func timePtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := wall(*t)
	return &v
}

func decayed(d learning.DecayedSum) learning.DecayedSum {
	d.Ref = wall(d.Ref)
	return d
}

func cloneOutcome(o learning.Outcome) learning.Outcome {
	o.FilesTouched, o.Patterns, o.Criteria = strs(o.FilesTouched), strs(o.Patterns), strs(o.Criteria)
	o.Timestamp, o.RecordedAt = wall(o.Timestamp), wall(o.RecordedAt)
	if o.Exploration != nil {
		x := *o.Exploration
		o.Exploration = &x
	}
	return o
}

func cloneCriterion(c learning.Criterion) learning.Criterion {
	c.Helpful, c.Harmful = decayed(c.Helpful), decayed(c.Harmful)
	c.LastValidated, c.CreatedAt, c.UpdatedAt = wall(c.LastValidated), wall(c.CreatedAt), wall(c.UpdatedAt)
	return c
}

func clonePattern(p learning.Pattern) learning.Pattern {
	p.Tags, p.ExampleTasks = strs(p.Tags), strs(p.ExampleTasks)
	p.CreatedAt, p.UpdatedAt = wall(p.CreatedAt), wall(p.UpdatedAt)
	return p
}

func cloneMaturity(m learning.Maturity) learning.Maturity {
	m.Helpful, m.Harmful = decayed(m.Helpful), decayed(m.Harmful)
	m.PromotedAt, m.DeprecatedAt, m.ResetAt = timePtr(m.PromotedAt), timePtr(m.DeprecatedAt), timePtr(m.ResetAt)
	m.LastValidated, m.UpdatedAt = wall(m.LastValidated), wall(m.UpdatedAt)
	return m
}

func cloneMaturityFeedback(f learning.MaturityFeedback) learning.MaturityFeedback {
	f.Timestamp = wall(f.Timestamp)
	return f
}

func cloneError(e learning.ErrorEntry) learning.ErrorEntry {
	e.Timestamp, e.ResolvedAt = wall(e.Timestamp), timePtr(e.ResolvedAt)
	return e
}
