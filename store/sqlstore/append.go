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

// maxRowsPerStatement bounds the rows of one multi-row statement (its
// bound parameters stay far below every driver's limit). A statement is
// prepared per row count, so at most this many distinct ones per table.
const maxRowsPerStatement = 64

// inStatements calls write with rows cut into consecutive runs of at most
// maxRowsPerStatement: the rows of one multi-row statement each.
func inStatements[T any](rows []T, write func(run []T) error) error {
	for len(rows) > 0 {
		n := min(len(rows), maxRowsPerStatement)
		if err := write(rows[:n]); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// flushAppends writes the appended rows, in id order.
func (t *Tx) flushAppends(ctx context.Context) error {
	c := t.agg
	if c == nil {
		return nil
	}
	t.noteAggregateWrite() // behind.go
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
	err := inStatements(keys, func(run []rowKey) error {
		args := make([]any, 0, 9*len(run))
		for _, k := range run {
			f := c.rows[k].value.(learning.MaturityFeedback)
			args = append(args, f.Project, f.ID, f.PatternID, f.Success, string(f.Type), f.Weight, f.TaskID,
				micros(f.Timestamp), f.Generation)
		}
		q := `INSERT INTO maturity_feedback (` + maturityFeedbackCols + `) VALUES ` + placeholders(len(run), 9) + ` ON CONFLICT DO NOTHING`
		if _, err := t.exec(ctx, q, args...); err != nil {
			return fmt.Errorf("insert maturity feedback: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range keys {
		t.forget(k)
	}
	return nil
}

// placeholders is the VALUES list of n rows of cols parameters.
func placeholders(n, cols int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", cols), ", ") + ")"
	return strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
}

// stagedPatternCols are what a staged pattern update changes (see
// UpdatePattern): counts and evidence, none of them indexed, so neither
// SQLite nor PostgreSQL rewrites an index entry for them.
var stagedPatternCols = []struct{ name, typ string }{
	{"project", "text"}, {"id", "text"}, {"is_negative", "boolean"},
	{"success_count", "bigint"}, {"failure_count", "bigint"}, {"tags", "text"}, {"example_tasks", "text"},
	{"reason", "text"}, {"source_id", "text"}, {"anti_pattern_id", "text"}, {"generation", "bigint"},
	{"updated_at", "bigint"},
}

func stagedPatternArgs(p learning.Pattern) []any {
	return []any{p.Project, p.ID, p.IsNegative, p.SuccessCount, p.FailureCount, jsonList(p.Tags),
		jsonList(p.ExampleTasks), p.Reason, p.SourceID, p.AntiPatternID, p.Generation, micros(p.UpdatedAt)}
}

// writeStagedPatterns writes staged patterns, in id order: one multi-row
// UPDATE per maxRowsPerStatement (a group's patterns in one round trip);
// on SQLite with their version stamp (pattern_stamp.go).
func (t *Tx) writeStagedPatterns(ctx context.Context, ps []learning.Pattern) error {
	slices.SortFunc(ps, func(a, b learning.Pattern) int {
		return strings.Compare(a.Project+"\x00"+a.ID, b.Project+"\x00"+b.ID)
	})
	if !t.rowLocks() {
		return t.writeLocalPatterns(ctx, ps) // pattern_stamp.go
	}
	return inStatements(ps, func(run []learning.Pattern) error {
		var q strings.Builder
		q.WriteString(`UPDATE patterns AS p SET `)
		for i, c := range stagedPatternCols[2:] {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString(c.name + " = v." + c.name)
		}
		q.WriteString(` FROM (VALUES `)
		args := make([]any, 0, len(stagedPatternCols)*len(run))
		for r, p := range run {
			if r > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(")
			for i, c := range stagedPatternCols {
				if i > 0 {
					q.WriteString(", ")
				}
				q.WriteString("CAST(? AS " + c.typ + ")")
				if i < 2 {
					q.WriteString(` COLLATE "C"`) // the key columns' collation
				}
			}
			q.WriteString(")")
			args = append(args, stagedPatternArgs(p)...)
		}
		q.WriteString(`) AS v (`)
		for i, c := range stagedPatternCols {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString(c.name)
		}
		q.WriteString(`) WHERE p.project = v.project AND p.id = v.id`)
		return t.execRows(ctx, int64(len(run)), "update patterns", q.String(), args...)
	})
}
