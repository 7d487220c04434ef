package store

import "context"

// Health is what a store reports about itself (kaizen doctor).
type Health struct {
	Backend string `json:"backend"`
	// Integrity is "ok", or the problems the database's own check found.
	Integrity string `json:"integrity"`
	// Applied and Known are the newest applied schema migration and the
	// newest this build knows; Pending lists known migrations not applied,
	// Unknown applied ones this build does not know (a newer kaizen
	// migrated the database).
	Applied int64   `json:"applied"`
	Known   int64   `json:"known"`
	Pending []int64 `json:"pending,omitempty"`
	Unknown []int64 `json:"unknown,omitempty"`
}

// Checker is implemented by stores that can check their own health: the
// database's integrity and its schema migrations.
type Checker interface {
	Check(ctx context.Context) (Health, error)
}
