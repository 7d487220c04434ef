package team

import (
	"slices"
	"time"
)

// transitions is the task status transition table: from → allowed targets.
//
//	pending     → in_progress (claim), blocked, cancelled
//	in_progress → completed, failed (report), pending (lease expired or
//	              released), blocked, cancelled
//	blocked     → pending (unblocked), cancelled
//	failed      → pending (retry), cancelled
//	completed   → (none: final)
//	cancelled   → (none: final)
var transitions = map[TaskStatus][]TaskStatus{
	StatusPending:    {StatusInProgress, StatusBlocked, StatusCancelled},
	StatusInProgress: {StatusCompleted, StatusFailed, StatusPending, StatusBlocked, StatusCancelled},
	StatusBlocked:    {StatusPending, StatusCancelled},
	StatusFailed:     {StatusPending, StatusCancelled},
	StatusCompleted:  nil,
	StatusCancelled:  nil,
}

// CanTransition reports whether the table allows from → to.
func CanTransition(from, to TaskStatus) bool {
	return slices.Contains(transitions[from], to)
}

// AllowedTransitions returns the statuses a task in from may move to.
func AllowedTransitions(from TaskStatus) []TaskStatus {
	return slices.Clone(transitions[from])
}

// CheckTransition returns a *TransitionError unless the table allows from → to.
func CheckTransition(task string, from, to TaskStatus) error {
	if !to.Valid() || !CanTransition(from, to) {
		return &TransitionError{Task: task, From: from, To: to}
	}
	return nil
}

// Transition moves a task to a new status at now. Moving out of
// in_progress releases the lease (its epoch is kept for fencing); moving to
// pending from failed is a retry. The input task is not modified.
func Transition(t Task, to TaskStatus, now time.Time) (Task, error) {
	if err := CheckTransition(t.ID, t.Status, to); err != nil {
		return t, err
	}
	t.Status = to
	t.UpdatedAt = now
	if to != StatusInProgress {
		t.Lease = Lease{Epoch: t.Lease.Epoch}
	}
	if to != StatusBlocked {
		t.BlockedCause = ""
	}
	return t, nil
}

// CheckEligible says whether member m may claim task t by its owner, role
// and required capabilities: an owned task only by its owner; otherwise a
// task with a role only by a member of that role; and the member must have
// every required capability. It does not look at status or dependencies.
func CheckEligible(t Task, m Member) error {
	switch {
	case t.Owner != "" && t.Owner != m.Name:
		return &EligibilityError{Task: t.ID, Member: m.Name, Reason: "the task is owned by " + t.Owner}
	case t.Owner == "" && t.Role != "" && t.Role != m.Role:
		return &EligibilityError{Task: t.ID, Member: m.Name, Reason: "the task needs role " + string(t.Role) + ", the member is " + string(m.Role)}
	}
	for _, c := range t.Capabilities {
		if !slices.Contains(m.Capabilities, c) {
			return &EligibilityError{Task: t.ID, Member: m.Name, Reason: "missing capability " + c}
		}
	}
	return nil
}

// Claim is the atomic claim primitive's decision: it checks that t is ready
// (pending, not paused, no lease, every dependency completed according to
// depStatus) and that m is eligible, then moves t to in_progress with a new
// lease (see Grant). The service runs it inside the transaction that locks
// the task row, so two claims cannot both succeed.
func Claim(t Task, depStatus map[string]TaskStatus, m Member, now time.Time, ttl time.Duration) (Task, error) {
	if t.Status != StatusPending || t.Paused || t.Lease.Held() {
		return t, &wrapped{err: ErrNotReady, msg: notReadyReason(t)}
	}
	for _, d := range t.BlockedBy {
		if depStatus[d] != StatusCompleted {
			return t, &wrapped{err: ErrNotReady, msg: "task " + t.ID + ": dependency " + d + " is not completed"}
		}
	}
	if err := CheckEligible(t, m); err != nil {
		return t, err
	}
	return Grant(t, m.Name, now, ttl)
}

func notReadyReason(t Task) string {
	switch {
	case t.Paused:
		return "task " + t.ID + " is paused for a swarm"
	case t.Lease.Held():
		return "task " + t.ID + " is leased by " + t.Lease.Holder
	}
	return "task " + t.ID + " is " + string(t.Status) + ", not pending"
}
