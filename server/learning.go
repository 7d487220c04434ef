package server

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/learning"
)

// The learning system (seed 000) over REST: outcomes, patterns, criteria,
// the error accumulator, plan guidance, export, import and rebuild. Each
// route adapts one engine method (see docs/api.md).

func outcomeProject(in *kaizen.OutcomeInput) *string { return &in.Project }
func observeProject(in *kaizen.ObserveInput) *string { return &in.Project }
func manualProject(in *kaizen.ManualInput) *string   { return &in.Project }
func errorProject(in *kaizen.ErrorInput) *string     { return &in.Project }

func (s *Server) learningRoutes() []Route {
	api := func(pattern string, h apiFunc) Route { return Route{Pattern: pattern, Handler: s.api(h)} }
	e := s.engine
	return []Route{
		api("GET /api/v1/version", s.version),

		api("POST /api/v1/outcomes", createdAction(s, "record outcome", outcomeProject, e.RecordOutcome,
			func(res *kaizen.OutcomeResult) string {
				return "/api/v1/outcomes/" + url.PathEscape(res.Outcome.ID) + "?project=" + url.QueryEscape(res.Outcome.Project)
			})),
		api("GET /api/v1/outcomes", listAction(s, "list outcomes", e.ListOutcomes, func(q query, limit, offset int) (kaizen.OutcomeQuery, error) {
			return kaizen.OutcomeQuery{Project: q.str("project"), TaskID: q.str("bead_id"), Limit: limit, Offset: offset}, nil
		}, "project", "bead_id", "limit", "offset")),
		api("GET /api/v1/outcomes/{id}", pathAction(s, "get outcome", "id", e.GetOutcome)),

		api("GET /api/v1/patterns", listAction(s, "list patterns", e.ListPatterns, func(q query, limit, offset int) (kaizen.PatternQuery, error) {
			return kaizen.PatternQuery{Project: q.str("project"), Kind: learning.PatternKind(q.str("kind")),
				State: learning.MaturityState(q.str("state")), Tag: q.str("tag"), Search: q.str("search"),
				Limit: limit, Offset: offset}, nil
		}, "project", "kind", "state", "tag", "search", "limit", "offset")),
		api("GET /api/v1/patterns/{ref}", pathAction(s, "get pattern", "ref", e.GetPattern)),
		api("GET /api/v1/patterns/{ref}/explain", pathAction(s, "explain pattern", "ref", e.ExplainPattern)),
		api("POST /api/v1/patterns/observe", bodyAction(s, "observe pattern", http.StatusOK, observeProject, e.ObservePattern)),
		api("POST /api/v1/patterns/promote", bodyAction(s, "promote pattern", http.StatusOK, manualProject, e.PromotePattern)),
		api("POST /api/v1/patterns/deprecate", bodyAction(s, "deprecate pattern", http.StatusOK, manualProject, e.DeprecatePattern)),
		api("POST /api/v1/patterns/reset", bodyAction(s, "reset pattern", http.StatusOK, manualProject, e.ResetPattern)),

		api("GET /api/v1/criteria", queryAction(s, "list criteria", e.ListCriteria)),
		api("GET /api/v1/criteria/{name}/explain", pathAction(s, "explain criterion", "name", e.ExplainCriterion)),

		api("POST /api/v1/errors", bodyAction(s, "record error", http.StatusCreated, errorProject, e.RecordError)),
		api("GET /api/v1/errors", listAction(s, "list errors", e.ListErrors, func(q query, limit, offset int) (kaizen.ErrorQuery, error) {
			unresolved, err := q.boolean("unresolved")
			return kaizen.ErrorQuery{Project: q.str("project"), TaskID: q.str("bead_id"), UnresolvedOnly: unresolved,
				Type: q.str("error_type"), Search: q.str("search"), Limit: limit, Offset: offset}, err
		}, "project", "bead_id", "unresolved", "error_type", "search", "limit", "offset")),
		api("POST /api/v1/errors/{id}/resolve", projectPathAction(s, "resolve error", "id", e.ResolveError)),
		api("GET /api/v1/tasks/{bead_id}/error-context", s.errorContext),
		api("GET /api/v1/tasks/{bead_id}/error-stats", pathAction(s, "error stats", "bead_id", e.ErrorStats)),

		api("GET /api/v1/plan", s.planGuidance),
		api("POST /api/v1/plan", s.planGuidance),
		api("POST /api/v1/extract", s.extractPatterns),

		api("GET /api/v1/export", s.export),
		{Pattern: "POST /api/v1/import", Handler: s.api(s.importJSONL), MaxBodyBytes: s.opts.MaxImportBytes},
		api("POST /api/v1/rebuild", projectAction(s, "rebuild", e.Rebuild)),
	}
}

func (s *Server) version(w http.ResponseWriter, r *http.Request) error {
	if _, err := parseQuery(r, "version"); err != nil {
		return err
	}
	s.reply(w, r, http.StatusOK, s.engine.Version())
	return nil
}

// --- errors ---

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
		if q, err = parseQuery(r, op, "project", "task", "bead_id", "limit", "format", "tags...", "kind"); err != nil {
			return err
		}
		in.Task, in.TaskID, in.Tags, in.Kind = q.str("task"), q.str("bead_id"), commaList(q.list("tags")), q.str("kind")
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

func quote(s string) string { return strconv.Quote(s) }
