package kaizen

import "github.com/kaizenhq/kaizen/store"

// StoreConfig is the [store] section: options of the storage backend.
type StoreConfig struct {
	// Aggregates is where a recorded outcome's aggregates (criteria,
	// pattern counts and maturity, maturity feedback, pattern versions) are
	// written: "inline" (default), in the transaction that acknowledges the
	// outcome; "behind" (SQLite only, opt-in), after it, coalesced across
	// outcomes and replayed from a journal after a crash (docs/storage.md).
	// KAIZEN_STORE_AGGREGATES.
	Aggregates string `toml:"aggregates"`
}

// Validate checks the section.
func (c StoreConfig) Validate() error {
	switch c.Aggregates {
	case "", "inline", "behind":
		return nil
	}
	return &Error{Op: "validate config", Kind: KindInvalid, Field: "store.aggregates",
		Message: "must be \"inline\" or \"behind\", got " + c.Aggregates}
}

func (c StoreConfig) open() store.OpenOptions { return store.OpenOptions{Aggregates: c.Aggregates} }
