package server

import (
	"net/http"

	"github.com/kaizenhq/kaizen"
)

// Tracked tasks: client hooks report task events; an outcome recorded for a
// tracked task takes its duration, retries and errors from it.

func taskEventProject(in *kaizen.TaskEventInput) *string { return &in.Project }

func (s *Server) taskRoutes() []Route {
	api := func(pattern string, h apiFunc) Route { return Route{Pattern: pattern, Handler: s.api(h)} }
	e := s.engine
	return []Route{
		api("POST /api/v1/tasks/events", bodyAction(s, "record task event", http.StatusOK, taskEventProject, e.RecordTaskEvent)),
		api("GET /api/v1/tasks", s.listTasks),
		api("GET /api/v1/tasks/{bead_id}", pathAction(s, "get task", "bead_id", e.GetTask)),
	}
}

func (s *Server) listTasks(w http.ResponseWriter, r *http.Request) error {
	const op = "list tasks"
	q, err := parseQuery(r, op, "project", "open", "limit", "offset")
	if err != nil {
		return err
	}
	limit, offset, err := q.page()
	if err != nil {
		return err
	}
	open, err := q.boolean("open")
	if err != nil {
		return err
	}
	res, err := s.engine.ListTasks(r.Context(), kaizen.TaskQuery{Project: q.str("project"), OpenOnly: open, Limit: limit, Offset: offset})
	if err != nil {
		return err
	}
	s.reply(w, r, http.StatusOK, res)
	return nil
}
