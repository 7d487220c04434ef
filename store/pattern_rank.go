package store

import (
	"context"
	"math"

	"github.com/kaizenhq/kaizen/learning"
)

// PatternRank is what plan guidance ranks a pattern on: a pattern record
// without its example tasks, reason, source, timestamps and maturity
// history. The byte fields are only valid during the callback that
// receives them (they may alias a driver buffer): copy what is kept.
type PatternRank struct {
	ID, Content []byte
	// Tags is the stored JSON list of tags (`[]` or empty for none).
	Tags         []byte
	Kind         []byte
	Inverted     bool // AntiPatternID != ""
	SuccessCount int64
	FailureCount int64
	Helpful      learning.DecayedSum
	Harmful      learning.DecayedSum
	Manual       []byte
	// Created is the creation time in unix µs (NoCreated when unset),
	// set by PatternRankIDReader only.
	Created int64
}

// NoCreated is PatternRank.Created of a pattern without a creation time.
const NoCreated = math.MinInt64

// PatternRankReader is implemented by the transactions of stores that can
// stream the ranking columns of a project's patterns, in the order of
// PatternsWithMaturity, without building every record: plan guidance
// loads a project's patterns with it (about a third of the CPU and a
// fraction of the memory of PatternsWithMaturity at 100,000 patterns).
// fn receives a struct reused for every row.
type PatternRankReader interface {
	EachPatternRank(ctx context.Context, project string, fn func(*PatternRank) error) error
}

// PatternRankIDReader is implemented by the transactions of stores that
// can also stream the ranking columns in the byte order of the pattern
// ids, each with its creation time (PatternRank.Created), at a fraction of
// the cost of EachPatternRank: on SQLite the patterns and their maturity
// rows are two scans of their tables in key order merged by id, where the
// order of PatternsWithMaturity walks an index and seeks both tables for
// every pattern (issue 17: a first guidance request without a pattern
// snapshot). The caller puts the rows in the order of PatternsWithMaturity
// (creation time, then id; an unset creation time first). ok is false,
// and fn never called, when the store cannot (the caller then uses
// EachPatternRank).
type PatternRankIDReader interface {
	EachPatternRankByID(ctx context.Context, project string, fn func(*PatternRank) error) (ok bool, err error)
}
