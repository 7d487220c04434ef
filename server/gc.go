package server

import (
	"net/http"
)

// Garbage collection over REST: the retention policy applied on demand
// (the daemon also applies it periodically).

func (s *Server) gcRoutes() []Route {
	return []Route{{Pattern: "POST /api/v1/gc", Handler: s.api(s.gc)}}
}

func (s *Server) gc(w http.ResponseWriter, r *http.Request) error {
	const op = "gc"
	if _, err := parseQuery(r, op); err != nil {
		return err
	}
	var in struct{}
	if err := decodeBody(r, &in, op, true); err != nil {
		return err
	}
	res, err := s.engine.GC(r.Context())
	if err != nil {
		return err
	}
	s.reply(w, r, http.StatusOK, res)
	return nil
}
