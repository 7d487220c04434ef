package store

import "context"

// WriteHint says what an Update is about to read: the outcome of one task
// of a project (its previous outcome, the tracked task and the task's
// errors). A group-commit writer may read these for all the Updates of a
// group in a few statements before running them (store/postgres); a store
// that ignores hints behaves the same, only with more round trips. A hint
// never changes what an Update sees: the reads it prefetches are dropped
// as soon as a statement of the transaction may change them.
type WriteHint struct {
	Project, TaskID string
	// Patterns are contents of patterns the Update will look up and lock
	// (store.Tx FindPatternsByContent, then LockPattern and the pattern's
	// maturity record). A content that names no pattern costs nothing.
	Patterns []string
}

type writeHintKey struct{}

// WithWriteHint returns ctx carrying h, for Store.Update.
func WithWriteHint(ctx context.Context, h WriteHint) context.Context {
	return context.WithValue(ctx, writeHintKey{}, h)
}

// WriteHintOf returns the hint carried by ctx, if any.
func WriteHintOf(ctx context.Context) (WriteHint, bool) {
	if ctx == nil {
		return WriteHint{}, false
	}
	h, ok := ctx.Value(writeHintKey{}).(WriteHint)
	return h, ok && h.Project != "" && h.TaskID != ""
}
