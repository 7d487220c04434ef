package experience

import (
	"errors"
	"math"
	"testing"
)

func TestRecallCalibrationTriggerCheck(t *testing.T) {
	t.Parallel()
	off := RecallCalibration{MinTopic: 0.52, Relative: 0.5}
	if !off.TriggerPasses(0.53, 0) {
		t.Error("the check is off without min_trigger_topic")
	}
	c := RecallCalibration{MinTopic: 0.52, Relative: 0.5, MinTriggerTopic: 0.4, TriggerCheckBelow: 0.65}
	for _, tc := range []struct {
		topic, trigger float64
		want           bool
	}{
		{0.55, 0.40, true},  // the floor belongs to the lesson
		{0.55, 0.39, false}, // borderline topic, the trigger is not what the query is about
		{0.65, 0.00, true},  // strong match as a whole: no check
		{0.64, 0.10, false},
		{0.55, math.NaN(), false},
	} {
		if got := c.TriggerPasses(tc.topic, tc.trigger); got != tc.want {
			t.Errorf("TriggerPasses(topic %v, trigger %v) = %v, want %v", tc.topic, tc.trigger, got, tc.want)
		}
	}
	c.TriggerCheckBelow = 0 // the check for every topic
	if c.TriggerPasses(0.9, 0.1) {
		t.Error("trigger_check_below 0 must check every topic")
	}
	if got := OfflineRecallCalibration()[OfflineMergeEmbedderID()]; got.MinTriggerTopic <= 0 || got.TriggerCheckBelow <= got.MinTopic {
		t.Errorf("offline calibration %+v: want the trigger check on, limited to topics above min_topic", got)
	}
}

func TestConfigRejectsTriggerCheckOutOfRange(t *testing.T) {
	t.Parallel()
	for _, bad := range []RecallCalibration{{MinTriggerTopic: 1.5}, {MinTriggerTopic: -0.1}, {TriggerCheckBelow: math.NaN()}, {TriggerCheckBelow: 2}} {
		c := DefaultConfig()
		c.Recall.Calibrated = map[string]RecallCalibration{"x": bad}
		var ce *ConfigError
		if err := c.Validate(); !errors.As(err, &ce) {
			t.Errorf("%+v: %v, want a *ConfigError", bad, err)
		}
	}
}
