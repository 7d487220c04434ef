package backupsvc

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/trace"
)

// Failure learning's records (seed 003): execution traces with their
// attempts, failure patterns, per-skill statistics and reviews. The
// artifacts' execution records are derived from the traces and rebuilt on
// import; the grouper and the sessions' assembly state are not exported
// (patterns keep matching through their fingerprint hashes).
const (
	recTrace          = "trace"
	recFailurePattern = "failure_pattern"
	recTraceSkill     = "trace_skill"
	recTraceReview    = "trace_review"
)

type traceRecord struct {
	Project string               `json:"project"`
	Trace   trace.ExecutionTrace `json:"trace"`
}

type failurePatternRecord struct {
	Project string               `json:"project"`
	Pattern trace.FailurePattern `json:"pattern"`
}

type traceSkillRecord struct {
	Project string           `json:"project"`
	Skill   trace.SkillStats `json:"skill"`
}

func init() {
	RecordTypes = append(RecordTypes, recTrace, recFailurePattern, recTraceSkill, recTraceReview)
	importers[recTrace] = func(ctx context.Context, st *importState, raw json.RawMessage) error {
		return insert(ctx, st, raw, recTrace, func(r *traceRecord) (*string, string) { return &r.Project, r.Trace.ID },
			func(r traceRecord) (bool, error) {
				if err := r.Trace.Validate(); err != nil {
					return false, app.Invalid("import", "trace", "%v", err)
				}
				if _, err := st.tx.GetTrace(ctx, r.Project, r.Trace.ID); !errors.Is(err, store.ErrNotFound) {
					return false, err
				}
				if err := st.tx.PutTrace(ctx, r.Project, r.Trace, st.s.env.Now()); err != nil {
					return false, err
				}
				return true, st.tx.InsertExecutionRecords(ctx, r.Project, trace.RecordsFromTrace(&r.Trace))
			})
	}
	importers[recFailurePattern] = func(ctx context.Context, st *importState, raw json.RawMessage) error {
		return insert(ctx, st, raw, recFailurePattern, func(r *failurePatternRecord) (*string, string) { return &r.Project, r.Pattern.ID },
			func(r failurePatternRecord) (bool, error) {
				if err := r.Pattern.Validate(); err != nil {
					return false, app.Invalid("import", "pattern", "%v", err)
				}
				if _, err := st.tx.GetFailurePattern(ctx, r.Project, r.Pattern.ID); !errors.Is(err, store.ErrNotFound) {
					return false, err
				}
				return true, st.tx.PutFailurePattern(ctx, r.Project, r.Pattern)
			})
	}
	importers[recTraceSkill] = func(ctx context.Context, st *importState, raw json.RawMessage) error {
		return insert(ctx, st, raw, recTraceSkill, func(r *traceSkillRecord) (*string, string) { return &r.Project, r.Skill.SkillID },
			func(r traceSkillRecord) (bool, error) {
				if _, err := st.tx.GetTraceSkill(ctx, r.Project, r.Skill.SkillID); !errors.Is(err, store.ErrNotFound) {
					return false, err
				}
				return true, st.tx.PutTraceSkill(ctx, r.Project, r.Skill, st.s.env.Now())
			})
	}
	importers[recTraceReview] = func(ctx context.Context, st *importState, raw json.RawMessage) error {
		return insert(ctx, st, raw, recTraceReview, func(r *store.TraceReview) (*string, string) { return &r.Project, r.ID },
			func(r store.TraceReview) (bool, error) {
				if !json.Valid(r.Result) {
					return false, app.Invalid("import", "result", "is not valid JSON")
				}
				return st.tx.InsertTraceReview(ctx, r)
			})
	}
}

// exportTrace writes failure learning's records.
func exportTrace(ctx context.Context, tx store.Tx, p string, write writeFunc) error {
	if err := tx.EachTrace(ctx, p, store.TraceFilter{}, func(t trace.ExecutionTrace) error {
		return write(recTrace, traceRecord{Project: p, Trace: t})
	}); err != nil {
		return err
	}
	if err := pages(func(limit, offset int) ([]trace.FailurePattern, error) {
		return tx.ListFailurePatterns(ctx, p, store.FailurePatternFilter{Limit: limit, Offset: offset})
	}, func(x trace.FailurePattern) error {
		return write(recFailurePattern, failurePatternRecord{Project: p, Pattern: x})
	}); err != nil {
		return err
	}
	skills, err := tx.ListTraceSkills(ctx, p)
	if err != nil {
		return err
	}
	for _, s := range skills {
		if err := write(recTraceSkill, traceSkillRecord{Project: p, Skill: s}); err != nil {
			return err
		}
	}
	return pages(func(limit, offset int) ([]store.TraceReview, error) {
		return tx.ListTraceReviews(ctx, p, store.TraceReviewFilter{Limit: limit, Offset: offset})
	}, func(x store.TraceReview) error { return write(recTraceReview, x) })
}
