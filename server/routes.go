package server

import (
	"net/http"

	"github.com/kaizenhq/kaizen"
)

const healthzPattern = "GET /healthz"

// apiRoutes is the REST API: one route per engine action (see
// docs/api.md). Other surfaces mount their routes with Server.Handle.
func (s *Server) apiRoutes() []Route {
	api := func(pattern string, h apiFunc) Route { return Route{Pattern: pattern, Handler: s.api(h)} }
	e := s.engine
	return append([]Route{
		{Pattern: healthzPattern, Handler: http.HandlerFunc(s.healthz), Public: true},
		api("GET /api/v1/version", s.version),

		api("POST /api/v1/outcomes", s.recordOutcome),
		api("GET /api/v1/outcomes", s.listOutcomes),
		api("GET /api/v1/outcomes/{id}", s.getOutcome),

		api("GET /api/v1/patterns", s.listPatterns),
		api("GET /api/v1/patterns/{ref}", pathAction(s, "get pattern", "ref", e.GetPattern)),
		api("GET /api/v1/patterns/{ref}/explain", pathAction(s, "explain pattern", "ref", e.ExplainPattern)),
		api("POST /api/v1/patterns/observe", bodyAction(s, "observe pattern", http.StatusOK, observeProject, e.ObservePattern)),
		api("POST /api/v1/patterns/promote", bodyAction(s, "promote pattern", http.StatusOK, manualProject, e.PromotePattern)),
		api("POST /api/v1/patterns/deprecate", bodyAction(s, "deprecate pattern", http.StatusOK, manualProject, e.DeprecatePattern)),
		api("POST /api/v1/patterns/reset", bodyAction(s, "reset pattern", http.StatusOK, manualProject, e.ResetPattern)),

		api("GET /api/v1/criteria", s.listCriteria),
		api("GET /api/v1/criteria/{name}/explain", pathAction(s, "explain criterion", "name", e.ExplainCriterion)),

		api("POST /api/v1/errors", bodyAction(s, "record error", http.StatusCreated, errorProject, e.RecordError)),
		api("GET /api/v1/errors", s.listErrors),
		api("POST /api/v1/errors/{id}/resolve", s.resolveError),
		api("GET /api/v1/tasks/{bead_id}/error-context", s.errorContext),
		api("GET /api/v1/tasks/{bead_id}/error-stats", pathAction(s, "error stats", "bead_id", e.ErrorStats)),

		api("GET /api/v1/plan", s.planGuidance),
		api("POST /api/v1/plan", s.planGuidance),
		api("POST /api/v1/extract", s.extractPatterns),

		api("GET /api/v1/export", s.export),
		{Pattern: "POST /api/v1/import", Handler: s.api(s.importJSONL), MaxBodyBytes: s.opts.MaxImportBytes},
		api("POST /api/v1/rebuild", projectAction(s, "rebuild", s.engine.Rebuild)),
	}, append(append(s.taskRoutes(), s.exploreRoutes()...), s.experienceRoutes()...)...)
}

func observeProject(in *kaizen.ObserveInput) *string { return &in.Project }
func manualProject(in *kaizen.ManualInput) *string   { return &in.Project }
func errorProject(in *kaizen.ErrorInput) *string     { return &in.Project }

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
