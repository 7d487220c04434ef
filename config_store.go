package kaizen

import "github.com/kaizenhq/kaizen/store"

// StoreConfig is the [store] section: options of the storage backend.
type StoreConfig struct {
	// Aggregates is where a recorded outcome's aggregates (criteria,
	// pattern counts and maturity, maturity feedback, pattern versions) are
	// written on SQLite (PostgreSQL writes them inline): "idle" (the
	// default, also ""), after the commit that acknowledges the outcome,
	// coalesced across outcomes, journaled and replayed after a crash, and
	// written at the latest once the writer has been idle for 10 ms, once
	// the oldest staged outcome is a second old, and at close; "inline", in
	// the commit that acknowledges the outcome; "behind", like "idle" but
	// left staged until the next read or other write (docs/storage.md).
	// KAIZEN_STORE_AGGREGATES.
	Aggregates string `toml:"aggregates"`
}

// Validate checks the section.
func (c StoreConfig) Validate() error {
	switch c.Aggregates {
	case "", "inline", "behind", "idle":
		return nil
	}
	return &Error{Op: "validate config", Kind: KindInvalid, Field: "store.aggregates",
		Message: "must be \"inline\", \"behind\" or \"idle\", got " + c.Aggregates}
}

func (c StoreConfig) open() store.OpenOptions { return store.OpenOptions{Aggregates: c.Aggregates} }
