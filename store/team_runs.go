package store

import (
	"context"
	"encoding/json"
	"time"
)

// TeamRun is a stored collaboration pattern run: the team.Run as JSON
// (opaque to the store) with the columns a listing needs. At most one CP-7
// run per team is active (not finished): the store refuses a second.
type TeamRun struct {
	Project  string `json:"project"`
	ID       string `json:"id"`
	Team     string `json:"team"`
	Pattern  string `json:"pattern"`
	ParentID string `json:"parent_id,omitempty"`
	State    string `json:"state"`
	Finished bool   `json:"finished"`
	// Run is the team.Run as JSON.
	Run       json.RawMessage `json:"run"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
}

// TeamRunFilter narrows run listings. Zero values mean no filter.
type TeamRunFilter struct {
	Team       string
	Pattern    string
	ParentID   string
	ActiveOnly bool
	Limit      int
	Offset     int
}

// RunEvent is one persisted input of a run with the commands it produced.
type RunEvent struct {
	N        int64           `json:"n"`
	At       time.Time       `json:"at"`
	Event    json.RawMessage `json:"event"`
	Commands json.RawMessage `json:"commands,omitempty"`
	State    string          `json:"state"`
}

// TeamRunStorage persists collaboration pattern runs and their events.
type TeamRunStorage interface {
	// InsertTeamRun creates a run; false when the id exists or when it is
	// a CP-7 run and the team already has an active one.
	InsertTeamRun(ctx context.Context, r TeamRun) (bool, error)
	GetTeamRun(ctx context.Context, project, id string) (TeamRun, error)
	// LockTeamRun returns the run for update (serialised until commit).
	LockTeamRun(ctx context.Context, project, id string) (TeamRun, error)
	// UpdateTeamRun replaces a run's state (ErrNotFound if absent).
	UpdateTeamRun(ctx context.Context, r TeamRun) error
	// ListTeamRuns returns runs oldest first (created_at, id).
	ListTeamRuns(ctx context.Context, project string, f TeamRunFilter) ([]TeamRun, error)
	// AppendRunEvent appends an event to a run's log and returns its number.
	AppendRunEvent(ctx context.Context, project, runID string, e RunEvent) (int64, error)
	// ListRunEvents returns a run's events in order.
	ListRunEvents(ctx context.Context, project, runID string) ([]RunEvent, error)
}
