package experience

import (
	"errors"
	"testing"
	"time"
)

// The background extraction switches: defaults and the bounds of the delay.
func TestAutoExtractConfig(t *testing.T) {
	c := DefaultConfig()
	if !c.AutoExtract || c.AutoExtractDelay != 30*time.Second || c.Validate() != nil {
		t.Fatalf("defaults: auto_extract %t, delay %s, %v", c.AutoExtract, c.AutoExtractDelay, c.Validate())
	}
	for _, tc := range []struct {
		delay time.Duration
		ok    bool
	}{
		{0, true}, {time.Millisecond, true}, {MaxAutoExtractDelay, true}, {2 * time.Minute, true},
		{-time.Nanosecond, false}, {30, false}, {time.Millisecond - 1, false}, {MaxAutoExtractDelay + 1, false},
	} {
		c := DefaultConfig()
		c.AutoExtractDelay = tc.delay
		err := c.Validate()
		var ce *ConfigError
		switch {
		case tc.ok && err != nil:
			t.Errorf("delay %s: %v", tc.delay, err)
		case !tc.ok && (!errors.As(err, &ce) || ce.Field != "auto_extract_delay"):
			t.Errorf("delay %s: want an auto_extract_delay error, got %v", tc.delay, err)
		}
	}
}
