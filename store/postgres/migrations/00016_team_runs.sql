-- +goose Up
-- Collaboration pattern runs (seed 004, package team): each run's state as
-- JSON, its event log, and the rule that a team has at most one active
-- swarm (CP-7 is not re-entrant), enforced here across daemons.
CREATE TABLE team_runs (
    project    TEXT COLLATE "C" NOT NULL,
    id         TEXT COLLATE "C" NOT NULL,
    team       TEXT COLLATE "C" NOT NULL,
    pattern    TEXT COLLATE "C" NOT NULL,
    parent_id  TEXT COLLATE "C" NOT NULL,
    state      TEXT COLLATE "C" NOT NULL,
    finished   BOOLEAN NOT NULL,
    run        TEXT COLLATE "C" NOT NULL,
    created_at BIGINT,
    updated_at BIGINT,
    PRIMARY KEY (project, id)
);
CREATE INDEX team_runs_team ON team_runs (project, team, created_at, id);
CREATE UNIQUE INDEX team_runs_one_swarm ON team_runs (project, team) WHERE pattern = 'CP-7' AND NOT finished;

CREATE TABLE team_run_events (
    project  TEXT COLLATE "C" NOT NULL,
    run_id   TEXT COLLATE "C" NOT NULL,
    n        BIGINT NOT NULL,
    at       BIGINT,
    event    TEXT COLLATE "C" NOT NULL,
    commands TEXT COLLATE "C" NOT NULL,
    state    TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (project, run_id, n)
);

-- +goose Down
DROP TABLE team_run_events;
DROP TABLE team_runs;
