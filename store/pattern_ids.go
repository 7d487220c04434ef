package store

import "context"

// PatternIDReader is implemented by the transactions of stores that can
// list the ids of a project's patterns without reading the patterns (an
// index-only scan): plan guidance uses it to bring a cached or saved set of
// patterns up to date after a pattern deletion, instead of reading every
// pattern again.
type PatternIDReader interface {
	// EachPatternID calls fn with the id of every pattern of the project,
	// in the order of PatternsWithMaturity (created_at, then id). The
	// slice is only valid during the call.
	EachPatternID(ctx context.Context, project string, fn func(id []byte) error) error
}
