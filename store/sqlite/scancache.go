package sqlite

import (
	"fmt"

	"github.com/kaizenhq/kaizen/store/sqlstore"
)

// scanCacheKiB is the page cache of a reader connection while it reads
// every pattern of a project (sqlstore.Dialect.ScanCache): SQLite's
// default.
const scanCacheKiB = 2 << 10

// readDialect is the dialect of read transactions: SQLite's, shrinking the
// reader's page cache (readerCacheKiB) during a scan of a project's
// patterns.
var readDialect = func() sqlstore.Dialect {
	d := sqlstore.SQLite
	d.ScanCache = [2]string{fmt.Sprintf("PRAGMA cache_size = %d", -scanCacheKiB), fmt.Sprintf("PRAGMA cache_size = %d", -readerCacheKiB)}
	return d
}()
