-- +goose Up
-- A criterion's aggregate is its row in criteria plus the sum of its shard
-- rows here: concurrent transactions add feedback events to different
-- shards (SELECT … FOR UPDATE SKIP LOCKED) instead of queueing on the one
-- criterion row. Each shard holds decayed sums like the criterion's (value
-- at its own newest event time) with the half-life they were decayed with,
-- so folding them on read is the seed's formula exactly. Every criterion
-- has all its shard rows from creation on: a transaction that must see the
-- whole aggregate locks them all, and no shard appears behind its back.
CREATE TABLE criterion_shards (
    project        TEXT COLLATE "C" NOT NULL,
    name           TEXT COLLATE "C" NOT NULL,
    shard          SMALLINT NOT NULL,
    helpful_sum    DOUBLE PRECISION NOT NULL,
    helpful_ref    BIGINT,
    harmful_sum    DOUBLE PRECISION NOT NULL,
    harmful_ref    BIGINT,
    helpful_count  BIGINT NOT NULL,
    harmful_count  BIGINT NOT NULL,
    neutral_count  BIGINT NOT NULL,
    last_validated BIGINT,
    updated_at     BIGINT,
    half_life_days DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (project, name, shard)
);
INSERT INTO criterion_shards (project, name, shard, helpful_sum, harmful_sum, helpful_count, harmful_count,
    neutral_count, half_life_days)
SELECT c.project, c.name, s, 0, 0, 0, 0, 0, 0 FROM criteria c, generate_series(0, 15) s;

-- +goose Down
DROP TABLE criterion_shards;
