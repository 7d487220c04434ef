package postgres_test

import (
	"context"
	"testing"

	"github.com/kaizenhq/kaizen/internal/pgtest"
	"github.com/kaizenhq/kaizen/store/postgres"
	"github.com/kaizenhq/kaizen/store/sqlstore"
	"github.com/kaizenhq/kaizen/store/storetest"
)

func TestFullTextStatistics(t *testing.T) {
	s, err := postgres.Open(context.Background(), pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.SQLFullTextStatistics(t, s, s.DB(), sqlstore.Postgres)
}

// The migration that introduced the statistics and the postings fills them
// from the documents of a database written before it.
func TestFullTextStatisticsMigration(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	s, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	storetest.FullTextWorkload(t, s)
	for _, q := range []string{`DELETE FROM search_terms`, `DELETE FROM search_stats`, `DELETE FROM search_postings`,
		`DELETE FROM goose_db_version WHERE version_id = 6`} {
		if _, err := s.DB().ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if s, err = postgres.Open(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.SQLFullTextMigrated(t, s, s.DB(), sqlstore.Postgres)
}
