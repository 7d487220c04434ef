package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/server"
)

// Bad outcome bodies are answered 400 (413 when oversized) with a JSON
// error naming the field, and change nothing.
func TestRecordOutcomeBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.must(b.post("/api/v1/outcomes", outcome("bd-0", true, "Split by file type")), http.StatusCreated)
	before := b.snapshot()
	future := start.Add(time.Hour).Format(time.RFC3339)
	for _, tc := range []struct {
		name   string
		body   string
		status int
		field  string
	}{
		{"malformed", `{"bead_id": "bd-1", "duration_ms": 100,`, 400, ""},
		{"not JSON", `bead_id=bd-1`, 400, ""},
		{"array", `[{"bead_id": "bd-1"}]`, 400, ""},
		{"trailing data", `{"bead_id": "bd-1", "duration_ms": 1, "success": true} {}`, 400, ""},
		{"unknown field", `{"bead_id": "bd-1", "duration_ms": 1, "success": true, "sucess": true}`, 400, "sucess"},
		{"wrong type string", `{"bead_id": "bd-1", "duration_ms": "1000", "success": true}`, 400, "duration_ms"},
		{"wrong type bool", `{"bead_id": "bd-1", "duration_ms": 1000, "success": "yes"}`, 400, "success"},
		{"wrong type id", `{"bead_id": 17, "duration_ms": 1000, "success": true}`, 400, "bead_id"},
		{"fraction", `{"bead_id": "bd-1", "duration_ms": 1.5, "success": true}`, 400, "duration_ms"},
		{"negative duration", `{"bead_id": "bd-1", "duration_ms": -5, "success": true}`, 400, "duration_ms"},
		{"huge duration", `{"bead_id": "bd-1", "duration_ms": 1e30, "success": true}`, 400, "duration_ms"},
		{"duration over a year", `{"bead_id": "bd-1", "duration_ms": 99999999999999, "success": true}`, 400, "duration_ms"},
		{"NaN", `{"bead_id": "bd-1", "duration_ms": NaN, "success": true}`, 400, ""},
		{"negative errors", `{"bead_id": "bd-1", "duration_ms": 1, "error_count": -1, "success": true}`, 400, "error_count"},
		{"huge retries", `{"bead_id": "bd-1", "duration_ms": 1, "retry_count": 1000000000, "success": true}`, 400, "retry_count"},
		{"missing success", `{"bead_id": "bd-1", "duration_ms": 1}`, 400, "success"},
		{"missing duration", `{"bead_id": "bd-1", "success": true}`, 400, "duration_ms"},
		{"empty bead id", `{"bead_id": "", "duration_ms": 1, "success": true}`, 400, "bead_id"},
		{"blank bead id", `{"bead_id": "   ", "duration_ms": 1, "success": true}`, 400, "bead_id"},
		{"no bead id", `{"duration_ms": 1, "success": true}`, 400, "bead_id"},
		{"invalid timestamp", `{"bead_id": "bd-1", "duration_ms": 1, "success": true, "timestamp": "yesterday"}`, 400, "timestamp"},
		{"timestamp without zone", `{"bead_id": "bd-1", "duration_ms": 1, "success": true, "timestamp": "2025-03-01T08:00:00"}`, 400, "timestamp"},
		{"future timestamp", `{"bead_id": "bd-1", "duration_ms": 1, "success": true, "timestamp": "` + future + `"}`, 400, "timestamp"},
		{"unknown failure mode", `{"bead_id": "bd-1", "duration_ms": 1, "success": false, "failure_mode": "gremlins"}`, 400, "failure_mode"},
		{"control character", `{"bead_id": "bd\u0001", "duration_ms": 1, "success": true}`, 400, "bead_id"},
		{"invalid UTF-8", "{\"bead_id\": \"bd-\xff\", \"duration_ms\": 1, \"success\": true}", 400, ""},
		{"empty body", ``, 400, ""},
		{"null", `null`, 400, ""},
		{"oversized", `{"bead_id": "bd-1", "failure_details": "` + strings.Repeat("x", 2<<20) + `"}`, 413, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := b.post("/api/v1/outcomes", tc.body)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			e := r.errorOf(t)
			if tc.field != "" && e.Error.Field != tc.field {
				t.Errorf("field %q, want %q: %s", e.Error.Field, tc.field, r.body)
			}
			if tc.status == 400 && e.Error.Code != "invalid_input" {
				t.Errorf("code %q", e.Error.Code)
			}
			if tc.status == 413 && e.Error.Code != "payload_too_large" {
				t.Errorf("code %q", e.Error.Code)
			}
		})
	}
	if b.snapshot() != before {
		t.Error("rejected outcomes changed the store")
	}
}

// Every other route with a body rejects bad bodies the same way.
func TestOtherBodiesBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.must(b.post("/api/v1/patterns/observe", map[string]any{"pattern": "p", "success": true}), http.StatusOK)
	before := b.snapshot()
	for _, tc := range []struct {
		path, body string
		status     int
		field      string
	}{
		{"/api/v1/patterns/observe", `{"pattern": "p"}`, 400, "success"},
		{"/api/v1/patterns/observe", `{"pattern": "", "success": true}`, 400, "pattern"},
		{"/api/v1/patterns/observe", `{"pattern": "p", "success": true, "bead_id": ""}`, 200, ""}, // bead_id is optional here: "" means none
		{"/api/v1/patterns/observe", `{"pattern": "p", "success": true, "timestamp": "2025-13-01T00:00:00Z"}`, 400, "timestamp"},
		{"/api/v1/patterns/observe", `{"pattern": "line\nbreak", "success": true}`, 400, "pattern"},
		{"/api/v1/patterns/observe", `{"pattern": "p", "success": true, "extra": 1}`, 400, "extra"},
		{"/api/v1/patterns/promote", `{"reason": "x"}`, 400, "pattern"},
		{"/api/v1/patterns/promote", `{"pattern": 5}`, 400, "pattern"},
		{"/api/v1/patterns/deprecate", `{"pattern": "p", "reason": "   "}`, 400, "reason"},
		{"/api/v1/errors", `{"bead_id": "", "message": "m"}`, 400, "bead_id"},
		{"/api/v1/errors", `{"bead_id": "t", "message": ""}`, 400, "message"},
		{"/api/v1/errors", `{"bead_id": "t", "message": "m", "error_type": "cosmic"}`, 400, "error_type"},
		{"/api/v1/errors", `{"bead_id": "t", "message": "m", "timestamp": "2025-03-01"}`, 400, "timestamp"},
		{"/api/v1/errors", `{"bead_id": "t", "msg": "m"}`, 400, "msg"},
		{"/api/v1/errors/err-x/resolve", `{"project": "proj", "id": "x"}`, 400, "id"},
		{"/api/v1/errors/err-x/resolve", `not json`, 400, ""},
		{"/api/v1/plan", `{"task": 3}`, 400, "task"},
		{"/api/v1/plan", `{"limit": 99999999999999999999}`, 400, "limit"},
		{"/api/v1/plan", ``, 400, ""},
		{"/api/v1/extract", `{"description": "x", "project": "p"}`, 400, "project"},
		{"/api/v1/extract", `{}`, 400, "description"},
		{"/api/v1/rebuild", `{"projects": ["a"]}`, 400, "projects"},
		{"/api/v1/import", `not an export`, 400, "line 1"},
		{"/api/v1/import", ``, 400, ""},
	} {
		r := b.post(tc.path, tc.body)
		if r.status != tc.status {
			t.Errorf("%s %s: status %d, want %d: %s", tc.path, tc.body, r.status, tc.status, r.body)
			continue
		}
		if tc.status == 200 {
			before = b.snapshot()
			continue
		}
		if e := r.errorOf(t); tc.field != "" && e.Error.Field != tc.field {
			t.Errorf("%s %s: field %q, want %q", tc.path, tc.body, e.Error.Field, tc.field)
		}
	}
	if b.snapshot() != before {
		t.Error("rejected requests changed the store")
	}
}

// Query parameters are validated: unknown or repeated names, malformed
// escapes, non-numeric or out-of-range numbers, bad booleans and enums.
func TestQueryValidation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, tc := range []struct {
		path  string
		field string
	}{
		{"/api/v1/outcomes?limit=abc", "limit"},
		{"/api/v1/outcomes?limit=-1", "limit"},
		{"/api/v1/outcomes?limit=1001", "limit"},
		{"/api/v1/outcomes?limit=99999999999999999999999", "limit"},
		{"/api/v1/outcomes?limit=1.5", "limit"},
		{"/api/v1/outcomes?offset=x", "offset"},
		{"/api/v1/outcomes?offset=-3", "offset"},
		{"/api/v1/outcomes?limt=5", "limt"},
		{"/api/v1/outcomes?limit=1&limit=2", "limit"},
		{"/api/v1/outcomes?bead_id=%zz", ""},
		{"/api/v1/patterns?kind=widget", "kind"},
		{"/api/v1/patterns?state=legendary", "state"},
		{"/api/v1/patterns?limit=ten", "limit"},
		{"/api/v1/errors?unresolved=maybe", "unresolved"},
		{"/api/v1/errors?error_type=cosmic", "error_type"},
		{"/api/v1/errors?offset=1e3", "offset"},
		{"/api/v1/tasks/bd-1/error-context?include_resolved=sometimes", "include_resolved"},
		{"/api/v1/tasks/bd-1/error-context?format=pdf", "format"},
		{"/api/v1/tasks/%20bd/error-stats", "bead_id"},
		{"/api/v1/plan?limit=x", "limit"},
		{"/api/v1/plan?bead=bd-1", "bead"},
		{"/api/v1/version?verbose=1", "verbose"},
		{"/api/v1/export?all=yes", "all"},
		{"/api/v1/criteria?project=a&project=b", "project"},
	} {
		r := b.get(tc.path)
		if r.status != http.StatusBadRequest {
			t.Errorf("%s: status %d: %s", tc.path, r.status, r.body)
			continue
		}
		if e := r.errorOf(t); e.Error.Field != tc.field || e.Error.Code != "invalid_input" {
			t.Errorf("%s: %+v", tc.path, e.Error)
		}
	}
	b.must(b.get("/api/v1/outcomes?limit=1000&offset=0"), http.StatusOK)
	b.must(b.get("/api/v1/errors?unresolved=1"), http.StatusOK)
}

// JSON bodies are accepted without a content type or as application/json;
// the types an HTML form can send cross-site are refused.
func TestContentType(t *testing.T) {
	t.Parallel()
	b := setup(t)
	body := `{"bead_id": "bd-1", "duration_ms": 1, "success": true}`
	for _, ct := range []string{"application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x"} {
		r := b.do(req{method: "POST", path: "/api/v1/outcomes", body: body, header: map[string]string{"Content-Type": ct}})
		if r.status != http.StatusUnsupportedMediaType || r.errorOf(t).Error.Code != "unsupported_media_type" {
			t.Errorf("%s: %d %s", ct, r.status, r.body)
		}
	}
	if r := b.do(req{method: "POST", path: "/api/v1/import", body: "x", header: map[string]string{"Content-Type": "text/plain"}}); r.status != http.StatusUnsupportedMediaType {
		t.Errorf("import as text/plain: %d", r.status)
	}
	b.must(b.do(req{method: "POST", path: "/api/v1/outcomes", body: body,
		header: map[string]string{"Content-Type": "application/json; charset=utf-8"}}), http.StatusCreated)
	b.must(b.do(req{method: "POST", path: "/api/v1/outcomes", body: strings.Replace(body, "bd-1", "bd-2", 1),
		header: map[string]string{"Content-Type": ""}}), http.StatusCreated)
}

// Body limits: JSON bodies over MaxBodyBytes and imports over
// MaxImportBytes get 413, whether or not they announce their length.
func TestBodyLimits(t *testing.T) {
	t.Parallel()
	b := setup(t, withServer(func(o *server.Options) { o.MaxBodyBytes = 1000; o.MaxImportBytes = 4000 }))
	big := `{"bead_id": "bd-1", "duration_ms": 1, "success": true, "failure_details": "` + strings.Repeat("x", 2000) + `"}`
	for name, body := range map[string]any{
		"with length": big,
		"chunked":     io.MultiReader(strings.NewReader(big)), // no Content-Length
	} {
		r := b.post("/api/v1/outcomes", body)
		if r.status != http.StatusRequestEntityTooLarge || r.errorOf(t).Error.Code != "payload_too_large" {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	// The import limit is separate and larger.
	export := b.must(b.get("/api/v1/export"), http.StatusOK).body
	if len(export) > 1000 {
		t.Fatalf("empty export is %d bytes", len(export))
	}
	b.must(b.do(req{method: "POST", path: "/api/v1/import", body: string(export) + strings.Repeat("\n", 1500)}), http.StatusOK)
	r := b.do(req{method: "POST", path: "/api/v1/import", body: io.MultiReader(strings.NewReader(string(export) + strings.Repeat("\n", 5000)))})
	if r.status != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized import: %d %s", r.status, r.body)
	}
	if got := b.snapshot(); got != "" {
		t.Errorf("state after rejected bodies: %q", got)
	}
}
