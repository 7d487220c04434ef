-- +goose Up
-- Learning system (seed 000). Times are microseconds since the Unix epoch;
-- NULL means "not set". JSON text columns hold string lists.
CREATE TABLE outcomes (
    project            TEXT    NOT NULL,
    id                 TEXT    NOT NULL,
    task_id            TEXT    NOT NULL,
    duration_ms        INTEGER NOT NULL,
    error_count        INTEGER NOT NULL,
    retry_count        INTEGER NOT NULL,
    success            INTEGER NOT NULL CHECK (success IN (0, 1)),
    files_touched      TEXT    NOT NULL,
    strategy           TEXT    NOT NULL,
    failure_mode       TEXT    NOT NULL,
    failure_details    TEXT    NOT NULL,
    ts                 INTEGER,
    patterns           TEXT    NOT NULL,
    criteria           TEXT    NOT NULL,
    error_count_source TEXT    NOT NULL,
    raw_score          REAL    NOT NULL,
    score_type         TEXT    NOT NULL,
    score              TEXT    NOT NULL,
    recorded_at        INTEGER,
    PRIMARY KEY (project, id)
) WITHOUT ROWID;
CREATE INDEX outcomes_recorded ON outcomes (project, recorded_at, id);
CREATE INDEX outcomes_task ON outcomes (project, task_id);

CREATE TABLE criteria (
    project        TEXT    NOT NULL,
    name           TEXT    NOT NULL,
    helpful_sum    REAL    NOT NULL,
    helpful_ref    INTEGER,
    harmful_sum    REAL    NOT NULL,
    harmful_ref    INTEGER,
    helpful_count  INTEGER NOT NULL,
    harmful_count  INTEGER NOT NULL,
    neutral_count  INTEGER NOT NULL,
    last_validated INTEGER,
    created_at     INTEGER,
    updated_at     INTEGER,
    PRIMARY KEY (project, name)
) WITHOUT ROWID;

CREATE TABLE patterns (
    project         TEXT    NOT NULL,
    id              TEXT    NOT NULL,
    content         TEXT    NOT NULL,
    content_key     TEXT    NOT NULL,
    search_key      TEXT    NOT NULL,
    content_hash    TEXT    NOT NULL,
    kind            TEXT    NOT NULL,
    is_negative     INTEGER NOT NULL CHECK (is_negative IN (0, 1)),
    success_count   INTEGER NOT NULL,
    failure_count   INTEGER NOT NULL,
    tags            TEXT    NOT NULL,
    example_tasks   TEXT    NOT NULL,
    reason          TEXT    NOT NULL,
    source_id       TEXT    NOT NULL,
    anti_pattern_id TEXT    NOT NULL,
    generation      INTEGER NOT NULL,
    version         INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER,
    updated_at      INTEGER,
    PRIMARY KEY (project, id)
) WITHOUT ROWID;
-- content keys can be long: uniqueness and lookups go through their SHA-256
CREATE UNIQUE INDEX patterns_content ON patterns (project, content_hash) WHERE kind = 'pattern';
CREATE INDEX patterns_content_hash ON patterns (project, content_hash);
CREATE INDEX patterns_created ON patterns (project, created_at, id);
CREATE INDEX patterns_version ON patterns (project, version);

-- One row per project: the version of its pattern state (see store.PatternVersion).
CREATE TABLE pattern_versions (
    project       TEXT    NOT NULL PRIMARY KEY,
    version       INTEGER  NOT NULL,
    reset_version INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE maturity (
    project        TEXT    NOT NULL,
    pattern_id     TEXT    NOT NULL,
    helpful_sum    REAL    NOT NULL,
    helpful_ref    INTEGER,
    harmful_sum    REAL    NOT NULL,
    harmful_ref    INTEGER,
    helpful_count  INTEGER NOT NULL,
    harmful_count  INTEGER NOT NULL,
    neutral_count  INTEGER NOT NULL,
    manual_state   TEXT    NOT NULL,
    manual_reason  TEXT    NOT NULL,
    promoted_at    INTEGER,
    deprecated_at  INTEGER,
    last_validated INTEGER,
    generation     INTEGER NOT NULL,
    reset_at       INTEGER,
    updated_at     INTEGER,
    PRIMARY KEY (project, pattern_id)
) WITHOUT ROWID;

CREATE TABLE maturity_feedback (
    project    TEXT    NOT NULL,
    id         TEXT    NOT NULL,
    pattern_id TEXT    NOT NULL,
    success    INTEGER NOT NULL CHECK (success IN (0, 1)),
    type       TEXT    NOT NULL,
    weight     REAL    NOT NULL,
    task_id    TEXT    NOT NULL,
    ts         INTEGER,
    generation INTEGER NOT NULL,
    PRIMARY KEY (project, id)
) WITHOUT ROWID;
CREATE INDEX maturity_feedback_pattern ON maturity_feedback (project, pattern_id, ts, id);

CREATE TABLE errors (
    project     TEXT    NOT NULL,
    id          TEXT    NOT NULL,
    task_id     TEXT    NOT NULL,
    type        TEXT    NOT NULL,
    message     TEXT    NOT NULL,
    stack_trace TEXT    NOT NULL,
    tool_name   TEXT    NOT NULL,
    context     TEXT    NOT NULL,
    ts          INTEGER,
    resolved    INTEGER NOT NULL CHECK (resolved IN (0, 1)),
    resolved_at INTEGER,
    search_key  TEXT    NOT NULL,
    PRIMARY KEY (project, id)
) WITHOUT ROWID;
CREATE INDEX errors_task ON errors (project, task_id, ts, id);
CREATE INDEX errors_ts ON errors (project, ts, id);

CREATE TABLE meta (
    key   TEXT NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

-- +goose Down
DROP TABLE pattern_versions;
DROP TABLE meta;
DROP TABLE errors;
DROP TABLE maturity_feedback;
DROP TABLE maturity;
DROP TABLE patterns;
DROP TABLE criteria;
DROP TABLE outcomes;
