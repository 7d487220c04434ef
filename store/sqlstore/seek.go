package sqlstore

import (
	"strconv"
	"strings"
)

// seekIn returns a query of the columns cols of the rows of table whose
// columns fixed equal the first len(fixed) arguments and whose column key
// is one of the next n arguments (padArgsN pads them).
//
// SQLite answers `key IN (…)` with one seek per value. PostgreSQL's plan
// depends on its statistics: right after a bulk load, before autovacuum has
// analyzed the table, it believes the (project, kind) prefix of the primary
// key holds a row or two and keeps the IN list as a filter over every row
// of the project (a search's four body reads took 30 ms each at 20,000
// documents instead of 0.4 ms). There the keys are joined laterally, one
// primary-key seek each, whatever the statistics: the OFFSET 0 fence keeps
// the planner from flattening the lookup into a hash join.
//
// The keys must be distinct (a key given twice would return its row twice
// on PostgreSQL).
func (t *Tx) seekIn(cols, table string, fixed []string, key string, n int) string {
	if t.d.Name != Postgres.Name {
		var b strings.Builder
		b.WriteString(`SELECT ` + cols + ` FROM ` + table + ` WHERE `)
		for _, f := range fixed {
			b.WriteString(f + ` = ? AND `)
		}
		b.WriteString(inList(key, n))
		return b.String()
	}
	// Numbered placeholders written here: the fixed values are $1…, the
	// keys follow ("?" rebinding leaves them as they are).
	var b strings.Builder
	b.WriteString(`SELECT x.* FROM (VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(`, `)
		}
		b.WriteString(`($` + strconv.Itoa(len(fixed)+i+1) + `::text)`)
	}
	b.WriteString(`) AS k(v) CROSS JOIN LATERAL (SELECT ` + cols + ` FROM ` + table + ` WHERE `)
	for i, f := range fixed {
		b.WriteString(f + ` = $` + strconv.Itoa(i+1) + ` AND `)
	}
	b.WriteString(key + ` = k.v OFFSET 0) x`)
	return b.String()
}
