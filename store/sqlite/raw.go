package sqlite

// DSN is the data source name the backend's writer uses for the database
// file at path: the same driver settings (WAL, synchronous=FULL, busy
// timeout, immediate transactions). `kaizen bench --compare-raw` opens a
// separate file with it to measure the driver's own ceiling at the same
// durability.
func DSN(path string) string {
	return dsn(path, Options{BusyTimeoutMs: 10_000}, "immediate", false)
}

// Durability describes when an Update is acknowledged, for reports.
func (s *Store) Durability() string {
	if s.opts.Ephemeral {
		return "WAL, synchronous=OFF (ephemeral store: commits are not synced)"
	}
	return "WAL, synchronous=FULL: acknowledged after the commit is fsynced"
}
