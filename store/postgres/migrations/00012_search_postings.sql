-- +goose Up
-- PostgreSQL has matched through search_postings since migration 5; this
-- version keeps the two drivers' migration numbers aligned (SQLite moves
-- from FTS5 to the same posting table in its 00012).
SELECT 1;

-- +goose Down
SELECT 1;
