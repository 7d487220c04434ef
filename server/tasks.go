package server

import (
	"net/http"

	"github.com/kaizenhq/kaizen"
)

// Tracked tasks: client hooks report task events; an outcome recorded for a
// tracked task takes its duration, retries and errors from it.

func taskEventProject(in *kaizen.TaskEventInput) *string { return &in.Project }

func closeTaskProject(in *kaizen.CloseTaskInput) *string { return &in.Project }

func closeIdleProject(in *kaizen.CloseIdleInput) *string { return &in.Project }

func (s *Server) taskRoutes() []Route {
	api := func(pattern string, h apiFunc) Route { return Route{Pattern: pattern, Handler: s.api(h)} }
	e := s.engine
	return []Route{
		api("POST /api/v1/tasks/events", bodyAction(s, "record task event", http.StatusOK, taskEventProject, e.RecordTaskEvent)),
		api("GET /api/v1/tasks", listAction(s, "list tasks", e.ListTasks, func(q query, limit, offset int) (kaizen.TaskQuery, error) {
			open, err := q.boolean("open")
			return kaizen.TaskQuery{Project: q.str("project"), OpenOnly: open, Limit: limit, Offset: offset}, err
		}, "project", "open", "limit", "offset")),
		api("GET /api/v1/tasks/{bead_id}", pathAction(s, "get task", "bead_id", e.GetTask)),
		api("POST /api/v1/tasks/close", bodyAction(s, "close task", http.StatusOK, closeTaskProject, e.CloseTask)),
		api("POST /api/v1/tasks/close-idle", bodyAction(s, "close idle tasks", http.StatusOK, closeIdleProject, e.CloseIdleTasks)),
	}
}
