package spool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Lock takes the ingesters' exclusive lock, waiting for it until ctx is
// done; the returned function releases it. The lock is an advisory lock on
// a file, released by the system when its holder dies.
func (s *Spool) Lock(ctx context.Context) (func(), error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(s.dir, lockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	wait := time.Millisecond
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("spool: lock: %w", err)
		}
		if ok {
			return func() { unlock(f); f.Close() }, nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, fmt.Errorf("spool: another process is ingesting: %w", ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}
