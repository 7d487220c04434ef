-- +goose Up
-- Document frequencies of the full-text terms per project and kind, and the
-- number and total length of the documents: the statistics of the BM25
-- ranking done by the store (sqlstore SearchText), kept by PutSearchDoc and
-- DeleteSearchDoc. Filled from the existing documents by migration 6.
CREATE TABLE search_terms (
    project TEXT COLLATE "C" NOT NULL,
    kind    TEXT COLLATE "C" NOT NULL,
    term    TEXT COLLATE "C" NOT NULL,
    docs    BIGINT NOT NULL,
    PRIMARY KEY (project, kind, term)
);

CREATE TABLE search_stats (
    project TEXT COLLATE "C" NOT NULL,
    kind    TEXT COLLATE "C" NOT NULL,
    docs    BIGINT NOT NULL,
    terms   BIGINT NOT NULL,
    PRIMARY KEY (project, kind)
);

-- The experience version of each vector's last write, and the removed
-- vectors with the version of their removal: what a cached vector index
-- applies to catch up with changes made by other processes
-- (store.ExperienceStorage.EmbeddingChanges) instead of reloading.
ALTER TABLE embeddings ADD COLUMN version BIGINT NOT NULL DEFAULT 0;
CREATE INDEX embeddings_version ON embeddings (project, kind, version);

CREATE TABLE embedding_removals (
    project TEXT COLLATE "C" NOT NULL,
    kind    TEXT COLLATE "C" NOT NULL,
    ref_id  TEXT COLLATE "C" NOT NULL,
    version BIGINT NOT NULL,
    PRIMARY KEY (project, kind, ref_id)
);
CREATE INDEX embedding_removals_version ON embedding_removals (project, kind, version);

-- The database's identity (store.ExperienceStorage.StoreID): a random id
-- fixed here, which names the vector index snapshots derived from it.
CREATE TABLE store_identity (
    id TEXT NOT NULL
);
INSERT INTO store_identity (id) VALUES (md5(random()::text || clock_timestamp()::text));

-- The inverted index of the full-text documents, one row per term and
-- document, read through its primary key (sqlstore SearchText), in place of
-- the tsvector column, whose GIN index the planner would not use for a
-- project's documents of one kind. Filled by migration 6.
CREATE TABLE search_postings (
    project TEXT COLLATE "C" NOT NULL,
    kind    TEXT COLLATE "C" NOT NULL,
    term    TEXT COLLATE "C" NOT NULL,
    ref_id  TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (project, kind, term, ref_id)
);
DROP INDEX search_docs_tsv;
ALTER TABLE search_docs DROP COLUMN tsv;

-- +goose Down
ALTER TABLE search_docs ADD COLUMN tsv TSVECTOR NOT NULL DEFAULT ''::tsvector;
UPDATE search_docs SET tsv = to_tsvector('simple', body);
CREATE INDEX search_docs_tsv ON search_docs USING GIN (tsv);
DROP TABLE search_postings;
DROP TABLE store_identity;
DROP TABLE embedding_removals;
DROP INDEX embeddings_version;
ALTER TABLE embeddings DROP COLUMN version;
DROP TABLE search_stats;
DROP TABLE search_terms;
