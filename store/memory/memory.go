// Package memory is kaizen's in-memory storage backend: every record lives
// in Go maps, nothing is persisted, and a process exit forgets everything.
// It serves tests, the simulator and programs that embed the library
// without wanting a database file.
//
// Transactions are serialised by a read-write mutex: Update holds the write
// lock for its whole duration (so it is exclusive, and LockPattern and
// LockCriterion need no locks of their own), View holds the read lock
// (concurrent Views share it and see no Update half done). Each mutation
// made through an Update records in an undo log how to reverse itself;
// when fn returns an error or panics, the log runs backwards and the store
// is exactly as it was. Records are deep-copied on the way in and on the way
// out, so a caller can never reach stored state through a slice or pointer.
package memory

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// Errors of this backend beyond the store's own.
var (
	// ErrReadOnly is returned by a write attempted inside View.
	ErrReadOnly = errors.New("memory: write in a read-only transaction (use Update)")
	// ErrTxDone is returned by a Tx used after its Update or View returned.
	ErrTxDone = errors.New("memory: transaction has already ended")
)

// Store is the in-memory backend. The zero value is not usable; call New.
type Store struct {
	id       string // StoreID: random, per instance
	mu       sync.RWMutex
	closed   bool
	meta     map[string]string
	projects map[string]*project
}

var _ store.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	return &Store{id: fmt.Sprintf("memory-%016x%016x", rand.Uint64(), rand.Uint64()), meta: map[string]string{},
		projects: map[string]*project{}}
}

// Backend implements store.Store.
func (s *Store) Backend() string { return "memory" }

// Update implements store.Store. It holds the store's write lock while fn
// runs, commits when fn returns nil and rolls every write back otherwise
// (also when fn panics, before the panic continues). A context cancelled
// before the commit also rolls back, and Update returns its error.
func (s *Store) Update(ctx context.Context, fn func(store.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return store.ErrClosed
	}
	t := &tx{s: s, undo: &undoLog{}}
	committed := false
	defer func() {
		t.done.Store(true)
		if !committed {
			t.undo.rollback()
		}
	}()
	if err := fn(t); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	t.stampVersions()
	committed = true
	return nil
}

// View implements store.Store. Writes inside fn fail with ErrReadOnly.
func (s *Store) View(ctx context.Context, fn func(store.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return store.ErrClosed
	}
	t := &tx{s: s}
	defer t.done.Store(true)
	return fn(t)
}

// Close implements store.Store: it waits for running transactions, drops
// every record, and makes further calls (Close included) return
// store.ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return store.ErrClosed
	}
	s.closed = true
	s.meta, s.projects = nil, nil
	return nil
}

// project holds one project's records, keyed by id (criteria by name,
// maturity by pattern id), with secondary indexes for the keyed listings.
type project struct {
	outcomes map[string]*learning.Outcome

	criteria map[string]*learning.Criterion

	patterns map[string]*learning.Pattern
	// patternByKey maps the content key of every kind="pattern" pattern to
	// its id: the content uniqueness constraint.
	patternByKey map[string]string
	// patternsByKey indexes every pattern, of any kind, by content key.
	patternsByKey index

	maturity                  map[string]*learning.Maturity
	maturityFeedback          map[string]*learning.MaturityFeedback
	maturityFeedbackByPattern index

	errors       map[string]*learning.ErrorEntry
	errorsByTask index

	tasks   map[string]*learning.Task
	explore map[string]*store.ExploreSession

	// version is the project's pattern version (store.PatternVersion);
	// patternVersion the version at which each pattern last changed.
	version, resetVersion int64
	patternVersion        map[string]int64

	// exp holds the experience system's records (experience.go).
	exp *experienceData
}

func newProject() *project {
	return &project{
		outcomes:                  map[string]*learning.Outcome{},
		criteria:                  map[string]*learning.Criterion{},
		patterns:                  map[string]*learning.Pattern{},
		patternByKey:              map[string]string{},
		patternsByKey:             index{},
		maturity:                  map[string]*learning.Maturity{},
		maturityFeedback:          map[string]*learning.MaturityFeedback{},
		maturityFeedbackByPattern: index{},
		errors:                    map[string]*learning.ErrorEntry{},
		errorsByTask:              index{},
		tasks:                     map[string]*learning.Task{},
		explore:                   map[string]*store.ExploreSession{},
		patternVersion:            map[string]int64{},
		exp:                       newExperienceData(),
	}
}

// listed reports whether the project holds a record that makes
// MetaStorage.Projects list it.
func (p *project) listed() bool {
	return len(p.outcomes)+len(p.patterns)+len(p.criteria)+len(p.errors)+len(p.tasks)+len(p.explore) > 0 ||
		p.exp.listed()
}

// tx is the store.Tx of one Update (undo != nil) or View (undo == nil).
type tx struct {
	s    *Store
	undo *undoLog
	done atomic.Bool

	touched map[string]map[string]bool // project → patterns changed
	resets  map[string]bool            // projects with a deleted pattern
}

// touch records a change of a pattern or its maturity record, stamped with
// a new pattern version when the Update commits.
func (t *tx) touch(project, id string, reset bool) {
	if t.touched == nil {
		t.touched, t.resets = map[string]map[string]bool{}, map[string]bool{}
	}
	if t.touched[project] == nil {
		t.touched[project] = map[string]bool{}
	}
	t.touched[project][id] = true
	t.resets[project] = t.resets[project] || reset
}

// stampVersions advances the pattern version of every project this Update
// changed; it runs at commit, after which nothing is undone.
func (t *tx) stampVersions() {
	for name, ids := range t.touched {
		p := t.s.projects[name]
		if p == nil {
			continue
		}
		p.version++
		if t.resets[name] {
			p.resetVersion = p.version
		}
		for id := range ids {
			if _, ok := p.patterns[id]; ok {
				p.patternVersion[id] = p.version
			} else {
				delete(p.patternVersion, id)
			}
		}
	}
}

var _ store.Tx = (*tx)(nil)

// read checks that the transaction is usable and returns the project's
// records, nil when the project holds none.
func (t *tx) read(ctx context.Context, project string) (*project, error) {
	if err := t.alive(ctx); err != nil {
		return nil, err
	}
	return t.s.projects[project], nil
}

// write checks that the transaction may write and returns the project's
// records, creating them (undoably) on first use.
func (t *tx) write(ctx context.Context, name string) (*project, error) {
	if err := t.writable(ctx); err != nil {
		return nil, err
	}
	p := t.s.projects[name]
	if p == nil {
		p = newProject()
		put(t.undo, t.s.projects, name, p)
	}
	return p, nil
}

func (t *tx) alive(ctx context.Context) error {
	if t.done.Load() {
		return ErrTxDone
	}
	return ctx.Err()
}

func (t *tx) writable(ctx context.Context) error {
	if err := t.alive(ctx); err != nil {
		return err
	}
	if t.undo == nil {
		return ErrReadOnly
	}
	return nil
}

// notFound wraps store.ErrNotFound with what was looked for.
func notFound(kind, project, id string) error {
	return fmt.Errorf("%s %q in project %q: %w", kind, id, project, store.ErrNotFound)
}
