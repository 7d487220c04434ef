package kaizen_test

import (
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/testkit"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/sqlite"
)

// [store] aggregates = "idle", the default (store/sqlite/behind.go): a
// group of recordings leaves its aggregates staged; the writer, finding
// nothing else to do, writes them, so another process reading the file sees
// them without this one reading or writing again; and Close leaves no
// journal to replay.

// fileState reads the file as another process would: the journal's
// entries and the maturity events of the project's patterns.
func fileState(t *testing.T, db string) (journal, events int64) {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+db+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.QueryRowContext(ctx, `SELECT COUNT(*) FROM aggregate_journal`).Scan(&journal); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRowContext(ctx, `SELECT COALESCE(SUM(helpful_count + harmful_count + neutral_count), 0)
		FROM maturity WHERE project = 'proj'`).Scan(&events); err != nil {
		t.Fatal(err)
	}
	return journal, events
}

// burst records n outcomes that all wait behind one write holding the
// writer, so that they reach it together after that write's group.
func burst(t *testing.T, st *sqlite.Store, record func(i int) error, n int) {
	t.Helper()
	var wg sync.WaitGroup
	hold := make(chan error, 1)
	held, once := make(chan struct{}), sync.Once{}
	go func() {
		hold <- st.Update(ctx, func(store.Tx) error {
			once.Do(func() { close(held) })
			// the writer is held here until the n recordings wait for it
			for st.Stats().Waiting < int64(n) {
				time.Sleep(time.Millisecond)
			}
			// and past the join window (5 ms): none of them joins this
			// group, whatever the machine's speed
			time.Sleep(20 * time.Millisecond)
			return nil
		})
	}()
	<-held // the recordings start once the writer is held, so none joins its group
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- record(i)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := <-hold; err != nil {
		t.Fatal(err)
	}
}

// burstEngine opens an engine with the aggregates setting mode on a new
// file and records a first outcome, so that the pattern exists before any
// burst (its creation is written inline); record(round)(i) records the
// i-th outcome of a burst.
func burstEngine(t *testing.T, mode string) (db string, c *testkit.Clock, e *kaizen.Engine, st *sqlite.Store, record func(round int) func(i int) error) {
	t.Helper()
	c = testkit.NewClock(testkit.Start)
	db = filepath.Join(t.TempDir(), "kaizen.db")
	e = behindEngine(t, db, c, mode)
	st = e.Store().(*sqlite.Store)
	record = func(round int) func(i int) error {
		return func(i int) error {
			_, err := e.RecordOutcome(ctx, outcome(sprintf("bd-%d-%d", round, i), true, "Split by feature"))
			return err
		}
	}
	if err := record(0)(0); err != nil {
		t.Fatal(err)
	}
	return db, c, e, st, record
}

func TestAggregatesIdleWritesWhenIdle(t *testing.T) {
	t.Parallel()
	db, c, e, st, record := burstEngine(t, "idle")
	const n = 12
	flushes := st.Stats().IdleFlushes
	burst(t, st, record(1), n)
	if s := st.Stats(); s.Behind < 2 {
		t.Fatalf("%d groups committed behind, want the first outcome's and the burst's: %+v", s.Behind, s)
	}
	// Nothing more is asked of this engine: its writer writes the staged
	// aggregates on its own. (The wait below is a hang guard, not a time
	// the test depends on.)
	guard := time.Now().Add(2 * time.Minute)
	for {
		journal, events := fileState(t, db)
		if journal == 0 && events == 1+n {
			break
		}
		if time.Now().After(guard) {
			t.Fatalf("another reader still sees %d journal entries and %d maturity events, want 0 and %d", journal, events, 1+n)
		}
		time.Sleep(time.Millisecond)
	}
	if st.Stats().IdleFlushes == flushes {
		t.Fatal("no idle flush counted")
	}
	// A second burst, then Close at once: the journal is empty afterwards
	// (written by the idle flush or by Close), so the next open replays
	// nothing.
	burst(t, st, record(2), n)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if journal, events := fileState(t, db); journal != 0 || events != 1+2*n {
		t.Fatalf("after Close another reader sees %d journal entries and %d maturity events, want 0 and %d", journal, events, 1+2*n)
	}
	e = behindEngine(t, db, c, "idle")
	defer e.Close()
	if s := writerStats(e); s.Replayed != 0 {
		t.Errorf("the reopen replayed %d journal entries, want none", s.Replayed)
	}
	d, err := e.GetPattern(ctx, "", "Split by feature")
	if err != nil {
		t.Fatal(err)
	}
	if d.Observations() != 1+2*n {
		t.Errorf("%d observations, want %d", d.Observations(), 1+2*n)
	}
}

// The control: with "behind" the same burst leaves its aggregates staged
// while the engine sits idle, and Close leaves them in the journal.
func TestAggregatesBehindStaysStagedWhenIdle(t *testing.T) {
	t.Parallel()
	db, _, e, st, record := burstEngine(t, "behind")
	const n = 12
	burst(t, st, record(1), n)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if journal, _ := fileState(t, db); journal == 0 {
		t.Fatal("behind: Close left no journal entry: the control does not exercise the path")
	}
	if s := st.Stats(); s.IdleFlushes != 0 {
		t.Fatalf("behind: %d idle flushes, want none", s.IdleFlushes)
	}
}

func TestStoreAggregatesConfig(t *testing.T) {
	for _, v := range []string{"", "idle", "inline", "behind"} {
		if err := (kaizen.StoreConfig{Aggregates: v}).Validate(); err != nil {
			t.Errorf("%q: %v", v, err)
		}
	}
	err := kaizen.StoreConfig{Aggregates: "later"}.Validate()
	var ke *kaizen.Error
	if !errors.As(err, &ke) || ke.Kind != kaizen.KindInvalid || ke.Field != "store.aggregates" {
		t.Fatalf("\"later\": %v, want an invalid store.aggregates", err)
	}
	// the engine's default is "idle" on SQLite
	e := behindEngine(t, filepath.Join(t.TempDir(), "kaizen.db"), testkit.NewClock(testkit.Start), "")
	defer e.Close()
	if _, err := e.RecordOutcome(ctx, outcome("bd-1", true, "Split by feature")); err != nil {
		t.Fatal(err)
	}
	if s := writerStats(e); s.Behind == 0 {
		t.Errorf("default: no group committed behind: %+v", s)
	}
}
