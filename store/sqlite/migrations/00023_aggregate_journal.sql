-- +goose Up
-- The journal of outcomes whose aggregates are applied behind their
-- commit ([store] aggregates = "behind", store/sqlite/behind.go): the
-- acknowledged commit of an outcome writes its row here; the commit that
-- writes the coalesced aggregates deletes every row. Rows left after a
-- crash are replayed, in seq order, at the next open. Empty when the
-- option is off.
CREATE TABLE aggregate_journal (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    project    TEXT    NOT NULL,
    outcome_id TEXT    NOT NULL,
    at         INTEGER NOT NULL -- Unix nanoseconds: a replay evaluates at the same instant
);

-- +goose Down
DROP TABLE aggregate_journal;
