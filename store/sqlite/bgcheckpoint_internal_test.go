package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// The writer does not checkpoint inside its commits (only as a backstop);
// after checkpointEvery committed groups the checkpointer copies the whole
// log into the database in the background, and the data stays readable.
func TestBackgroundCheckpoint(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "kaizen.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var auto int
	if err := s.writer.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&auto); err != nil {
		t.Fatal(err)
	}
	if auto != writerAutoCheckpoint {
		t.Fatalf("writer wal_autocheckpoint = %d, want %d", auto, writerAutoCheckpoint)
	}
	// Set before any commit: the checkpointer reads it after a kick, which
	// happens after these writes (channel send).
	results := make(chan checkpointResult, 16)
	s.onCheckpoint = func(r checkpointResult) { results <- r }

	at := time.UnixMicro(1_700_000_000_000_000).UTC()
	for i := range checkpointEvery {
		if s.Stats().Checkpoints != 0 {
			t.Fatalf("checkpoint after %d groups, want none before %d", i, checkpointEvery)
		}
		err := s.Update(ctx, func(tx store.Tx) error {
			_, err := tx.InsertOutcome(ctx, learning.Outcome{Project: "p", ID: fmt.Sprintf("o%02d", i),
				TaskID: fmt.Sprintf("t%02d", i), Timestamp: at, RecordedAt: at})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	r := <-results // the writer kicks after its checkpointEvery-th group
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.logFrames == 0 || r.checkpointed != r.logFrames || r.busy != 0 {
		t.Fatalf("checkpoint: busy %d, %d of %d frames copied; want every frame of a non-empty log", r.busy, r.checkpointed, r.logFrames)
	}
	if got := s.Stats().Checkpoints; got != 1 {
		t.Fatalf("Stats().Checkpoints = %d, want 1", got)
	}
	var n int64
	err = s.View(ctx, func(tx store.Tx) error {
		var err error
		n, err = tx.CountOutcomes(ctx, "p", store.OutcomeFilter{})
		return err
	})
	if err != nil || n != checkpointEvery {
		t.Fatalf("outcomes after the checkpoint: %d (%v), want %d", n, err, checkpointEvery)
	}
}
