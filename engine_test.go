package kaizen_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/testkit"
)

// bundle is an engine on a throwaway store with its clock (see
// internal/testkit).
type bundle struct {
	e     *kaizen.Engine
	clock *testkit.Clock
	cfg   kaizen.Config
}

var start = testkit.Start

// backends lists the stores every engine test runs on.
var backends = testkit.Backends

func dsnFor(t testing.TB, backend string) string { return testkit.DSN(t, backend) }

func setup(t testing.TB, backend string, tweak ...func(*kaizen.Config)) *bundle {
	t.Helper()
	b := testkit.Open(t, backend, tweak...)
	return &bundle{e: b.E, clock: b.Clock, cfg: b.Cfg}
}

func ptr[T any](v T) *T { return &v }

// outcome builds a valid outcome input for a task.
func outcome(task string, success bool, patterns ...string) kaizen.OutcomeInput {
	return kaizen.OutcomeInput{TaskID: task, DurationMs: ptr(int64(120_000)), ErrorCount: ptr(0), RetryCount: ptr(0),
		Success: ptr(success), Patterns: patterns}
}

func forEachBackend(t *testing.T, f func(t *testing.T, backend string)) { testkit.ForEachBackend(t, f) }

var ctx = context.Background()

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }

func asError(err error, target **kaizen.Error) bool { return errors.As(err, target) }
