-- +goose Up
-- Retention (docs/security.md, [retention]): recalls are pruned by age
-- across projects, and a pruned recall's items are found by recall id.
CREATE INDEX recalls_age ON recalls (created_at);
CREATE INDEX recall_items_recall ON recall_items (project, recall_id);

-- +goose Down
DROP INDEX recall_items_recall;
DROP INDEX recalls_age;
