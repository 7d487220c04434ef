package kaizen

import (
	"context"

	"github.com/kaizenhq/kaizen/internal/app/gcsvc"
)

// GCResult is what one garbage collection did (see Engine.GC).
type GCResult = gcsvc.Result

// GC applies the retention policy ([retention]) once: stored recalls are
// compacted to the items they injected and pruned by age and by count per
// project, then SQLite's write-ahead log is truncated. The daemon does the
// same periodically on its job runner.
func (e *Engine) GC(ctx context.Context) (*GCResult, error) {
	e.experience.SettleRecalls()
	return e.gc.Collect(ctx)
}

// newGC builds the garbage collection service of cfg's retention policy.
func newGC(e *Engine, cfg Config) *gcsvc.Service {
	r := cfg.Retention
	return gcsvc.New(e.env, gcsvc.Options{RecallMaxAge: r.RecallMaxAge, RecallKeep: r.RecallKeep,
		KeepConsidered: r.RecallItems == "all", Checkpoint: r.Checkpoint})
}
