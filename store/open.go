package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// A Driver opens a backend at a location: a file path for SQLite, a DSN
// for PostgreSQL, nothing for an ephemeral store.
type Driver func(ctx context.Context, location string) (Store, error)

var (
	driversMu sync.RWMutex
	drivers   = map[string]Driver{}
)

// Register makes a backend available to [Open] under a name ("sqlite",
// "memory", "postgres"). Backends register themselves when their package
// is imported (store/sqlite, store/postgres, or both through store/all), so
// that programs which only talk to a daemon link no database driver.
// Registering a name twice panics, as database/sql does.
func Register(name string, d Driver) {
	driversMu.Lock()
	defer driversMu.Unlock()
	if d == nil {
		panic("store: Register driver is nil")
	}
	if _, dup := drivers[name]; dup {
		panic("store: Register called twice for driver " + name)
	}
	drivers[name] = d
}

// Drivers lists the registered backend names, sorted.
func Drivers() []string {
	driversMu.RLock()
	defer driversMu.RUnlock()
	names := make([]string, 0, len(drivers))
	for n := range drivers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Location reads a store selector (the db setting): the backend name and
// where its data is. "" or a file path (optionally prefixed "sqlite:" or
// "sqlite://") is SQLite, by default at home/kaizen.db; "postgres://…" and
// "postgresql://…" are PostgreSQL; "memory" is an ephemeral SQLite
// database deleted on close.
func Location(db, home string) (backend, where string) {
	switch {
	case db == "memory" || db == "memory:":
		return "memory", ""
	case strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://"):
		return "postgres", db
	}
	path := strings.TrimPrefix(strings.TrimPrefix(db, "sqlite://"), "sqlite:")
	if path == "" {
		path = filepath.Join(home, "kaizen.db")
	}
	return "sqlite", path
}

// ErrNoDriver: the selected backend is not linked into the program.
var ErrNoDriver = fmt.Errorf("store driver not registered")

// ErrMisconfigured is wrapped by a driver's Open when the database is
// reachable but cannot hold kaizen's tables as configured (for example a
// PostgreSQL search_path that names no existing schema): a configuration
// error for the user to fix, not a fault of the server.
var ErrMisconfigured = errors.New("database misconfigured")

// Open opens the store selected by db (see [Location]).
func Open(ctx context.Context, db, home string) (Store, error) {
	backend, where := Location(db, home)
	driversMu.RLock()
	d := drivers[backend]
	driversMu.RUnlock()
	if d == nil {
		return nil, fmt.Errorf("%w: %q (import github.com/kaizenhq/kaizen/store/all, or store/sqlite or store/postgres)",
			ErrNoDriver, backend)
	}
	return d(ctx, where)
}
