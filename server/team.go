package server

import (
	"context"
	"net/http"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/team"
)

// The team engine (seed 004): teams, their task graphs with leases, their
// message buses and their coordinators. Every action names its team in the
// path; the body may repeat it but not contradict it.

func (s *Server) teamRoutes() []Route {
	api := func(pattern string, h apiFunc) Route { return Route{Pattern: pattern, Handler: s.api(h)} }
	e := s.engine
	return []Route{
		api("POST /api/v1/teams", createdAction(s, "create team", func(in *kaizen.TeamInput) *string { return &in.Project }, e.CreateTeam,
			func(t *kaizen.TeamInfo) string { return "/api/v1/teams/" + t.Name })),
		api("GET /api/v1/teams", listAction(s, "list teams", func(ctx context.Context, q teamListQuery) (*kaizen.TeamList, error) {
			return e.ListTeamsPage(ctx, q.project, q.all)
		}, func(q query, _, _ int) (teamListQuery, error) {
			all, err := q.boolean("all")
			return teamListQuery{project: q.str("project"), all: all}, err
		}, "project", "all")),
		api("GET /api/v1/teams/{team}", pathAction(s, "show team", "team", e.GetTeam)),
		api("POST /api/v1/teams/{team}/dissolve", projectPathAction(s, "dissolve team", "team", e.DissolveTeam)),
		api("POST /api/v1/teams/{team}/tasks", pathBodyAction(s, "add tasks", "team",
			func(in *kaizen.AddTeamTasksInput) *string { return &in.Project },
			func(in *kaizen.AddTeamTasksInput) (*string, string) { return &in.Team, "team" }, e.AddTeamTasks)),
		api("GET /api/v1/teams/{team}/tasks", teamList(s, "list team tasks", e.ListTeamTasksPage,
			func(q query, teamName string, limit, offset int) (kaizen.TeamTaskQuery, error) {
				var st []team.TaskStatus
				for _, v := range commaList(q.list("status")) {
					st = append(st, team.TaskStatus(v))
				}
				return kaizen.TeamTaskQuery{Project: q.str("project"), Team: teamName, Statuses: st, RunID: q.str("run_id"),
					Limit: limit, Offset: offset}, nil
			}, "project", "status", "run_id", "limit", "offset")),
		api("GET /api/v1/teams/{team}/tasks/{task}", func(w http.ResponseWriter, r *http.Request) error {
			q, err := parseQuery(r, "show team task", "project")
			if err != nil {
				return err
			}
			out, err := e.GetTeamTask(r.Context(), q.str("project"), r.PathValue("team"), r.PathValue("task"))
			if err != nil {
				return err
			}
			s.reply(w, r, http.StatusOK, out)
			return nil
		}),
		api("PATCH /api/v1/teams/{team}/tasks/{task}", bodyActionWith(s, "update task", http.StatusOK,
			func(in *kaizen.UpdateTeamTaskInput) *string { return &in.Project },
			func(r *http.Request, in *kaizen.UpdateTeamTaskInput) error {
				if err := pathRef(r, "update task", "team", &in.Team); err != nil {
					return err
				}
				return pathRef(r, "update task", "task", &in.Task)
			}, e.UpdateTeamTask)),
		api("POST /api/v1/teams/{team}/claim", teamBody(s, "claim task", func(in *kaizen.ClaimInput) (*string, *string) { return &in.Project, &in.Team }, e.ClaimTask)),
		api("POST /api/v1/teams/{team}/heartbeat", teamBody(s, "heartbeat", func(in *kaizen.HeartbeatInput) (*string, *string) { return &in.Project, &in.Team }, e.HeartbeatTask)),
		api("POST /api/v1/teams/{team}/report", teamBody(s, "report task", func(in *kaizen.ReportInput) (*string, *string) { return &in.Project, &in.Team }, e.ReportTask)),
		api("POST /api/v1/teams/{team}/release", teamBody(s, "release task", func(in *kaizen.ReleaseInput) (*string, *string) { return &in.Project, &in.Team }, e.ReleaseTask)),
		api("POST /api/v1/teams/{team}/messages", teamBody(s, "send message", func(in *kaizen.SendInput) (*string, *string) { return &in.Project, &in.Team }, e.SendMessage)),
		api("GET /api/v1/teams/{team}/messages", teamList(s, "tail messages", e.TailMessagesPage,
			func(q query, teamName string, limit, _ int) (kaizen.TailInput, error) {
				after, err := q.integer("after", 0, 1<<62)
				if err != nil {
					return kaizen.TailInput{}, err
				}
				wait, err := q.integer("wait", 0, 300)
				return kaizen.TailInput{Project: q.str("project"), Team: teamName, After: int64(after), Limit: limit, WaitSeconds: wait}, err
			}, "project", "after", "limit", "wait")),
		api("GET /api/v1/teams/{team}/messages/{seq}/deliveries", func(w http.ResponseWriter, r *http.Request) error {
			q, err := parseQuery(r, "message deliveries", "project")
			if err != nil {
				return err
			}
			seq, err := pathInt(r, "message deliveries", "seq")
			if err != nil {
				return err
			}
			out, err := e.MessageDeliveries(r.Context(), q.str("project"), r.PathValue("team"), seq)
			if err != nil {
				return err
			}
			s.reply(w, r, http.StatusOK, out)
			return nil
		}),
		api("POST /api/v1/teams/{team}/inbox", teamBody(s, "inbox", func(in *kaizen.InboxInput) (*string, *string) { return &in.Project, &in.Team }, e.Inbox)),
		api("POST /api/v1/teams/{team}/ack", teamBody(s, "ack messages", func(in *kaizen.AckInput) (*string, *string) { return &in.Project, &in.Team }, e.AckMessages)),
		api("POST /api/v1/teams/{team}/coordinator", teamBody(s, "coordinate", func(in *kaizen.CoordinatorInput) (*string, *string) { return &in.Project, &in.Team }, e.Coordinate)),
		api("GET /api/v1/teams/{team}/events", teamList(s, "team events", func(ctx context.Context, q teamEventQuery) (*kaizen.TeamEventList, error) {
			return e.TeamEventsPage(ctx, q.project, q.team, q.subject, q.after, q.limit)
		}, func(q query, teamName string, limit, _ int) (teamEventQuery, error) {
			after, err := q.integer("after", 0, 1<<62)
			return teamEventQuery{project: q.str("project"), team: teamName, subject: q.str("subject"), after: int64(after), limit: limit}, err
		}, "project", "subject", "after", "limit")),
		api("POST /api/v1/teams/{team}/runs", teamBody(s, "start pattern run", func(in *kaizen.StartRunInput) (*string, *string) { return &in.Project, &in.Team }, e.StartRun)),
		api("POST /api/v1/teams/{team}/compositions", teamBody(s, "start composition", func(in *kaizen.ComposeInput) (*string, *string) { return &in.Project, &in.Team }, e.StartComposition)),
		api("GET /api/v1/runs", listAction(s, "list pattern runs", e.ListRunsPage, func(q query, limit, _ int) (kaizen.RunQuery, error) {
			active, err := q.boolean("active")
			return kaizen.RunQuery{Project: q.str("project"), Team: q.str("team"), Pattern: q.str("pattern"), ActiveOnly: active, Limit: limit}, err
		}, "project", "team", "pattern", "active", "limit")),
		api("GET /api/v1/runs/{run}", pathAction(s, "show pattern run", "run", e.GetRun)),
		api("POST /api/v1/runs/{run}/cancel", bodyActionWith(s, "cancel pattern run", http.StatusOK,
			func(in *runCancelInput) *string { return &in.Project },
			func(r *http.Request, in *runCancelInput) error { in.Run = r.PathValue("run"); return nil },
			func(ctx context.Context, in runCancelInput) (*kaizen.RunInfo, error) {
				return e.CancelRun(ctx, in.Project, in.Run, in.Reason)
			})),
		api("POST /api/v1/runs/{run}/reply", bodyActionWith(s, "reply to pattern run", http.StatusOK,
			func(in *kaizen.RunReplyInput) *string { return &in.Project },
			func(r *http.Request, in *kaizen.RunReplyInput) error {
				return pathRef(r, "reply to pattern run", "run", &in.Run)
			}, e.ReplyRun)),
		api("POST /api/v1/patterns/select", bodyAction(s, "select patterns", http.StatusOK,
			func(in *kaizen.SelectInput) *string { return &in.Project }, e.SelectPatterns)),
	}
}

// runCancelInput is the body of a run cancellation.
type runCancelInput struct {
	Project string `json:"project,omitempty"`
	Run     string `json:"-"`
	Reason  string `json:"reason,omitempty"`
}

type teamListQuery struct {
	project string
	all     bool
}

type teamEventQuery struct {
	project, team, subject string
	after                  int64
	limit                  int
}

// teamList is listAction for a listing of the team named in the path.
func teamList[Q, Out any](s *Server, op string, do func(context.Context, Q) (Out, error),
	build func(q query, team string, limit, offset int) (Q, error), allowed ...string) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		return listAction(s, op, do, func(q query, limit, offset int) (Q, error) {
			return build(q, r.PathValue("team"), limit, offset)
		}, allowed...)(w, r)
	}
}

// teamBody is a POST whose body is the engine input and whose path names
// the team.
func teamBody[In, Out any](s *Server, op string, refs func(*In) (*string, *string), do func(context.Context, In) (Out, error)) apiFunc {
	return bodyActionWith(s, op, http.StatusOK, func(in *In) *string { p, _ := refs(in); return p },
		func(r *http.Request, in *In) error { _, t := refs(in); return pathRef(r, op, "team", t) }, do)
}

// pathRef fills a body field from the path parameter of the same name; the
// body may repeat it but not contradict it.
func pathRef(r *http.Request, op, param string, ref *string) error {
	switch v := r.PathValue(param); {
	case *ref == "":
		*ref = v
	case *ref != v:
		return invalidRequest(op, param, "the path names %q and the body %q", v, *ref)
	}
	return nil
}

func pathInt(r *http.Request, op, param string) (int64, error) {
	var n int64
	v := r.PathValue(param)
	if v == "" || len(v) > 18 {
		return 0, invalidRequest(op, param, "%q is not a number", v)
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, invalidRequest(op, param, "%q is not a number", v)
		}
		n = n*10 + int64(c-'0')
	}
	return n, nil
}
