package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// kaizen gc: the retention policy ([retention]) applied once.

func init() { register(gcCommand) }

func gcCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "gc",
		Short: "Apply the retention policy now: compact and prune stored recalls, truncate the WAL",
		Long: `Apply the retention policy of [retention] in kaizen.toml once: stored
recalls keep only the items they injected, recalls older than
recall_max_age or beyond the newest recall_keep of a project are deleted,
and SQLite's write-ahead log is truncated. 'kaizen serve' does this every
[retention] interval on its own (docs/security.md).`,
		Example: "  kaizen gc\n  kaizen gc --json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := a.open(cmd.Context())
			if err != nil {
				return err
			}
			res, err := e.GC(cmd.Context())
			if err != nil {
				return err
			}
			return a.print(res, func(w io.Writer) error {
				fmt.Fprintf(w, "Compacted %d recall(s), pruned %d (policy: max age %s, keep %d per project, items %s)\n",
					res.RecallsCompacted, res.RecallsPruned, res.Policy.RecallMaxAge, res.Policy.RecallKeep, res.Policy.RecallItems)
				if res.Checkpointed {
					fmt.Fprintf(w, "WAL truncated: %d → %d bytes\n", res.WALBytesBefore, res.WALBytesAfter)
				}
				return nil
			})
		},
	}
}
