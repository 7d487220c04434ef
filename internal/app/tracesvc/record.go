package tracesvc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/internal/jobs"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/trace"
)

// EventInput feeds the events of one agent session, in order, to its
// trace assembly (what the client hooks send).
type EventInput struct {
	Project string `json:"project,omitempty"`
	// SessionID names the session (the hooks use the task id,
	// "claude-<session id>").
	SessionID string        `json:"session_id"`
	Events    []trace.Event `json:"events"`
}

// EventResult says what the events changed.
type EventResult struct {
	Project   string `json:"project"`
	SessionID string `json:"session_id"`
	// Updates are the traces opened, extended or closed, in order.
	Updates []trace.TraceUpdate `json:"updates"`
	// Learned are the failure patterns created or updated by the traces
	// that closed.
	Learned []trace.FailurePattern `json:"learned,omitempty"`
	// ReviewQueued: a session end queued the task-end review.
	ReviewQueued bool `json:"review_queued,omitempty"`
}

// maxEventsPerCall bounds one call.
const maxEventsPerCall = 256

// RecordEvents feeds session events to the session's trace assembly in one
// transaction: traces are written as they open, grow and close; a failed
// attempt's error joins a group of the project's error grouper (its group
// id is added to the attempt's signatures); a closed trace appends its
// artifacts' execution records, updates its skill's success rate, and —
// when it failed, was retried and then succeeded — creates or updates the
// failure pattern with the fix (the immediate part of the task-end
// review); an attempt made after a pre-execution warning teaches the
// warned pattern whether its warning helped. A session end queues the
// task-end review as a background job. Events already fed (same id) are
// ignored. Every text is redacted before it is stored.
func (s *Service) RecordEvents(ctx context.Context, in EventInput) (*EventResult, error) {
	const op = "record trace events"
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "session_id", in.SessionID); err != nil {
		return nil, err
	}
	switch {
	case len(in.Events) == 0:
		return nil, app.Invalid(op, "events", "at least one event is required")
	case len(in.Events) > maxEventsPerCall:
		return nil, app.Invalid(op, "events", "%d events in one call; at most %d", len(in.Events), maxEventsPerCall)
	}
	now := s.env.Now()
	events := make([]trace.Event, len(in.Events))
	for i, ev := range in.Events {
		if ev.Time.IsZero() {
			ev.Time = now
		}
		if ev.TaskID == "" {
			ev.TaskID = in.SessionID // a hook session is its task
		}
		events[i] = scrubEvent(ev)
	}
	res := &EventResult{Project: project, SessionID: in.SessionID}
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		*res = EventResult{Project: project, SessionID: in.SessionID, Updates: []trace.TraceUpdate{}}
		sess, err := tx.LockTraceSession(ctx, project, in.SessionID)
		if err != nil {
			return err
		}
		st, err := decodeSession(sess, in.SessionID)
		if err != nil {
			return app.Invalid(op, "session_id", "the stored state of session %s cannot be read: %v", in.SessionID, err)
		}
		var grouper *trace.Grouper
		for i, ev := range events {
			if err := s.feed(ctx, tx, project, &st, ev, &grouper, res, now); err != nil {
				return invalidAt(op, i, err)
			}
		}
		if grouper != nil {
			if err := saveGrouper(ctx, tx, project, grouper, now); err != nil {
				return err
			}
		}
		rec, err := st.encode(project, in.SessionID, now)
		if err != nil {
			return err
		}
		return tx.PutTraceSession(ctx, rec)
	})
	if err != nil {
		return nil, err
	}
	if res.ReviewQueued {
		s.wake()
	}
	return res, nil
}

func invalidAt(op string, i int, err error) error {
	var ve *trace.ValidationError
	if errors.As(err, &ve) {
		e := invalid(op, err).(*app.Error)
		e.Field = fmt.Sprintf("events[%d].%s", i, e.Field)
		return e
	}
	return err
}

// feed applies one event.
func (s *Service) feed(ctx context.Context, tx store.Tx, project string, st *sessionState, ev trace.Event,
	grouper **trace.Grouper, res *EventResult, now time.Time) error {
	skill := ""
	if ev.Kind == trace.EventCommand {
		skill = ev.SkillID
		if skill == "" {
			skill = "cmd:" + trace.FamilyOf(ev.Command)
		}
		if w := st.Warned[skill]; len(w) > 0 {
			ev.WarnedPatterns = append(slices.Clone(w), ev.WarnedPatterns...)
			delete(st.Warned, skill)
		}
	}
	next, updates, err := trace.Feed(st.Assembler, ev, s.cfg.Assembly)
	if err != nil {
		return err
	}
	st.Assembler = next
	for _, u := range updates {
		t := u.Trace
		last := &t.Attempts[len(t.Attempts)-1]
		fresh := ev.Kind == trace.EventCommand && last.Timestamp.Equal(ev.Time) && t.SkillID == truncID(skill)
		if fresh && !last.Success && ev.Output != "" {
			if *grouper == nil {
				if *grouper, err = s.loadGrouper(ctx, tx, project); err != nil {
					return err
				}
			}
			a := (*grouper).Assign(ev.Output, ev.Command, ev.Time)
			if !slices.Contains(last.Signatures, a.GroupID) && len(last.Signatures) < trace.MaxSignatures {
				last.Signatures = append(last.Signatures, a.GroupID)
				st.patchChain(t.ID, last.Index, last.Signatures)
			}
		}
		if fresh && len(last.WarnedPatterns) > 0 {
			if err := s.learnFromWarning(ctx, tx, project, *last); err != nil {
				return err
			}
		}
		if err := tx.PutTrace(ctx, project, t, now); err != nil {
			return err
		}
		if u.Kind == trace.UpdateClosed {
			learned, err := s.closed(ctx, tx, project, t, now)
			if err != nil {
				return err
			}
			res.Learned = append(res.Learned, learned...)
		}
		res.Updates = append(res.Updates, trace.TraceUpdate{Kind: u.Kind, Trace: t})
	}
	if ev.Kind == trace.EventSessionEnd {
		task := cmp.Or(st.Assembler.TaskID, ev.TaskID, st.Assembler.SessionID)
		n, err := tx.CountTraces(ctx, project, store.TraceFilter{TaskID: task})
		if err != nil {
			return err
		}
		if n > 0 {
			if _, err := jobs.Enqueue(ctx, tx, now, jobs.Request{Kind: KindReviewTask,
				Args: reviewTaskArgs{Project: project, TaskID: task}, RunAt: now,
				UniqueKey: KindReviewTask + "/" + project + "/" + task, Mode: store.EnqueueRevive}); err != nil {
				return err
			}
			res.ReviewQueued = true
		}
	}
	return nil
}

func truncID(s string) string { return trace.Truncate(s, trace.MaxIDLen) }

// patchChain sets the signatures of an attempt of an open chain (the group
// id the grouper gave its error).
func (st *sessionState) patchChain(traceID string, index int, sigs []string) {
	for i := range st.Assembler.Open {
		ch := &st.Assembler.Open[i]
		if ch.Trace.ID == traceID && index-1 < len(ch.Trace.Attempts) {
			ch.Trace.Attempts[index-1].Signatures = slices.Clone(sigs)
		}
	}
}

// learnFromWarning updates the patterns a warning named before attempt a.
func (s *Service) learnFromWarning(ctx context.Context, tx store.Tx, project string, a trace.Attempt) error {
	for _, id := range a.WarnedPatterns {
		p, err := tx.LockFailurePattern(ctx, project, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if err := tx.PutFailurePattern(ctx, project, trace.LearnFromWarnedAttempt(p, a, s.cfg.Check)); err != nil {
			return err
		}
	}
	return nil
}

// closed does what a trace's closing does, once per trace: the artifacts'
// execution records, the skill's statistics, and the failure patterns a
// recovered chain teaches. It returns the patterns created or changed.
func (s *Service) closed(ctx context.Context, tx store.Tx, project string, t trace.ExecutionTrace, now time.Time) ([]trace.FailurePattern, error) {
	if err := scheduleReviews(ctx, tx, project, now); err != nil {
		return nil, err
	}
	if recs := trace.RecordsFromTrace(&t); len(recs) > 0 {
		if err := tx.InsertExecutionRecords(ctx, project, recs); err != nil {
			return nil, err
		}
	}
	if err := lockSkills(ctx, tx, project, []string{t.SkillID}); err != nil {
		return nil, err
	}
	patterns, err := tx.ListFailurePatterns(ctx, project, store.FailurePatternFilter{SkillID: t.SkillID})
	if err != nil {
		return nil, err
	}
	rev, err := trace.ReviewTask([]trace.ExecutionTrace{t}, patterns, now, s.cfg.Review)
	if err != nil {
		return nil, err
	}
	for _, v := range rev.Skills {
		stats, err := tx.GetTraceSkill(ctx, project, v.SkillID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			stats = trace.SkillStats{SkillID: v.SkillID}
		case err != nil:
			return nil, err
		}
		if err := tx.PutTraceSkill(ctx, project, stats.Apply(v), now); err != nil {
			return nil, err
		}
	}
	var out []trace.FailurePattern
	for _, ch := range rev.Patterns {
		if err := tx.PutFailurePattern(ctx, project, ch.Pattern); err != nil {
			return nil, err
		}
		out = append(out, ch.Pattern)
	}
	return out, nil
}

// RecordTraceInput is a trace recorded whole, by an agent or a program
// that knows its attempts.
type RecordTraceInput struct {
	Project string               `json:"project,omitempty"`
	Trace   trace.ExecutionTrace `json:"trace"`
}

// RecordTraceResult is the trace as stored and what it taught.
type RecordTraceResult struct {
	Project string                 `json:"project"`
	Trace   trace.ExecutionTrace   `json:"trace"`
	Created bool                   `json:"created"`
	Learned []trace.FailurePattern `json:"learned,omitempty"`
}

// RecordTrace records a whole trace (seed: ExecutionTrace). Missing ids,
// creation time, final success and the error signatures of failed
// attempts are filled in; a trace whose skill is empty takes the command
// family of its first attempt's "command" context. Recording the same id
// again replaces the trace; its closing (statistics, patterns) counts
// once.
func (s *Service) RecordTrace(ctx context.Context, in RecordTraceInput) (*RecordTraceResult, error) {
	const op = "record trace"
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	now := s.env.Now()
	t := scrubTrace(in.Trace)
	if t.ID == "" {
		t.ID = app.NewID("tr-")
	}
	if len(t.Attempts) > 0 {
		if t.CreatedAt.IsZero() {
			t.CreatedAt = t.Attempts[0].Timestamp
		}
		if !t.Open {
			t.FinalSuccess = t.Attempts[len(t.Attempts)-1].Success
		}
	}
	if t.CreatedAt.IsZero() {
		t.CreatedAt = now
	}
	for i := range t.Attempts {
		a := &t.Attempts[i]
		if a.Index == 0 {
			a.Index = i + 1
		}
		if a.Timestamp.IsZero() {
			a.Timestamp = t.CreatedAt
		}
		if a.FixApplied != "" && a.FixSource == "" {
			a.FixSource = trace.FixSelfCorrection
		}
	}
	if t.SkillID == "" && len(t.Attempts) > 0 {
		if cmd := t.Attempts[0].Context[trace.ContextCommand]; cmd != "" {
			t.Family = trace.FamilyOf(cmd)
			t.SkillID = "cmd:" + t.Family
		}
	}
	if t.SkillID == "" {
		return nil, app.Invalid(op, "trace.skill_id", "is empty and the first attempt has no command context to derive it from")
	}
	if err := t.Validate(); err != nil {
		return nil, invalid(op, err)
	}
	res := &RecordTraceResult{Project: project}
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		tr := t
		tr.Attempts = slices.Clone(t.Attempts)
		old, err := tx.GetTrace(ctx, project, tr.ID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			res.Created = true
		case err != nil:
			return err
		}
		var grouper *trace.Grouper
		for i := range tr.Attempts {
			a := &tr.Attempts[i]
			if a.Success || a.Error == "" {
				continue
			}
			if grouper == nil {
				if grouper, err = s.loadGrouper(ctx, tx, project); err != nil {
					return err
				}
			}
			g := grouper.Assign(a.Error, a.Context[trace.ContextCommand], a.Timestamp)
			if a.ErrorType == "" {
				a.ErrorType = g.Signature.Type
			}
			for _, sig := range g.Signatures() {
				if !slices.Contains(a.Signatures, sig) && len(a.Signatures) < trace.MaxSignatures {
					a.Signatures = append(a.Signatures, sig)
				}
			}
		}
		if grouper != nil {
			if err := saveGrouper(ctx, tx, project, grouper, now); err != nil {
				return err
			}
		}
		if err := tx.PutTrace(ctx, project, tr, now); err != nil {
			return err
		}
		res.Trace, res.Learned = tr, nil
		if !tr.Open && (res.Created || old.Open) {
			if res.Learned, err = s.closed(ctx, tx, project, tr, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// skillOf returns the skill of a command ("cmd:<family>") unless one is
// named.
func skillOf(skill, command string) string {
	if strings.TrimSpace(skill) != "" {
		return skill
	}
	return "cmd:" + trace.FamilyOf(command)
}

// lockSkills serialises the transactions that read and rewrite the failure
// patterns and statistics of the skills (in id order, so two callers never
// wait on each other crosswise): a pattern is read, updated and written
// whole, and two chains closing at once must not lose an occurrence.
func lockSkills(ctx context.Context, tx store.Tx, project string, skills []string) error {
	skills = slices.Clone(skills)
	slices.Sort(skills)
	for _, sk := range slices.Compact(skills) {
		if _, err := tx.LockTraceState(ctx, project, "skill-lock/"+sk); err != nil {
			return err
		}
	}
	return nil
}
