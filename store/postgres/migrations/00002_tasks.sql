-- +goose Up
-- Tracked tasks (agent sessions): what an outcome needs without re-entering it.
-- Times are microseconds since the Unix epoch; NULL means "not set".
CREATE TABLE tasks (
    project          TEXT COLLATE "C" NOT NULL,
    id               TEXT COLLATE "C" NOT NULL,
    description      TEXT COLLATE "C" NOT NULL,
    source           TEXT COLLATE "C" NOT NULL,
    started_at       BIGINT,
    last_activity_at BIGINT,
    ended_at         BIGINT,
    prompts          BIGINT NOT NULL,
    tool_calls       BIGINT NOT NULL,
    tool_failures    BIGINT NOT NULL,
    retry_count      BIGINT NOT NULL,
    failed_this_turn BOOLEAN NOT NULL,
    updated_at       BIGINT,
    PRIMARY KEY (project, id)
);
CREATE INDEX tasks_activity ON tasks (project, last_activity_at, id);

-- +goose Down
DROP TABLE tasks;
