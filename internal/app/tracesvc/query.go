package tracesvc

import (
	"context"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/trace"
)

// TraceQuery selects traces to list.
type TraceQuery struct {
	Project   string `json:"project,omitempty"`
	SkillID   string `json:"skill_id,omitempty"`
	TaskID    string `json:"task_id,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	// Status is open, succeeded or failed.
	Status string `json:"status,omitempty"`
	Limit  int    `json:"limit,omitempty"`
	Offset int    `json:"offset,omitempty"`
}

// TraceList is a page of traces, newest first.
type TraceList = app.Page[trace.ExecutionTrace]

// ListTraces lists traces, newest first.
func (s *Service) ListTraces(ctx context.Context, q TraceQuery) (*TraceList, error) {
	const op = "list traces"
	project, limit, err := s.env.PageQuery(op, q.Project, q.Limit, q.Offset,
		"skill_id", q.SkillID, "task_id", q.TaskID, "session_id", q.SessionID)
	if err != nil {
		return nil, err
	}
	switch q.Status {
	case "", "open", "succeeded", "failed":
	default:
		return nil, app.Invalid(op, "status", "%q is not open, succeeded or failed", q.Status)
	}
	f := store.TraceFilter{SkillID: q.SkillID, TaskID: q.TaskID, SessionID: q.SessionID, Status: q.Status, Limit: limit, Offset: q.Offset}
	return app.ListPage(ctx, s.env, op, project, limit, q.Offset,
		func(tx store.Tx) (int64, error) { return tx.CountTraces(ctx, project, f) },
		func(tx store.Tx) ([]trace.ExecutionTrace, error) { return tx.ListTraces(ctx, project, f) })
}

// GetTrace returns one trace with its attempts.
func (s *Service) GetTrace(ctx context.Context, project, id string) (*trace.ExecutionTrace, error) {
	const op = "get trace"
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "id", id); err != nil {
		return nil, err
	}
	var t trace.ExecutionTrace
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		var err error
		t, err = tx.GetTrace(ctx, project, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// FailurePatternQuery selects failure patterns to list.
type FailurePatternQuery struct {
	Project string `json:"project,omitempty"`
	SkillID string `json:"skill_id,omitempty"`
	// Family is a command family ("go test").
	Family string `json:"command_family,omitempty"`
	Limit  int    `json:"limit,omitempty"`
	Offset int    `json:"offset,omitempty"`
}

// FailurePatternList is a page of failure patterns, most frequent first.
type FailurePatternList = app.Page[trace.FailurePattern]

// ListFailurePatterns lists failure patterns, most frequent first.
func (s *Service) ListFailurePatterns(ctx context.Context, q FailurePatternQuery) (*FailurePatternList, error) {
	const op = "list failure patterns"
	project, limit, err := s.env.PageQuery(op, q.Project, q.Limit, q.Offset, "skill_id", q.SkillID)
	if err != nil {
		return nil, err
	}
	if err := app.ValidText(op, "command_family", q.Family, trace.MaxIDLen, false); err != nil {
		return nil, err
	}
	f := store.FailurePatternFilter{SkillID: q.SkillID, Family: q.Family, Limit: limit, Offset: q.Offset}
	return app.ListPage(ctx, s.env, op, project, limit, q.Offset,
		func(tx store.Tx) (int64, error) { return tx.CountFailurePatterns(ctx, project, f) },
		func(tx store.Tx) ([]trace.FailurePattern, error) { return tx.ListFailurePatterns(ctx, project, f) })
}

// GetFailurePattern returns one failure pattern.
func (s *Service) GetFailurePattern(ctx context.Context, project, id string) (*trace.FailurePattern, error) {
	const op = "get failure pattern"
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "id", id); err != nil {
		return nil, err
	}
	var p trace.FailurePattern
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		var err error
		p, err = tx.GetFailurePattern(ctx, project, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// SkillList is every skill's statistics (success rate, chains recovered
// and given up, whether it needs a person).
type SkillList struct {
	Project string             `json:"project"`
	Items   []trace.SkillStats `json:"items"`
}

// ListTraceSkills lists the skills' statistics, by skill id.
func (s *Service) ListTraceSkills(ctx context.Context, project string) (*SkillList, error) {
	const op = "list trace skills"
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	out := &SkillList{Project: project}
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		var err error
		out.Items, err = tx.ListTraceSkills(ctx, project)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReviewQuery selects reviews to list.
type ReviewQuery struct {
	Project string `json:"project,omitempty"`
	// Kind is task, daily or weekly.
	Kind   string `json:"kind,omitempty"`
	Limit  int    `json:"limit,omitempty"`
	Offset int    `json:"offset,omitempty"`
}

// ReviewList is a page of reviews, newest first (Total is the page's
// length: reviews are few).
type ReviewList = app.Page[Review]

// ListReviews lists reviews, newest first.
func (s *Service) ListReviews(ctx context.Context, q ReviewQuery) (*ReviewList, error) {
	const op = "list reviews"
	project, limit, err := s.env.PageQuery(op, q.Project, q.Limit, q.Offset)
	if err != nil {
		return nil, err
	}
	switch q.Kind {
	case "", ReviewTaskKind, ReviewDaily, ReviewWeekly:
	default:
		return nil, app.Invalid(op, "kind", "%q is not task, daily or weekly", q.Kind)
	}
	out := &ReviewList{Project: project, Limit: limit, Offset: q.Offset}
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		var err error
		out.Items, err = tx.ListTraceReviews(ctx, project, store.TraceReviewFilter{Kind: q.Kind, Limit: limit, Offset: q.Offset})
		return err
	})
	if err != nil {
		return nil, err
	}
	out.Total = int64(q.Offset + len(out.Items))
	return out, nil
}

// GetReview returns one review with its result and report.
func (s *Service) GetReview(ctx context.Context, project, id string) (*Review, error) {
	const op = "get review"
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "id", id); err != nil {
		return nil, err
	}
	var r Review
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		var err error
		r, err = tx.GetTraceReview(ctx, project, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// ArtifactHistory is an artifact's execution history (seed:
// Artifact.execution_history) with its success rate per context.
type ArtifactHistory struct {
	Project    string                  `json:"project"`
	ArtifactID string                  `json:"artifact_id"`
	Records    []trace.ExecutionRecord `json:"records"`
	ByContext  []trace.ContextRate     `json:"by_context"`
}

// GetArtifactHistory returns up to 1000 execution records of an artifact
// (oldest first) and its success rate per context.
func (s *Service) GetArtifactHistory(ctx context.Context, project, artifactID string) (*ArtifactHistory, error) {
	const op = "artifact history"
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "artifact_id", artifactID); err != nil {
		return nil, err
	}
	out := &ArtifactHistory{Project: project, ArtifactID: artifactID}
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		var err error
		out.Records, err = tx.ExecutionRecords(ctx, project, artifactID, 1000)
		return err
	})
	if err != nil {
		return nil, err
	}
	out.ByContext = trace.SuccessRateByContext(out.Records)
	if out.ByContext == nil {
		out.ByContext = []trace.ContextRate{}
	}
	return out, nil
}
