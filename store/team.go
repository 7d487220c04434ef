package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/kaizenhq/kaizen/team"
)

// ErrStale: a conditional write of a team task found the row changed since
// it was read (another transaction claimed, expired or reported it). The
// caller reads again; nothing was written.
var ErrStale = errors.New("team task changed concurrently")

// TeamRecord is a stored team: its definition (members, limits, settings)
// as JSON opaque to the store, its message sequence and its lifecycle.
type TeamRecord struct {
	Project string `json:"project"`
	Name    string `json:"name"`
	// Doc is the team's definition as JSON (members, limits, coordinator).
	Doc json.RawMessage `json:"doc"`
	// LastSeq is the id of the team's last message (0 before the first).
	LastSeq   int64     `json:"last_seq"`
	Dissolved bool      `json:"dissolved"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// TeamTaskFilter narrows task listings. Zero values mean no filter.
type TeamTaskFilter struct {
	Statuses []team.TaskStatus
	RunID    string
	Limit    int
	Offset   int
}

// InboxItem is one recipient's copy of a message with the message.
type InboxItem struct {
	Message  team.Message  `json:"message"`
	Delivery team.Delivery `json:"delivery"`
}

// InboxFilter narrows a recipient's deliveries.
type InboxFilter struct {
	// Unacked keeps deliveries that are not acknowledged (or acted on).
	Unacked bool
	// VisibleAt, when set, keeps deliveries visible at that instant
	// (VisibleAt at or before it).
	VisibleAt time.Time
	// AfterSeq keeps messages with a greater seq.
	AfterSeq int64
	Limit    int
}

// TeamEvent is one recorded transition of a team's state: a task status
// change, a lease grant or expiry, a coordinator transition, a pattern run
// step. Events are append-only; ID orders them within the store.
type TeamEvent struct {
	Project string    `json:"project"`
	Team    string    `json:"team"`
	ID      int64     `json:"id"`
	At      time.Time `json:"at"`
	// Kind names what changed: "task", "lease", "coordinator", "team", "run".
	Kind    string          `json:"kind"`
	Subject string          `json:"subject"` // task id, run id, "coordinator"
	From    string          `json:"from,omitempty"`
	To      string          `json:"to,omitempty"`
	Cause   string          `json:"cause"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// TeamStorage persists teams, their task graphs with leases, their message
// buses with per-recipient deliveries, and their event log. Every method is
// scoped to a project and a team name.
type TeamStorage interface {
	// InsertTeam creates a team; false when the name exists in the project
	// (dissolved teams included).
	InsertTeam(ctx context.Context, t TeamRecord) (bool, error)
	GetTeam(ctx context.Context, project, name string) (TeamRecord, error)
	// UpdateTeam replaces a team's definition, lifecycle and UpdatedAt
	// (LastSeq is the store's and is not written).
	UpdateTeam(ctx context.Context, t TeamRecord) error
	// ListTeams returns teams ordered by name.
	ListTeams(ctx context.Context, project string, includeDissolved bool) ([]TeamRecord, error)

	// InsertTeamTask creates a task; false when the id exists in the team.
	// Tasks list in insertion order.
	InsertTeamTask(ctx context.Context, project string, t team.Task) (bool, error)
	GetTeamTask(ctx context.Context, project, teamName, id string) (team.Task, error)
	// UpdateTeamTask replaces a task if it is still in status prev with
	// lease epoch prevEpoch (the values it was read with): ErrStale
	// otherwise, ErrNotFound when there is no such task.
	UpdateTeamTask(ctx context.Context, project string, t team.Task, prev team.TaskStatus, prevEpoch int64) error
	// ListTeamTasks returns tasks in insertion order.
	ListTeamTasks(ctx context.Context, project, teamName string, f TeamTaskFilter) ([]team.Task, error)
	// ClaimableTeamTasks returns up to limit ready tasks in insertion
	// order that member (of role) may be given by owner and role: pending,
	// not paused, every dependency completed, owned by member or unowned
	// with no role or role. Capabilities are the caller's to check. The
	// rows are locked for the transaction; on PostgreSQL rows another
	// transaction has locked are skipped (FOR UPDATE SKIP LOCKED).
	ClaimableTeamTasks(ctx context.Context, project, teamName, member string, role team.Role, limit int) ([]team.Task, error)
	// ExpiredTeamTasks returns up to limit in-progress tasks of the team
	// (all teams of the project when teamName is "") whose lease expired
	// at or before now, locked like ClaimableTeamTasks (call both in Update).
	ExpiredTeamTasks(ctx context.Context, project, teamName string, now time.Time, limit int) ([]team.Task, error)
	// NextTeamLeaseExpiry is the earliest lease end of the team's
	// in-progress tasks; false when none is leased.
	NextTeamLeaseExpiry(ctx context.Context, project, teamName string) (time.Time, bool, error)

	// AppendTeamMessage stores a message under the team's next seq (the
	// team row is locked until commit, so seqs commit in order) with one
	// delivery per recipient, visible at once, and returns the message
	// with its seq. ErrNotFound when the team does not exist.
	AppendTeamMessage(ctx context.Context, project string, m team.Message, recipients []string) (team.Message, error)
	GetTeamMessage(ctx context.Context, project, teamName string, seq int64) (team.Message, error)
	// ListTeamMessages returns messages with seq > afterSeq in seq order.
	ListTeamMessages(ctx context.Context, project, teamName string, afterSeq int64, limit int) ([]team.Message, error)
	// Inbox returns a recipient's deliveries in seq order.
	Inbox(ctx context.Context, project, teamName, recipient string, f InboxFilter) ([]InboxItem, error)
	// GetDelivery returns one recipient's copy of a message.
	GetDelivery(ctx context.Context, project, teamName, recipient string, seq int64) (team.Delivery, error)
	// UpdateDelivery replaces a recipient's copy (ErrNotFound if absent).
	UpdateDelivery(ctx context.Context, project, teamName string, d team.Delivery) error
	// MessageDeliveries returns every recipient's copy of a message, by recipient.
	MessageDeliveries(ctx context.Context, project, teamName string, seq int64) ([]team.Delivery, error)

	// InsertTeamEvent appends an event and returns its id.
	InsertTeamEvent(ctx context.Context, e TeamEvent) (int64, error)
	// ListTeamEvents returns the team's events with id > afterID, oldest
	// first; only those of subject when it is set.
	ListTeamEvents(ctx context.Context, project, teamName, subject string, afterID int64, limit int) ([]TeamEvent, error)
}

// TeamNotifier is implemented by backends that several processes share
// (PostgreSQL LISTEN/NOTIFY): a process tells the others that a team
// changed (a message, a task ready), and waits for what the others say.
// The tables stay the source of truth; a notification only cuts a wait
// short, and one lost (a dropped connection) costs a receiver nothing but
// latency.
type TeamNotifier interface {
	// NotifyTeam tells every listening process that the team changed.
	NotifyTeam(ctx context.Context, project, team string) error
	// ListenTeams calls fn for every team change another process (or this
	// one) announces, until ctx ends or the store closes. listening is
	// called with true each time the listener is (re)connected and with
	// false when it lost its connection: changes announced meanwhile are
	// not replayed, so a caller polls while it is down and re-checks when
	// it is back.
	ListenTeams(ctx context.Context, listening func(up bool), fn func(project, team string)) error
}
