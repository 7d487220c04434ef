-- +goose Up
-- Document frequencies of the full-text terms per project and kind, and the
-- number and total length of the documents: the statistics of the BM25
-- ranking done by the store (sqlstore SearchText), kept by PutSearchDoc and
-- DeleteSearchDoc. Filled from the existing documents by migration 6.
CREATE TABLE search_terms (
    project TEXT    NOT NULL,
    kind    TEXT    NOT NULL,
    term    TEXT    NOT NULL,
    docs    INTEGER NOT NULL,
    PRIMARY KEY (project, kind, term)
) WITHOUT ROWID;

CREATE TABLE search_stats (
    project TEXT    NOT NULL,
    kind    TEXT    NOT NULL,
    docs    INTEGER NOT NULL,
    terms   INTEGER NOT NULL,
    PRIMARY KEY (project, kind)
) WITHOUT ROWID;

-- The global vocabulary table is no longer read.
DROP TABLE search_vocab;

-- The experience version of each vector's last write, and the removed
-- vectors with the version of their removal: what a cached vector index
-- applies to catch up with changes made by other processes
-- (store.ExperienceStorage.EmbeddingChanges) instead of reloading.
ALTER TABLE embeddings ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
CREATE INDEX embeddings_version ON embeddings (project, kind, version);

CREATE TABLE embedding_removals (
    project TEXT NOT NULL,
    kind    TEXT NOT NULL,
    ref_id  TEXT NOT NULL,
    version INTEGER NOT NULL,
    PRIMARY KEY (project, kind, ref_id)
) WITHOUT ROWID;
CREATE INDEX embedding_removals_version ON embedding_removals (project, kind, version);

-- The database's identity (store.ExperienceStorage.StoreID): a random id
-- fixed here, which names the vector index snapshots derived from it.
CREATE TABLE store_identity (
    id TEXT NOT NULL
);
INSERT INTO store_identity (id) VALUES (lower(hex(randomblob(16))));

-- +goose Down
DROP TABLE store_identity;
DROP TABLE embedding_removals;
DROP INDEX embeddings_version;
ALTER TABLE embeddings DROP COLUMN version;
CREATE VIRTUAL TABLE search_vocab USING fts5vocab(search_fts, 'row');
DROP TABLE search_stats;
DROP TABLE search_terms;
