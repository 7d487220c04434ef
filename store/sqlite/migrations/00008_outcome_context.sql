-- +goose Up
-- What a task was (its description and tags), so that plan guidance ranks
-- strategies for a new task from similar past ones, and the criteria
-- judged from evidence of their own.
ALTER TABLE outcomes ADD COLUMN task TEXT NOT NULL DEFAULT '';
ALTER TABLE outcomes ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';
ALTER TABLE outcomes ADD COLUMN criterion_scores TEXT NOT NULL DEFAULT '{}';

-- +goose Down
ALTER TABLE outcomes DROP COLUMN criterion_scores;
ALTER TABLE outcomes DROP COLUMN tags;
ALTER TABLE outcomes DROP COLUMN task;
