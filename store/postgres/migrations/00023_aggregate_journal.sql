-- +goose Up
-- SQLite's journal of outcomes whose aggregates are applied behind their
-- commit ([store] aggregates = "behind", store/sqlite/behind.go).
-- PostgreSQL writes every outcome's aggregates in its commit: nothing to
-- add here; the file keeps the backends' migration versions aligned.
SELECT 1;

-- +goose Down
SELECT 1;
