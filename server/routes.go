package server

import (
	"context"
	"net/http"
	"time"
)

const healthzPattern = "GET /healthz"

// apiRoutes is the REST API: one route per engine action (see
// docs/api.md). Other surfaces mount their routes with Server.Handle.
func (s *Server) apiRoutes() []Route {
	routes := []Route{{Pattern: healthzPattern, Handler: http.HandlerFunc(s.healthz), Public: true}}
	for _, group := range [][]Route{s.learningRoutes(), s.taskRoutes(), s.exploreRoutes(), s.experienceRoutes(), s.jobRoutes(), s.dataRoutes(), s.curveRoutes(), s.traceRoutes(), s.teamRoutes(), s.gcRoutes()} {
		routes = append(routes, group...)
	}
	return routes
}

// apiFunc is a REST handler: it writes its response, or returns an error
// that is answered as JSON.
type apiFunc func(w http.ResponseWriter, r *http.Request) error

func (s *Server) api(f apiFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := f(w, r); err != nil {
			s.fail(w, r, err)
		}
	})
}

// healthz answers whether the engine's store serves a read.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.engine.Health(ctx); err != nil {
		s.log.Error("health check failed", "request_id", w.Header().Get("X-Request-Id"), "err", err)
		s.reply(w, r, http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
		return
	}
	s.reply(w, r, http.StatusOK, map[string]string{"status": "ok"})
}
