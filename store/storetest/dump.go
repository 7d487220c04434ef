package storetest

import (
	"errors"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// state is everything a store holds for some projects and setting keys, as
// every read method reports it.
type state struct {
	Projects []string
	Meta     map[string]string
	Data     map[string]projectState
}

type projectState struct {
	Outcomes         []learning.Outcome
	OutcomeCount     int64
	Feedback         []learning.FeedbackEvent
	Criteria         []learning.Criterion
	Patterns         []learning.Pattern
	PatternCount     int64
	Records          []store.PatternRecord
	Maturity         []learning.Maturity
	MaturityFeedback []learning.MaturityFeedback
	Errors           []learning.ErrorEntry
	ErrorCount       int64
}

const unset = "<unset>"

// dump reads the state of projects and setting keys in one View.
func dump(b *bundle, projects []string, metaKeys ...string) state {
	b.t.Helper()
	return read(b, func(tx store.Tx) (state, error) { return dumpTx(b, tx, projects, metaKeys) })
}

func dumpTx(b *bundle, tx store.Tx, projects, metaKeys []string) (state, error) {
	ctx := b.ctx
	s := state{Meta: map[string]string{}, Data: map[string]projectState{}}
	var err error
	if s.Projects, err = tx.Projects(ctx); err != nil {
		return s, err
	}
	s.Projects = orNil(s.Projects)
	for _, k := range metaKeys {
		v, err := tx.GetMeta(ctx, k)
		switch {
		case errors.Is(err, store.ErrNotFound):
			v = unset
		case err != nil:
			return s, err
		}
		s.Meta[k] = v
	}
	for _, p := range projects {
		var d projectState
		errs := []error{}
		add := func(err error) { errs = append(errs, err) }
		var e1, e2, e3 error
		d.Outcomes, e1 = tx.ListOutcomes(ctx, p, store.OutcomeFilter{})
		d.OutcomeCount, e2 = tx.CountOutcomes(ctx, p, store.OutcomeFilter{})
		add(e1)
		add(e2)
		add(tx.EachFeedback(ctx, p, func(e learning.FeedbackEvent) error { d.Feedback = append(d.Feedback, e); return nil }))
		d.Criteria, e1 = tx.ListCriteria(ctx, p)
		add(e1)
		d.Patterns, e1 = tx.ListPatterns(ctx, p, store.PatternFilter{})
		d.PatternCount, e2 = tx.CountPatterns(ctx, p, store.PatternFilter{})
		d.Records, e3 = tx.PatternsWithMaturity(ctx, p, store.PatternFilter{})
		add(e1)
		add(e2)
		add(e3)
		d.Maturity, e1 = tx.ListMaturity(ctx, p)
		add(e1)
		add(tx.EachMaturityFeedback(ctx, p, func(f learning.MaturityFeedback) error {
			d.MaturityFeedback = append(d.MaturityFeedback, f)
			return nil
		}))
		d.Errors, e1 = tx.ListErrors(ctx, p, store.ErrorFilter{})
		d.ErrorCount, e2 = tx.CountErrors(ctx, p, store.ErrorFilter{})
		add(e1)
		add(e2)
		if err := errors.Join(errs...); err != nil {
			return s, err
		}
		// Orders the contract leaves open are fixed here.
		d.Feedback = orNil(sortedBy(d.Feedback, feedbackID))
		d.Maturity = orNil(sortedBy(d.Maturity, maturityID))
		d.MaturityFeedback = orNil(sortedBy(d.MaturityFeedback, maturityFeedbackID))
		d.Outcomes, d.Criteria, d.Patterns = orNil(d.Outcomes), orNil(d.Criteria), orNil(d.Patterns)
		d.Records, d.Errors = orNil(d.Records), orNil(d.Errors)
		s.Data[p] = d
	}
	return s, nil
}

// orNil makes empty listings compare equal whether nil or empty.
func orNil[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// populate stores one record of every kind in project, with ids shared by
// every project populated, and returns the state it expects to read back.
func populate(b *bundle, project string, variant bool) projectState {
	b.t.Helper()
	o, c := fullOutcome(project, "o-1"), fullCriterion(project, "c-1")
	p, m := fullPattern(project, "pat-1", "split by file"), fullMaturity(project, "pat-1")
	mf, e := fullMaturityFeedback(project, "mf-1"), fullError(project, "e-1")
	e.Resolved, e.ResolvedAt = false, nil
	if variant {
		o.Strategy, c.HelpfulCount = "variant", 1
		p.SuccessCount, m.ManualReason = 1, "variant"
		mf.Weight, mf.Success, e.Message = 2, false, "variant"
	}
	b.seed(o, c, p, m, mf, e)
	return projectState{
		Outcomes: []learning.Outcome{o}, OutcomeCount: 1,
		Feedback: sortedBy(learning.FeedbackEvents(o), feedbackID),
		Criteria: []learning.Criterion{c},
		Patterns: []learning.Pattern{p}, PatternCount: 1,
		Records:          []store.PatternRecord{{Pattern: p, Maturity: m}},
		Maturity:         []learning.Maturity{m},
		MaturityFeedback: []learning.MaturityFeedback{mf},
		Errors:           []learning.ErrorEntry{e}, ErrorCount: 1,
	}
}
