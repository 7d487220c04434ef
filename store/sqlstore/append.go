package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kaizenhq/kaizen/learning"
)

// Appended rows (store.MaturityStorage.AppendMaturityFeedback). With the
// aggregate cache, a use of a pattern is kept in the cache's undo-logged
// rows until Flush (or a read of the table) and written with the other
// uses of the transaction in multi-row INSERTs: a group commit of N
// outcomes writes its 2N maturity feedback rows in a few statements
// instead of 2N. A request rolled back to its savepoint takes its rows
// with it (Undo). The rows are the same as InsertMaturityFeedback's.

func appendKey(project, id string) rowKey { return rowKey{"maturity_feedback", project, id} }

// AppendMaturityFeedback implements store.MaturityStorage.
func (t *Tx) AppendMaturityFeedback(ctx context.Context, f learning.MaturityFeedback) error {
	if t.agg == nil {
		_, err := t.InsertMaturityFeedback(ctx, f)
		return err
	}
	k := appendKey(f.Project, f.ID)
	if _, ok := t.agg.rows[k]; ok {
		return nil // the first of one id is kept, as ON CONFLICT DO NOTHING does
	}
	t.agg.put(k, cached{present: true, value: f})
	return nil
}

// appendChunks are the row counts of the multi-row statements: every
// count is written as a sum of them, so a handful of distinct statements
// (prepared once) serve any group size.
var appendChunks = []int{64, 16, 4, 1}

// flushAppends writes the appended rows, in id order.
func (t *Tx) flushAppends(ctx context.Context) error {
	c := t.agg
	if c == nil {
		return nil
	}
	var keys []rowKey
	for k := range c.rows {
		if k.table == "maturity_feedback" {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.SortFunc(keys, func(a, b rowKey) int {
		return strings.Compare(a.project+"\x00"+a.id, b.project+"\x00"+b.id)
	})
	rest := keys
	for _, n := range appendChunks {
		for len(rest) >= n {
			args := make([]any, 0, 9*n)
			for _, k := range rest[:n] {
				f := c.rows[k].value.(learning.MaturityFeedback)
				args = append(args, f.Project, f.ID, f.PatternID, f.Success, string(f.Type), f.Weight, f.TaskID,
					micros(f.Timestamp), f.Generation)
			}
			q := `INSERT INTO maturity_feedback (` + maturityFeedbackCols + `) VALUES ` +
				strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?, ?), ", n), ", ") + ` ON CONFLICT DO NOTHING`
			if _, err := t.exec(ctx, q, args...); err != nil {
				return fmt.Errorf("insert maturity feedback: %w", err)
			}
			rest = rest[n:]
		}
	}
	for _, k := range keys {
		t.forget(k)
	}
	return nil
}
