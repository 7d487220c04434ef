package team

import (
	"encoding/json"
	"slices"
	"time"
	"unicode/utf8"
)

// Size bounds of stored fields. Inputs beyond them are refused with a
// *ValidationError, so one agent cannot bloat a team's tables.
const (
	MaxNameLen         = 64        // team, member, role, capability, message type names
	MaxSubjectLen      = 200       // task subject
	MaxSummaryLen      = 200       // message summary (the peer's "< 200 chars" convention)
	MaxDescriptionLen  = 64 << 10  // task description
	MaxMetadataLen     = 64 << 10  // task metadata JSON
	MaxResultLen       = 1 << 20   // task result JSON
	MaxDataLen         = 256 << 10 // message data JSON
	MaxBlockedBy       = 100       // dependencies of one task
	MaxCapabilities    = 32        // capabilities of a member or requirements of a task
	MaxGateLen         = 4096      // gate command
	MaxMembers         = 64        // members of a team
	MaxGraphTasks      = 10000     // tasks in one validated graph
	MaxProgressNoteLen = 500       // heartbeat progress note
)

// Role is a member's function in a team. The seed's roles are predefined;
// any other valid name is a user-defined role.
type Role string

// Roles of the seed.
const (
	RoleCoordinator Role = "coordinator"
	RolePlanner     Role = "planner"
	RoleExecutor    Role = "executor"
	RoleTester      Role = "tester"
	RoleReviewer    Role = "reviewer"
	RoleSpecialist  Role = "specialist"
	RoleVoter       Role = "voter"
	RoleTrackA      Role = "track-a"
	RoleTrackB      Role = "track-b"
	RoleProducer    Role = "producer"
	RoleConsultant  Role = "consultant"
	RoleWorker      Role = "worker"
)

// PredefinedRoles lists the seed's roles.
var PredefinedRoles = []Role{RoleCoordinator, RolePlanner, RoleExecutor, RoleTester, RoleReviewer,
	RoleSpecialist, RoleVoter, RoleTrackA, RoleTrackB, RoleProducer, RoleConsultant, RoleWorker}

// Predefined reports whether r is one of the seed's roles.
func (r Role) Predefined() bool { return slices.Contains(PredefinedRoles, r) }

// WorkerKind says how a member's work is executed.
type WorkerKind string

// Worker kinds.
const (
	// WorkerAgent: an external agent that claims and reports over MCP or REST.
	WorkerAgent WorkerKind = "agent"
	// WorkerCommand: a command spawned per task (an agent CLI in print mode, a
	// script); it is also the "CLI tool" fallback of CP-8.
	WorkerCommand WorkerKind = "command"
	// WorkerFunc: a Go function registered with the engine.
	WorkerFunc WorkerKind = "func"
)

// Valid reports whether k is a known worker kind.
func (k WorkerKind) Valid() bool { return k == WorkerAgent || k == WorkerCommand || k == WorkerFunc }

// Worker binds a member to what executes its tasks.
type Worker struct {
	Kind WorkerKind `json:"kind"`
	// Command is the command line of a command worker (run per task).
	Command string `json:"command,omitempty"`
	// Func names the registered Go function of a func worker.
	Func string `json:"func,omitempty"`
}

// Member is one participant of a team.
type Member struct {
	Name         string   `json:"name"`
	Role         Role     `json:"role"`
	Capabilities []string `json:"capabilities,omitempty"`
	Worker       Worker   `json:"worker"`
}

// Team is a named group of members working one task graph over one bus.
type Team struct {
	Name      string    `json:"name"`
	Members   []Member  `json:"members"`
	CreatedAt time.Time `json:"created_at"`
}

// Member returns the member with that name.
func (t Team) Member(name string) (Member, bool) {
	for _, m := range t.Members {
		if m.Name == name {
			return m, true
		}
	}
	return Member{}, false
}

// ValidName reports whether s is a valid team, member, role, capability or
// message type name: 1–64 characters of ASCII letters, digits, '.', '_', '-'
// and ':' (":" only inside), starting with a letter or digit.
func ValidName(s string) bool {
	if s == "" || len(s) > MaxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case (c == '.' || c == '_' || c == '-' || c == ':') && i > 0:
		default:
			return false
		}
	}
	return s[len(s)-1] != ':'
}

// ValidateMember checks a member's fields.
func ValidateMember(m Member) error {
	const op = "validate member"
	if !ValidName(m.Name) || m.Name == AddressAll {
		return invalid(op, "name", "%q is not a valid member name", m.Name)
	}
	if !ValidName(string(m.Role)) {
		return invalid(op, "role", "%q is not a valid role name", m.Role)
	}
	if err := validateCapabilities(op, "capabilities", m.Capabilities); err != nil {
		return err
	}
	if !m.Worker.Kind.Valid() {
		return invalid(op, "worker.kind", "%q is not agent, command or func", m.Worker.Kind)
	}
	if m.Worker.Kind == WorkerCommand && m.Worker.Command == "" {
		return invalid(op, "worker.command", "a command worker needs a command")
	}
	if m.Worker.Kind == WorkerFunc && m.Worker.Func == "" {
		return invalid(op, "worker.func", "a func worker needs a function name")
	}
	if len(m.Worker.Command) > MaxGateLen {
		return invalid(op, "worker.command", "longer than %d bytes", MaxGateLen)
	}
	return nil
}

// ValidateTeam checks a team and its members (unique names, bounded size).
func ValidateTeam(t Team) error {
	const op = "validate team"
	if !ValidName(t.Name) {
		return invalid(op, "name", "%q is not a valid team name", t.Name)
	}
	if len(t.Members) > MaxMembers {
		return invalid(op, "members", "%d members, at most %d", len(t.Members), MaxMembers)
	}
	seen := map[string]bool{}
	for _, m := range t.Members {
		if err := ValidateMember(m); err != nil {
			return err
		}
		if seen[m.Name] {
			return invalid(op, "members", "member %q appears twice", m.Name)
		}
		seen[m.Name] = true
	}
	return nil
}

func validateCapabilities(op, field string, caps []string) error {
	if len(caps) > MaxCapabilities {
		return invalid(op, field, "%d entries, at most %d", len(caps), MaxCapabilities)
	}
	for _, c := range caps {
		if !ValidName(c) {
			return invalid(op, field, "%q is not a valid capability name", c)
		}
	}
	return nil
}

// TaskStatus is the state of a task in the graph.
type TaskStatus string

// Task statuses.
const (
	StatusPending    TaskStatus = "pending"
	StatusInProgress TaskStatus = "in_progress"
	StatusCompleted  TaskStatus = "completed"
	StatusFailed     TaskStatus = "failed"
	StatusBlocked    TaskStatus = "blocked"
	StatusCancelled  TaskStatus = "cancelled"
)

// TaskStatuses lists every status.
var TaskStatuses = []TaskStatus{StatusPending, StatusInProgress, StatusCompleted, StatusFailed, StatusBlocked, StatusCancelled}

// Valid reports whether s is a known status.
func (s TaskStatus) Valid() bool { return slices.Contains(TaskStatuses, s) }

// Terminal reports whether no work happens on the task any more without an
// explicit retry: completed, failed and cancelled. CP-10 starts only when
// every task of the team is terminal.
func (s TaskStatus) Terminal() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCancelled
}

// Progress is what a heartbeat says about the work under way.
type Progress struct {
	Percent int    `json:"percent"`
	Phase   string `json:"phase,omitempty"`
	Note    string `json:"note,omitempty"`
}

// Lease is the claim of one member on an in-progress task. Epoch is the
// fencing token: it grows by one with every grant and survives the lease's
// release, so a report carrying an older epoch is recognised as stale.
type Lease struct {
	Holder      string    `json:"holder,omitempty"`
	Epoch       int64     `json:"epoch"`
	ExpiresAt   time.Time `json:"expires_at,omitzero"`
	HeartbeatAt time.Time `json:"heartbeat_at,omitzero"`
	Progress    *Progress `json:"progress,omitempty"`
}

// Held reports whether some member holds the lease.
func (l Lease) Held() bool { return l.Holder != "" }

// Task is one node of a team's task graph.
type Task struct {
	ID           string          `json:"id"`
	Team         string          `json:"team"`
	Subject      string          `json:"subject"`
	Description  string          `json:"description,omitempty"`
	Owner        string          `json:"owner,omitempty"` // a member name; empty: any member of Role
	Role         Role            `json:"role,omitempty"`
	Capabilities []string        `json:"capabilities,omitempty"` // required of the claiming member
	BlockedBy    []string        `json:"blocked_by,omitempty"`
	Status       TaskStatus      `json:"status"`
	Paused       bool            `json:"paused,omitempty"`        // paused for a swarm (CP-7): not claimable
	BlockedCause string          `json:"blocked_cause,omitempty"` // why the task is blocked
	Metadata     json.RawMessage `json:"metadata,omitempty"`
	Result       json.RawMessage `json:"result,omitempty"`
	Gate         string          `json:"gate,omitempty"` // command that must pass before completion
	Attempts     int             `json:"attempts"`       // leases granted so far
	Lease        Lease           `json:"lease"`
	RunID        string          `json:"run_id,omitempty"`  // the pattern run that created it
	RunKey       string          `json:"run_key,omitempty"` // its key inside that run
	CreatedAt    time.Time       `json:"created_at,omitzero"`
	UpdatedAt    time.Time       `json:"updated_at,omitzero"`
}

// ValidateTask checks one task on its own: subject required, every field
// within its bound, names valid, status known, JSON fields well formed.
// Dependencies are checked against the graph by ValidateGraph.
func ValidateTask(t Task) error {
	const op = "validate task"
	if t.ID == "" || len(t.ID) > 128 || !utf8.ValidString(t.ID) {
		return invalid(op, "id", "required, at most 128 bytes")
	}
	if t.Subject == "" {
		return invalid(op, "subject", "required")
	}
	if utf8.RuneCountInString(t.Subject) > MaxSubjectLen || !utf8.ValidString(t.Subject) {
		return invalid(op, "subject", "at most %d characters of valid UTF-8", MaxSubjectLen)
	}
	if len(t.Description) > MaxDescriptionLen || !utf8.ValidString(t.Description) {
		return invalid(op, "description", "at most %d bytes of valid UTF-8", MaxDescriptionLen)
	}
	if t.Owner != "" && !ValidName(t.Owner) {
		return invalid(op, "owner", "%q is not a valid member name", t.Owner)
	}
	if t.Role != "" && !ValidName(string(t.Role)) {
		return invalid(op, "role", "%q is not a valid role name", t.Role)
	}
	if err := validateCapabilities(op, "capabilities", t.Capabilities); err != nil {
		return err
	}
	if len(t.BlockedBy) > MaxBlockedBy {
		return invalid(op, "blocked_by", "%d dependencies, at most %d", len(t.BlockedBy), MaxBlockedBy)
	}
	seen := map[string]bool{}
	for i, d := range t.BlockedBy {
		switch {
		case d == "":
			return invalid(op, "blocked_by", "entry %d is empty", i)
		case d == t.ID:
			return &CycleError{Cycle: []string{t.ID, t.ID}}
		case seen[d]:
			return invalid(op, "blocked_by", "%q listed twice", d)
		}
		seen[d] = true
	}
	if !t.Status.Valid() {
		return invalid(op, "status", "%q is not a task status", t.Status)
	}
	if err := checkJSON(op, "metadata", t.Metadata, MaxMetadataLen); err != nil {
		return err
	}
	if err := checkJSON(op, "result", t.Result, MaxResultLen); err != nil {
		return err
	}
	if len(t.Gate) > MaxGateLen {
		return invalid(op, "gate", "at most %d bytes", MaxGateLen)
	}
	if t.Attempts < 0 {
		return invalid(op, "attempts", "negative")
	}
	return nil
}

func checkJSON(op, field string, raw json.RawMessage, limit int) error {
	if len(raw) == 0 {
		return nil
	}
	if len(raw) > limit {
		return invalid(op, field, "%d bytes, at most %d", len(raw), limit)
	}
	if !json.Valid(raw) {
		return invalid(op, field, "not valid JSON")
	}
	return nil
}
