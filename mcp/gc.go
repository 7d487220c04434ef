package mcp

import (
	"context"
	"fmt"

	"github.com/kaizenhq/kaizen"
)

// The retention policy as a tool: what `kaizen gc` does.

func init() { registerTools(gcTools) }

type gcInput struct{}

func gcTools() []*toolDef {
	return []*toolDef{
		define(toolDef{
			name:  "gc",
			title: "Apply the retention policy",
			description: "Apply the retention policy now: stored recalls keep only the items they injected, recalls beyond the " +
				"policy's age or count are deleted, SQLite's write-ahead log is truncated. The daemon does this periodically; " +
				"call it only when asked to reclaim space.",
			effect: idempotent,
			fields: map[string]field{},
		}, func(ctx context.Context, e *kaizen.Engine, _ gcInput) (kaizen.GCResult, error) {
			return deref(e.GC(ctx))
		}, gcText),
	}
}

func gcText(r kaizen.GCResult) string {
	s := fmt.Sprintf("Compacted %d recall(s), pruned %d (max age %s, keep %d per project, items %s).",
		r.RecallsCompacted, r.RecallsPruned, r.Policy.RecallMaxAge, r.Policy.RecallKeep, r.Policy.RecallItems)
	if r.Checkpointed {
		s += fmt.Sprintf(" WAL truncated: %d → %d bytes.", r.WALBytesBefore, r.WALBytesAfter)
	}
	return s
}
