package experience

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The heuristic lifecycle (seed 001):
//
//	candidate ──(support ≥ 2 tasks and evidence ≥ 3, or adopted by a skill)──► active
//	active ──(confirmed again: support and evidence both beyond the promotion rule)──► refined
//	candidate | active | refined ──(judged misleading on N consecutive recalls)──► stale
//	any but archived ──(superseded by another heuristic, or outdated)──► stale
//	any but archived ──(archived by hand)──► archived
//	stale | archived ──(restored by hand)──► candidate, or active when it meets the promotion rule
//
// Every function here is pure: it takes a heuristic by value and returns the
// changed copy and the transition it made; the engine stores both. UpdatedAt
// is set to now whenever anything changes.

// Transition is a change of a heuristic's status.
type Transition struct {
	From HeuristicStatus `json:"from"`
	To   HeuristicStatus `json:"to"`
	// Reason is the new StatusReason: the rule and the numbers that fired
	// it, or the reason given by a user.
	Reason string `json:"reason"`
}

// TransitionError is a transition the lifecycle does not allow; Reason says
// why.
type TransitionError struct {
	ID       string
	From, To HeuristicStatus
	Reason   string
}

func (e *TransitionError) Error() string {
	id := e.ID
	if id == "" {
		id = "(no id)"
	}
	return fmt.Sprintf("experience: heuristic %s: cannot change status from %s to %s: %s", id, e.From, e.To, e.Reason)
}

// Recallable reports whether recall considers heuristics in status s:
// candidate, active and refined ones; never stale or archived ones.
//
// Candidates are recalled on purpose: a lesson from a single task could
// otherwise never be confirmed or refuted by recall feedback, and their
// lower quality weight (0.5 against 0.7 for active and refined) already
// ranks them below established heuristics of equal relevance.
func Recallable(s HeuristicStatus) bool {
	switch s {
	case StatusCandidate, StatusActive, StatusRefined:
		return true
	}
	return false
}

// lifecycleAtLeastOne keeps a threshold meaningful when a configuration was not
// validated: a zero or negative count threshold acts as 1.
func lifecycleAtLeastOne(n int64) int64 { return max(n, 1) }

// promotable reports whether h meets the support-and-evidence promotion rule.
func (l Lifecycle) promotable(h Heuristic) bool {
	return h.SupportTasks >= lifecycleAtLeastOne(l.PromoteSupportTasks) && h.EvidenceCount >= lifecycleAtLeastOne(l.PromoteEvidence)
}

// refinable reports whether an active h has been confirmed again: support
// and evidence both strictly beyond the promotion rule.
func (l Lifecycle) refinable(h Heuristic) bool {
	return h.SupportTasks > lifecycleAtLeastOne(l.PromoteSupportTasks) && h.EvidenceCount > lifecycleAtLeastOne(l.PromoteEvidence)
}

// lifecycleSet moves h to status to with reason, stamps UpdatedAt and
// returns the transition.
func lifecycleSet(h *Heuristic, to HeuristicStatus, reason string, now time.Time) Transition {
	tr := Transition{From: h.Status, To: to, Reason: reason}
	h.Status, h.StatusReason, h.UpdatedAt = to, reason, now
	return tr
}

func lifecycleTime(t time.Time) *time.Time { return &t }

// Evaluate applies the support-and-evidence rules to h, to be called after
// its support or evidence grew. At most one step is taken per call:
//
//   - candidate → active when SupportTasks ≥ PromoteSupportTasks and
//     EvidenceCount ≥ PromoteEvidence (2 and 3); LastValidatedAt = now;
//   - active → refined when the heuristic is confirmed again after its
//     promotion: SupportTasks > PromoteSupportTasks and EvidenceCount >
//     PromoteEvidence (at least 3 tasks and 4 evidence records by default),
//     so one more supporting task plus one more near-duplicate or related
//     candidate beyond what promotion needed; LastValidatedAt = now.
//     A candidate promoted with counts already that high is refined on its
//     next confirmation, never in the same call;
//   - refined stays refined; stale and archived heuristics are never
//     promoted here (only Restore brings them back).
//
// It returns h unchanged and nil when no rule fires.
func (l Lifecycle) Evaluate(h Heuristic, now time.Time) (Heuristic, *Transition) {
	switch {
	case h.Status == StatusCandidate && l.promotable(h):
		tr := lifecycleSet(&h, StatusActive, fmt.Sprintf(
			"promoted: supported by %d tasks (≥ %d) with %d evidence records (≥ %d)",
			h.SupportTasks, lifecycleAtLeastOne(l.PromoteSupportTasks), h.EvidenceCount, lifecycleAtLeastOne(l.PromoteEvidence)), now)
		h.LastValidatedAt = lifecycleTime(now)
		return h, &tr
	case h.Status == StatusActive && l.refinable(h):
		tr := lifecycleSet(&h, StatusRefined, fmt.Sprintf(
			"refined: confirmed again after activation, supported by %d tasks (> %d) with %d evidence records (> %d)",
			h.SupportTasks, lifecycleAtLeastOne(l.PromoteSupportTasks), h.EvidenceCount, lifecycleAtLeastOne(l.PromoteEvidence)), now)
		h.LastValidatedAt = lifecycleTime(now)
		return h, &tr
	}
	return h, nil
}

// AdoptedBySkill promotes a candidate to active because the skill upgrade
// flow adopted it into skill (the seed's third promotion rule);
// LastValidatedAt = now. Heuristics in any other status are returned
// unchanged with a nil transition: adoption neither re-activates a stale or
// archived heuristic nor refines an active one.
func (l Lifecycle) AdoptedBySkill(h Heuristic, skill string, now time.Time) (Heuristic, *Transition) {
	if h.Status != StatusCandidate {
		return h, nil
	}
	reason := "promoted: adopted by the skill upgrade flow"
	if s := lifecycleOneLine(skill); s != "" {
		reason = "promoted: adopted by skill " + s
	}
	tr := lifecycleSet(&h, StatusActive, reason, now)
	h.LastValidatedAt = lifecycleTime(now)
	return h, &tr
}

// ApplyVerdict records the verdict fb on h. earlier is h's verdicts
// before fb, oldest first (the store's ListHeuristicFeedback order).
//
//   - helpful: HelpfulCount+1, MisleadingStreak = 0, LastValidatedAt = now;
//   - misleading: MisleadingCount+1; MisleadingStreak becomes the number of
//     consecutive *recalls* judged misleading ([MisleadingRecallStreak]);
//     when it reaches the lifecycle's MisleadingStreak (3) on a candidate,
//     active or refined heuristic, it becomes stale.
//
// Seed 001 demotes a lesson "judged misleading after several consecutive
// recalls": several verdicts on one recall count once, and a verdict tied
// to no recall (fb.RecallID empty) is counted but never advances the
// streak, so a lesson that was never recalled cannot be demoted by
// verdicts. Verdicts on stale and archived heuristics are counted the same
// way but never change their status. An unknown verdict changes nothing.
func (l Lifecycle) ApplyVerdict(h Heuristic, fb HeuristicFeedback, earlier []HeuristicFeedback, now time.Time) (Heuristic, *Transition) {
	switch fb.Verdict {
	case VerdictHelpful:
		h.HelpfulCount++
		h.MisleadingStreak = 0
		h.LastValidatedAt = lifecycleTime(now)
		h.UpdatedAt = now
	case VerdictMisleading:
		h.MisleadingCount++
		h.MisleadingStreak = MisleadingRecallStreak(append(slices.Clip(earlier), fb))
		h.UpdatedAt = now
		limit := lifecycleAtLeastOne(l.MisleadingStreak)
		if Recallable(h.Status) && h.MisleadingStreak >= limit {
			tr := lifecycleSet(&h, StatusStale, fmt.Sprintf(
				"demoted: misleading on %d consecutive recalls (limit %d)", h.MisleadingStreak, limit), now)
			return h, &tr
		}
	}
	return h, nil
}

// MisleadingRecallStreak counts the distinct recalls judged misleading
// since the last helpful verdict in history (oldest first). Verdicts
// without a recall id are not counted: the streak is one of recalls.
func MisleadingRecallStreak(history []HeuristicFeedback) int64 {
	seen := map[string]bool{}
	for _, fb := range history {
		switch fb.Verdict {
		case VerdictHelpful:
			clear(seen)
		case VerdictMisleading:
			if fb.RecallID != "" {
				seen[fb.RecallID] = true
			}
		}
	}
	return int64(len(seen))
}

// Supersede makes h stale because heuristic by replaces it, and records
// SupersededBy. It is allowed from every status but archived (a stale
// heuristic may be superseded to record its replacement); by must be
// another heuristic's id.
func Supersede(h Heuristic, by string, now time.Time) (Heuristic, Transition, error) {
	by = strings.TrimSpace(by)
	switch {
	case by == "":
		return h, Transition{}, &TransitionError{ID: h.ID, From: h.Status, To: StatusStale, Reason: "superseding heuristic id is empty"}
	case by == h.ID:
		return h, Transition{}, &TransitionError{ID: h.ID, From: h.Status, To: StatusStale, Reason: "a heuristic cannot supersede itself"}
	}
	if err := lifecycleCheckLive(h, StatusStale); err != nil {
		return h, Transition{}, err
	}
	tr := lifecycleSet(&h, StatusStale, "superseded by "+by, now)
	h.SupersededBy = by
	return h, tr, nil
}

// MarkOutdated makes h stale because a tool or environment it depends on is
// outdated; reason (required) says what changed. It is allowed from every
// status but archived.
func MarkOutdated(h Heuristic, reason string, now time.Time) (Heuristic, Transition, error) {
	reason = lifecycleOneLine(reason)
	if reason == "" {
		return h, Transition{}, &TransitionError{ID: h.ID, From: h.Status, To: StatusStale, Reason: "a reason is required"}
	}
	if err := lifecycleCheckLive(h, StatusStale); err != nil {
		return h, Transition{}, err
	}
	tr := lifecycleSet(&h, StatusStale, "outdated: "+reason, now)
	return h, tr, nil
}

// Archive retires h; reason (required) is kept as its StatusReason. It is
// allowed from every status but archived.
func Archive(h Heuristic, reason string, now time.Time) (Heuristic, Transition, error) {
	reason = lifecycleOneLine(reason)
	if reason == "" {
		return h, Transition{}, &TransitionError{ID: h.ID, From: h.Status, To: StatusArchived, Reason: "a reason is required"}
	}
	if err := lifecycleCheckLive(h, StatusArchived); err != nil {
		return h, Transition{}, err
	}
	tr := lifecycleSet(&h, StatusArchived, "archived: "+reason, now)
	return h, tr, nil
}

// Restorable reports whether Restore accepts a heuristic in state s:
// stale or archived.
func Restorable(s HeuristicStatus) bool { return s == StatusStale || s == StatusArchived }

// Restore brings a stale or archived heuristic back: to active when it
// meets l's promotion rule (support and evidence), else to candidate. It
// resets MisleadingStreak and clears SupersededBy; it does not set
// LastValidatedAt (a restore is not a validation). Restoring a heuristic
// that is neither stale nor archived is an error.
func Restore(h Heuristic, now time.Time, l Lifecycle) (Heuristic, Transition, error) {
	to := StatusCandidate
	if l.promotable(h) {
		to = StatusActive
	}
	if !Restorable(h.Status) {
		return h, Transition{}, &TransitionError{ID: h.ID, From: h.Status, To: to,
			Reason: "only stale or archived heuristics can be restored"}
	}
	reason := fmt.Sprintf("restored: %d supporting tasks, %d evidence records", h.SupportTasks, h.EvidenceCount)
	if to == StatusActive {
		reason += " (meets the promotion rule)"
	}
	tr := lifecycleSet(&h, to, reason, now)
	h.MisleadingStreak = 0
	h.SupersededBy = ""
	return h, tr, nil
}

// lifecycleCheckLive refuses changes to archived (or unknown-status)
// heuristics.
func lifecycleCheckLive(h Heuristic, to HeuristicStatus) error {
	switch h.Status {
	case StatusCandidate, StatusActive, StatusRefined, StatusStale:
		return nil
	case StatusArchived:
		return &TransitionError{ID: h.ID, From: h.Status, To: to, Reason: "the heuristic is archived (restore it first)"}
	}
	return &TransitionError{ID: h.ID, From: h.Status, To: to, Reason: fmt.Sprintf("unknown status %q", h.Status)}
}

// lifecycleOneLine trims s and collapses its whitespace (newlines included)
// to single spaces, so a reason fits on one line.
func lifecycleOneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
