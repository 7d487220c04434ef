package store

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestSnapshotLocatorKeepsNoPassword(t *testing.T) {
	const dsn = "postgres://kaizen:s3cret-pass@db.internal:5432/kaizen?sslmode=require"
	backend, loc := SnapshotLocator(dsn, "/home/x")
	if backend != "postgres" || strings.Contains(loc, "s3cret") || strings.Contains(loc, "db.internal") ||
		!strings.HasPrefix(loc, "postgres:sha256:") {
		t.Fatalf("SnapshotLocator(dsn) = %q, %q: want a hash of the DSN", backend, loc)
	}
	if _, other := SnapshotLocator(strings.Replace(dsn, "/kaizen?", "/other?", 1), "/home/x"); other == loc {
		t.Fatalf("two databases share the locator %q", loc)
	}
	backend, loc = SnapshotLocator("", "rel/home")
	want, _ := filepath.Abs(filepath.Join("rel/home", "kaizen.db"))
	if backend != "sqlite" || loc != "sqlite:"+want {
		t.Fatalf("SnapshotLocator(default) = %q, %q, want sqlite:%s", backend, loc, want)
	}
	if backend, loc = SnapshotLocator("memory", ""); backend != "memory" || loc != "" {
		t.Fatalf("SnapshotLocator(memory) = %q, %q", backend, loc)
	}
}
