-- +goose Up
-- The failure-learning system (seed 003, package trace): execution traces
-- and their attempts, artifact execution records, failure patterns, the
-- per-session trace assembly state kept between hook calls, pre-execution
-- checks, reviews, per-skill statistics and named states (the error
-- grouper). Seed fields are columns; `data` holds the whole record as JSON.
-- Times are microseconds since the Unix epoch.
CREATE TABLE trace_traces (
    project       TEXT COLLATE "C" NOT NULL,
    id            TEXT COLLATE "C" NOT NULL,
    skill_id      TEXT COLLATE "C" NOT NULL,
    task_id       TEXT COLLATE "C" NOT NULL,
    session_id    TEXT COLLATE "C" NOT NULL,
    family        TEXT COLLATE "C" NOT NULL,
    status        TEXT COLLATE "C" NOT NULL,
    final_success BOOLEAN NOT NULL,
    attempts      BIGINT NOT NULL,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT,
    duration_ms   BIGINT NOT NULL,
    data          TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (project, id)
);
CREATE INDEX trace_traces_created ON trace_traces (project, created_at, id);
CREATE INDEX trace_traces_task ON trace_traces (project, task_id);
CREATE INDEX trace_traces_skill ON trace_traces (project, skill_id, created_at);
CREATE TABLE trace_attempts (
    project     TEXT COLLATE "C" NOT NULL,
    trace_id    TEXT COLLATE "C" NOT NULL,
    idx         BIGINT NOT NULL,
    at          BIGINT NOT NULL,
    success     BOOLEAN NOT NULL,
    error_type  TEXT COLLATE "C" NOT NULL,
    error       TEXT COLLATE "C" NOT NULL,
    fix_applied TEXT COLLATE "C" NOT NULL,
    fix_source  TEXT COLLATE "C" NOT NULL,
    data        TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (project, trace_id, idx)
);
CREATE TABLE trace_executions (
    project      TEXT COLLATE "C" NOT NULL,
    artifact_id  TEXT COLLATE "C" NOT NULL,
    trace_id     TEXT COLLATE "C" NOT NULL,
    at           BIGINT NOT NULL,
    success      BOOLEAN NOT NULL,
    error        TEXT COLLATE "C" NOT NULL,
    context_hash TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (project, artifact_id, at, trace_id)
);
CREATE TABLE trace_patterns (
    project          TEXT COLLATE "C" NOT NULL,
    id               TEXT COLLATE "C" NOT NULL,
    skill_id         TEXT COLLATE "C" NOT NULL,
    family           TEXT COLLATE "C" NOT NULL,
    cond             TEXT COLLATE "C" NOT NULL,
    error_type       TEXT COLLATE "C" NOT NULL,
    frequency        BIGINT NOT NULL,
    first_occurred   BIGINT,
    last_occurred    BIGINT NOT NULL,
    suggested_fix    TEXT COLLATE "C" NOT NULL,
    weight           DOUBLE PRECISION NOT NULL,
    grouping_version BIGINT NOT NULL,
    data             TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (project, id)
);
CREATE INDEX trace_patterns_skill ON trace_patterns (project, skill_id);
CREATE INDEX trace_patterns_family ON trace_patterns (project, family);
CREATE TABLE trace_sessions (
    project    TEXT COLLATE "C" NOT NULL,
    id         TEXT COLLATE "C" NOT NULL,
    state      TEXT COLLATE "C" NOT NULL,
    updated_at BIGINT,
    PRIMARY KEY (project, id)
);
CREATE TABLE trace_checks (
    project     TEXT COLLATE "C" NOT NULL,
    id          TEXT COLLATE "C" NOT NULL,
    session_id  TEXT COLLATE "C" NOT NULL,
    skill_id    TEXT COLLATE "C" NOT NULL,
    command     TEXT COLLATE "C" NOT NULL,
    at          BIGINT NOT NULL,
    warned      BIGINT NOT NULL,
    pattern_ids TEXT COLLATE "C" NOT NULL,
    warnings    TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (project, id)
);
CREATE INDEX trace_checks_at ON trace_checks (project, at, id);
CREATE TABLE trace_reviews (
    project      TEXT COLLATE "C" NOT NULL,
    id           TEXT COLLATE "C" NOT NULL,
    kind         TEXT COLLATE "C" NOT NULL,
    period_start BIGINT NOT NULL,
    period_end   BIGINT NOT NULL,
    created_at   BIGINT NOT NULL,
    result       TEXT COLLATE "C" NOT NULL,
    report       TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (project, id),
    UNIQUE (project, kind, period_start)
);
CREATE TABLE trace_skills (
    project    TEXT COLLATE "C" NOT NULL,
    skill_id   TEXT COLLATE "C" NOT NULL,
    data       TEXT COLLATE "C" NOT NULL,
    updated_at BIGINT,
    PRIMARY KEY (project, skill_id)
);
CREATE TABLE trace_states (
    project    TEXT COLLATE "C" NOT NULL,
    name       TEXT COLLATE "C" NOT NULL,
    value      TEXT COLLATE "C" NOT NULL,
    updated_at BIGINT,
    PRIMARY KEY (project, name)
);

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
