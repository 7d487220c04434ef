package kaizen

import "time"

// Defaults of [retention].
const (
	DefaultRecallMaxAge = 30 * 24 * time.Hour
	DefaultRecallKeep   = 5000
	DefaultGCInterval   = time.Hour
)

// RetentionConfig bounds what grows with use without being evidence: the
// stored recall events (one per recall, so one per hooked prompt). The
// daemon applies it every Interval as a periodic job on the durable job
// runner; `kaizen gc`, POST /api/v1/gc and the MCP tool gc apply it on
// demand. See docs/security.md and docs/configuration.md.
type RetentionConfig struct {
	// RecallMaxAge deletes recalls older than this (default 30 days; 0:
	// no age limit).
	RecallMaxAge time.Duration `toml:"recall_max_age"`
	// RecallKeep keeps at most this many recalls per project, the newest
	// (default 5000; 0: no count limit).
	RecallKeep int `toml:"recall_keep"`
	// RecallItems is what a stored recall keeps of the items it
	// considered: "injected" (default) or "all".
	RecallItems string `toml:"recall_items"`
	// Interval is how often the daemon runs the collection (default 1h,
	// at least 1m).
	Interval time.Duration `toml:"interval"`
	// Checkpoint truncates SQLite's write-ahead log after each collection
	// (default true).
	Checkpoint bool `toml:"checkpoint"`
}

// DefaultRetention is the default retention policy: bounded.
func DefaultRetention() RetentionConfig {
	return RetentionConfig{RecallMaxAge: DefaultRecallMaxAge, RecallKeep: DefaultRecallKeep, RecallItems: "injected",
		Interval: DefaultGCInterval, Checkpoint: true}
}

// Validate checks the policy.
func (r RetentionConfig) Validate() error {
	fail := func(field, msg string) error {
		return &Error{Op: "validate config", Kind: KindInvalid, Field: "retention." + field, Message: msg}
	}
	switch {
	case r.RecallMaxAge < 0:
		return fail("recall_max_age", "must not be negative (0: no age limit)")
	case r.RecallKeep < 0:
		return fail("recall_keep", "must not be negative (0: no count limit)")
	case r.RecallItems != "" && r.RecallItems != "injected" && r.RecallItems != "all":
		return fail("recall_items", `must be "injected" or "all"`)
	case r.Interval != 0 && r.Interval < time.Minute:
		return fail("interval", "must be at least 1m")
	}
	return nil
}
