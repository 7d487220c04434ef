-- +goose Up
-- Experience system (seed 001). Times are microseconds since the Unix epoch:
-- the columns listings order by are NOT NULL (the zero time is stored as its
-- own instant, so it sorts first on every backend), optional times are NULL
-- when unset. JSON text columns hold lists.
CREATE TABLE experience_turns (
    project TEXT COLLATE "C" NOT NULL,
    id      TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    turn_id TEXT COLLATE "C" NOT NULL,
    role    TEXT COLLATE "C" NOT NULL,
    content TEXT COLLATE "C" NOT NULL,
    source  TEXT COLLATE "C" NOT NULL,
    ts      BIGINT NOT NULL,
    PRIMARY KEY (project, id)
);
CREATE INDEX experience_turns_ts ON experience_turns (project, ts, id);
CREATE INDEX experience_turns_task ON experience_turns (project, task_id, ts, id);

CREATE TABLE feedback_signals (
    project    TEXT COLLATE "C" NOT NULL,
    id         TEXT COLLATE "C" NOT NULL,
    task_id    TEXT COLLATE "C" NOT NULL,
    type       TEXT COLLATE "C" NOT NULL,
    source     TEXT COLLATE "C" NOT NULL,
    evidence   TEXT COLLATE "C" NOT NULL,
    turn_id    TEXT COLLATE "C" NOT NULL,
    confidence DOUBLE PRECISION NOT NULL,
    extractor  TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (project, id)
);
CREATE INDEX feedback_signals_created ON feedback_signals (project, created_at, id);
CREATE INDEX feedback_signals_task ON feedback_signals (project, task_id, created_at, id);
CREATE INDEX feedback_signals_type ON feedback_signals (project, type, created_at, id);

CREATE TABLE task_experiences (
    project          TEXT COLLATE "C" NOT NULL,
    task_id          TEXT COLLATE "C" NOT NULL,
    goal             TEXT COLLATE "C" NOT NULL,
    success_criteria TEXT COLLATE "C" NOT NULL,
    failed_attempts  TEXT COLLATE "C" NOT NULL,
    working_approach TEXT COLLATE "C" NOT NULL,
    heuristics       TEXT COLLATE "C" NOT NULL,
    signals          TEXT COLLATE "C" NOT NULL,
    mode             TEXT COLLATE "C" NOT NULL,
    extractor        TEXT COLLATE "C" NOT NULL,
    calls            BIGINT NOT NULL,
    created_at       BIGINT NOT NULL,
    PRIMARY KEY (project, task_id)
);
CREATE INDEX task_experiences_created ON task_experiences (project, created_at, task_id);

CREATE TABLE heuristics (
    project           TEXT COLLATE "C" NOT NULL,
    id                TEXT COLLATE "C" NOT NULL,
    kind              TEXT COLLATE "C" NOT NULL,
    trigger_text      TEXT COLLATE "C" NOT NULL,
    rule_text         TEXT COLLATE "C" NOT NULL,
    why               TEXT COLLATE "C" NOT NULL,
    status            TEXT COLLATE "C" NOT NULL,
    status_reason     TEXT COLLATE "C" NOT NULL,
    support_tasks     BIGINT NOT NULL,
    evidence_count    BIGINT NOT NULL,
    helpful_count     BIGINT NOT NULL,
    misleading_count  BIGINT NOT NULL,
    misleading_streak BIGINT NOT NULL,
    recall_count      BIGINT NOT NULL,
    superseded_by     TEXT COLLATE "C" NOT NULL,
    source_task_id    TEXT COLLATE "C" NOT NULL,
    last_recalled_at  BIGINT,
    last_validated_at BIGINT,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL,
    search_key        TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (project, id)
);
CREATE INDEX heuristics_updated ON heuristics (project, updated_at, id);
CREATE INDEX heuristics_status ON heuristics (project, status, updated_at, id);
CREATE INDEX heuristics_kind ON heuristics (project, kind, updated_at, id);

CREATE TABLE heuristic_evidence (
    project      TEXT COLLATE "C" NOT NULL,
    id           TEXT COLLATE "C" NOT NULL,
    heuristic_id TEXT COLLATE "C" NOT NULL,
    task_id      TEXT COLLATE "C" NOT NULL,
    action       TEXT COLLATE "C" NOT NULL,
    text         TEXT COLLATE "C" NOT NULL,
    similarity   DOUBLE PRECISION NOT NULL,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (project, id)
);
CREATE INDEX heuristic_evidence_heuristic ON heuristic_evidence (project, heuristic_id, created_at, id);

-- Distinct tasks supporting a heuristic.
CREATE TABLE heuristic_support (
    project      TEXT COLLATE "C" NOT NULL,
    heuristic_id TEXT COLLATE "C" NOT NULL,
    task_id      TEXT COLLATE "C" NOT NULL,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (project, heuristic_id, task_id)
);
CREATE INDEX heuristic_support_created ON heuristic_support (project, heuristic_id, created_at, task_id);

CREATE TABLE heuristic_feedback (
    project      TEXT COLLATE "C" NOT NULL,
    id           TEXT COLLATE "C" NOT NULL,
    heuristic_id TEXT COLLATE "C" NOT NULL,
    recall_id    TEXT COLLATE "C" NOT NULL,
    task_id      TEXT COLLATE "C" NOT NULL,
    verdict      TEXT COLLATE "C" NOT NULL,
    note         TEXT COLLATE "C" NOT NULL,
    source       TEXT COLLATE "C" NOT NULL,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (project, id)
);
CREATE INDEX heuristic_feedback_heuristic ON heuristic_feedback (project, heuristic_id, created_at, id);

CREATE TABLE recalls (
    project      TEXT COLLATE "C" NOT NULL,
    id           TEXT COLLATE "C" NOT NULL,
    task_id      TEXT COLLATE "C" NOT NULL,
    query        TEXT COLLATE "C" NOT NULL,
    live_signals TEXT COLLATE "C" NOT NULL,
    items        TEXT COLLATE "C" NOT NULL,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (project, id)
);
CREATE INDEX recalls_created ON recalls (project, created_at, id);
CREATE INDEX recalls_task ON recalls (project, task_id, created_at, id);

-- The items each recall considered, for RecallFilter.RefID.
CREATE TABLE recall_items (
    project   TEXT COLLATE "C" NOT NULL,
    ref_id    TEXT COLLATE "C" NOT NULL,
    recall_id TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (project, ref_id, recall_id)
);

CREATE TABLE skills (
    project        TEXT COLLATE "C" NOT NULL,
    id             TEXT COLLATE "C" NOT NULL,
    name           TEXT COLLATE "C" NOT NULL,
    description    TEXT COLLATE "C" NOT NULL,
    when_to_use    TEXT COLLATE "C" NOT NULL,
    steps          TEXT COLLATE "C" NOT NULL,
    status         TEXT COLLATE "C" NOT NULL,
    version        BIGINT NOT NULL,
    content        TEXT COLLATE "C" NOT NULL,
    source_task_id TEXT COLLATE "C" NOT NULL,
    heuristic_ids  TEXT COLLATE "C" NOT NULL,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL,
    search_key     TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (project, id)
);
CREATE UNIQUE INDEX skills_name ON skills (project, name);
CREATE INDEX skills_status ON skills (project, status, name);

CREATE TABLE skill_versions (
    project        TEXT COLLATE "C" NOT NULL,
    skill_id       TEXT COLLATE "C" NOT NULL,
    version        BIGINT NOT NULL,
    content        TEXT COLLATE "C" NOT NULL,
    changelog      TEXT COLLATE "C" NOT NULL,
    source_task_id TEXT COLLATE "C" NOT NULL,
    created_at     BIGINT NOT NULL,
    PRIMARY KEY (project, skill_id, version)
);

-- Vectors: little-endian float32, dim of them.
CREATE TABLE embeddings (
    project    TEXT COLLATE "C" NOT NULL,
    kind       TEXT COLLATE "C" NOT NULL,
    ref_id     TEXT COLLATE "C" NOT NULL,
    embedder   TEXT COLLATE "C" NOT NULL,
    dim        BIGINT NOT NULL,
    vector     BYTEA NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (project, kind, ref_id)
);
CREATE INDEX embeddings_embedder ON embeddings (project, kind, embedder, ref_id);

-- Full-text documents. body holds the terms (store.TextTerms) separated by
-- single spaces; tsv is the same terms as a tsvector built by the store
-- (lexemes exactly as given, with positions), matched through its GIN index.
CREATE TABLE search_docs (
    project TEXT COLLATE "C" NOT NULL,
    kind    TEXT COLLATE "C" NOT NULL,
    ref_id  TEXT COLLATE "C" NOT NULL,
    body    TEXT COLLATE "C" NOT NULL,
    tsv     TSVECTOR NOT NULL,
    PRIMARY KEY (project, kind, ref_id)
);
CREATE INDEX search_docs_tsv ON search_docs USING GIN (tsv);

-- One row per project: store.ExperienceStorage.ExperienceVersion.
CREATE TABLE experience_versions (
    project TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    version BIGINT NOT NULL
);

-- +goose Down
DROP TABLE experience_versions;
DROP TABLE search_docs;
DROP TABLE embeddings;
DROP TABLE skill_versions;
DROP TABLE skills;
DROP TABLE recall_items;
DROP TABLE recalls;
DROP TABLE heuristic_feedback;
DROP TABLE heuristic_support;
DROP TABLE heuristic_evidence;
DROP TABLE heuristics;
DROP TABLE task_experiences;
DROP TABLE feedback_signals;
DROP TABLE experience_turns;
