-- +goose Up
-- Learning system (seed 000). Times are microseconds since the Unix epoch;
-- NULL means "not set". JSON text columns hold string lists.
CREATE TABLE outcomes (
    project            TEXT COLLATE "C" NOT NULL,
    id                 TEXT COLLATE "C" NOT NULL,
    task_id            TEXT COLLATE "C" NOT NULL,
    duration_ms        BIGINT NOT NULL,
    error_count        BIGINT NOT NULL,
    retry_count        BIGINT NOT NULL,
    success            BOOLEAN NOT NULL,
    files_touched      TEXT COLLATE "C" NOT NULL,
    strategy           TEXT COLLATE "C" NOT NULL,
    failure_mode       TEXT COLLATE "C" NOT NULL,
    failure_details    TEXT COLLATE "C" NOT NULL,
    ts                 BIGINT,
    patterns           TEXT COLLATE "C" NOT NULL,
    criteria           TEXT COLLATE "C" NOT NULL,
    error_count_source TEXT COLLATE "C" NOT NULL,
    raw_score           DOUBLE PRECISION    NOT NULL,
    score_type         TEXT COLLATE "C" NOT NULL,
    score              TEXT COLLATE "C" NOT NULL,
    recorded_at        BIGINT,
    PRIMARY KEY (project, id)
);
CREATE INDEX outcomes_recorded ON outcomes (project, recorded_at, id);
CREATE INDEX outcomes_task ON outcomes (project, task_id);

CREATE TABLE criteria (
    project        TEXT COLLATE "C" NOT NULL,
    name           TEXT COLLATE "C" NOT NULL,
    helpful_sum     DOUBLE PRECISION    NOT NULL,
    helpful_ref    BIGINT,
    harmful_sum     DOUBLE PRECISION    NOT NULL,
    harmful_ref    BIGINT,
    helpful_count  BIGINT NOT NULL,
    harmful_count  BIGINT NOT NULL,
    neutral_count  BIGINT NOT NULL,
    last_validated BIGINT,
    created_at     BIGINT,
    updated_at     BIGINT,
    PRIMARY KEY (project, name)
);

CREATE TABLE patterns (
    project         TEXT COLLATE "C" NOT NULL,
    id              TEXT COLLATE "C" NOT NULL,
    content         TEXT COLLATE "C" NOT NULL,
    content_key     TEXT COLLATE "C" NOT NULL,
    search_key      TEXT COLLATE "C" NOT NULL,
    content_hash    TEXT COLLATE "C" NOT NULL,
    kind            TEXT COLLATE "C" NOT NULL,
    is_negative     BOOLEAN NOT NULL,
    success_count   BIGINT NOT NULL,
    failure_count   BIGINT NOT NULL,
    tags            TEXT COLLATE "C" NOT NULL,
    example_tasks   TEXT COLLATE "C" NOT NULL,
    reason          TEXT COLLATE "C" NOT NULL,
    source_id       TEXT COLLATE "C" NOT NULL,
    anti_pattern_id TEXT COLLATE "C" NOT NULL,
    generation      BIGINT NOT NULL,
    version         BIGINT NOT NULL DEFAULT 0,
    created_at      BIGINT,
    updated_at      BIGINT,
    PRIMARY KEY (project, id)
);
-- content keys can be long: uniqueness and lookups go through their SHA-256
CREATE UNIQUE INDEX patterns_content ON patterns (project, content_hash) WHERE kind = 'pattern';
CREATE INDEX patterns_content_hash ON patterns (project, content_hash);
CREATE INDEX patterns_created ON patterns (project, created_at, id);
CREATE INDEX patterns_version ON patterns (project, version);

-- One row per project: the version of its pattern state (see store.PatternVersion).
CREATE TABLE pattern_versions (
    project       TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    version       BIGINT  NOT NULL,
    reset_version BIGINT NOT NULL
);

CREATE TABLE maturity (
    project        TEXT COLLATE "C" NOT NULL,
    pattern_id     TEXT COLLATE "C" NOT NULL,
    helpful_sum     DOUBLE PRECISION    NOT NULL,
    helpful_ref    BIGINT,
    harmful_sum     DOUBLE PRECISION    NOT NULL,
    harmful_ref    BIGINT,
    helpful_count  BIGINT NOT NULL,
    harmful_count  BIGINT NOT NULL,
    neutral_count  BIGINT NOT NULL,
    manual_state   TEXT COLLATE "C" NOT NULL,
    manual_reason  TEXT COLLATE "C" NOT NULL,
    promoted_at    BIGINT,
    deprecated_at  BIGINT,
    last_validated BIGINT,
    generation     BIGINT NOT NULL,
    reset_at       BIGINT,
    updated_at     BIGINT,
    PRIMARY KEY (project, pattern_id)
);

CREATE TABLE maturity_feedback (
    project    TEXT COLLATE "C" NOT NULL,
    id         TEXT COLLATE "C" NOT NULL,
    pattern_id TEXT COLLATE "C" NOT NULL,
    success    BOOLEAN NOT NULL,
    type       TEXT COLLATE "C" NOT NULL,
    weight      DOUBLE PRECISION    NOT NULL,
    task_id    TEXT COLLATE "C" NOT NULL,
    ts         BIGINT,
    generation BIGINT NOT NULL,
    PRIMARY KEY (project, id)
);
CREATE INDEX maturity_feedback_pattern ON maturity_feedback (project, pattern_id, ts, id);

CREATE TABLE errors (
    project     TEXT COLLATE "C" NOT NULL,
    id          TEXT COLLATE "C" NOT NULL,
    task_id     TEXT COLLATE "C" NOT NULL,
    type        TEXT COLLATE "C" NOT NULL,
    message     TEXT COLLATE "C" NOT NULL,
    stack_trace TEXT COLLATE "C" NOT NULL,
    tool_name   TEXT COLLATE "C" NOT NULL,
    context     TEXT COLLATE "C" NOT NULL,
    ts          BIGINT,
    resolved    BOOLEAN NOT NULL,
    resolved_at BIGINT,
    search_key  TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (project, id)
);
CREATE INDEX errors_task ON errors (project, task_id, ts, id);
CREATE INDEX errors_ts ON errors (project, ts, id);

CREATE TABLE meta (
    key   TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    value TEXT COLLATE "C" NOT NULL
);

-- +goose Down
DROP TABLE pattern_versions;
DROP TABLE meta;
DROP TABLE errors;
DROP TABLE maturity_feedback;
DROP TABLE maturity;
DROP TABLE patterns;
DROP TABLE criteria;
DROP TABLE outcomes;
