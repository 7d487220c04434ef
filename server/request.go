package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kaizenhq/kaizen"
)

// jsonTypes are the accepted content types of JSON bodies.
var jsonTypes = []string{"application/json"}

// jsonlTypes are the accepted content types of an import body.
var jsonlTypes = []string{"application/x-ndjson", "application/jsonl", "application/x-jsonlines",
	"application/json", "application/octet-stream"}

// checkContentType accepts a missing Content-Type or one of allowed. The
// form and text types a cross-site HTML form can send are refused, as a
// second line of defence against request forgery.
func checkContentType(r *http.Request, op string, allowed []string) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err == nil && slices.Contains(allowed, mt) {
		if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "utf8") {
			return apiError{status: http.StatusUnsupportedMediaType, code: "unsupported_media_type", op: op,
				message: fmt.Sprintf("charset %q is not accepted", cs), hint: "send UTF-8 JSON (charset=utf-8 or none)"}
		}
		return nil
	}
	return apiError{status: http.StatusUnsupportedMediaType, code: "unsupported_media_type", op: op,
		message: fmt.Sprintf("content type %q is not accepted", ct),
		hint:    "send Content-Type: " + allowed[0]}
}

// decodeBody decodes the request body strictly into v (one JSON object,
// unknown fields rejected, see kaizen.DecodeStrict). With optional, an
// empty body leaves v unchanged.
func decodeBody(r *http.Request, v any, op string, optional bool) error {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return tooLarge(mbe.Limit)
		}
		return invalidRequest(op, "", "reading the request body failed: %v", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		if optional {
			return nil
		}
		e := invalidRequest(op, "", "the request body is empty")
		e.hint = "send a JSON object"
		return e
	}
	if err := checkContentType(r, op, jsonTypes); err != nil {
		return err
	}
	return kaizen.DecodeStrict(bytes.NewReader(data), v, op)
}

// maxQueryParamBytes bounds every query parameter; the engine bounds
// search strings further (app.MaxQueryLen).
const maxQueryParamBytes = 4096

// query is a request's validated query string.
type query struct {
	op string
	v  url.Values
}

// parseQuery parses the query string, rejecting malformed encoding,
// parameters the route does not know, and repeated parameters. A name in
// allowed ending in "..." may be repeated.
func parseQuery(r *http.Request, op string, allowed ...string) (query, error) {
	v, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return query{}, invalidRequest(op, "", "malformed query string: %v", err)
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = strings.TrimSuffix(a, "...")
	}
	for k, vals := range v {
		i := slices.Index(names, k)
		if i < 0 {
			e := invalidRequest(op, k, "unknown query parameter")
			if len(names) > 0 {
				e.hint = "this route accepts: " + strings.Join(names, ", ")
			} else {
				e.hint = "this route takes no query parameters"
			}
			return query{}, e
		}
		if len(vals) > 1 && !strings.HasSuffix(allowed[i], "...") {
			return query{}, invalidRequest(op, k, "is given %d times; give it once", len(vals))
		}
		for _, val := range vals {
			if len(val) > maxQueryParamBytes {
				return query{}, invalidRequest(op, k, "is longer than %d bytes", maxQueryParamBytes)
			}
			if !utf8.ValidString(val) {
				return query{}, invalidRequest(op, k, "is not valid UTF-8")
			}
		}
	}
	return query{op: op, v: v}, nil
}

func (q query) str(name string) string { return q.v.Get(name) }

func (q query) list(name string) []string { return q.v[name] }

// integer parses an optional integer parameter within [lo, hi].
func (q query) integer(name string, lo, hi int) (int, error) {
	s := q.v.Get(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < int64(lo) || n > int64(hi) {
		e := invalidRequest(q.op, name, "%q is not an integer between %d and %d", s, lo, hi)
		return 0, e
	}
	return int(n), nil
}

// boolean parses an optional boolean parameter ("true", "false", "1", "0").
func (q query) boolean(name string) (bool, error) {
	s := q.v.Get(name)
	if s == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, invalidRequest(q.op, name, "%q is not a boolean (true or false)", s)
	}
	return b, nil
}

// page parses limit (1..1000, default the engine's 50) and offset.
func (q query) page() (limit, offset int, err error) {
	if limit, err = q.integer("limit", 0, maxPage); err != nil {
		return 0, 0, err
	}
	offset, err = q.integer("offset", 0, math.MaxInt32)
	return limit, offset, err
}

// maxPage is the largest page the engine returns.
const maxPage = 1000

// mergeProject applies the ?project= parameter to a body's project
// field; the two must agree when both are given.
func mergeProject(op, fromQuery string, body *string) error {
	switch {
	case fromQuery == "":
	case *body == "":
		*body = fromQuery
	case *body != fromQuery:
		return invalidRequest(op, "project", "the query names project %q and the body %q", fromQuery, *body)
	}
	// Checked here too, for the actions that do not use the project (a
	// replay, running jobs): every input is bounded, used or not.
	if *body != "" {
		if err := kaizen.ValidProject(*body); err != nil {
			return invalidRequest(op, "project", "%v", err)
		}
	}
	return nil
}

// wantMarkdown decides between JSON and markdown: ?format=markdown|json
// wins, else the first of text/markdown and application/json listed in
// Accept (with a non-zero quality), else JSON.
func wantMarkdown(r *http.Request, q query) (bool, error) {
	switch f := q.str("format"); f {
	case "":
	case "json":
		return false, nil
	case "markdown", "md":
		return true, nil
	default:
		return false, invalidRequest(q.op, "format", "%q is not a format; use json or markdown", f)
	}
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil || params["q"] == "0" || params["q"] == "0.0" {
			continue
		}
		switch mt {
		case "text/markdown":
			return true, nil
		case "application/json":
			return false, nil
		}
	}
	return false, nil
}
