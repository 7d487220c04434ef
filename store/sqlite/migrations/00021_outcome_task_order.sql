-- +goose Up
-- Recording an outcome first looks up the task's outcome, newest first
-- (ListOutcomes by task, ORDER BY recorded_at DESC, id DESC LIMIT 1; a
-- task holds one outcome). With the index on (project, task_id) alone the
-- rows found were sorted for every lookup, a sorter set up even when the
-- task has no outcome yet (the usual case); with the order's columns in
-- the index the lookup reads the index backwards and stops at the first
-- row (issue 17). Equality lookups by task use it as before.
DROP INDEX outcomes_task;
CREATE INDEX outcomes_task ON outcomes (project, task_id, recorded_at, id);

-- +goose Down
DROP INDEX outcomes_task;
CREATE INDEX outcomes_task ON outcomes (project, task_id);
