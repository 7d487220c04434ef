package hook_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/hook"
	"github.com/kaizenhq/kaizen/hook/spool"
)

// spoolFixture parses a fixture and spools it as a hook would.
func spoolFixture(t *testing.T, sp *spool.Spool, c hook.Client, file string, at time.Time) hook.Record {
	t.Helper()
	data := fixture(t, c, file)
	ev, err := hook.Parse(c, eventName(file), data)
	if err != nil {
		t.Fatal(err)
	}
	r := hook.NewRecord(ev, hook.EventID(c, eventName(file), data), "webapp", at)
	if _, err := hook.Append(sp, r, at); err != nil {
		t.Fatal(err)
	}
	return r
}

// The spool is ingested in order and once: the same payload delivered
// twice (two installed scopes) counts once, a re-ingestion after a crash
// changes nothing, an invalid event is set aside without blocking the
// others, and a session that ends gets its inferred outcome.
func TestIngestInOrderAndOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	home := t.TempDir()
	sp := spool.Open(home)
	g := &hook.Ingester{Spool: sp, Handler: hook.EngineHandler(b.e, time.Hour)}
	at := b.now
	next := func() time.Time { at = at.Add(time.Minute); return at }
	var recs []hook.Record
	for _, f := range []string{"SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure"} {
		recs = append(recs, spoolFixture(t, sp, hook.Claude, f, next()))
	}
	// the duplicate of the failure arrives 2 s after it (both scopes installed)
	dup := recs[3]
	dup.At = recs[3].At.Add(2 * time.Second)
	if _, err := hook.Append(sp, dup, at.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	// an event that can never be recorded: an unknown signal
	bad := recs[2]
	bad.ID, bad.Event.Signal = "evbad", "telepathy"
	if _, err := hook.Append(sp, bad, at.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	spoolFixture(t, sp, hook.Claude, "SessionEnd", next())
	b.advance(time.Hour)

	st, err := g.All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Recorded != 6 || st.Rejected != 1 {
		t.Errorf("stats %+v, want 6 recorded (the duplicate included) and 1 rejected", st)
	}
	task, err := b.e.GetTask(context.Background(), "webapp", recs[0].Event.TaskID())
	if err != nil {
		t.Fatal(err)
	}
	if task.Prompts != 1 || task.ToolCalls != 2 || task.ToolFailures != 1 || task.ErrorCount != 1 || task.EndedAt == nil {
		t.Errorf("task after ingestion %+v", task)
	}
	outs, err := b.e.ListOutcomes(context.Background(), kaizen.OutcomeQuery{Project: "webapp", TaskID: task.ID})
	if err != nil || outs.Total != 1 || !outs.Items[0].Inferred || outs.Items[0].Success {
		t.Fatalf("outcome of the ended session: %+v %v", outs, err)
	}
	if s, _ := sp.Stat(); s.Pending != 0 || s.Rejected != 1 {
		t.Errorf("spool after ingestion %+v", s)
	}
	// a crash between recording and removing: the events come back
	for _, r := range recs[1:4] {
		if _, err := hook.Append(sp, r, at.Add(3*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := g.All(context.Background()); err != nil {
		t.Fatal(err)
	}
	again, _ := b.e.GetTask(context.Background(), "webapp", task.ID)
	if again.Prompts != 1 || again.ToolCalls != 2 || again.ErrorCount != 1 {
		t.Errorf("re-ingested events counted again: %+v", again)
	}
}

// An event the store cannot take now (a cancelled or busy store) stays in
// the spool, and the session's later events wait behind it.
func TestIngestKeepsOrderOnTransientErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sp := spool.Open(t.TempDir())
	at := b.now
	spoolFixture(t, sp, hook.Claude, "SessionStart", at)
	spoolFixture(t, sp, hook.Claude, "UserPromptSubmit", at.Add(time.Minute))
	g := &hook.Ingester{Spool: sp, Handler: hook.EngineHandler(b.e, 0)}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.All(ctx); err == nil {
		t.Fatal("a cancelled ingestion reported no error")
	}
	if s, _ := sp.Stat(); s.Pending != 2 {
		t.Fatalf("pending after a failed ingestion: %+v", s)
	}
	b.advance(2 * time.Minute)
	if st, err := g.All(context.Background()); err != nil || st.Recorded != 2 {
		t.Fatalf("retry: %+v %v", st, err)
	}
}

// Ingesters take turns on the spool's lock; a waiting one gives up at its
// deadline.
func TestSpoolLock(t *testing.T) {
	t.Parallel()
	sp := spool.Open(t.TempDir())
	unlock, err := sp.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := sp.Lock(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a second lock while held: %v", err)
	}
	unlock()
	again, err := sp.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	again()
}

// Spool entries are listed in arrival order, never half written, and
// invalid names are refused.
func TestSpoolEntries(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	sp := spool.Open(home)
	t0 := time.Unix(1_800_000_000, 0)
	for i, id := range []string{"evb", "eva", "evc"} {
		if _, err := sp.Append("claude-s1", id, []byte(`{}`), t0.Add(time.Duration(i))); err != nil {
			t.Fatal(err)
		}
	}
	// an appender that died mid-write leaves a dot file: not an entry
	if err := os.WriteFile(filepath.Join(home, spool.Dir, "claude-s1", ".tmp-123"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	es, err := sp.Pending("claude-s1")
	if err != nil || len(es) != 3 || es[0].ID() != "evb" || es[1].ID() != "eva" || es[2].ID() != "evc" {
		t.Fatalf("pending %+v %v", es, err)
	}
	for _, bad := range [][2]string{{"../x", "ev1"}, {"claude-s1", "ev-1"}, {"rejected", "ev1"}, {"", "ev1"}} {
		if _, err := sp.Append(bad[0], bad[1], nil, t0); err == nil {
			t.Errorf("Append(%q, %q) accepted", bad[0], bad[1])
		}
	}
	if k := spool.SessionKey("claude-../../etc/passwd"); k != "claude-.._.._etc_passwd" {
		t.Errorf("session key %q", k)
	}
	for _, e := range es {
		if err := sp.Remove(e); err != nil {
			t.Fatal(err)
		}
	}
	sp.CleanTemp(0, time.Now().Add(time.Hour))
	if _, err := os.Stat(filepath.Join(home, spool.Dir, "claude-s1")); !os.IsNotExist(err) {
		t.Errorf("the drained session's directory remains: %v", err)
	}
}
