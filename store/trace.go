package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/kaizenhq/kaizen/trace"
)

// TraceStorage persists the failure-learning system (package trace, seed
// 003): execution traces with their attempts, artifact execution records,
// failure patterns, the per-session assembly state kept between hook
// calls, pre-execution checks, reviews, per-skill statistics and small
// named states (the error grouper). Every method is scoped to a project.
type TraceStorage interface {
	// PutTrace inserts or replaces a trace and all its attempts (an open
	// chain is written again each time it gets an attempt).
	PutTrace(ctx context.Context, project string, t trace.ExecutionTrace, updatedAt time.Time) error
	GetTrace(ctx context.Context, project, id string) (trace.ExecutionTrace, error)
	// ListTraces returns traces newest first (CreatedAt, then id, descending).
	ListTraces(ctx context.Context, project string, f TraceFilter) ([]trace.ExecutionTrace, error)
	CountTraces(ctx context.Context, project string, f TraceFilter) (int64, error)
	// EachTrace streams the traces the filter matches (Limit and Offset
	// ignored), oldest first (CreatedAt, then id).
	EachTrace(ctx context.Context, project string, f TraceFilter, fn func(trace.ExecutionTrace) error) error

	// InsertExecutionRecords appends artifact execution records (seed:
	// Artifact.execution_history); a record already stored (same artifact,
	// trace and timestamp) is skipped.
	InsertExecutionRecords(ctx context.Context, project string, recs []trace.ExecutionRecord) error
	// ExecutionRecords returns an artifact's records oldest first.
	ExecutionRecords(ctx context.Context, project, artifactID string, limit int) ([]trace.ExecutionRecord, error)

	// PutFailurePattern inserts or replaces a failure pattern.
	PutFailurePattern(ctx context.Context, project string, p trace.FailurePattern) error
	GetFailurePattern(ctx context.Context, project, id string) (trace.FailurePattern, error)
	// LockFailurePattern returns the pattern for update; concurrent
	// transactions locking it are serialised until commit.
	LockFailurePattern(ctx context.Context, project, id string) (trace.FailurePattern, error)
	// ListFailurePatterns returns patterns most frequent first (Frequency
	// descending, then id ascending).
	ListFailurePatterns(ctx context.Context, project string, f FailurePatternFilter) ([]trace.FailurePattern, error)
	CountFailurePatterns(ctx context.Context, project string, f FailurePatternFilter) (int64, error)

	// GetTraceSession returns a session's assembly state (ErrNotFound when
	// the session has none yet). LockTraceSession returns it for update,
	// creating it with an empty State when absent (concurrent first calls
	// serialise on the new row).
	GetTraceSession(ctx context.Context, project, id string) (TraceSession, error)
	LockTraceSession(ctx context.Context, project, id string) (TraceSession, error)
	// PutTraceSession inserts or replaces a session's state.
	PutTraceSession(ctx context.Context, s TraceSession) error

	// InsertTraceCheck records a pre-execution check; false when the id exists.
	InsertTraceCheck(ctx context.Context, c TraceCheck) (bool, error)
	// ListTraceChecks returns checks newest first (At, then id, descending).
	ListTraceChecks(ctx context.Context, project string, f TraceCheckFilter) ([]TraceCheck, error)

	// InsertTraceReview records a review; false (changing nothing) when a
	// review of the same kind and period start, or the same id, exists —
	// scheduled reviews are idempotent per period.
	InsertTraceReview(ctx context.Context, r TraceReview) (bool, error)
	GetTraceReview(ctx context.Context, project, id string) (TraceReview, error)
	// ListTraceReviews returns reviews newest first (CreatedAt, then id,
	// descending).
	ListTraceReviews(ctx context.Context, project string, f TraceReviewFilter) ([]TraceReview, error)

	// GetTraceSkill returns a skill's statistics (ErrNotFound when none);
	// PutTraceSkill inserts or replaces them; ListTraceSkills orders by
	// skill id.
	GetTraceSkill(ctx context.Context, project, skillID string) (trace.SkillStats, error)
	PutTraceSkill(ctx context.Context, project string, s trace.SkillStats, updatedAt time.Time) error
	ListTraceSkills(ctx context.Context, project string) ([]trace.SkillStats, error)

	// GetTraceState returns a named state (ErrNotFound when unset);
	// LockTraceState returns it for update, creating it empty when unset;
	// PutTraceState sets it.
	GetTraceState(ctx context.Context, project, name string) (string, error)
	LockTraceState(ctx context.Context, project, name string) (string, error)
	PutTraceState(ctx context.Context, project, name, value string, updatedAt time.Time) error
}

// TraceFilter narrows trace listings. Zero values mean no filter.
type TraceFilter struct {
	SkillID   string
	TaskID    string
	SessionID string
	// Status is "open", "succeeded" or "failed".
	Status string
	// Since and Until bound CreatedAt (inclusive, exclusive).
	Since, Until time.Time
	Limit        int
	Offset       int
}

// FailurePatternFilter narrows failure pattern listings. SkillID and Family
// together match patterns of the skill or of the family.
type FailurePatternFilter struct {
	SkillID string
	Family  string
	Limit   int
	Offset  int
}

// TraceSession is the trace assembly state of one agent session, kept
// between hook calls. State is opaque JSON to the store.
type TraceSession struct {
	Project   string          `json:"project"`
	ID        string          `json:"session_id"`
	State     json.RawMessage `json:"state"`
	UpdatedAt time.Time       `json:"updated_at"`
}

// TraceCheck is one pre-execution check and what it warned about.
type TraceCheck struct {
	Project   string    `json:"project"`
	ID        string    `json:"id"`
	SessionID string    `json:"session_id,omitempty"`
	SkillID   string    `json:"skill_id"`
	Command   string    `json:"command"`
	At        time.Time `json:"at"`
	// PatternIDs are the patterns it warned about (empty: no warning).
	PatternIDs []string `json:"pattern_ids"`
	// Warnings is the JSON of the warnings given.
	Warnings json.RawMessage `json:"warnings"`
}

// TraceCheckFilter narrows check listings.
type TraceCheckFilter struct {
	SessionID  string
	WarnedOnly bool
	Limit      int
	Offset     int
}

// TraceReview is a task-end or scheduled review with its result (JSON)
// and, for scheduled reviews, its markdown report.
type TraceReview struct {
	Project string `json:"project"`
	ID      string `json:"id"`
	// Kind is "task", "daily", "weekly" or "manual".
	Kind        string          `json:"kind"`
	PeriodStart time.Time       `json:"period_start"`
	PeriodEnd   time.Time       `json:"period_end"`
	CreatedAt   time.Time       `json:"created_at"`
	Result      json.RawMessage `json:"result"`
	Report      string          `json:"report,omitempty"`
}

// TraceReviewFilter narrows review listings.
type TraceReviewFilter struct {
	Kind   string
	Limit  int
	Offset int
}
