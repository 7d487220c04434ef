package kaizen_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/pgtest"
)

// clock is a settable clock shared by an engine and its test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

var start = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

type bundle struct {
	e     *kaizen.Engine
	clock *clock
	cfg   kaizen.Config
}

// backends lists the stores every engine test runs on.
var backends = []string{"memory", "sqlite", "postgres"}

func dsnFor(t testing.TB, backend string) string {
	switch backend {
	case "memory":
		return "memory"
	case "sqlite":
		return filepath.Join(t.TempDir(), "kaizen.db")
	default:
		return pgtest.DSN(t)
	}
}

func setup(t testing.TB, backend string, tweak ...func(*kaizen.Config)) *bundle {
	t.Helper()
	c := &clock{t: start}
	cfg := kaizen.DefaultConfig()
	cfg.Home = t.TempDir()
	cfg.DB = dsnFor(t, backend)
	cfg.Project = "proj"
	cfg.Now = c.Now
	for _, f := range tweak {
		f(&cfg)
	}
	e, err := kaizen.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return &bundle{e: e, clock: c, cfg: cfg}
}

func ptr[T any](v T) *T { return &v }

// outcome builds a valid outcome input for a task.
func outcome(task string, success bool, patterns ...string) kaizen.OutcomeInput {
	return kaizen.OutcomeInput{TaskID: task, DurationMs: ptr(int64(120_000)), ErrorCount: ptr(0), RetryCount: ptr(0),
		Success: ptr(success), Patterns: patterns}
}

func forEachBackend(t *testing.T, f func(t *testing.T, backend string)) {
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			f(t, b)
		})
	}
}

var ctx = context.Background()

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }

func asError(err error, target **kaizen.Error) bool { return errors.As(err, target) }
