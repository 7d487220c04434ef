package experience

import (
	"math"
	"testing"
)

func TestRecallCalibrationLead(t *testing.T) {
	t.Parallel()
	c := RecallCalibration{MinTopic: 0.47, Relative: 0.5}
	if c.Passes(0.40, 0, 0.40, 0.20, 0) {
		t.Error("below min_topic passed with the lead rule off")
	}
	c.Lead, c.LeadFloor = 0.11, 0.30
	for _, tc := range []struct {
		topic, best, second float64
		want                bool
	}{
		{0.40, 0.40, 0.28, true},  // the best, standing out by 0.12
		{0.40, 0.40, 0.30, false}, // leads by 0.10 only
		{0.29, 0.29, 0.10, false}, // below the lead floor
		{0.28, 0.40, 0.28, false}, // not the best
		{0.50, 0.50, 0.49, true},  // above min_topic anyway
		{math.NaN(), 0.5, 0.1, false},
	} {
		if got := c.Passes(tc.topic, 0, tc.best, tc.second, 0); got != tc.want {
			t.Errorf("Passes(%v, best %v, second %v) = %v, want %v", tc.topic, tc.best, tc.second, got, tc.want)
		}
	}
}
