// Package store defines kaizen's storage contract: a transactional [Store]
// whose [Tx] exposes the seed's storage interfaces (feedback, errors,
// patterns, maturity) plus outcomes, observations, criteria and metadata,
// and the experience system's storage ([ExperienceStorage]: turns, signals,
// heuristics, skills, recalls, embeddings and full text).
//
// Backends live in subpackages (store/memory, store/sqlite, store/postgres)
// and all pass the same conformance suite, store/storetest. The engine keeps
// every algorithm; a backend only stores and retrieves records faithfully,
// scoped by project.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/kaizenhq/kaizen/learning"
)

// Errors returned by every backend (possibly wrapped; test with errors.Is).
var (
	// ErrNotFound: the requested record does not exist in the project.
	ErrNotFound = errors.New("not found")
	// ErrClosed: the store has been closed.
	ErrClosed = errors.New("store is closed")
)

// Store is a transactional storage backend.
type Store interface {
	// Update runs fn in a read-write transaction: every write made through
	// the Tx commits together, or none does when fn returns an error (which
	// Update returns unchanged). Update returns only once the commit is
	// durable. fn may be run more than once (a backend may retry on a
	// serialization failure), so it must not have effects outside the Tx
	// other than building its own result.
	Update(ctx context.Context, fn func(Tx) error) error
	// View runs fn in a read-only transaction over a consistent snapshot.
	View(ctx context.Context, fn func(Tx) error) error
	// Backend names the implementation: "memory", "sqlite" or "postgres".
	Backend() string
	// Close releases resources. Further calls return ErrClosed.
	Close() error
}

// Tx is the set of operations available inside a transaction. Every method
// is scoped to a project: nothing in one project is visible from another.
// Insert* methods are idempotent on the record id: inserting an id that
// already exists in the project changes nothing and reports false.
//
// Iteration callbacks (Each*) must not call back into the Tx.
type Tx interface {
	OutcomeStorage
	FeedbackStorage
	CriterionStorage
	PatternStorage
	MaturityStorage
	ErrorStorage
	TaskStorage
	ExploreStorage
	ExperienceStorage
	JobStorage
	ForgetStorage
	MetaStorage
	LedgerStorage
	RetentionStorage
	TraceStorage
	TeamStorage
	TeamRunStorage
}

// OutcomeStorage persists scored task outcomes.
type OutcomeStorage interface {
	InsertOutcome(ctx context.Context, o learning.Outcome) (bool, error)
	GetOutcome(ctx context.Context, project, id string) (learning.Outcome, error)
	// ListOutcomes returns outcomes newest first (by RecordedAt, then id).
	ListOutcomes(ctx context.Context, project string, f OutcomeFilter) ([]learning.Outcome, error)
	CountOutcomes(ctx context.Context, project string, f OutcomeFilter) (int64, error)
	EachOutcome(ctx context.Context, project string, fn func(learning.Outcome) error) error
	// OutcomeResults lists what ListOutcomes lists (same filter, same
	// order) with only each outcome's result and times (OutcomeResult):
	// the learning curve reads every outcome of a project.
	OutcomeResults(ctx context.Context, project string, f OutcomeFilter) ([]OutcomeResult, error)
}

// OutcomeFilter narrows outcome listings. Zero values mean no filter.
type OutcomeFilter struct {
	TaskID string
	// Since and Until bound RecordedAt (inclusive, exclusive).
	Since, Until time.Time
	Limit        int
	Offset       int
}

// FeedbackStorage is the seed's FeedbackStorage: criterion feedback
// events. They are the criterion judgements of stored outcomes
// (learning.FeedbackEvents), read from the outcomes rather than stored a
// second time: storing an outcome stores its events.
type FeedbackStorage interface {
	// FeedbackByCriterion and FeedbackByTask return events oldest first
	// (by Timestamp, then id). FeedbackByCriterion reads every outcome of
	// the project; it serves recomputation, not hot paths.
	FeedbackByCriterion(ctx context.Context, project, criterion string) ([]learning.FeedbackEvent, error)
	FeedbackByTask(ctx context.Context, project, taskID string) ([]learning.FeedbackEvent, error)
	EachFeedback(ctx context.Context, project string, fn func(learning.FeedbackEvent) error) error
}

// CriterionStorage persists the per-criterion aggregates.
type CriterionStorage interface {
	// LockCriterion returns the criterion for update, creating an empty one
	// (CreatedAt = UpdatedAt = now) when it does not exist. Concurrent
	// transactions locking the same criterion are serialised until commit.
	LockCriterion(ctx context.Context, project, name string, now time.Time) (learning.Criterion, error)
	GetCriterion(ctx context.Context, project, name string) (learning.Criterion, error)
	// PutCriterion inserts or replaces the criterion.
	PutCriterion(ctx context.Context, c learning.Criterion) error
	// AddCriterionEvent folds one feedback event into its criterion
	// (learning.Criterion.Apply with weight and half-life, UpdatedAt = now),
	// creating the criterion when missing, and returns the criterion as
	// the transaction sees it afterwards. Unlike LockCriterion, concurrent
	// transactions adding events to one criterion need not wait for each
	// other (PostgreSQL); no event is lost and the counts are exact.
	AddCriterionEvent(ctx context.Context, e learning.FeedbackEvent, weight, halfLifeDays float64, now time.Time) (learning.Criterion, error)
	// ListCriteria returns the project's criteria ordered by name.
	ListCriteria(ctx context.Context, project string) ([]learning.Criterion, error)
}

// PatternStorage is the seed's PatternStorage. Among patterns of kind
// "pattern" a project holds at most one per content key
// (learning.ContentKey): InsertPattern reports false for a duplicate.
type PatternStorage interface {
	InsertPattern(ctx context.Context, p learning.Pattern) (bool, error)
	GetPattern(ctx context.Context, project, id string) (learning.Pattern, error)
	// LockPattern returns the pattern for update; concurrent transactions
	// locking the same pattern are serialised until commit. A caller that
	// updates a pattern's maturity holds the pattern's lock.
	LockPattern(ctx context.Context, project, id string) (learning.Pattern, error)
	// UpdatePattern replaces an existing pattern (ErrNotFound otherwise).
	UpdatePattern(ctx context.Context, p learning.Pattern) error
	DeletePattern(ctx context.Context, project, id string) error
	// ListPatterns returns patterns ordered by CreatedAt, then id.
	ListPatterns(ctx context.Context, project string, f PatternFilter) ([]learning.Pattern, error)
	CountPatterns(ctx context.Context, project string, f PatternFilter) (int64, error)
	// FindPatternsByContent matches learning.ContentKey(content) exactly,
	// across kinds.
	FindPatternsByContent(ctx context.Context, project, content string) ([]learning.Pattern, error)
	// PatternsWithMaturity lists patterns (as ListPatterns) each with its
	// maturity record and version; a pattern without a maturity record
	// gets a zero record carrying its project, id and generation.
	PatternsWithMaturity(ctx context.Context, project string, f PatternFilter) ([]PatternRecord, error)
	// PatternVersion returns the version of the project's pattern state
	// (zero for a project without patterns). Every committed transaction
	// that inserted, updated or deleted a pattern, or put or deleted a
	// maturity record, increments it (Updates that a backend commits in
	// one database transaction share one increment), and every pattern it
	// touched carries the new version (PatternRecord.Version); a deletion
	// also sets ResetVersion. Together they let a reader keep the
	// project's patterns in memory and refresh only what changed: read the
	// version and the patterns changed after the cached version in one
	// snapshot, or reload everything when ResetVersion is newer than it.
	PatternVersion(ctx context.Context, project string) (PatternVersion, error)
	EachPattern(ctx context.Context, project string, fn func(learning.Pattern) error) error
}

// PatternFilter narrows pattern listings. Zero values mean no filter.
type PatternFilter struct {
	Kind learning.PatternKind
	// Tag matches patterns carrying this exact tag.
	Tag string
	// Search matches a case-insensitive substring of the content.
	Search string
	// ChangedAfter keeps the patterns whose version is greater (used by
	// PatternsWithMaturity for incremental refreshes).
	ChangedAfter int64
	Limit        int
	Offset       int
}

// PatternRecord is a pattern with its maturity record and the version of
// the project's pattern state at which it last changed.
type PatternRecord struct {
	Pattern  learning.Pattern
	Maturity learning.Maturity
	Version  int64
}

// PatternVersion is the version of a project's pattern state.
type PatternVersion struct {
	// Version counts the committed transactions that changed patterns or
	// maturity records of the project.
	Version int64
	// ResetVersion is the Version of the last transaction that deleted a
	// pattern: a reader holding an older state must reload it whole.
	ResetVersion int64
}

// MaturityStorage is the seed's MaturityStorage. State queries (the seed's
// getByState) depend on the evaluation instant and are answered by the
// engine from ListMaturity.
type MaturityStorage interface {
	GetMaturity(ctx context.Context, project, patternID string) (learning.Maturity, error)
	// PutMaturity inserts or replaces a maturity record.
	PutMaturity(ctx context.Context, m learning.Maturity) error
	ListMaturity(ctx context.Context, project string) ([]learning.Maturity, error)
	DeleteMaturity(ctx context.Context, project, patternID string) error
	// InsertMaturityFeedback records a use of a pattern (its observation
	// and its maturity evidence).
	InsertMaturityFeedback(ctx context.Context, f learning.MaturityFeedback) (bool, error)
	// AppendMaturityFeedback is InsertMaturityFeedback for a caller that
	// does not need to know whether the id existed (an existing id is
	// kept): the backend may write it with others of the transaction in
	// one statement before commit. Reads in the transaction see it.
	AppendMaturityFeedback(ctx context.Context, f learning.MaturityFeedback) error
	// MaturityFeedback returns a pattern's feedback oldest first (Timestamp, id).
	MaturityFeedback(ctx context.Context, project, patternID string) ([]learning.MaturityFeedback, error)
	EachMaturityFeedback(ctx context.Context, project string, fn func(learning.MaturityFeedback) error) error
}

// ErrorStorage is the seed's ErrorStorage for the error accumulator.
type ErrorStorage interface {
	InsertError(ctx context.Context, e learning.ErrorEntry) (bool, error)
	GetError(ctx context.Context, project, id string) (learning.ErrorEntry, error)
	// ErrorsByTask returns a task's errors oldest first (Timestamp, id);
	// resolved ones only when includeResolved.
	ErrorsByTask(ctx context.Context, project, taskID string, includeResolved bool) ([]learning.ErrorEntry, error)
	// ResolveError marks an error resolved at the given time and returns it.
	// Resolving a resolved error changes nothing. ErrNotFound if absent.
	ResolveError(ctx context.Context, project, id string, at time.Time) (learning.ErrorEntry, error)
	// ListErrors returns errors newest first (Timestamp, id).
	ListErrors(ctx context.Context, project string, f ErrorFilter) ([]learning.ErrorEntry, error)
	CountErrors(ctx context.Context, project string, f ErrorFilter) (int64, error)
	EachError(ctx context.Context, project string, fn func(learning.ErrorEntry) error) error
}

// ErrorFilter narrows error listings. Zero values mean no filter.
type ErrorFilter struct {
	TaskID         string
	UnresolvedOnly bool
	Type           learning.ErrorType
	Search         string
	Limit          int
	Offset         int
}

// TaskStorage persists tracked tasks (agent sessions).
type TaskStorage interface {
	// InsertTask creates a task; false when the id exists in the project.
	InsertTask(ctx context.Context, t learning.Task) (bool, error)
	GetTask(ctx context.Context, project, id string) (learning.Task, error)
	// LockTask returns the task for update; concurrent transactions
	// locking the same task are serialised until commit.
	LockTask(ctx context.Context, project, id string) (learning.Task, error)
	// UpdateTask replaces an existing task (ErrNotFound otherwise).
	UpdateTask(ctx context.Context, t learning.Task) error
	// ListTasks returns tasks most recently active first (LastActivityAt,
	// then id, descending).
	ListTasks(ctx context.Context, project string, f TaskFilter) ([]learning.Task, error)
	CountTasks(ctx context.Context, project string, f TaskFilter) (int64, error)
}

// TaskFilter narrows task listings. Zero values mean no filter.
type TaskFilter struct {
	// OpenOnly keeps tasks without an outcome (EndedAt unset).
	OpenOnly bool
	// IdleBefore keeps tasks whose last activity is before it.
	IdleBefore time.Time
	Limit      int
	Offset     int
}

// ExploreStorage persists exploration sessions (package explore) between
// the hook calls of an agent session. The state is the session's JSON
// snapshot, opaque to the store.
type ExploreStorage interface {
	// InsertExploreSession creates a session; false when it exists.
	InsertExploreSession(ctx context.Context, s ExploreSession) (bool, error)
	GetExploreSession(ctx context.Context, project, id string) (ExploreSession, error)
	// LockExploreSession returns the session for update; concurrent
	// transactions locking it are serialised until commit.
	LockExploreSession(ctx context.Context, project, id string) (ExploreSession, error)
	// UpdateExploreSession replaces a session (ErrNotFound if absent).
	UpdateExploreSession(ctx context.Context, s ExploreSession) error
	// ListExploreSessions returns sessions most recently updated first
	// (UpdatedAt, then id, descending).
	ListExploreSessions(ctx context.Context, project string, f ExploreFilter) ([]ExploreSession, error)
	CountExploreSessions(ctx context.Context, project string, f ExploreFilter) (int64, error)
}

// ExploreSession is a persisted exploration session.
type ExploreSession struct {
	Project  string `json:"project"`
	ID       string `json:"session_id"`
	Strategy string `json:"strategy"`
	// State is the explore.SessionState as JSON.
	State json.RawMessage `json:"state"`
	Done  bool            `json:"done"`
	// Exit is the reason the session ended ("" while it runs).
	Exit      string    `json:"exit,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ExploreFilter narrows session listings. Zero values mean no filter.
type ExploreFilter struct {
	ActiveOnly bool
	Limit      int
	Offset     int
}

// MetaStorage holds store-wide settings and lists projects.
type MetaStorage interface {
	// GetMeta returns a setting, ErrNotFound when unset.
	GetMeta(ctx context.Context, key string) (string, error)
	SetMeta(ctx context.Context, key, value string) error
	// Projects lists every project holding at least one outcome, pattern,
	// criterion, error, tracked task or exploration session, experience
	// record, execution trace or failure pattern, sorted.
	Projects(ctx context.Context) ([]string, error)
}
