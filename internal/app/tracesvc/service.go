// Package tracesvc is the service of kaizen's failure-learning system (seed
// 003, package trace): it assembles execution traces from the events of
// agent sessions (the client hooks) or records them whole, groups their
// errors into stable signatures, learns failure patterns and the fix that
// resolved them from chains that failed, were retried and then succeeded,
// answers the pre-execution check before a command runs, verifies results
// (self-verification), and runs the task-end and scheduled reviews — the
// scheduled ones as periodic jobs of the durable job runner.
//
// Every text that came from an agent, a tool or a user is redacted
// (internal/redact) before it is stored: see scrub.go.
package tracesvc

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/internal/jobs"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/trace"
)

// Job kinds of the failure-learning system.
const (
	// KindReviewTask is a task's end review, queued when its session ends.
	KindReviewTask = "trace.review_task"
	// KindReviewDaily and KindReviewWeekly are the scheduled reviews,
	// enqueued once per period by the job runner.
	KindReviewDaily  = "trace.review_daily"
	KindReviewWeekly = "trace.review_weekly"
)

// Options configure the service.
type Options struct {
	// Config holds the algorithms' thresholds (trace.DefaultConfig when
	// zero).
	Config trace.Config
	// Wake is called after a commit that queued a job (the job runner's
	// Wake), may be nil.
	Wake func()
	// Heuristics, when set, receives the heuristics a task-end review
	// proposes (after its commit), for the experience system.
	Heuristics func(ctx context.Context, project, taskID string, hs []trace.HeuristicProposal) error
}

// Service is the failure-learning service.
type Service struct {
	env        *app.Env
	cfg        trace.Config
	wake       func()
	heuristics func(ctx context.Context, project, taskID string, hs []trace.HeuristicProposal) error
}

// New returns the service.
func New(env *app.Env, opts Options) *Service {
	cfg := opts.Config
	if reflect.ValueOf(cfg).IsZero() {
		cfg = trace.DefaultConfig()
	}
	wake := opts.Wake
	if wake == nil {
		wake = func() {}
	}
	return &Service{env: env, cfg: cfg, wake: wake, heuristics: opts.Heuristics}
}

// Config returns the service's configuration.
func (s *Service) Config() trace.Config { return s.cfg }

// Register registers the service's job kinds with a runner: the task-end
// review and the daily and weekly scheduled reviews. A scheduled review is
// enqueued per project and period when a trace of the project closes in the
// period (scheduleReviews), due when the period ends, under a unique key per
// project and period: a project without traces gets no review jobs.
func (s *Service) Register(r *jobs.Runner) {
	r.Register(jobs.Kind{Name: KindReviewTask, Handler: s.reviewTaskJob})
	r.Register(jobs.Kind{Name: KindReviewDaily, Handler: s.scheduledJob(ReviewDaily)})
	r.Register(jobs.Kind{Name: KindReviewWeekly, Handler: s.scheduledJob(ReviewWeekly)})
}

// invalid turns a validation error of package trace into the engine's
// invalid-input error; other errors are returned as they are.
func invalid(op string, err error) error {
	if err == nil {
		return nil
	}
	var ve *trace.ValidationError
	if errors.As(err, &ve) {
		field := ve.Object
		if ve.Field != "" {
			field += "." + ve.Field
		}
		return &app.Error{Op: op, Kind: app.KindInvalid, Field: field, Message: ve.Msg, Err: err}
	}
	return err
}

// sessionState is what a session keeps between hook calls.
type sessionState struct {
	Assembler trace.AssemblerState  `json:"assembler"`
	Warnings  trace.SessionWarnings `json:"warnings"`
	// Warned maps a skill to the failure patterns the pre-execution check
	// warned about before its next attempt.
	Warned map[string][]string `json:"warned,omitempty"`
}

func decodeSession(sess store.TraceSession, id string) (sessionState, error) {
	var st sessionState
	if len(sess.State) == 0 {
		a, err := trace.NewAssemblerState(id)
		if err != nil {
			return st, err
		}
		st.Assembler = a
		return st, nil
	}
	if err := json.Unmarshal(sess.State, &st); err != nil {
		return st, err
	}
	if st.Assembler.SessionID == "" {
		st.Assembler.SessionID = id
	}
	return st, nil
}

func (st *sessionState) encode(project, id string, now time.Time) (store.TraceSession, error) {
	data, err := json.Marshal(st)
	return store.TraceSession{Project: project, ID: id, State: data, UpdatedAt: now}, err
}

// grouperState names the persisted error grouper of a project.
const grouperState = "grouper"

// loadGrouper reads the project's grouper for update (a new one when none
// was saved, or when the saved one cannot be restored).
func (s *Service) loadGrouper(ctx context.Context, tx store.Tx, project string) (*trace.Grouper, error) {
	data, err := tx.LockTraceState(ctx, project, grouperState)
	if err != nil {
		return nil, err
	}
	if data != "" {
		if g, err := trace.RestoreGrouper([]byte(data), s.cfg.Grouping); err == nil {
			return g, nil
		}
		s.env.Logger.Warn("trace: the saved error grouper cannot be restored; starting a new one", "project", project)
	}
	return trace.NewGrouper(s.cfg.Grouping)
}

func saveGrouper(ctx context.Context, tx store.Tx, project string, g *trace.Grouper, now time.Time) error {
	data, err := g.MarshalJSON()
	if err != nil {
		return err
	}
	return tx.PutTraceState(ctx, project, grouperState, string(data), now)
}

// ExperienceDocument turns a task-end review's heuristic proposals into the
// experience document the experience system takes from an agent extractor
// (goal, failed attempts, transferable heuristics), so that recall and plan
// guidance use them.
func ExperienceDocument(taskID string, hs []trace.HeuristicProposal) (json.RawMessage, error) {
	type heuristic struct {
		Kind     string `json:"kind"`
		Trigger  string `json:"trigger"`
		Rule     string `json:"rule"`
		Why      string `json:"why"`
		Evidence string `json:"evidence"`
	}
	doc := struct {
		Goal       string      `json:"goal"`
		Heuristics []heuristic `json:"transferable_heuristics"`
	}{Goal: "Failure patterns learned from the execution traces of task " + taskID}
	for _, h := range hs {
		doc.Heuristics = append(doc.Heuristics, heuristic{Kind: h.Kind, Trigger: h.Trigger, Rule: h.Rule, Why: h.Why,
			Evidence: trace.Truncate(strings.Join(h.Evidence, "; "), 1000)})
	}
	return json.Marshal(doc)
}
