package store

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
)

// SnapshotLocator names the database selected by db (see [Location]) in
// the header of a snapshot file the engine keeps beside it (vector indexes,
// pattern caches), so that a file is never applied to another database:
// "sqlite:" and the absolute path of a SQLite file; "postgres:sha256:" and
// a hash of a PostgreSQL DSN, which may carry a password and must not be
// written to disk in clear. Its backend is "memory" for an in-memory store,
// which keeps no snapshots.
func SnapshotLocator(db, home string) (backend, locator string) {
	backend, where := Location(db, home)
	switch backend {
	case "memory":
		return backend, ""
	case "sqlite":
		if abs, err := filepath.Abs(where); err == nil {
			where = abs
		}
		return backend, backend + ":" + where
	}
	sum := sha256.Sum256([]byte(where))
	return backend, backend + ":sha256:" + hex.EncodeToString(sum[:])
}
