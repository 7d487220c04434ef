package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
)

// An outcome queues its extraction job; GET /api/v1/jobs lists it and
// POST /api/v1/jobs/run runs it once due.
func TestJobsOverREST(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if _, err := b.engine.RecordOutcome(t.Context(), kaizen.OutcomeInput{TaskID: "t1", DurationMs: ptrInt64(1000),
		Success: ptrBool(true)}); err != nil {
		t.Fatal(err)
	}
	l := b.must(b.get("/api/v1/jobs?kind=experience.extract"), http.StatusOK).json(t)
	if l["total"].(float64) != 1 {
		t.Fatalf("jobs: %v", l)
	}
	r := b.must(b.post("/api/v1/jobs/run", nil), http.StatusOK).json(t)
	if r["ran"].(float64) != 0 {
		t.Fatalf("ran a job before it was due: %v", r)
	}
	b.clock.Advance(time.Minute)
	r = b.must(b.post("/api/v1/jobs/run", nil), http.StatusOK).json(t)
	if r["ran"].(float64) != 1 {
		t.Fatalf("run: %v", r)
	}
	b.must(b.get("/api/v1/jobs?state=sleeping"), http.StatusBadRequest)
}

func ptrInt64(v int64) *int64 { return &v }
func ptrBool(v bool) *bool    { return &v }
