// Package metrics exposes kaizen's operational metrics in the Prometheus
// text format (served at /metrics by `kaizen serve`): request counts and
// latencies per REST/viewer route and per MCP tool, the SQLite writer's
// group commits, and the Go runtime and process collectors.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kaizenhq/kaizen/server"
	"github.com/kaizenhq/kaizen/store/sqlite"
)

// Metrics is a registry with kaizen's collectors.
type Metrics struct {
	reg       *prometheus.Registry
	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	toolCalls *prometheus.CounterVec
	toolTime  *prometheus.HistogramVec
}

// latencyBuckets span sub-millisecond reads to multi-second imports.
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// New returns a registry with the Go runtime and process collectors.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kaizen_http_requests_total", Help: "HTTP requests served, by route pattern, method and status code.",
	}, []string{"route", "method", "code"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "kaizen_http_request_duration_seconds", Help: "HTTP request latency by route pattern.", Buckets: latencyBuckets,
	}, []string{"route"})
	m.toolCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kaizen_mcp_tool_calls_total", Help: "MCP tool calls, by tool and result (ok, error).",
	}, []string{"tool", "result"})
	m.toolTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "kaizen_mcp_tool_duration_seconds", Help: "MCP tool call latency by tool.", Buckets: latencyBuckets,
	}, []string{"tool"})
	m.reg.MustRegister(m.requests, m.latency, m.toolCalls, m.toolTime,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// ObserveRequest records a served request; use it as server.Options.OnRequest.
func (m *Metrics) ObserveRequest(r server.RequestInfo) {
	route := r.Route
	if route == "" {
		route = "unmatched" // bounded label values: never the raw path
	}
	m.requests.WithLabelValues(route, r.Method, strconv.Itoa(r.Status)).Inc()
	m.latency.WithLabelValues(route).Observe(r.Duration.Seconds())
}

// ObserveTool records an MCP tool call.
func (m *Metrics) ObserveTool(tool string, d time.Duration, err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.toolCalls.WithLabelValues(tool, result).Inc()
	m.toolTime.WithLabelValues(tool).Observe(d.Seconds())
}

// WatchSQLite exports the SQLite writer's group-commit counters.
func (m *Metrics) WatchSQLite(st *sqlite.Store) {
	m.reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "kaizen_sqlite_commits_total", Help: "Transactions committed by the SQLite writer (group commits).",
		}, func() float64 { return float64(st.Stats().Batches) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "kaizen_sqlite_updates_total", Help: "Store updates carried by those commits.",
		}, func() float64 { return float64(st.Stats().Requests) }),
	)
}
