-- +goose Up
-- The failure-learning system (seed 003, package trace): execution traces
-- and their attempts, artifact execution records, failure patterns, the
-- per-session trace assembly state kept between hook calls, pre-execution
-- checks, reviews, per-skill statistics and named states (the error
-- grouper). Seed fields are columns; `data` holds the whole record as JSON.
-- Times are microseconds since the Unix epoch.
CREATE TABLE trace_traces (
    project       TEXT    NOT NULL,
    id            TEXT    NOT NULL,
    skill_id      TEXT    NOT NULL,
    task_id       TEXT    NOT NULL,
    session_id    TEXT    NOT NULL,
    family        TEXT    NOT NULL,
    status        TEXT    NOT NULL,
    final_success INTEGER NOT NULL CHECK (final_success IN (0, 1)),
    attempts      INTEGER NOT NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER,
    duration_ms   INTEGER NOT NULL,
    data          TEXT    NOT NULL,
    PRIMARY KEY (project, id)
) WITHOUT ROWID;
CREATE INDEX trace_traces_created ON trace_traces (project, created_at, id);
CREATE INDEX trace_traces_task ON trace_traces (project, task_id);
CREATE INDEX trace_traces_skill ON trace_traces (project, skill_id, created_at);
CREATE TABLE trace_attempts (
    project     TEXT    NOT NULL,
    trace_id    TEXT    NOT NULL,
    idx         INTEGER NOT NULL,
    at          INTEGER NOT NULL,
    success     INTEGER NOT NULL CHECK (success IN (0, 1)),
    error_type  TEXT    NOT NULL,
    error       TEXT    NOT NULL,
    fix_applied TEXT    NOT NULL,
    fix_source  TEXT    NOT NULL,
    data        TEXT    NOT NULL,
    PRIMARY KEY (project, trace_id, idx)
) WITHOUT ROWID;
CREATE TABLE trace_executions (
    project      TEXT    NOT NULL,
    artifact_id  TEXT    NOT NULL,
    trace_id     TEXT    NOT NULL,
    at           INTEGER NOT NULL,
    success      INTEGER NOT NULL CHECK (success IN (0, 1)),
    error        TEXT    NOT NULL,
    context_hash TEXT    NOT NULL,
    PRIMARY KEY (project, artifact_id, at, trace_id)
) WITHOUT ROWID;
CREATE TABLE trace_patterns (
    project          TEXT    NOT NULL,
    id               TEXT    NOT NULL,
    skill_id         TEXT    NOT NULL,
    family           TEXT    NOT NULL,
    cond             TEXT    NOT NULL,
    error_type       TEXT    NOT NULL,
    frequency        INTEGER NOT NULL,
    first_occurred   INTEGER,
    last_occurred    INTEGER NOT NULL,
    suggested_fix    TEXT    NOT NULL,
    weight           REAL    NOT NULL,
    grouping_version INTEGER NOT NULL,
    data             TEXT    NOT NULL,
    PRIMARY KEY (project, id)
) WITHOUT ROWID;
CREATE INDEX trace_patterns_skill ON trace_patterns (project, skill_id);
CREATE INDEX trace_patterns_family ON trace_patterns (project, family);
CREATE TABLE trace_sessions (
    project    TEXT NOT NULL,
    id         TEXT NOT NULL,
    state      TEXT NOT NULL,
    updated_at INTEGER,
    PRIMARY KEY (project, id)
) WITHOUT ROWID;
CREATE TABLE trace_checks (
    project     TEXT    NOT NULL,
    id          TEXT    NOT NULL,
    session_id  TEXT    NOT NULL,
    skill_id    TEXT    NOT NULL,
    command     TEXT    NOT NULL,
    at          INTEGER NOT NULL,
    warned      INTEGER NOT NULL,
    pattern_ids TEXT    NOT NULL,
    warnings    TEXT    NOT NULL,
    PRIMARY KEY (project, id)
) WITHOUT ROWID;
CREATE INDEX trace_checks_at ON trace_checks (project, at, id);
CREATE TABLE trace_reviews (
    project      TEXT    NOT NULL,
    id           TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    period_start INTEGER NOT NULL,
    period_end   INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    result       TEXT    NOT NULL,
    report       TEXT    NOT NULL,
    PRIMARY KEY (project, id),
    UNIQUE (project, kind, period_start)
) WITHOUT ROWID;
CREATE TABLE trace_skills (
    project    TEXT NOT NULL,
    skill_id   TEXT NOT NULL,
    data       TEXT NOT NULL,
    updated_at INTEGER,
    PRIMARY KEY (project, skill_id)
) WITHOUT ROWID;
CREATE TABLE trace_states (
    project    TEXT NOT NULL,
    name       TEXT NOT NULL,
    value      TEXT NOT NULL,
    updated_at INTEGER,
    PRIMARY KEY (project, name)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE trace_states;
DROP TABLE trace_skills;
DROP TABLE trace_reviews;
DROP TABLE trace_checks;
DROP TABLE trace_sessions;
DROP TABLE trace_patterns;
DROP TABLE trace_executions;
DROP TABLE trace_attempts;
DROP TABLE trace_traces;
