package kaizen_test

import (
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/kaizenhq/kaizen"
	_ "github.com/kaizenhq/kaizen/store/all" // the tests open SQLite and PostgreSQL stores
	"github.com/kaizenhq/kaizen/store/sqlite"
)

// BenchmarkRecordOutcomeSQLite: durable outcomes (4 criteria, 2 patterns
// each) recorded by 16 concurrent callers on one SQLite engine.
func BenchmarkRecordOutcomeSQLite(b *testing.B) {
	cfg := kaizen.DefaultConfig()
	cfg.DB, cfg.Project, cfg.Home = filepath.Join(b.TempDir(), "k.db"), "bench", b.TempDir()
	e, err := kaizen.Open(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	patterns := []string{"Split by feature", "Respect dependency chain", "Handle shared types first", "Tests alongside implementation"}
	b.SetParallelism(8) // 16 callers on 2 CPUs
	// One task per call: a task id recorded again with the same values is
	// a no-op, which a per-goroutine counter would measure 16 times over.
	var next atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := int(next.Add(1))
			in := outcome(sprintf("bd-%d", i), i%4 != 0, patterns[i%4], patterns[(i+1)%4])
			if _, err := e.RecordOutcome(ctx, in); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "outcomes/s")
	if st, ok := e.Store().(interface{ Stats() sqlite.WriterStats }); ok {
		if s := st.Stats(); s.Batches > 0 {
			b.ReportMetric(float64(s.Requests)/float64(s.Batches), "outcomes/commit")
		}
	}
}
