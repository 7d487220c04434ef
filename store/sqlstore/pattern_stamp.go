package sqlstore

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/kaizenhq/kaizen/learning"
)

// Staged patterns written with their version stamp, many per statement
// (SQLite, issue 17). Flush wrote each staged pattern with an UPDATE of
// its own (five per group in the record bench) and then, after advancing
// the project's pattern version, stamped the same rows again with it: two
// writes of every changed pattern row. Without row locks (SQLite: one
// writer, so the order in which rows are locked does not matter) Flush
// advances the versions first (advanceVersions), writes the staged
// patterns in one multi-row UPDATE per maxRowsPerStatement that also sets
// the version of those that were touched, and bumpVersions only stamps
// the touched patterns that were not written (a maturity record changed
// alone, an inserted pattern). What the transaction commits is the same:
// the version advanced once per project, every touched pattern stamped
// with it, the staged columns written.

// advanceVersions advances the pattern version of every touched project
// before the staged rows are written, on SQLite only (PostgreSQL takes
// the pattern-version row lock last, after the patterns').
func (t *Tx) advanceVersions(ctx context.Context) error {
	if t.rowLocks() || len(t.touched) == 0 {
		return nil
	}
	t.stamps = make(map[string]int64, len(t.touched))
	for _, project := range slices.Sorted(maps.Keys(t.touched)) {
		v, err := t.nextVersion(ctx, project)
		if err != nil {
			return err
		}
		t.stamps[project] = v
	}
	return nil
}

// writeLocalPatterns writes staged patterns (sorted by project and id)
// without row locks: one multi-row UPDATE per maxRowsPerStatement, which
// stamps the touched ones with the version advanceVersions took.
func (t *Tx) writeLocalPatterns(ctx context.Context, ps []learning.Pattern) error {
	return inStatements(ps, func(run []learning.Pattern) error {
		var q strings.Builder
		q.WriteString(`WITH v (`)
		for _, c := range stagedPatternCols {
			q.WriteString(c.name + ", ")
		}
		q.WriteString(`stamp) AS (VALUES `)
		q.WriteString(placeholders(len(run), len(stagedPatternCols)+1))
		args := make([]any, 0, (len(stagedPatternCols)+1)*len(run))
		for _, p := range run {
			var stamp any // NULL: the pattern keeps its version
			if v, ok := t.stamps[p.Project]; ok && t.touched[p.Project][p.ID] {
				stamp = v
				if t.stamped == nil {
					t.stamped = map[rowKey]bool{}
				}
				t.stamped[rowKey{"patterns", p.Project, p.ID}] = true
			}
			args = append(append(args, stagedPatternArgs(p)...), stamp)
		}
		q.WriteString(`) UPDATE patterns SET `)
		for _, c := range stagedPatternCols[2:] {
			q.WriteString(c.name + " = v." + c.name + ", ")
		}
		q.WriteString(`version = coalesce(v.stamp, patterns.version) FROM v
			WHERE patterns.project = v.project AND patterns.id = v.id`)
		return t.execRows(ctx, int64(len(run)), "update patterns", q.String(), args...)
	})
}
