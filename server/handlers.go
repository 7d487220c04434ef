package server

import (
	"context"
	"net/http"
	"strings"
)

// The adapters every route is built from. Each validates the request's
// shape (query, body), calls one engine method and renders its result;
// every rule about values lives in the engine, so the REST API cannot
// diverge from the CLI and MCP.

// bodyAction is a route whose JSON body is the engine input: the body is
// decoded strictly, ?project= merged into it, and the result answered with
// status.
func bodyAction[In, Out any](s *Server, op string, status int, project func(*In) *string,
	do func(context.Context, In) (Out, error)) apiFunc {
	return bodyActionWith(s, op, status, project, nil, do)
}

// bodyActionWith is bodyAction with a step, prepare (when not nil), that
// completes the decoded input from the request before the action.
func bodyActionWith[In, Out any](s *Server, op string, status int, project func(*In) *string,
	prepare func(*http.Request, *In) error, do func(context.Context, In) (Out, error)) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		in, err := decodeInput(r, op, project, prepare)
		if err != nil {
			return err
		}
		out, err := do(r.Context(), in)
		if err != nil {
			return err
		}
		s.reply(w, r, status, out)
		return nil
	}
}

// decodeInput reads an action's input: the JSON body decoded strictly,
// ?project= merged into it, then prepare (when not nil).
func decodeInput[In any](r *http.Request, op string, project func(*In) *string, prepare func(*http.Request, *In) error) (In, error) {
	var in In
	q, err := parseQuery(r, op, "project")
	if err != nil {
		return in, err
	}
	if err := decodeBody(r, &in, op, false); err != nil {
		return in, err
	}
	if err := mergeProject(op, q.str("project"), project(&in)); err != nil {
		return in, err
	}
	if prepare != nil {
		err = prepare(r, &in)
	}
	return in, err
}

// pathAction is a read of one record named by the path parameter param.
func pathAction[Out any](s *Server, op, param string,
	do func(ctx context.Context, project, name string) (Out, error)) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q, err := parseQuery(r, op, "project")
		if err != nil {
			return err
		}
		out, err := do(r.Context(), q.str("project"), r.PathValue(param))
		if err != nil {
			return err
		}
		s.reply(w, r, http.StatusOK, out)
		return nil
	}
}

// pathBodyAction is an action on the record named by the path parameter
// param, with the rest of the input in the JSON body: the path fills the
// body's id field (named field in errors), which may repeat it but not
// contradict it.
func pathBodyAction[In, Out any](s *Server, op, param string, project func(*In) *string,
	id func(*In) (*string, string), do func(context.Context, In) (Out, error)) apiFunc {
	return bodyActionWith(s, op, http.StatusOK, project, func(r *http.Request, in *In) error {
		ref, field := id(in)
		switch v := r.PathValue(param); {
		case *ref == "":
			*ref = v
		case *ref != v:
			return invalidRequest(op, field, "the path names %q and the body %q", v, *ref)
		}
		return nil
	}, do)
}

// listAction is a listing: the query parameters (allowed, with paging)
// make the engine's query.
func listAction[Q, Out any](s *Server, op string, do func(context.Context, Q) (Out, error),
	build func(q query, limit, offset int) (Q, error), allowed ...string) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q, err := parseQuery(r, op, allowed...)
		if err != nil {
			return err
		}
		limit, offset, err := q.page()
		if err != nil {
			return err
		}
		in, err := build(q, limit, offset)
		if err != nil {
			return err
		}
		res, err := do(r.Context(), in)
		if err != nil {
			return err
		}
		s.reply(w, r, http.StatusOK, res)
		return nil
	}
}

// projectAction is an action on one project (?project= or the body's
// project; empty means the engine's choice).
func projectAction[Out any](s *Server, op string, do func(context.Context, string) (Out, error)) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q, err := parseQuery(r, op, "project")
		if err != nil {
			return err
		}
		var in projectBody
		if err := decodeBody(r, &in, op, true); err != nil {
			return err
		}
		if err := mergeProject(op, q.str("project"), &in.Project); err != nil {
			return err
		}
		res, err := do(r.Context(), in.Project)
		if err != nil {
			return err
		}
		s.reply(w, r, http.StatusOK, res)
		return nil
	}
}

// queryAction is a read that takes only the project (?project=).
func queryAction[Out any](s *Server, op string, do func(ctx context.Context, project string) (Out, error)) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q, err := parseQuery(r, op, "project")
		if err != nil {
			return err
		}
		out, err := do(r.Context(), q.str("project"))
		if err != nil {
			return err
		}
		s.reply(w, r, http.StatusOK, out)
		return nil
	}
}

// createdAction is bodyAction answering 201 Created with the Location of
// the new record.
func createdAction[In, Out any](s *Server, op string, project func(*In) *string,
	do func(context.Context, In) (Out, error), location func(Out) string) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		in, err := decodeInput(r, op, project, nil)
		if err != nil {
			return err
		}
		out, err := do(r.Context(), in)
		if err != nil {
			return err
		}
		w.Header().Set("Location", location(out))
		s.reply(w, r, http.StatusCreated, out)
		return nil
	}
}

// projectPathAction is an action on the record named by the path
// parameter param, in ?project= or the optional body's project.
func projectPathAction[Out any](s *Server, op, param string, do func(ctx context.Context, project, id string) (Out, error)) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q, err := parseQuery(r, op, "project")
		if err != nil {
			return err
		}
		var in projectBody
		if err := decodeBody(r, &in, op, true); err != nil {
			return err
		}
		if err := mergeProject(op, q.str("project"), &in.Project); err != nil {
			return err
		}
		res, err := do(r.Context(), in.Project, r.PathValue(param))
		if err != nil {
			return err
		}
		s.reply(w, r, http.StatusOK, res)
		return nil
	}
}

// projectBody is the optional body of actions that take only a project.
type projectBody struct {
	Project string `json:"project,omitempty"`
}

// commaList splits the values of a repeatable, comma-separated parameter,
// dropping empty items.
func commaList(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}
