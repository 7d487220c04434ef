-- +goose Up
-- Exploration sessions (package explore) kept between hook calls, and the
-- exploration summary attached to a task and carried by its outcome.
CREATE TABLE explore_sessions (
    project     TEXT    NOT NULL,
    id          TEXT    NOT NULL,
    strategy    TEXT    NOT NULL,
    state       TEXT    NOT NULL,
    done        INTEGER NOT NULL CHECK (done IN (0, 1)),
    exit_reason TEXT    NOT NULL,
    created_at  INTEGER,
    updated_at  INTEGER,
    PRIMARY KEY (project, id)
) WITHOUT ROWID;
CREATE INDEX explore_sessions_updated ON explore_sessions (project, updated_at, id);

ALTER TABLE tasks ADD COLUMN exploration TEXT NOT NULL DEFAULT '';
ALTER TABLE outcomes ADD COLUMN exploration TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE outcomes DROP COLUMN exploration;
ALTER TABLE tasks DROP COLUMN exploration;
DROP TABLE explore_sessions;
