package server

import (
	"context"
	"net/http"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/explore"
)

// Exploration sessions (package explore) as a service: settings per
// project, sessions fed with events by agents or hooks, and replay.

func exploreSettingsProject(in *kaizen.ExploreSettings) *string { return &in.Project }
func exploreStartProject(in *kaizen.ExploreStartInput) *string  { return &in.Project }
func exploreEventProject(in *kaizen.ExploreEventInput) *string  { return &in.Project }
func exploreReplayProject(in *exploreReplayInput) *string       { return &in.Project }

// exploreReplayInput is a replay request: a strategy and the events.
type exploreReplayInput struct {
	Project string `json:"project,omitempty"` // unused; accepted for symmetry
	kaizen.ExploreSettings
	Events []explore.Event `json:"events"`
}

func (s *Server) exploreRoutes() []Route {
	api := func(pattern string, h apiFunc) Route { return Route{Pattern: pattern, Handler: s.api(h)} }
	e := s.engine
	return []Route{
		api("GET /api/v1/explore/settings", queryAction(s, "explore settings", e.GetExploreSettings)),
		api("PUT /api/v1/explore/settings", bodyAction(s, "explore settings", http.StatusOK, exploreSettingsProject, e.SetExploreSettings)),
		api("POST /api/v1/explore/sessions", bodyAction(s, "explore start", http.StatusCreated, exploreStartProject, e.ExploreStart)),
		api("GET /api/v1/explore/sessions", listAction(s, "list exploration sessions", e.ListExploreSessions,
			func(q query, limit, offset int) (kaizen.ExploreQuery, error) {
				active, err := q.boolean("active")
				return kaizen.ExploreQuery{Project: q.str("project"), ActiveOnly: active, Limit: limit, Offset: offset}, err
			}, "project", "active", "limit", "offset")),
		api("GET /api/v1/explore/sessions/{session_id}", pathAction(s, "explore state", "session_id", e.ExploreState)),
		api("POST /api/v1/explore/events", bodyAction(s, "explore event", http.StatusOK, exploreEventProject, e.ExploreEvent)),
		api("POST /api/v1/explore/replay", bodyAction(s, "explore replay", http.StatusOK, exploreReplayProject,
			func(_ context.Context, in exploreReplayInput) (*explore.Timeline, error) {
				return kaizen.ExploreReplay(in.ExploreSettings, in.Events)
			})),
	}
}
