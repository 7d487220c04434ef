package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// Finding 4 of issue 12 on REST: oversize search strings gave 500; a null
// body was taken as {} (resetting the exploration settings); duplicate
// keys and foreign charsets were accepted.
func TestSecurityStrictInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.must(b.do(req{method: "PUT", path: "/api/v1/explore/settings", body: `{"enabled":true}`}), http.StatusOK)
	b.must(b.post("/api/v1/outcomes", outcome("bd-1", true, "")), http.StatusCreated)
	settings := string(b.must(b.get("/api/v1/explore/settings"), http.StatusOK).body)
	before := b.snapshot()

	for _, path := range []string{"/api/v1/patterns", "/api/v1/errors", "/api/v1/skills", "/api/v1/heuristics"} {
		for _, n := range []int{50_000, 2_000} {
			r := b.get(path + "?search=" + strings.Repeat("a", n))
			if r.status != http.StatusBadRequest {
				t.Errorf("%s with a %d-byte search: %d %.200s", path, n, r.status, r.body)
			} else if e := r.errorOf(t); e.Error.Field != "search" {
				t.Errorf("%s: field %q", path, e.Error.Field)
			}
		}
		b.must(b.get(path+"?search=ok"), http.StatusOK)
	}
	if r := b.get("/api/v1/outcomes?project=%ff"); r.status != http.StatusBadRequest {
		t.Errorf("invalid UTF-8 query: %d", r.status)
	}

	for name, rq := range map[string]req{
		"null settings":      {method: "PUT", path: "/api/v1/explore/settings", body: "null"},
		"null outcome":       {method: "POST", path: "/api/v1/outcomes", body: " null "},
		"duplicate key":      {method: "POST", path: "/api/v1/outcomes", body: `{"bead_id":"bd-2","bead_id":"bd-3","duration_ms":1,"success":true}`},
		"duplicate settings": {method: "PUT", path: "/api/v1/explore/settings", body: `{"enabled":true,"enabled":false}`},
		"invalid utf8":       {method: "POST", path: "/api/v1/outcomes", body: "{\"bead_id\":\"bd-\xff\",\"duration_ms\":1,\"success\":true}"},
		"latin1": {method: "POST", path: "/api/v1/outcomes", body: `{"bead_id":"bd-4","duration_ms":1,"success":true}`,
			header: map[string]string{"Content-Type": "application/json; charset=latin1"}},
		"too deep": {method: "POST", path: "/api/v1/outcomes", body: `{"bead_id":"bd-5","duration_ms":1,"success":true,"x":` +
			strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`},
	} {
		r := b.do(rq)
		if r.status != http.StatusBadRequest && r.status != http.StatusUnsupportedMediaType {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	b.must(b.do(req{method: "POST", path: "/api/v1/outcomes", body: `{"bead_id":"bd-6","duration_ms":1,"success":true}`,
		header: map[string]string{"Content-Type": "application/json; charset=UTF-8"}}), http.StatusCreated)
	if got := string(b.must(b.get("/api/v1/explore/settings"), http.StatusOK).body); got != settings {
		t.Errorf("settings changed by rejected requests:\n%s\n%s", settings, got)
	}
	after := b.snapshot()
	if strings.Count(after, "\n")-strings.Count(before, "\n") < 1 || strings.Contains(after, "bd-2") || strings.Contains(after, "bd-3") {
		t.Errorf("rejected requests changed the store")
	}
}

// Finding 4 on import: what REST refuses, import refuses too — a time far
// in the future, invalid UTF-8, a duplicate key, a null record.
func TestSecurityImportStrict(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.must(b.post("/api/v1/outcomes", outcome("bd-1", true, "")), http.StatusCreated)
	export := string(b.must(b.get("/api/v1/export?all=true"), http.StatusOK).body)
	lines := strings.Split(strings.TrimSpace(export), "\n")
	var outcomeLine string
	for _, l := range lines {
		if strings.Contains(l, `"bd-1"`) && strings.Contains(l, "timestamp") {
			outcomeLine = l
		}
	}
	if outcomeLine == "" {
		t.Fatalf("no outcome line in the export:\n%s", export)
	}
	c := setup(t)
	before := c.snapshot()
	i := strings.Index(outcomeLine, `"timestamp":"`) + len(`"timestamp":"`)
	future := outcomeLine[:i] + "2999" + outcomeLine[i+4:]
	for name, bad := range map[string]string{
		"future":       future,
		"invalid utf8": strings.Replace(outcomeLine, `"bd-1"`, "\"bd-\xff\"", 1),
		"duplicate":    strings.Replace(outcomeLine, `"bead_id":"bd-1"`, `"bead_id":"bd-1","bead_id":"bd-9"`, 1),
		"null record":  `{"type":"outcome","record":null}`,
		"null line":    `null`,
	} {
		body := lines[0] + "\n" + bad + "\n"
		r := c.do(req{method: "POST", path: "/api/v1/import", body: body, header: map[string]string{"Content-Type": "application/x-ndjson"}})
		if r.status != http.StatusBadRequest {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	if c.snapshot() != before {
		t.Error("refused imports changed the store")
	}
	c.must(c.do(req{method: "POST", path: "/api/v1/import", body: lines[0] + "\n" + outcomeLine + "\n",
		header: map[string]string{"Content-Type": "application/x-ndjson"}}), http.StatusOK)
}
