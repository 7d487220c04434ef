-- +goose Up
-- Durable background jobs (package internal/jobs): enqueued in the
-- transaction of the work that asks for them, claimed with a lease
-- (FOR UPDATE SKIP LOCKED: several daemons never run a job twice).
CREATE TABLE jobs (
    id           TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    kind         TEXT COLLATE "C" NOT NULL,
    args         TEXT NOT NULL,
    unique_key   TEXT COLLATE "C",
    state        TEXT COLLATE "C" NOT NULL CHECK (state IN ('available', 'running', 'completed', 'failed')),
    run_at       BIGINT NOT NULL,
    attempts     INTEGER NOT NULL,
    max_attempts INTEGER NOT NULL,
    lease_owner  TEXT COLLATE "C" NOT NULL,
    lease_until  BIGINT NOT NULL,
    last_error   TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    finished_at  BIGINT NOT NULL
);
CREATE UNIQUE INDEX jobs_unique_key ON jobs (unique_key) WHERE unique_key IS NOT NULL;
CREATE INDEX jobs_due ON jobs (state, run_at);
CREATE INDEX jobs_created ON jobs (created_at, id);

-- +goose Down
DROP TABLE jobs;
