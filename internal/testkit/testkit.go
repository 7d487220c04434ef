// Package testkit is what kaizen's tests share: a settable clock, an engine
// on a throwaway store of any backend with that clock (a bundle), and a
// polling helper that waits for an effect without measuring speed. Tests
// of every surface use it instead of copies of their own.
package testkit

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/pgtest"
	_ "github.com/kaizenhq/kaizen/store/all" // tests open SQLite and PostgreSQL stores
)

// Start is the instant every test clock starts at.
var Start = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

// Clock is a settable clock, safe for concurrent use, shared by an engine
// and its test.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// Backends lists the storage backends every engine test runs on.
var Backends = []string{"sqlite", "postgres"}

// DSN returns a fresh store location for a backend: "memory" (an
// ephemeral SQLite database), "sqlite" (a file in a temporary directory)
// or "postgres" (a private schema; see package pgtest).
func DSN(t testing.TB, backend string) string {
	switch backend {
	case "memory":
		return "memory"
	case "sqlite":
		return filepath.Join(t.TempDir(), "kaizen.db")
	case "postgres":
		return pgtest.DSN(t)
	}
	t.Fatalf("unknown backend %q", backend)
	return ""
}

// Bundle is an engine on a throwaway store, with its settable clock and
// its configuration.
type Bundle struct {
	E     *kaizen.Engine
	Clock *Clock
	Cfg   kaizen.Config
}

// Open opens an engine on a fresh store of the backend, in project
// "proj", with a clock at Start; tweaks adjust the configuration first.
// The engine is closed when the test ends.
func Open(t testing.TB, backend string, tweaks ...func(*kaizen.Config)) *Bundle {
	t.Helper()
	c := NewClock(Start)
	cfg := kaizen.DefaultConfig()
	cfg.Home = t.TempDir()
	cfg.DB = DSN(t, backend)
	cfg.Project = "proj"
	cfg.Now = c.Now
	for _, f := range tweaks {
		f(&cfg)
	}
	e, err := kaizen.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return &Bundle{E: e, Clock: c, Cfg: cfg}
}

// ForEachBackend runs f as a parallel subtest per backend.
func ForEachBackend(t *testing.T, f func(t *testing.T, backend string)) {
	for _, b := range Backends {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			f(t, b)
		})
	}
}

// Patience is how long a test waits for an effect that travels
// asynchronously (an event on a stream, a notification, a child process
// starting) before it gives up: long, because loaded CI machines are slow.
// It bounds a wait; it never measures speed.
const Patience = time.Minute

// Eventually polls cond until it holds, failing the test after a generous
// deadline (a minute: loaded CI machines are slow). It waits for an effect
// that travels asynchronously; it never measures speed.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(Patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
