package sqlstore

import (
	"context"
	"fmt"
)

// withScanCache runs scan, a read of every row of a project's patterns,
// with the connection's page cache shrunk (Dialect.ScanCache). Such a read
// touches each page of the table once, in the order of its ids (time
// ordered), so a small cache costs no extra reads; the large cache of a
// SQLite reader connection kept every page and grew the process by about
// 120 MiB for 100,000 patterns, memory that a new process loading plan
// guidance then held for its life (issue 17). The cache is restored after
// the read, failed or not.
func (t *Tx) withScanCache(ctx context.Context, scan func() error) (err error) {
	if t.d.ScanCache[0] == "" {
		return scan()
	}
	if _, err := t.exec(ctx, t.d.ScanCache[0]); err != nil {
		return fmt.Errorf("shrink the page cache for a scan: %w", err)
	}
	defer func() {
		if _, rerr := t.exec(context.WithoutCancel(ctx), t.d.ScanCache[1]); rerr != nil && err == nil {
			err = fmt.Errorf("restore the page cache after a scan: %w", rerr)
		}
	}()
	return scan()
}
