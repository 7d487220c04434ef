package storetest

import (
	"context"
	"database/sql"
	"testing"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/sqlstore"
)

// SQLFullTextStatistics checks the full-text statistics kept by a SQL
// backend (sqlstore): they agree with the documents after FullTextWorkload,
// a disagreement is detected, and BackfillSearchTerms repairs it. db is the
// backend's database, d its dialect.
func SQLFullTextStatistics(t *testing.T, s store.Store, db *sql.DB, d sqlstore.Dialect) {
	t.Helper()
	ctx := t.Context()
	FullTextWorkload(t, s)
	if err := sqlstore.CheckSearchStatistics(ctx, db, d); err != nil {
		t.Fatalf("after the workload: %v", err)
	}
	if _, err := db.ExecContext(ctx, `UPDATE search_terms SET docs = docs + 1 WHERE term = 'pool'`); err != nil {
		t.Fatal(err)
	}
	if err := sqlstore.CheckSearchStatistics(ctx, db, d); err == nil {
		t.Fatal("CheckSearchStatistics missed a wrong document frequency")
	}
	if err := inTx(ctx, db, func(tx *sql.Tx) error { return sqlstore.BackfillSearchTerms(ctx, tx, d) }); err != nil {
		t.Fatal(err)
	}
	if err := sqlstore.CheckSearchStatistics(ctx, db, d); err != nil {
		t.Fatalf("after BackfillSearchTerms: %v", err)
	}
}

func inTx(ctx context.Context, db *sql.DB, fn func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// SQLFullTextMigrated checks a store reopened after the statistics (and
// postings) were emptied and their migration marked as not applied: the
// migration filled them from the documents of FullTextWorkload, and search
// finds them.
func SQLFullTextMigrated(t *testing.T, s store.Store, db *sql.DB, d sqlstore.Dialect) {
	t.Helper()
	ctx := t.Context()
	if err := sqlstore.CheckSearchStatistics(ctx, db, d); err != nil {
		t.Fatalf("after the migration: %v", err)
	}
	var hits []store.TextHit
	err := s.View(ctx, func(tx store.Tx) error {
		var err error
		hits, err = tx.SearchText(ctx, "p0", experience.ItemHeuristic, []string{"pool"}, 5)
		return err
	})
	if err != nil || len(hits) == 0 {
		t.Fatalf("search after the migration: %v, %v", hits, err)
	}
}
