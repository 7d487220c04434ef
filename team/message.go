package team

import (
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// MessageType names the kind of a bus message. The seed's and the
// reference's types are predefined with typed payloads (see Registry); any
// other valid name is a user-defined type with free JSON data.
type MessageType string

// Base message types (the peer's pipeline vocabulary).
const (
	MsgPlanReady     MessageType = "plan_ready"
	MsgPlanApproved  MessageType = "plan_approved"
	MsgPlanRevision  MessageType = "plan_revision"
	MsgTaskUnblocked MessageType = "task_unblocked"
	MsgImplComplete  MessageType = "impl_complete"
	MsgImplProgress  MessageType = "impl_progress"
	MsgTestResult    MessageType = "test_result"
	MsgReviewResult  MessageType = "review_result"
	MsgFixRequired   MessageType = "fix_required"
	MsgError         MessageType = "error"
	MsgProgress      MessageType = "progress"
	MsgBlocker       MessageType = "blocker"
	MsgTaskComplete  MessageType = "task_complete"
	MsgShutdown      MessageType = "shutdown"
	MsgStateUpdate   MessageType = "state_update"
)

// Pattern message types (the seed's collaboration patterns).
const (
	MsgVote             MessageType = "vote"
	MsgEscalate         MessageType = "escalate"
	MsgIncrementReady   MessageType = "increment_ready"
	MsgSwarmJoin        MessageType = "swarm_join"
	MsgSwarmDiagnosis   MessageType = "swarm_diagnosis"
	MsgConsultRequest   MessageType = "consult_request"
	MsgConsultResponse  MessageType = "consult_response"
	MsgSyncCheckpoint   MessageType = "sync_checkpoint"
	MsgRetroFinding     MessageType = "retro_finding"
	MsgProposal         MessageType = "proposal"          // CP-4 proposal sent to voters (the seed sends it as text)
	MsgAnalysisResult   MessageType = "analysis_result"   // CP-3 worker result (the seed's "{angle}_result")
	MsgConsultOutcome   MessageType = "consult_outcome"   // CP-8 requester: advice applied / conflicts with the design
	MsgRetroRequest     MessageType = "retro_request"     // CP-10 request for a retrospective (the seed sends it as text)
	MsgEscalationReport MessageType = "escalation_report" // CP-5 a level's answer: resolved or not, diagnosis
	MsgResolution       MessageType = "resolution"        // CP-5 the answer sent back to the agent (solution or WORKAROUND)
)

// Special addresses.
const (
	// AddressAll broadcasts to every member but the sender.
	AddressAll = "all"
	// RolePrefix addresses every member of a role: "role:tester".
	RolePrefix = "role:"
)

// RoleAddress returns the address of every member of role r.
func RoleAddress(r Role) string { return RolePrefix + string(r) }

// Message is one record of a team's durable bus. Seq is assigned by the
// store, strictly increasing per team (it is the message id).
type Message struct {
	Team      string          `json:"team"`
	Seq       int64           `json:"seq"`
	From      string          `json:"from"`
	To        string          `json:"to"` // member name, "role:<role>" or "all"
	Type      MessageType     `json:"type"`
	Summary   string          `json:"summary,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	Task      string          `json:"task,omitempty"` // the task the message reports on, if any
	CreatedAt time.Time       `json:"created_at"`
}

// DefaultSummary is the peer's summary convention "[from] type → to".
func DefaultSummary(from string, typ MessageType, to string) string {
	return "[" + from + "] " + string(typ) + " → " + to
}

// ValidateAddress checks a recipient address syntactically.
func ValidateAddress(to string) error {
	switch {
	case to == AddressAll:
		return nil
	case strings.HasPrefix(to, RolePrefix):
		if !ValidName(strings.TrimPrefix(to, RolePrefix)) {
			return invalid("validate message", "to", "%q is not a valid role address", to)
		}
		return nil
	case ValidName(to):
		return nil
	}
	return invalid("validate message", "to", "%q is not a member, role:<role> or all", to)
}

// Recipients resolves an address against a team into member names, sorted:
// "all" is every member but the sender, "role:r" every member of role r, any
// other address one member that must exist. An address that reaches nobody
// is a *ValidationError, so a message is never silently dropped.
func Recipients(t Team, from, to string) ([]string, error) {
	if err := ValidateAddress(to); err != nil {
		return nil, err
	}
	var out []string
	switch {
	case to == AddressAll:
		for _, m := range t.Members {
			if m.Name != from {
				out = append(out, m.Name)
			}
		}
	case strings.HasPrefix(to, RolePrefix):
		r := Role(strings.TrimPrefix(to, RolePrefix))
		for _, m := range t.Members {
			if m.Role == r {
				out = append(out, m.Name)
			}
		}
	default:
		if _, ok := t.Member(to); ok {
			out = []string{to}
		}
	}
	if len(out) == 0 {
		return nil, invalid("route message", "to", "%q reaches no member of team %s", to, t.Name)
	}
	slices.Sort(out)
	return out, nil
}

// ValidateMessage checks a message before it is stored: names, address,
// summary and data bounds, and the payload against reg (strict for
// registered types, any JSON for user-defined ones). Seq and CreatedAt are
// the store's and are not checked.
func ValidateMessage(reg *Registry, m Message) error {
	const op = "validate message"
	if !ValidName(m.Team) {
		return invalid(op, "team", "%q is not a valid team name", m.Team)
	}
	if !ValidName(m.From) {
		return invalid(op, "from", "%q is not a valid sender name", m.From)
	}
	if err := ValidateAddress(m.To); err != nil {
		return err
	}
	if !ValidName(string(m.Type)) {
		return invalid(op, "type", "%q is not a valid message type", m.Type)
	}
	if utf8.RuneCountInString(m.Summary) > MaxSummaryLen || !utf8.ValidString(m.Summary) {
		return invalid(op, "summary", "at most %d characters of valid UTF-8", MaxSummaryLen)
	}
	if len(m.Task) > 128 {
		return invalid(op, "task", "at most 128 bytes")
	}
	if len(m.Data) > MaxDataLen {
		return invalid(op, "data", "%d bytes, at most %d", len(m.Data), MaxDataLen)
	}
	_, err := reg.Decode(m.Type, m.Data)
	return err
}

// CheckSeq checks that a new message id follows the last one of its team
// (strictly increasing; gaps are allowed, e.g. after a rolled-back
// transaction).
func CheckSeq(last, next int64) error {
	if next <= last {
		return invalid("append message", "seq", "%d does not follow %d", next, last)
	}
	return nil
}

// DeliveryState is how far a recipient has got with a message. States only
// move forward: delivered → read → acknowledged → acted_on (steps may be
// skipped, e.g. acknowledged without read).
type DeliveryState string

// Delivery states.
const (
	DeliveryDelivered    DeliveryState = "delivered"
	DeliveryRead         DeliveryState = "read"
	DeliveryAcknowledged DeliveryState = "acknowledged"
	DeliveryActedOn      DeliveryState = "acted_on"
)

// DeliveryStates lists the states in order.
var DeliveryStates = []DeliveryState{DeliveryDelivered, DeliveryRead, DeliveryAcknowledged, DeliveryActedOn}

// Rank is the state's position in DeliveryStates, -1 if unknown.
func (s DeliveryState) Rank() int { return slices.Index(DeliveryStates, s) }

// Delivery is one recipient's copy of a message. Until it is acknowledged
// the message is redelivered after the visibility timeout (at-least-once).
type Delivery struct {
	Seq       int64         `json:"seq"`
	Recipient string        `json:"recipient"`
	State     DeliveryState `json:"state"`
	// VisibleAt is when the message becomes visible again if not acknowledged.
	VisibleAt time.Time `json:"visible_at"`
	// Deliveries counts how often it was handed out.
	Deliveries int       `json:"deliveries"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// Deliver hands a visible message to its recipient at now: the copy becomes
// delivered (again) and invisible until now+visibility. A copy that is
// acknowledged or acted on, or still invisible, is not handed out (ok false).
func Deliver(d Delivery, now time.Time, visibility time.Duration) (Delivery, bool) {
	if d.State.Rank() >= DeliveryAcknowledged.Rank() || now.Before(d.VisibleAt) {
		return d, false
	}
	if d.State == "" {
		d.State = DeliveryDelivered
	}
	d.Deliveries++
	d.VisibleAt = now.Add(visibility)
	d.UpdatedAt = now
	return d, true
}

// Advance moves a delivery forward to next at now. Moving backwards or to an
// unknown state is an error wrapping ErrDelivery; moving to the same state
// is a no-op (idempotent acknowledgement).
func Advance(d Delivery, next DeliveryState, now time.Time) (Delivery, error) {
	if next.Rank() < 0 || d.State.Rank() < 0 {
		return d, &wrapped{err: ErrDelivery, msg: "unknown delivery state " + string(next)}
	}
	if next.Rank() < d.State.Rank() {
		return d, &wrapped{err: ErrDelivery, msg: string(d.State) + " → " + string(next) + " goes backwards"}
	}
	if next != d.State {
		d.State = next
		d.UpdatedAt = now
	}
	return d, nil
}
