package sqlstore

// Prefetch reads whose plans do not depend on statistics (PostgreSQL,
// issue 17). The writer asks for generic plans in a group of outcome
// recordings (Dialect.GenericPlans, conntx.go), and a connection keeps a
// statement's generic plan until the table's statistics change. Planned
// while a table is new (never analysed, a few pages), the generic plan of
// "WHERE project = $1 AND task_id = ANY($2)" used the index for the
// project only and filtered the tasks: every read walked all of the
// project's outcomes, slower with each outcome recorded until autovacuum
// analysed the table (a minute or more later) and the plan was made
// again. In a bench on a fresh schema the previous-outcome read went from
// 0.05 ms to over 1 ms per group within seconds.
//
// The read below looks each task up by itself: a LATERAL subquery per
// task (from unnest, in the order of the sorted tasks) whose ORDER BY
// and LIMIT 1 only the index outcomes_task (project, task_id,
// recorded_at, id) serves with both key columns as index conditions. Its
// plan is a nested loop over index probes whatever the statistics say
// (the LIMIT keeps the subquery from being merged into a join the
// planner could turn into a scan of the project). Its rows are those of
// the read it replaces.

// PrevOutcomesByTask reads the latest outcome of each task (args: the
// tasks, sorted; then the project). Exported for the PostgreSQL store's
// test of its plan.
const PrevOutcomesByTask = `SELECT o.* FROM unnest(CAST(? AS text[])) WITH ORDINALITY AS k(task, ord)
	CROSS JOIN LATERAL (SELECT ` + outcomeCols + ` FROM outcomes
		WHERE project = ? AND task_id = k.task COLLATE "C"
		ORDER BY recorded_at DESC, id DESC LIMIT 1) o
	ORDER BY k.ord`
