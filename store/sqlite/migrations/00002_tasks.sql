-- +goose Up
-- Tracked tasks (agent sessions): what an outcome needs without re-entering it.
-- Times are microseconds since the Unix epoch; NULL means "not set".
CREATE TABLE tasks (
    project          TEXT    NOT NULL,
    id               TEXT    NOT NULL,
    description      TEXT    NOT NULL,
    source           TEXT    NOT NULL,
    started_at       INTEGER,
    last_activity_at INTEGER,
    ended_at         INTEGER,
    prompts          INTEGER NOT NULL,
    tool_calls       INTEGER NOT NULL,
    tool_failures    INTEGER NOT NULL,
    retry_count      INTEGER NOT NULL,
    failed_this_turn INTEGER NOT NULL CHECK (failed_this_turn IN (0, 1)),
    updated_at       INTEGER,
    PRIMARY KEY (project, id)
) WITHOUT ROWID;
CREATE INDEX tasks_activity ON tasks (project, last_activity_at, id);

-- +goose Down
DROP TABLE tasks;
