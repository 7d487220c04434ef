package server

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// Each handler validates the request's shape (query, body), calls one
// engine method and renders its result; every rule about values lives in
// the engine, so the REST API cannot diverge from the CLI and MCP.

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
		q, err := parseQuery(r, op, "project")
		if err != nil {
			return err
		}
		var in In
		if err := decodeBody(r, &in, op, false); err != nil {
			return err
		}
		if err := mergeProject(op, q.str("project"), project(&in)); err != nil {
			return err
		}
		if prepare != nil {
			if err := prepare(r, &in); err != nil {
				return err
			}
		}
		out, err := do(r.Context(), in)
		if err != nil {
			return err
		}
		s.reply(w, r, status, out)
		return nil
	}
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

// healthz checks that the store answers a read transaction.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	err := s.engine.Store().View(ctx, func(tx store.Tx) error {
		_, err := tx.GetMeta(ctx, "kaizen.healthz")
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		s.log.Error("health check failed", "request_id", w.Header().Get("X-Request-Id"), "err", err)
		s.reply(w, r, http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
		return
	}
	s.reply(w, r, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) version(w http.ResponseWriter, r *http.Request) error {
	if _, err := parseQuery(r, "version"); err != nil {
		return err
	}
	s.reply(w, r, http.StatusOK, s.engine.Version())
	return nil
}

// --- outcomes ---

func (s *Server) recordOutcome(w http.ResponseWriter, r *http.Request) error {
	const op = "record outcome"
	q, err := parseQuery(r, op, "project")
	if err != nil {
		return err
	}
	var in kaizen.OutcomeInput
	if err := decodeBody(r, &in, op, false); err != nil {
		return err
	}
	if err := mergeProject(op, q.str("project"), &in.Project); err != nil {
		return err
	}
	res, err := s.engine.RecordOutcome(r.Context(), in)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/api/v1/outcomes/"+url.PathEscape(res.Outcome.ID)+
		"?project="+url.QueryEscape(res.Outcome.Project))
	s.reply(w, r, http.StatusCreated, res)
	return nil
}

func (s *Server) listOutcomes(w http.ResponseWriter, r *http.Request) error {
	const op = "list outcomes"
	q, err := parseQuery(r, op, "project", "bead_id", "limit", "offset")
	if err != nil {
		return err
	}
	limit, offset, err := q.page()
	if err != nil {
		return err
	}
	res, err := s.engine.ListOutcomes(r.Context(), kaizen.OutcomeQuery{Project: q.str("project"),
		TaskID: q.str("bead_id"), Limit: limit, Offset: offset})
	if err != nil {
		return err
	}
	if res.Items == nil {
		res.Items = []learning.Outcome{}
	}
	s.reply(w, r, http.StatusOK, res)
	return nil
}

func (s *Server) getOutcome(w http.ResponseWriter, r *http.Request) error {
	const op = "get outcome"
	q, err := parseQuery(r, op, "project")
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	o, err := s.engine.GetOutcome(r.Context(), q.str("project"), id)
	if kaizen.KindOf(err) == kaizen.KindNotFound {
		return apiError{status: http.StatusNotFound, code: string(kaizen.KindNotFound), op: op, field: "id",
			message: "no outcome " + quote(id) + " in this project", hint: "list them with GET /api/v1/outcomes", next: "list_outcomes"}
	}
	if err != nil {
		return err
	}
	s.reply(w, r, http.StatusOK, o)
	return nil
}

// --- patterns ---

func (s *Server) listPatterns(w http.ResponseWriter, r *http.Request) error {
	const op = "list patterns"
	q, err := parseQuery(r, op, "project", "kind", "state", "tag", "search", "limit", "offset")
	if err != nil {
		return err
	}
	limit, offset, err := q.page()
	if err != nil {
		return err
	}
	res, err := s.engine.ListPatterns(r.Context(), kaizen.PatternQuery{Project: q.str("project"),
		Kind: learning.PatternKind(q.str("kind")), State: learning.MaturityState(q.str("state")),
		Tag: q.str("tag"), Search: q.str("search"), Limit: limit, Offset: offset})
	if err != nil {
		return err
	}
	s.reply(w, r, http.StatusOK, res)
	return nil
}

// --- criteria ---

func (s *Server) listCriteria(w http.ResponseWriter, r *http.Request) error {
	q, err := parseQuery(r, "list criteria", "project")
	if err != nil {
		return err
	}
	ws, err := s.engine.ListCriteria(r.Context(), q.str("project"))
	if err != nil {
		return err
	}
	s.reply(w, r, http.StatusOK, ws)
	return nil
}

// --- errors ---

func (s *Server) listErrors(w http.ResponseWriter, r *http.Request) error {
	const op = "list errors"
	q, err := parseQuery(r, op, "project", "bead_id", "unresolved", "error_type", "search", "limit", "offset")
	if err != nil {
		return err
	}
	limit, offset, err := q.page()
	if err != nil {
		return err
	}
	unresolved, err := q.boolean("unresolved")
	if err != nil {
		return err
	}
	res, err := s.engine.ListErrors(r.Context(), kaizen.ErrorQuery{Project: q.str("project"),
		TaskID: q.str("bead_id"), UnresolvedOnly: unresolved, Type: q.str("error_type"),
		Search: q.str("search"), Limit: limit, Offset: offset})
	if err != nil {
		return err
	}
	if res.Items == nil {
		res.Items = []learning.ErrorEntry{}
	}
	s.reply(w, r, http.StatusOK, res)
	return nil
}

// projectBody is the optional body of actions that take only a project.
type projectBody struct {
	Project string `json:"project,omitempty"`
}

func (s *Server) resolveError(w http.ResponseWriter, r *http.Request) error {
	const op = "resolve error"
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
	res, err := s.engine.ResolveError(r.Context(), in.Project, r.PathValue("id"))
	if err != nil {
		return err
	}
	s.reply(w, r, http.StatusOK, res)
	return nil
}

func (s *Server) errorContext(w http.ResponseWriter, r *http.Request) error {
	const op = "error context"
	q, err := parseQuery(r, op, "project", "include_resolved", "format")
	if err != nil {
		return err
	}
	all, err := q.boolean("include_resolved")
	if err != nil {
		return err
	}
	md, err := wantMarkdown(r, q)
	if err != nil {
		return err
	}
	res, err := s.engine.ErrorContext(r.Context(), q.str("project"), r.PathValue("bead_id"), all)
	if err != nil {
		return err
	}
	if md {
		writeText(w, markdownType, http.StatusOK, res.Markdown)
		return nil
	}
	if res.Errors == nil {
		res.Errors = []learning.ErrorEntry{}
	}
	s.reply(w, r, http.StatusOK, res)
	return nil
}

// --- planning ---

const markdownType = "text/markdown; charset=utf-8"

// planGuidance serves GET (query task, bead_id, limit) and POST (a JSON
// body with the same fields, for long task descriptions).
func (s *Server) planGuidance(w http.ResponseWriter, r *http.Request) error {
	const op = "plan guidance"
	var (
		in  kaizen.PlanInput
		q   query
		err error
	)
	if r.Method == http.MethodPost {
		if q, err = parseQuery(r, op, "project", "format"); err != nil {
			return err
		}
		if err := decodeBody(r, &in, op, false); err != nil {
			return err
		}
	} else {
		if q, err = parseQuery(r, op, "project", "task", "bead_id", "limit", "format"); err != nil {
			return err
		}
		in.Task, in.TaskID = q.str("task"), q.str("bead_id")
		if in.Limit, err = q.integer("limit", 0, maxPage); err != nil {
			return err
		}
	}
	if err := mergeProject(op, q.str("project"), &in.Project); err != nil {
		return err
	}
	md, err := wantMarkdown(r, q)
	if err != nil {
		return err
	}
	g, err := s.engine.PlanGuidance(r.Context(), in)
	if err != nil {
		return err
	}
	if md {
		writeText(w, markdownType, http.StatusOK, g.Markdown())
		return nil
	}
	s.reply(w, r, http.StatusOK, g)
	return nil
}

// extractRequest is the body of POST /api/v1/extract.
type extractRequest struct {
	Description string `json:"description"`
}

// ExtractResult is the response of POST /api/v1/extract: the seed's list
// of labels, and each strategy found with the phrase that revealed it.
type ExtractResult struct {
	Patterns   []string             `json:"patterns"`
	Strategies []learning.Extracted `json:"strategies"`
}

func (s *Server) extractPatterns(w http.ResponseWriter, r *http.Request) error {
	const op = "extract patterns"
	if _, err := parseQuery(r, op); err != nil {
		return err
	}
	var in extractRequest
	if err := decodeBody(r, &in, op, false); err != nil {
		return err
	}
	ex, err := s.engine.ExtractPatterns(in.Description)
	if err != nil {
		return err
	}
	labels := learning.Labels(ex)
	if labels == nil {
		labels = []string{}
	}
	s.reply(w, r, http.StatusOK, ExtractResult{Patterns: labels, Strategies: ex})
	return nil
}

// --- export, import, rebuild ---

// export streams JSONL. The engine buffers its output, so an error found
// before the first bytes leave is still answered as JSON; an error after
// that aborts the connection so the client sees a broken stream rather
// than a complete-looking, truncated export.
func (s *Server) export(w http.ResponseWriter, r *http.Request) error {
	const op = "export"
	q, err := parseQuery(r, op, "project...", "all")
	if err != nil {
		return err
	}
	all, err := q.boolean("all")
	if err != nil {
		return err
	}
	if all && len(q.list("project")) > 0 {
		return invalidRequest(op, "all", "give either all=true or project, not both")
	}
	sw := &streamWriter{w: w, start: func(h http.Header) {
		h.Set("Content-Type", "application/x-ndjson")
		h.Set("Content-Disposition", `attachment; filename="kaizen-export.jsonl"`)
	}}
	_, err = s.engine.Export(r.Context(), sw, kaizen.ExportOptions{Projects: q.list("project"), All: all})
	if err == nil {
		sw.begin()
		return nil
	}
	if !sw.started {
		return err
	}
	s.log.Error("export failed after streaming began", "request_id", w.Header().Get("X-Request-Id"), "err", err)
	panic(http.ErrAbortHandler)
}

// streamWriter sets a streaming response's headers on its first write.
type streamWriter struct {
	w       http.ResponseWriter
	start   func(http.Header)
	started bool
}

func (s *streamWriter) begin() {
	if !s.started {
		s.started = true
		s.start(s.w.Header())
		s.w.WriteHeader(http.StatusOK)
	}
}

func (s *streamWriter) Write(b []byte) (int, error) {
	s.begin()
	return s.w.Write(b)
}

func (s *Server) importJSONL(w http.ResponseWriter, r *http.Request) error {
	const op = "import"
	q, err := parseQuery(r, op, "project")
	if err != nil {
		return err
	}
	if err := checkContentType(r, op, jsonlTypes); err != nil {
		return err
	}
	res, err := s.engine.Import(r.Context(), r.Body, kaizen.ImportOptions{Project: q.str("project")})
	if err != nil {
		return err
	}
	s.reply(w, r, http.StatusOK, res)
	return nil
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

func quote(s string) string { return strconv.Quote(s) }
