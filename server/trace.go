package server

import (
	"context"
	"net/http"

	"github.com/kaizenhq/kaizen"
)

// Failure learning (seed 003): execution traces fed by hooks or recorded
// whole, failure patterns, the pre-execution check, self-verification and
// the reviews. See docs/api.md.

func traceEventsProject(in *kaizen.TraceEventInput) *string      { return &in.Project }
func recordTraceProject(in *kaizen.RecordTraceInput) *string     { return &in.Project }
func traceCheckProject(in *kaizen.TraceCheckInput) *string       { return &in.Project }
func traceVerifyProject(in *kaizen.TraceVerifyInput) *string     { return &in.Project }
func traceReviewProject(in *kaizen.ScheduledReviewInput) *string { return &in.Project }
func taskReviewProject(in *taskReviewInput) *string              { return &in.Project }

// taskReviewInput asks for a task's end review.
type taskReviewInput struct {
	Project string `json:"project,omitempty"`
	TaskID  string `json:"task_id"`
}

func (s *Server) traceRoutes() []Route {
	api := func(pattern string, h apiFunc) Route { return Route{Pattern: pattern, Handler: s.api(h)} }
	e := s.engine
	return []Route{
		api("POST /api/v1/traces/events", bodyAction(s, "record trace events", http.StatusOK, traceEventsProject, e.RecordTraceEvents)),
		api("POST /api/v1/traces", bodyAction(s, "record trace", http.StatusCreated, recordTraceProject, e.RecordTrace)),
		api("GET /api/v1/traces", listAction(s, "list traces", e.ListTraces, func(q query, limit, offset int) (kaizen.TraceQuery, error) {
			return kaizen.TraceQuery{Project: q.str("project"), SkillID: q.str("skill_id"), TaskID: q.str("task_id"),
				SessionID: q.str("session_id"), Status: q.str("status"), Limit: limit, Offset: offset}, nil
		}, "project", "skill_id", "task_id", "session_id", "status", "limit", "offset")),
		api("GET /api/v1/traces/{id}", pathAction(s, "get trace", "id", e.GetTrace)),
		api("POST /api/v1/traces/check", bodyAction(s, "check command", http.StatusOK, traceCheckProject, e.CheckCommand)),
		api("POST /api/v1/traces/verify", bodyAction(s, "verify result", http.StatusOK, traceVerifyProject, e.VerifyResult)),
		api("GET /api/v1/failure-patterns", listAction(s, "list failure patterns", e.ListFailurePatterns,
			func(q query, limit, offset int) (kaizen.FailurePatternQuery, error) {
				return kaizen.FailurePatternQuery{Project: q.str("project"), SkillID: q.str("skill_id"),
					Family: q.str("command_family"), Limit: limit, Offset: offset}, nil
			}, "project", "skill_id", "command_family", "limit", "offset")),
		api("GET /api/v1/failure-patterns/{id}", pathAction(s, "get failure pattern", "id", e.GetFailurePattern)),
		api("GET /api/v1/trace-skills", queryAction(s, "list trace skills", e.ListTraceSkills)),
		api("GET /api/v1/artifacts/{artifact_id}/history", pathAction(s, "artifact history", "artifact_id", e.ArtifactHistory)),
		api("POST /api/v1/reviews/task", bodyAction(s, "review task", http.StatusOK, taskReviewProject,
			func(ctx context.Context, in taskReviewInput) (*kaizen.TaskReviewResult, error) {
				return e.ReviewTask(ctx, in.Project, in.TaskID)
			})),
		api("POST /api/v1/reviews/run", bodyAction(s, "run review", http.StatusOK, traceReviewProject, e.RunTraceReview)),
		api("GET /api/v1/reviews", listAction(s, "list reviews", e.ListTraceReviews, func(q query, limit, offset int) (kaizen.TraceReviewQuery, error) {
			return kaizen.TraceReviewQuery{Project: q.str("project"), Kind: q.str("kind"), Limit: limit, Offset: offset}, nil
		}, "project", "kind", "limit", "offset")),
		api("GET /api/v1/reviews/{id}", s.getReview),
	}
}

// getReview answers a review as JSON, or its report as markdown
// (?format=markdown or Accept: text/markdown).
func (s *Server) getReview(w http.ResponseWriter, r *http.Request) error {
	const op = "get review"
	q, err := parseQuery(r, op, "project", "format")
	if err != nil {
		return err
	}
	md, err := wantMarkdown(r, q)
	if err != nil {
		return err
	}
	rev, err := s.engine.GetTraceReview(r.Context(), q.str("project"), r.PathValue("id"))
	if err != nil {
		return err
	}
	if md {
		writeText(w, markdownType, http.StatusOK, rev.Report)
		return nil
	}
	s.reply(w, r, http.StatusOK, rev)
	return nil
}
