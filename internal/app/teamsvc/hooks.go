package teamsvc

import (
	"context"

	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/team"
)

// runHooks connect the task graph and the bus to the pattern runs: a
// change of a task a run created, and a message on the bus, are events of
// the team's active runs, handled in the same transaction.
type runHooks struct {
	onTask    func(ctx context.Context, tx store.Tx, project string, t team.Task, cause string) error
	onMessage func(ctx context.Context, tx store.Tx, project string, m team.Message) error
}
