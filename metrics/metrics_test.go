package metrics_test

import (
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/metrics"
	"github.com/kaizenhq/kaizen/server"
)

func TestExposition(t *testing.T) {
	m := metrics.New()
	m.ObserveRequest(server.RequestInfo{Method: "POST", Route: "POST /api/v1/outcomes", Status: 201, Duration: 3 * time.Millisecond})
	m.ObserveRequest(server.RequestInfo{Method: "GET", Route: "", Status: 404, Duration: time.Millisecond})
	m.ObserveTool("record_outcome", 2*time.Millisecond, nil)
	m.ObserveTool("record_outcome", time.Millisecond, errors.New("bad input"))
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`kaizen_http_requests_total{code="201",method="POST",route="POST /api/v1/outcomes"} 1`,
		`kaizen_http_requests_total{code="404",method="GET",route="unmatched"} 1`,
		`kaizen_http_request_duration_seconds_count{route="POST /api/v1/outcomes"} 1`,
		`kaizen_mcp_tool_calls_total{result="error",tool="record_outcome"} 1`,
		`kaizen_mcp_tool_calls_total{result="ok",tool="record_outcome"} 1`,
		`go_goroutines`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("exposition lacks %s", want)
		}
	}
}
