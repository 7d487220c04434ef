package server

import (
	"context"
	"net/http"

	"github.com/kaizenhq/kaizen"
)

// The data a user owns over REST: forgetting (DELETE) outcomes, turns,
// memories, heuristics and skills, correcting a heuristic's text (PATCH),
// and the reads across subsystems: what was learned in a period, and the
// projects with their last activity (see docs/api.md).

func heuristicEditProject(in *kaizen.HeuristicEditInput) *string { return &in.Project }
func heuristicEditID(in *kaizen.HeuristicEditInput) (*string, string) {
	return &in.HeuristicID, "heuristic_id"
}

// forgetAction adapts a forget action to projectPathAction.
func forgetAction[Out any](do func(context.Context, kaizen.ForgetInput) (Out, error)) func(ctx context.Context, project, id string) (Out, error) {
	return func(ctx context.Context, project, id string) (Out, error) {
		return do(ctx, kaizen.ForgetInput{Project: project, ID: id})
	}
}

func (s *Server) dataRoutes() []Route {
	api := func(pattern string, h apiFunc) Route { return Route{Pattern: pattern, Handler: s.api(h)} }
	e := s.engine
	return []Route{
		api("DELETE /api/v1/outcomes/{id}", projectPathAction(s, "delete outcome", "id", forgetAction(e.DeleteOutcome))),
		api("DELETE /api/v1/turns/{id}", projectPathAction(s, "delete turn", "id", forgetAction(e.DeleteTurn))),
		api("DELETE /api/v1/memories/{id}", projectPathAction(s, "forget memory", "id", forgetAction(e.ForgetMemory))),
		api("DELETE /api/v1/heuristics/{id}", projectPathAction(s, "delete heuristic", "id", forgetAction(e.DeleteHeuristic))),
		api("PATCH /api/v1/heuristics/{id}", pathBodyAction(s, "edit heuristic", "id",
			heuristicEditProject, heuristicEditID, e.EditHeuristic)),
		api("DELETE /api/v1/skills/{ref}", projectPathAction(s, "delete skill", "ref", forgetAction(e.DeleteSkill))),
		api("GET /api/v1/learned", s.learned),
		api("GET /api/v1/projects", s.projects),
	}
}

// learned answers GET /api/v1/learned?project=&since=&days=.
func (s *Server) learned(w http.ResponseWriter, r *http.Request) error {
	const op = "learned"
	q, err := parseQuery(r, op, "project", "since", "days")
	if err != nil {
		return err
	}
	days := 0
	if q.str("days") != "" {
		if days, err = q.integer("days", 1, 3660); err != nil {
			return err
		}
	}
	res, err := s.engine.Learned(r.Context(), kaizen.LearnedQuery{Project: q.str("project"), Since: q.str("since"), Days: days})
	if err != nil {
		return err
	}
	s.reply(w, r, http.StatusOK, res)
	return nil
}

// projects answers GET /api/v1/projects?counts=true.
func (s *Server) projects(w http.ResponseWriter, r *http.Request) error {
	const op = "list projects"
	q, err := parseQuery(r, op, "counts")
	if err != nil {
		return err
	}
	counts, err := q.boolean("counts")
	if err != nil {
		return err
	}
	res, err := s.engine.ProjectSummaries(r.Context(), kaizen.ProjectQuery{Counts: counts})
	if err != nil {
		return err
	}
	s.reply(w, r, http.StatusOK, map[string]any{"projects": res})
	return nil
}
