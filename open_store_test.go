package kaizen_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/pgtest"
)

// A --db that is reachable but misconfigured (a PostgreSQL search_path
// naming no existing schema) is the user's error to fix: kaizen.Open
// answers invalid_input with a hint, not internal.
func TestOpenMisconfiguredDatabase(t *testing.T) {
	u, err := url.Parse(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", q.Get("search_path")+"_missing")
	u.RawQuery = q.Encode()
	cfg := kaizen.DefaultConfig()
	cfg.DB, cfg.Home = u.String(), t.TempDir()
	e, err := kaizen.Open(context.Background(), cfg)
	if err == nil {
		e.Close()
		t.Fatal("opened")
	}
	var ke *kaizen.Error
	if kaizen.KindOf(err) != kaizen.KindInvalid || !asError(err, &ke) || ke.Hint == "" {
		t.Fatalf("error %v (kind %s): want invalid input with a hint", err, kaizen.KindOf(err))
	}
}
