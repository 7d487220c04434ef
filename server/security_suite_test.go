package server_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen/internal/testkit"
)

// The security suite (go test ./... -run Security): every REST route gets
// malformed JSON, oversize strings in every common field and query
// parameter; none may answer 5xx, and the requests it refuses change
// nothing. Routes are enumerated from the server, so a new route is
// covered without editing this test. (The assertion that no secret is
// stored is the redaction suite's, in its own file.)
func TestSecurityEveryRouteBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.must(b.post("/api/v1/outcomes", outcome("bd-1", true, "split-by-file")), http.StatusCreated)
	b.must(b.post("/api/v1/errors", map[string]any{"bead_id": "bd-1", "error_type": "tool_failure", "message": "boom"}), http.StatusCreated)
	before := b.snapshot()
	big := strings.Repeat("x", 100_000)
	bodies := map[string]string{
		"truncated":      `{"bead_id":`,
		"not json":       `not json`,
		"null":           `null`,
		"array":          `[{"bead_id":"bd-9"}]`,
		"string":         `"x"`,
		"duplicate keys": `{"bead_id":"bd-9","bead_id":"bd-8","project":"proj","project":"other"}`,
		"nul byte":       "{\"bead_id\":\"bd-9\"}\x00",
		"invalid utf8":   "{\"bead_id\":\"\xff\xfe\"}",
		"deep":           strings.Repeat(`{"a":`, 200) + "1" + strings.Repeat("}", 200),
	}
	for _, f := range []string{"project", "bead_id", "task_id", "query", "search", "content", "message", "pattern", "id", "name", "rule", "trigger", "note", "strategy", "description", "text", "kind", "state", "verdict", "prompt"} {
		bodies["oversize "+f] = `{"` + f + `":"` + big + `"}`
	}
	params := []string{"project", "search", "q", "kind", "tag", "state", "bead_id", "task_id", "ref", "since", "limit", "offset", "status", "all", "type", "error_type"}
	accepted := map[string]int{}
	for _, pattern := range b.srv.Routes() {
		for _, rq := range testkit.RouteRequests(pattern) {
			check := func(what string, r response) {
				t.Helper()
				if r.status >= 500 {
					t.Errorf("%s %s %s: %d %.300s", rq.Method, rq.Path, what, r.status, r.body)
				}
				if r.status < 300 && rq.Method != "GET" {
					accepted[rq.Method+" "+rq.Path+" "+what] = r.status
				}
			}
			if rq.Method != "GET" {
				for name, body := range bodies {
					check(name, b.do(req{method: rq.Method, path: rq.Path, body: body}))
				}
			}
			for _, p := range params {
				check("?"+p, b.do(req{method: rq.Method, path: rq.Path + "?" + url.Values{p: {big[:5000]}}.Encode()}))
			}
			check("bad escape", b.do(req{method: rq.Method, path: rq.Path + "?project=%zz"}))
		}
	}
	if len(accepted) > 0 {
		t.Errorf("bad input accepted by a write: %v", accepted)
	}
	if b.snapshot() != before {
		t.Error("refused requests changed the store")
	}
}
