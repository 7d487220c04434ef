-- +goose Up
-- Unattended agent integration (hooks): the signals a tracked task collects
-- for its inferred outcome, the inference behind an outcome kaizen recorded
-- by itself, and the ledger of applied event keys that makes the ingestion
-- of spooled hook events idempotent. Times are microseconds since the Unix
-- epoch.
ALTER TABLE tasks ADD COLUMN signals TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE outcomes ADD COLUMN inference TEXT COLLATE "C" NOT NULL DEFAULT '';
CREATE TABLE applied_events (
    project TEXT COLLATE "C" NOT NULL,
    key     TEXT COLLATE "C" NOT NULL,
    at      BIGINT NOT NULL,
    PRIMARY KEY (project, key)
);
CREATE INDEX applied_events_at ON applied_events (at);
CREATE INDEX tasks_open_activity ON tasks (project, last_activity_at) WHERE ended_at IS NULL;

-- +goose Down
DROP INDEX tasks_open_activity;
DROP TABLE applied_events;
ALTER TABLE outcomes DROP COLUMN inference;
ALTER TABLE tasks DROP COLUMN signals;
