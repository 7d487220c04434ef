package server_test

import (
	"net/http"
	"testing"

	"github.com/kaizenhq/kaizen"
)

// TestLearningCurveOverREST reads the curve: its points and the inversion
// of a pattern failing three times out of three; bad parameters are 400.
func TestLearningCurveOverREST(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i := range 4 {
		b.must(b.post("/api/v1/outcomes", map[string]any{"bead_id": "f" + string(rune('0'+i)), "duration_ms": 1000,
			"success": i == 3, "patterns": []string{"Split by file type"}}), http.StatusCreated)
	}
	var c kaizen.LearningCurve
	b.must(b.get("/api/v1/learning-curve?window=2&points=2"), http.StatusOK).decode(t, &c)
	if c.Outcomes != 4 || c.Window != 2 || len(c.Points) != 3 || c.Last.Succeeded != 1 || c.Last.Total != 2 {
		t.Errorf("curve: %+v", c)
	}
	if len(c.Changes) != 1 || c.Changes[0].Kind != kaizen.CurveAntiPattern || c.Changes[0].Outcome != 3 || c.Changes[0].TaskID != "f2" {
		t.Errorf("changes: %+v", c.Changes)
	}
	for _, bad := range []string{"window=0", "window=1001", "points=1", "points=x", "color=red"} {
		b.must(b.get("/api/v1/learning-curve?"+bad), http.StatusBadRequest)
	}
}
