package store

import (
	"context"

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
}

// PatternRankReader is implemented by the transactions of stores that can
// stream the ranking columns of a project's patterns, in the order of
// PatternsWithMaturity, without building every record: plan guidance
// loads a project's patterns with it (about a third of the CPU and a
// fraction of the memory of PatternsWithMaturity at 100,000 patterns).
// fn receives a struct reused for every row.
type PatternRankReader interface {
	EachPatternRank(ctx context.Context, project string, fn func(*PatternRank) error) error
}
