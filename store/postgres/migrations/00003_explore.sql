-- +goose Up
-- Exploration sessions (package explore) kept between hook calls, and the
-- exploration summary attached to a task and carried by its outcome.
CREATE TABLE explore_sessions (
    project     TEXT COLLATE "C" NOT NULL,
    id          TEXT COLLATE "C" NOT NULL,
    strategy    TEXT COLLATE "C" NOT NULL,
    state       TEXT COLLATE "C" NOT NULL,
    done        BOOLEAN NOT NULL,
    exit_reason TEXT COLLATE "C" NOT NULL,
    created_at  BIGINT,
    updated_at  BIGINT,
    PRIMARY KEY (project, id)
);
CREATE INDEX explore_sessions_updated ON explore_sessions (project, updated_at, id);

ALTER TABLE tasks ADD COLUMN exploration TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE outcomes ADD COLUMN exploration TEXT COLLATE "C" NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE outcomes DROP COLUMN exploration;
ALTER TABLE tasks DROP COLUMN exploration;
DROP TABLE explore_sessions;
