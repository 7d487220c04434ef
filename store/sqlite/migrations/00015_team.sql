-- +goose Up
-- The team engine (seed 004, package team): teams, their task graphs with
-- leases and fencing epochs, their message buses with one delivery row per
-- recipient (at-least-once with a visibility timeout), and the event log of
-- every transition.
CREATE TABLE team_teams (
    project    TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    doc        TEXT    NOT NULL,
    last_seq   INTEGER NOT NULL DEFAULT 0,
    dissolved  INTEGER NOT NULL CHECK (dissolved IN (0, 1)),
    created_at INTEGER,
    updated_at INTEGER,
    PRIMARY KEY (project, name)
) WITHOUT ROWID;

CREATE TABLE team_tasks (
    project          TEXT    NOT NULL,
    team             TEXT    NOT NULL,
    id               TEXT    NOT NULL,
    ord              INTEGER NOT NULL,
    subject          TEXT    NOT NULL,
    description      TEXT    NOT NULL,
    owner            TEXT    NOT NULL,
    role             TEXT    NOT NULL,
    capabilities     TEXT    NOT NULL,
    blocked_by       TEXT    NOT NULL,
    status           TEXT    NOT NULL,
    paused           INTEGER NOT NULL CHECK (paused IN (0, 1)),
    blocked_cause    TEXT    NOT NULL,
    metadata         TEXT    NOT NULL,
    result           TEXT    NOT NULL,
    gate             TEXT    NOT NULL,
    attempts         INTEGER NOT NULL,
    lease_holder     TEXT    NOT NULL,
    lease_epoch      INTEGER NOT NULL,
    lease_expires_at INTEGER,
    heartbeat_at     INTEGER,
    progress         TEXT    NOT NULL,
    run_id           TEXT    NOT NULL,
    run_key          TEXT    NOT NULL,
    created_at       INTEGER,
    updated_at       INTEGER,
    PRIMARY KEY (project, team, id)
) WITHOUT ROWID;
CREATE INDEX team_tasks_ready ON team_tasks (project, team, status, ord);
CREATE INDEX team_tasks_lease ON team_tasks (status, lease_expires_at);
CREATE INDEX team_tasks_run ON team_tasks (project, run_id);

CREATE TABLE team_task_deps (
    project TEXT NOT NULL,
    team    TEXT NOT NULL,
    task    TEXT NOT NULL,
    dep     TEXT NOT NULL,
    PRIMARY KEY (project, team, task, dep)
) WITHOUT ROWID;
CREATE INDEX team_task_deps_dep ON team_task_deps (project, team, dep);

CREATE TABLE team_messages (
    project    TEXT    NOT NULL,
    team       TEXT    NOT NULL,
    seq        INTEGER NOT NULL,
    sender     TEXT    NOT NULL,
    recipient  TEXT    NOT NULL,
    type       TEXT    NOT NULL,
    summary    TEXT    NOT NULL,
    data       TEXT    NOT NULL,
    task       TEXT    NOT NULL,
    created_at INTEGER,
    PRIMARY KEY (project, team, seq)
) WITHOUT ROWID;

CREATE TABLE team_deliveries (
    project    TEXT    NOT NULL,
    team       TEXT    NOT NULL,
    recipient  TEXT    NOT NULL,
    seq        INTEGER NOT NULL,
    state      TEXT    NOT NULL,
    visible_at INTEGER,
    deliveries INTEGER NOT NULL,
    updated_at INTEGER,
    PRIMARY KEY (project, team, recipient, seq)
) WITHOUT ROWID;

CREATE TABLE team_events (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    project    TEXT    NOT NULL,
    team       TEXT    NOT NULL,
    at         INTEGER,
    kind       TEXT    NOT NULL,
    subject    TEXT    NOT NULL,
    from_state TEXT    NOT NULL,
    to_state   TEXT    NOT NULL,
    cause      TEXT    NOT NULL,
    data       TEXT    NOT NULL
);
CREATE INDEX team_events_team ON team_events (project, team, id);

-- +goose Down
DROP TABLE team_events;
DROP TABLE team_deliveries;
DROP TABLE team_messages;
DROP TABLE team_task_deps;
DROP TABLE team_tasks;
DROP TABLE team_teams;
