package testkit

import (
	"regexp"
	"strings"
)

// RouteRequest is one request that a ServeMux route pattern matches.
type RouteRequest struct {
	Method, Path string
}

var wildcard = regexp.MustCompile(`\{[^}]*\}`)

// RouteRequests returns requests that reach the route with the given
// net/http ServeMux pattern ("POST /api/v1/x/{id}", "/mcp", "GET /"):
// wildcards are filled with "x", and a pattern without a method yields a GET
// and a POST. Security tests use it to drive every mounted route, so that a
// new route is covered without editing the test.
func RouteRequests(pattern string) []RouteRequest {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		method, path = "", pattern
	}
	if i := strings.IndexByte(path, '/'); i > 0 { // host-specific pattern
		path = path[i:]
	}
	path = strings.ReplaceAll(path, "{$}", "")
	path = wildcard.ReplaceAllStringFunc(path, func(string) string { return "x" })
	if method == "" {
		return []RouteRequest{{"GET", path}, {"POST", path}}
	}
	return []RouteRequest{{method, path}}
}
