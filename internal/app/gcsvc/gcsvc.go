// Package gcsvc is kaizen's garbage collection service: it applies the
// retention policy ([retention] in kaizen.toml) to what grows with use
// without being evidence — stored recall events are compacted to the items
// they injected and pruned by age and by count per project — and then
// truncates SQLite's write-ahead log. The daemon runs it as a periodic job
// on the durable job runner (Job, Periodic); `kaizen gc`, POST /api/v1/gc
// and the MCP tool gc run it on demand (Collect).
package gcsvc

import (
	"context"
	"time"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/internal/jobs"
	"github.com/kaizenhq/kaizen/store"
)

// KindGC is the job kind of the periodic collection.
const KindGC = "gc"

// compactBatch bounds the recalls rewritten in one transaction, so a
// collection never holds the writer for long.
const compactBatch = 500

// Options are the retention policy.
type Options struct {
	// RecallMaxAge deletes recalls older than this (0: no age limit).
	RecallMaxAge time.Duration
	// RecallKeep keeps at most this many recalls per project (0: no limit).
	RecallKeep int
	// KeepConsidered leaves stored recalls with every considered item (no
	// compaction).
	KeepConsidered bool
	// Checkpoint truncates the write-ahead log after a collection.
	Checkpoint bool
}

// Service applies the retention policy.
type Service struct {
	env  *app.Env
	opts Options
}

// New returns the service for a policy.
func New(env *app.Env, opts Options) *Service { return &Service{env: env, opts: opts} }

// Result is what one collection did.
type Result struct {
	// RecallsCompacted counts stored recalls rewritten to their injected
	// items.
	RecallsCompacted int64 `json:"recalls_compacted"`
	// RecallsPruned counts recalls deleted by age or count.
	RecallsPruned int64 `json:"recalls_pruned"`
	// Checkpointed is true when the write-ahead log was truncated; the
	// sizes are in bytes (SQLite only).
	Checkpointed   bool  `json:"checkpointed"`
	WALBytesBefore int64 `json:"wal_bytes_before,omitempty"`
	WALBytesAfter  int64 `json:"wal_bytes_after,omitempty"`
	// Policy is the retention policy applied.
	Policy Policy `json:"policy"`
}

// Policy describes the applied policy in a result.
type Policy struct {
	RecallMaxAge string `json:"recall_max_age"` // "0s": none
	RecallKeep   int    `json:"recall_keep"`    // 0: none
	RecallItems  string `json:"recall_items"`   // "injected" or "all"
}

// Collect applies the retention policy once.
func (s *Service) Collect(ctx context.Context) (*Result, error) {
	const op = "gc"
	res := &Result{Policy: Policy{RecallMaxAge: s.opts.RecallMaxAge.String(), RecallKeep: s.opts.RecallKeep,
		RecallItems: "injected"}}
	if s.opts.KeepConsidered {
		res.Policy.RecallItems = "all"
	}
	if !s.opts.KeepConsidered {
		for {
			var n int64
			if err := s.env.Update(ctx, op, func(tx store.Tx) error {
				var err error
				n, err = tx.CompactRecalls(ctx, compactBatch)
				return err
			}); err != nil {
				return nil, err
			}
			res.RecallsCompacted += n
			if n < compactBatch || ctx.Err() != nil {
				break
			}
		}
	}
	if s.opts.RecallMaxAge > 0 || s.opts.RecallKeep > 0 {
		var before time.Time
		if s.opts.RecallMaxAge > 0 {
			before = s.env.Now().Add(-s.opts.RecallMaxAge)
		}
		if err := s.env.Update(ctx, op, func(tx store.Tx) error {
			var err error
			res.RecallsPruned, err = tx.PruneRecalls(ctx, before, s.opts.RecallKeep)
			return err
		}); err != nil {
			return nil, err
		}
	}
	if cp, ok := s.env.Store.(store.Checkpointer); ok && s.opts.Checkpoint {
		before, after, err := cp.Checkpoint(ctx)
		if err != nil {
			return nil, app.Wrap(op, err)
		}
		res.Checkpointed, res.WALBytesBefore, res.WALBytesAfter = true, before, after
	}
	if res.RecallsCompacted+res.RecallsPruned > 0 {
		s.env.Logger.Info("gc", "recalls_compacted", res.RecallsCompacted, "recalls_pruned", res.RecallsPruned,
			"wal_bytes_before", res.WALBytesBefore, "wal_bytes_after", res.WALBytesAfter)
	}
	return res, nil
}

// Job is the job kind of the periodic collection.
func (s *Service) Job() jobs.Kind {
	return jobs.Kind{Name: KindGC, Handler: func(ctx context.Context, _ jobs.Job) error {
		_, err := s.Collect(ctx)
		return err
	}}
}

// Periodic schedules the collection every interval.
func (s *Service) Periodic(interval time.Duration) jobs.Periodic {
	return jobs.Periodic{Kind: KindGC, Period: jobs.Interval(interval)}
}
