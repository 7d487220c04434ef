package server

import (
	"context"

	"github.com/kaizenhq/kaizen"
)

// Background jobs over REST: the durable queue the daemon runs.

func (s *Server) jobRoutes() []Route {
	api := func(pattern string, h apiFunc) Route { return Route{Pattern: pattern, Handler: s.api(h)} }
	e := s.engine
	return []Route{
		api("GET /api/v1/jobs", listAction(s, "list jobs", e.ListJobs, func(q query, limit, offset int) (kaizen.JobQuery, error) {
			return kaizen.JobQuery{Kind: q.str("kind"), State: q.str("state"), Limit: limit, Offset: offset}, nil
		}, "kind", "state", "limit", "offset")),
		api("POST /api/v1/jobs/run", projectAction(s, "run jobs", func(ctx context.Context, _ string) (*kaizen.JobResult, error) {
			return e.RunDueJobs(ctx)
		})),
	}
}
