-- +goose Up
-- PostgreSQL spreads each criterion over shard rows (criterion_shards) so
-- that concurrent writers do not queue on it. SQLite has one writer, which
-- coalesces a commit group's criterion updates into one write per row
-- instead: nothing to add here; the file keeps the backends' migration
-- versions aligned.
SELECT 1;

-- +goose Down
SELECT 1;
