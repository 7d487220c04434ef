package experience

import (
	"errors"
	"testing"
	"time"
)

// The background extraction switches: defaults and the bounds of the delay
// and of the rescan period.
func TestAutoExtractConfig(t *testing.T) {
	c := DefaultConfig()
	if !c.AutoExtract || c.AutoExtractDelay != 30*time.Second || c.AutoExtractRescan != time.Minute || c.Validate() != nil {
		t.Fatalf("defaults: auto_extract %t, delay %s, rescan %s, %v", c.AutoExtract, c.AutoExtractDelay,
			c.AutoExtractRescan, c.Validate())
	}
	for _, tc := range []struct {
		field string
		d     time.Duration
		ok    bool
	}{
		{"auto_extract_delay", 0, true}, {"auto_extract_delay", time.Millisecond, true},
		{"auto_extract_delay", MaxAutoExtractDelay, true}, {"auto_extract_delay", 2 * time.Minute, true},
		{"auto_extract_delay", -time.Nanosecond, false}, {"auto_extract_delay", 30, false},
		{"auto_extract_delay", time.Millisecond - 1, false}, {"auto_extract_delay", MaxAutoExtractDelay + 1, false},
		{"auto_extract_rescan", time.Millisecond, true}, {"auto_extract_rescan", MaxAutoExtractDelay, true},
		{"auto_extract_rescan", 0, false}, {"auto_extract_rescan", 60, false},
		{"auto_extract_rescan", MaxAutoExtractDelay + 1, false},
	} {
		c := DefaultConfig()
		if tc.field == "auto_extract_delay" {
			c.AutoExtractDelay = tc.d
		} else {
			c.AutoExtractRescan = tc.d
		}
		err := c.Validate()
		var ce *ConfigError
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s %s: %v", tc.field, tc.d, err)
		case !tc.ok && (!errors.As(err, &ce) || ce.Field != tc.field):
			t.Errorf("%s %s: want an error of that field, got %v", tc.field, tc.d, err)
		}
	}
}
