// Package pgtest gives tests a private, empty PostgreSQL schema.
//
// The server comes from KAIZEN_TEST_POSTGRES (a postgres:// URL), else the
// local server at 127.0.0.1:5432 (database "test", user "postgres") when it
// answers. Without a server the test is skipped, except when the CI
// environment variable is set: CI must run the PostgreSQL tests, so there a
// missing server fails the test.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx" driver
)

const localDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

var (
	once    sync.Once
	admin   *sql.DB
	baseDSN string
	openErr error
)

func server() (*sql.DB, string, error) {
	once.Do(func() {
		baseDSN = os.Getenv("KAIZEN_TEST_POSTGRES")
		if baseDSN == "" {
			baseDSN = localDSN
		}
		admin, openErr = sql.Open("pgx", baseDSN)
		if openErr != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		openErr = admin.PingContext(ctx)
	})
	return admin, baseDSN, openErr
}

// DSN creates a fresh schema and returns a DSN whose search_path selects
// it. The schema is dropped when the test ends.
func DSN(t testing.TB) string {
	t.Helper()
	db, base, err := server()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("PostgreSQL is required in CI but unreachable at %s: %v", redact(base), err)
		}
		t.Skipf("PostgreSQL unreachable at %s (set KAIZEN_TEST_POSTGRES): %v", redact(base), err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "kt_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE SCHEMA `+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		if _, err := db.ExecContext(context.Background(), `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse KAIZEN_TEST_POSTGRES: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(unparsable DSN)"
	}
	return u.Redacted()
}
