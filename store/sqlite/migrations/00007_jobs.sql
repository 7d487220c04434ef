-- +goose Up
-- Durable background jobs (package internal/jobs): enqueued in the
-- transaction of the work that asks for them, claimed with a lease.
CREATE TABLE jobs (
    id           TEXT    NOT NULL PRIMARY KEY,
    kind         TEXT    NOT NULL,
    args         TEXT    NOT NULL,
    unique_key   TEXT,
    state        TEXT    NOT NULL CHECK (state IN ('available', 'running', 'completed', 'failed')),
    run_at       INTEGER NOT NULL,
    attempts     INTEGER NOT NULL,
    max_attempts INTEGER NOT NULL,
    lease_owner  TEXT    NOT NULL,
    lease_until  INTEGER NOT NULL,
    last_error   TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    finished_at  INTEGER NOT NULL
) WITHOUT ROWID;
CREATE UNIQUE INDEX jobs_unique_key ON jobs (unique_key) WHERE unique_key IS NOT NULL;
CREATE INDEX jobs_due ON jobs (state, run_at);
CREATE INDEX jobs_created ON jobs (created_at, id);

-- +goose Down
DROP TABLE jobs;
