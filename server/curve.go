package server

import (
	"net/http"

	"github.com/kaizenhq/kaizen"
)

// The learning curve over REST: GET /api/v1/learning-curve (see
// docs/api.md), the data of the viewer's learning curve.

func (s *Server) curveRoutes() []Route {
	return []Route{{Pattern: "GET /api/v1/learning-curve", Handler: s.api(s.learningCurve)}}
}

// learningCurve answers GET /api/v1/learning-curve?project=&window=&points=.
func (s *Server) learningCurve(w http.ResponseWriter, r *http.Request) error {
	const op = "learning curve"
	q, err := parseQuery(r, op, "project", "window", "points")
	if err != nil {
		return err
	}
	window, err := q.integer("window", 1, kaizen.MaxCurveWindow)
	if err != nil {
		return err
	}
	points, err := q.integer("points", 2, 2000)
	if err != nil {
		return err
	}
	res, err := s.engine.LearningCurve(r.Context(), kaizen.CurveQuery{Project: q.str("project"), Window: window, Points: points})
	if err != nil {
		return err
	}
	s.reply(w, r, http.StatusOK, res)
	return nil
}
