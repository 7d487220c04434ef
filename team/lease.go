package team

import (
	"time"
	"unicode/utf8"
)

// Grant gives member holder a lease on pending task t until now+ttl: the
// task moves to in_progress, the epoch (fencing token) grows by one and the
// attempt is counted (Attempts counts leases granted, so an attempt that
// later expires has been counted). ttl must be positive.
func Grant(t Task, holder string, now time.Time, ttl time.Duration) (Task, error) {
	if ttl <= 0 {
		return t, invalid("grant lease", "ttl", "must be positive, got %s", ttl)
	}
	if !ValidName(holder) {
		return t, invalid("grant lease", "holder", "%q is not a valid member name", holder)
	}
	if err := CheckTransition(t.ID, t.Status, StatusInProgress); err != nil {
		return t, err
	}
	t.Status = StatusInProgress
	t.Attempts++
	t.UpdatedAt = now
	t.Lease = Lease{Holder: holder, Epoch: t.Lease.Epoch + 1, ExpiresAt: now.Add(ttl), HeartbeatAt: now}
	return t, nil
}

// CheckFence checks that a report or heartbeat from holder carrying epoch
// may act on t at now: the epoch must be the current one (*FenceError with
// ErrStaleEpoch otherwise), the sender must hold the lease (ErrNotHolder),
// and the lease must not have expired (ErrLeaseExpired; a lease is expired
// at and after ExpiresAt).
func CheckFence(t Task, holder string, epoch int64, now time.Time) error {
	if epoch != t.Lease.Epoch {
		return &FenceError{Task: t.ID, Got: epoch, Current: t.Lease.Epoch}
	}
	if t.Status != StatusInProgress || !t.Lease.Held() {
		return &wrapped{err: ErrNotHolder, msg: "task " + t.ID + " has no active lease (status " + string(t.Status) + ")"}
	}
	if t.Lease.Holder != holder {
		return &wrapped{err: ErrNotHolder, msg: "task " + t.ID + " is leased by " + t.Lease.Holder + ", not " + holder}
	}
	if !now.Before(t.Lease.ExpiresAt) {
		return &wrapped{err: ErrLeaseExpired, msg: "task " + t.ID + " lease expired at " + t.Lease.ExpiresAt.UTC().Format(time.RFC3339)}
	}
	return nil
}

// HeartbeatAnswer is what a worker learns from a heartbeat.
type HeartbeatAnswer struct {
	// Cancelled: the task was cancelled; the worker must stop and discard.
	Cancelled bool `json:"cancelled"`
	// Paused: the task was paused for a swarm; the worker should stop at a
	// safe point (the lease stays until it expires or is released).
	Paused    bool      `json:"paused"`
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	Epoch     int64     `json:"epoch"`
}

// Heartbeat renews holder's lease on t until now+ttl and records progress.
// A cancelled task answers Cancelled without error (whatever the epoch) so
// the worker learns to stop; otherwise the fence is checked (CheckFence).
func Heartbeat(t Task, holder string, epoch int64, p *Progress, now time.Time, ttl time.Duration) (Task, HeartbeatAnswer, error) {
	if t.Status == StatusCancelled {
		return t, HeartbeatAnswer{Cancelled: true, Epoch: t.Lease.Epoch}, nil
	}
	if ttl <= 0 {
		return t, HeartbeatAnswer{}, invalid("heartbeat", "ttl", "must be positive, got %s", ttl)
	}
	if p != nil {
		if p.Percent < 0 || p.Percent > 100 {
			return t, HeartbeatAnswer{}, invalid("heartbeat", "progress.percent", "%d is outside 0..100", p.Percent)
		}
		if utf8.RuneCountInString(p.Note)+utf8.RuneCountInString(p.Phase) > MaxProgressNoteLen {
			return t, HeartbeatAnswer{}, invalid("heartbeat", "progress.note", "longer than %d characters", MaxProgressNoteLen)
		}
	}
	if err := CheckFence(t, holder, epoch, now); err != nil {
		return t, HeartbeatAnswer{}, err
	}
	t.Lease.ExpiresAt = now.Add(ttl)
	t.Lease.HeartbeatAt = now
	if p != nil {
		cp := *p
		t.Lease.Progress = &cp
	}
	t.UpdatedAt = now
	return t, HeartbeatAnswer{Paused: t.Paused, ExpiresAt: t.Lease.ExpiresAt, Epoch: t.Lease.Epoch}, nil
}

// Expired reports whether t is in progress under a lease that ran out at or
// before now.
func Expired(t Task, now time.Time) bool {
	return t.Status == StatusInProgress && t.Lease.Held() && !now.Before(t.Lease.ExpiresAt)
}

// Expire returns an expired task to the ready set: in_progress → pending,
// lease released (epoch kept, so the late holder's reports are fenced off).
// The attempt was counted when the lease was granted. When maxAttempts > 0
// and the task has used them all, it fails instead of returning. ok is false
// (and t unchanged) when the lease has not expired.
func Expire(t Task, now time.Time, maxAttempts int) (out Task, ok bool) {
	if !Expired(t, now) {
		return t, false
	}
	to := StatusPending
	if maxAttempts > 0 && t.Attempts >= maxAttempts {
		to = StatusFailed
	}
	t.Status = to
	t.Lease = Lease{Epoch: t.Lease.Epoch}
	t.UpdatedAt = now
	return t, true
}

// Report applies a worker's final report: completed or failed with a result,
// after the fence check. The lease is released (epoch kept).
func Report(t Task, holder string, epoch int64, to TaskStatus, result []byte, now time.Time) (Task, error) {
	if to != StatusCompleted && to != StatusFailed {
		return t, invalid("report", "status", "a report is completed or failed, not %q", to)
	}
	if err := checkJSON("report", "result", result, MaxResultLen); err != nil {
		return t, err
	}
	if err := CheckFence(t, holder, epoch, now); err != nil {
		return t, err
	}
	t, err := Transition(t, to, now)
	if err != nil {
		return t, err
	}
	if len(result) > 0 {
		t.Result = append([]byte(nil), result...)
	}
	return t, nil
}

// Release gives a lease back without a result (the worker stops early): the
// task returns to pending after the fence check.
func Release(t Task, holder string, epoch int64, now time.Time) (Task, error) {
	if err := CheckFence(t, holder, epoch, now); err != nil {
		return t, err
	}
	return Transition(t, StatusPending, now)
}

// wrapped is an error with its own message that unwraps to a sentinel.
type wrapped struct {
	err error
	msg string
}

func (w *wrapped) Error() string { return w.err.Error() + ": " + w.msg }
func (w *wrapped) Unwrap() error { return w.err }
