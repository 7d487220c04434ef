-- +goose Up
-- Experience system (seed 001). Times are microseconds since the Unix epoch:
-- the columns listings order by are NOT NULL (the zero time is stored as its
-- own instant, so it sorts first on every backend), optional times are NULL
-- when unset. JSON text columns hold lists.
CREATE TABLE experience_turns (
    project TEXT    NOT NULL,
    id      TEXT    NOT NULL,
    task_id TEXT    NOT NULL,
    turn_id TEXT    NOT NULL,
    role    TEXT    NOT NULL,
    content TEXT    NOT NULL,
    source  TEXT    NOT NULL,
    ts      INTEGER NOT NULL,
    PRIMARY KEY (project, id)
) WITHOUT ROWID;
CREATE INDEX experience_turns_ts ON experience_turns (project, ts, id);
CREATE INDEX experience_turns_task ON experience_turns (project, task_id, ts, id);

CREATE TABLE feedback_signals (
    project    TEXT    NOT NULL,
    id         TEXT    NOT NULL,
    task_id    TEXT    NOT NULL,
    type       TEXT    NOT NULL,
    source     TEXT    NOT NULL,
    evidence   TEXT    NOT NULL,
    turn_id    TEXT    NOT NULL,
    confidence REAL    NOT NULL,
    extractor  TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (project, id)
) WITHOUT ROWID;
CREATE INDEX feedback_signals_created ON feedback_signals (project, created_at, id);
CREATE INDEX feedback_signals_task ON feedback_signals (project, task_id, created_at, id);
CREATE INDEX feedback_signals_type ON feedback_signals (project, type, created_at, id);

CREATE TABLE task_experiences (
    project          TEXT    NOT NULL,
    task_id          TEXT    NOT NULL,
    goal             TEXT    NOT NULL,
    success_criteria TEXT    NOT NULL,
    failed_attempts  TEXT    NOT NULL,
    working_approach TEXT    NOT NULL,
    heuristics       TEXT    NOT NULL,
    signals          TEXT    NOT NULL,
    mode             TEXT    NOT NULL,
    extractor        TEXT    NOT NULL,
    calls            INTEGER NOT NULL,
    created_at       INTEGER NOT NULL,
    PRIMARY KEY (project, task_id)
) WITHOUT ROWID;
CREATE INDEX task_experiences_created ON task_experiences (project, created_at, task_id);

CREATE TABLE heuristics (
    project           TEXT    NOT NULL,
    id                TEXT    NOT NULL,
    kind              TEXT    NOT NULL,
    trigger_text      TEXT    NOT NULL,
    rule_text         TEXT    NOT NULL,
    why               TEXT    NOT NULL,
    status            TEXT    NOT NULL,
    status_reason     TEXT    NOT NULL,
    support_tasks     INTEGER NOT NULL,
    evidence_count    INTEGER NOT NULL,
    helpful_count     INTEGER NOT NULL,
    misleading_count  INTEGER NOT NULL,
    misleading_streak INTEGER NOT NULL,
    recall_count      INTEGER NOT NULL,
    superseded_by     TEXT    NOT NULL,
    source_task_id    TEXT    NOT NULL,
    last_recalled_at  INTEGER,
    last_validated_at INTEGER,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    search_key        TEXT    NOT NULL,
    PRIMARY KEY (project, id)
) WITHOUT ROWID;
CREATE INDEX heuristics_updated ON heuristics (project, updated_at, id);
CREATE INDEX heuristics_status ON heuristics (project, status, updated_at, id);
CREATE INDEX heuristics_kind ON heuristics (project, kind, updated_at, id);

CREATE TABLE heuristic_evidence (
    project      TEXT    NOT NULL,
    id           TEXT    NOT NULL,
    heuristic_id TEXT    NOT NULL,
    task_id      TEXT    NOT NULL,
    action       TEXT    NOT NULL,
    text         TEXT    NOT NULL,
    similarity   REAL    NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (project, id)
) WITHOUT ROWID;
CREATE INDEX heuristic_evidence_heuristic ON heuristic_evidence (project, heuristic_id, created_at, id);

-- Distinct tasks supporting a heuristic.
CREATE TABLE heuristic_support (
    project      TEXT    NOT NULL,
    heuristic_id TEXT    NOT NULL,
    task_id      TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (project, heuristic_id, task_id)
) WITHOUT ROWID;
CREATE INDEX heuristic_support_created ON heuristic_support (project, heuristic_id, created_at, task_id);

CREATE TABLE heuristic_feedback (
    project      TEXT    NOT NULL,
    id           TEXT    NOT NULL,
    heuristic_id TEXT    NOT NULL,
    recall_id    TEXT    NOT NULL,
    task_id      TEXT    NOT NULL,
    verdict      TEXT    NOT NULL,
    note         TEXT    NOT NULL,
    source       TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (project, id)
) WITHOUT ROWID;
CREATE INDEX heuristic_feedback_heuristic ON heuristic_feedback (project, heuristic_id, created_at, id);

CREATE TABLE recalls (
    project      TEXT    NOT NULL,
    id           TEXT    NOT NULL,
    task_id      TEXT    NOT NULL,
    query        TEXT    NOT NULL,
    live_signals TEXT    NOT NULL,
    items        TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (project, id)
) WITHOUT ROWID;
CREATE INDEX recalls_created ON recalls (project, created_at, id);
CREATE INDEX recalls_task ON recalls (project, task_id, created_at, id);

-- The items each recall considered, for RecallFilter.RefID.
CREATE TABLE recall_items (
    project   TEXT NOT NULL,
    ref_id    TEXT NOT NULL,
    recall_id TEXT NOT NULL,
    PRIMARY KEY (project, ref_id, recall_id)
) WITHOUT ROWID;

CREATE TABLE skills (
    project        TEXT    NOT NULL,
    id             TEXT    NOT NULL,
    name           TEXT    NOT NULL,
    description    TEXT    NOT NULL,
    when_to_use    TEXT    NOT NULL,
    steps          TEXT    NOT NULL,
    status         TEXT    NOT NULL,
    version        INTEGER NOT NULL,
    content        TEXT    NOT NULL,
    source_task_id TEXT    NOT NULL,
    heuristic_ids  TEXT    NOT NULL,
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL,
    search_key     TEXT    NOT NULL,
    PRIMARY KEY (project, id)
) WITHOUT ROWID;
CREATE UNIQUE INDEX skills_name ON skills (project, name);
CREATE INDEX skills_status ON skills (project, status, name);

CREATE TABLE skill_versions (
    project        TEXT    NOT NULL,
    skill_id       TEXT    NOT NULL,
    version        INTEGER NOT NULL,
    content        TEXT    NOT NULL,
    changelog      TEXT    NOT NULL,
    source_task_id TEXT    NOT NULL,
    created_at     INTEGER NOT NULL,
    PRIMARY KEY (project, skill_id, version)
) WITHOUT ROWID;

-- Vectors: little-endian float32, dim of them.
CREATE TABLE embeddings (
    project    TEXT    NOT NULL,
    kind       TEXT    NOT NULL,
    ref_id     TEXT    NOT NULL,
    embedder   TEXT    NOT NULL,
    dim        INTEGER NOT NULL,
    vector     BLOB    NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (project, kind, ref_id)
) WITHOUT ROWID;
CREATE INDEX embeddings_embedder ON embeddings (project, kind, embedder, ref_id);

-- Full-text documents. body holds the terms (store.TextTerms) separated by
-- single spaces; scope is one token naming (project, kind), so a search
-- intersects with it inside the index instead of filtering afterwards.
CREATE TABLE search_docs (
    id      INTEGER PRIMARY KEY,
    project TEXT NOT NULL,
    kind    TEXT NOT NULL,
    ref_id  TEXT NOT NULL,
    scope   TEXT NOT NULL,
    body    TEXT NOT NULL
);
CREATE UNIQUE INDEX search_docs_ref ON search_docs (project, kind, ref_id);

-- External-content FTS5 index over search_docs, kept in step by triggers.
-- unicode61 without diacritic removal keeps every term as stored.
CREATE VIRTUAL TABLE search_fts USING fts5(
    scope, body,
    content = 'search_docs', content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 0'
);

-- Document frequencies of the indexed terms (all scopes together), read by
-- a search to leave out its most common terms (see sqlstore SearchText).
CREATE VIRTUAL TABLE search_vocab USING fts5vocab(search_fts, 'row');

-- +goose StatementBegin
CREATE TRIGGER search_docs_insert AFTER INSERT ON search_docs BEGIN
    INSERT INTO search_fts (rowid, scope, body) VALUES (new.id, new.scope, new.body);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER search_docs_delete AFTER DELETE ON search_docs BEGIN
    INSERT INTO search_fts (search_fts, rowid, scope, body) VALUES ('delete', old.id, old.scope, old.body);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER search_docs_update AFTER UPDATE ON search_docs BEGIN
    INSERT INTO search_fts (search_fts, rowid, scope, body) VALUES ('delete', old.id, old.scope, old.body);
    INSERT INTO search_fts (rowid, scope, body) VALUES (new.id, new.scope, new.body);
END;
-- +goose StatementEnd

-- One row per project: store.ExperienceStorage.ExperienceVersion.
CREATE TABLE experience_versions (
    project TEXT    NOT NULL PRIMARY KEY,
    version INTEGER NOT NULL
) WITHOUT ROWID;

-- +goose Down
DROP TABLE search_vocab;
DROP TABLE experience_versions;
DROP TRIGGER search_docs_update;
DROP TRIGGER search_docs_delete;
DROP TRIGGER search_docs_insert;
DROP TABLE search_fts;
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
