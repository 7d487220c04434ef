package sqlstore

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/kaizenhq/kaizen/store"
)

// Grouped jobs (jobs.Request.Group, issue 17): under the group commit a
// transaction records many outcomes, and each enqueued the extraction of
// its task as a job row of its own, with four b-tree inserts (the row and
// three indexes) and about a third of a commit's WAL pages. The jobs of
// one group deferred in one transaction are written as one row of the
// group's kind whose arguments list theirs; the group's handler does what
// each would have done. A job alone in its transaction is written as
// itself, with its unique key and mode.

// AppendGroupedJob enqueues a job that may be merged with the other jobs
// of group deferred in this transaction (see jobs.Request.Group). Without
// Dialect.DeferOutcomes, or after Mark, it is enqueued at once as itself.
func (t *Tx) AppendGroupedJob(ctx context.Context, j store.Job, mode store.EnqueueMode, group string) error {
	return t.appendJob(ctx, j, mode, group)
}

// mergeGroups replaces the pending jobs of each group with two or more
// members by one job of the group's kind, at the place of the first:
// its id, attempts bound and creation time, the latest due time of the
// members, and the members' arguments in order. Jobs without a group, and
// a group's only member, are kept as they are.
func mergeGroups(pending []deferredJob) []deferredJob {
	count := map[string]int{}
	for _, p := range pending {
		if p.group != "" {
			count[p.group]++
		}
	}
	merge := false
	for _, n := range count {
		merge = merge || n > 1
	}
	if !merge {
		return pending
	}
	out := make([]deferredJob, 0, len(pending))
	at := map[string]int{} // group → index in out of its merged job
	members := map[string][]string{}
	for _, p := range pending {
		if p.group == "" || count[p.group] < 2 {
			out = append(out, p)
			continue
		}
		members[p.group] = append(members[p.group], p.args)
		i, ok := at[p.group]
		if !ok {
			j := p.job
			j.Kind, j.UniqueKey, j.State = p.group, "", store.JobAvailable
			at[p.group] = len(out)
			out = append(out, deferredJob{job: j, mode: store.EnqueueKeep})
			continue
		}
		if p.job.RunAt.After(out[i].job.RunAt) {
			out[i].job.RunAt = p.job.RunAt
		}
	}
	for g, i := range at {
		// the members' arguments as they would have been written
		args := `{"jobs":[` + strings.Join(members[g], ",") + `]}`
		out[i].args, out[i].job.Args = args, json.RawMessage(args)
	}
	return out
}
