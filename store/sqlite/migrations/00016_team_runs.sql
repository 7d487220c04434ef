-- +goose Up
-- Collaboration pattern runs (seed 004, package team): each run's state as
-- JSON, its event log, and the rule that a team has at most one active
-- swarm (CP-7 is not re-entrant), enforced here across daemons.
CREATE TABLE team_runs (
    project    TEXT    NOT NULL,
    id         TEXT    NOT NULL,
    team       TEXT    NOT NULL,
    pattern    TEXT    NOT NULL,
    parent_id  TEXT    NOT NULL,
    state      TEXT    NOT NULL,
    finished   INTEGER NOT NULL CHECK (finished IN (0, 1)),
    run        TEXT    NOT NULL,
    created_at INTEGER,
    updated_at INTEGER,
    PRIMARY KEY (project, id)
) WITHOUT ROWID;
CREATE INDEX team_runs_team ON team_runs (project, team, created_at, id);
CREATE UNIQUE INDEX team_runs_one_swarm ON team_runs (project, team) WHERE pattern = 'CP-7' AND finished = 0;

CREATE TABLE team_run_events (
    project  TEXT    NOT NULL,
    run_id   TEXT    NOT NULL,
    n        INTEGER NOT NULL,
    at       INTEGER,
    event    TEXT    NOT NULL,
    commands TEXT    NOT NULL,
    state    TEXT    NOT NULL,
    PRIMARY KEY (project, run_id, n)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE team_run_events;
DROP TABLE team_runs;
