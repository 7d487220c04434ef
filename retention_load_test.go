package kaizen_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/testkit"
)

// TestRetentionLoad measures the database after a simulated hooked-prompt
// load (each prompt is one stored recall, as UserPromptSubmit makes), with
// recalls stored as before issue 12 (every considered item) and as now
// (injected items only), then after `kaizen gc`. Run:
//
//	KAIZEN_RETENTION_LOAD=3000 go test -run TestRetentionLoad -v .
//
// (docs/BENCHMARKS.md, "Retention").
func TestRetentionLoad(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("KAIZEN_RETENTION_LOAD"))
	if n <= 0 {
		t.Skip("set KAIZEN_RETENTION_LOAD=<prompts> to run")
	}
	for _, items := range []string{"all", "injected"} {
		home := t.TempDir()
		b := testkit.Open(t, "sqlite", func(cfg *kaizen.Config) {
			cfg.Home = home
			cfg.DB = filepath.Join(home, "kaizen.db")
			cfg.Retention.RecallItems = items
			cfg.Retention.RecallKeep = 0
			cfg.Retention.RecallMaxAge = 0
		})
		e := b.E
		for i := range 200 {
			if _, err := e.Capture(ctx, kaizen.CaptureInput{TaskID: sprintf("past-%d", i), Turns: []kaizen.TurnInput{
				{Role: "user", Content: sprintf("fix the failing %s test in package %d: the connection pool times out under load", []string{"postgres", "sqlite", "http", "cache"}[i%4], i)},
				{Role: "assistant", Content: sprintf("raised the pool size and added a retry with backoff in module %d", i)}}}); err != nil {
				t.Fatal(err)
			}
		}
		sizes := func() (int64, int64) {
			db, _ := os.Stat(b.Cfg.DB)
			wal, _ := os.Stat(b.Cfg.DB + "-wal")
			var w int64
			if wal != nil {
				w = wal.Size()
			}
			return db.Size(), w
		}
		d0, w0 := sizes()
		start := time.Now()
		for i := range n {
			if _, err := e.Recall(ctx, kaizen.RecallInput{TaskID: sprintf("session-%d", i/20),
				Query: sprintf("the %s tests time out again in package %d, what did we do last time about the connection pool?", []string{"postgres", "sqlite", "http", "cache"}[i%4], i%50)}); err != nil {
				t.Fatal(err)
			}
		}
		took := time.Since(start)
		d1, w1 := sizes()
		l1 := liveBytes(t, b.Cfg.DB)
		// gc with the default policy (compaction on), as after an upgrade
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		cfg := b.Cfg
		cfg.Retention = kaizen.DefaultRetention()
		cfg.Retention.RecallMaxAge, cfg.Retention.RecallKeep = 0, 0 // measure compaction alone
		e2, err := kaizen.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer e2.Close()
		res, err := e2.GC(ctx)
		if err != nil {
			t.Fatal(err)
		}
		d2, w2 := sizes()
		l2 := liveBytes(t, b.Cfg.DB)
		t.Logf("recall_items=%s: %d prompts in %s; before load db %.1f MB + wal %.1f MB; after load db %.1f MB (live %.1f MB) + wal %.1f MB; "+
			"after gc (compacted %d) db %.1f MB (live %.1f MB) + wal %.1f MB",
			items, n, took.Round(time.Second), mb(d0), mb(w0), mb(d1), mb(l1), mb(w1), res.RecallsCompacted, mb(d2), mb(l2), mb(w2))
	}
}

// liveBytes is the size of the database's pages in use (the file keeps
// freed pages for reuse; VACUUM would return them).
func liveBytes(t *testing.T, path string) int64 {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var pages, free, size int64
	for q, v := range map[string]*int64{"PRAGMA page_count": &pages, "PRAGMA freelist_count": &free, "PRAGMA page_size": &size} {
		if err := db.QueryRow(q).Scan(v); err != nil {
			t.Fatal(err)
		}
	}
	return (pages - free) * size
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }
