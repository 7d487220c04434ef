package experiencesvc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/store"
)

// maxExtractTurns is the number of a task's most recent turns extraction
// reads (the transcript is cut further to the model's budget).
const maxExtractTurns = 1000

// SignalsInput asks for a task's feedback signals to be extracted.
type SignalsInput struct {
	Project string `json:"project,omitempty"`
	TaskID  string `json:"bead_id"`
	// Extractor is "rules", "llm", or "" / "auto" (the chat model when one
	// is configured, else rules).
	Extractor string `json:"extractor,omitempty"`
}

// SignalsResult reports an extraction of signals. The task's earlier
// signals by the same extractor are replaced.
type SignalsResult struct {
	Project   string                      `json:"project"`
	TaskID    string                      `json:"bead_id"`
	Extractor experience.Extractor        `json:"extractor"`
	Signals   []experience.FeedbackSignal `json:"signals"`
	// Replaced counts the earlier signals of this extractor removed.
	Replaced int64 `json:"replaced"`
	// Calls counts the model calls made.
	Calls int `json:"llm_calls"`
}

// ExtractSignals finds the feedback signals of a task's captured
// conversation, by the chat model or by the bilingual rules, and stores
// them (replacing the task's earlier signals of that extractor).
func (s *Service) ExtractSignals(ctx context.Context, in SignalsInput) (*SignalsResult, error) {
	const op = "extract signals"
	now := s.env.Now()
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "bead_id", in.TaskID); err != nil {
		return nil, err
	}
	by, err := s.signalExtractor(op, in.Extractor)
	if err != nil {
		return nil, err
	}
	turns, err := s.taskTurns(ctx, op, project, in.TaskID)
	if err != nil {
		return nil, err
	}
	res := &SignalsResult{Project: project, TaskID: in.TaskID, Extractor: by}
	var sigs []experience.FeedbackSignal
	if by == experience.ExtractorLLM {
		sigs, err = experience.ExtractSignalsWithModel(ctx, s.chat, s.extractInput(ctx, project, in.TaskID, turns), now)
		res.Calls = 1
		if err != nil {
			return nil, modelError(op, err)
		}
	} else {
		sigs = experience.ExtractSignalsByRules(turns, now)
	}
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		var err error
		res.Signals, res.Replaced, err = s.replaceSignals(ctx, tx, project, in.TaskID, by, sigs, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (s *Service) signalExtractor(op, name string) (experience.Extractor, error) {
	switch strings.ToLower(name) {
	case "", "auto":
		if s.chat != nil {
			return experience.ExtractorLLM, nil
		}
		return experience.ExtractorRules, nil
	case string(experience.ExtractorRules):
		return experience.ExtractorRules, nil
	case string(experience.ExtractorLLM):
		if s.chat == nil {
			return "", &app.Error{Op: op, Kind: app.KindConflict, Field: "extractor", Message: "no chat model is configured",
				Hint: "configure [[model.chat]] in kaizen.toml, use extractor rules, or let the agent extract",
				Next: "extraction_request"}
		}
		return experience.ExtractorLLM, nil
	}
	return "", app.Invalid(op, "extractor", "unknown extractor %q (want auto, rules or llm)", name)
}

// replaceSignals stores a task's signals of one extractor in place of the
// earlier ones, dropping those under the confidence floor.
func (s *Service) replaceSignals(ctx context.Context, tx store.Tx, project, taskID string, by experience.Extractor,
	sigs []experience.FeedbackSignal, now time.Time) ([]experience.FeedbackSignal, int64, error) {
	removed, err := tx.DeleteSignals(ctx, project, taskID, by)
	if err != nil {
		return nil, 0, err
	}
	sigs = slices.Clone(sigs)
	app.ScrubStruct(&sigs)
	out := make([]experience.FeedbackSignal, 0, len(sigs))
	for _, sig := range sigs {
		if sig.Confidence < s.cfg.MinSignalConfidence {
			continue
		}
		sig.ID = app.NewID("sig-")
		sig.Project, sig.TaskID, sig.Extractor = project, taskID, by
		if sig.CreatedAt.IsZero() {
			sig.CreatedAt = now
		}
		sig.CreatedAt = sig.CreatedAt.UTC().Truncate(time.Microsecond)
		if _, err := tx.InsertSignal(ctx, sig); err != nil {
			return nil, 0, err
		}
		out = append(out, sig)
	}
	return out, removed, nil
}

// taskTurns reads the most recent turns of a task, oldest first; a task
// without captured turns is not found.
func (s *Service) taskTurns(ctx context.Context, op, project, taskID string) ([]experience.Turn, error) {
	var turns []experience.Turn
	err := s.env.View(ctx, op, func(tx store.Tx) error {
		var err error
		turns, err = tx.ListTurns(ctx, project, store.TurnFilter{TaskID: taskID, NewestFirst: true, Limit: maxExtractTurns})
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(turns) == 0 {
		return nil, &app.Error{Op: op, Kind: app.KindNotFound, Field: "bead_id",
			Message: "task " + taskID + " has no captured turns", Next: "capture",
			Hint: "capture the conversation first (kaizen capture, the client hooks, or the capture tool)"}
	}
	slices.Reverse(turns)
	// Turns captured before the redaction boundary existed may hold
	// secrets; they go to a model or an agent from here.
	for i := range turns {
		turns[i].Content = app.Scrub(turns[i].Content)
	}
	return turns, nil
}

// extractInput gathers what extraction reads: the turns and a summary of
// the task's recorded outcomes and open errors.
func (s *Service) extractInput(ctx context.Context, project, taskID string, turns []experience.Turn) experience.ExtractInput {
	in := experience.ExtractInput{Project: project, TaskID: taskID, Turns: turns}
	var b strings.Builder
	_ = s.env.Store.View(ctx, func(tx store.Tx) error {
		outs, err := tx.ListOutcomes(ctx, project, store.OutcomeFilter{TaskID: taskID, Limit: 3})
		if err != nil {
			return err
		}
		for _, o := range outs {
			b.WriteString(fmt.Sprintf("Recorded outcome: success=%t, %d errors, %d retries, %d ms", o.Success,
				o.ErrorCount, o.RetryCount, o.DurationMs))
			if o.FailureMode != "" {
				b.WriteString(", failure mode " + string(o.FailureMode))
			}
			if o.FailureDetails != "" {
				b.WriteString(": " + o.FailureDetails)
			}
			b.WriteString(".\n")
		}
		return nil
	})
	in.Outcome = b.String()
	return in
}

// modelError wraps a chat model failure.
func modelError(op string, err error) error {
	var ee *experience.ExtractionError
	if errors.As(err, &ee) {
		return &app.Error{Op: op, Kind: app.KindInvalid, Field: ee.Field, Message: ee.Message, Err: err}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &app.Error{Op: op, Kind: app.KindInternal, Message: "the chat model did not answer in time: " + err.Error(), Err: err}
	}
	return &app.Error{Op: op, Kind: app.KindInternal, Message: "the chat model failed: " + err.Error(), Err: err,
		Hint: "check [[model.chat]] providers; or let the calling agent extract", Next: "extraction_request"}
}

// SignalQuery lists stored signals.
type SignalQuery struct {
	Project string `json:"project,omitempty"`
	TaskID  string `json:"bead_id,omitempty"`
	Type    string `json:"type,omitempty"`
	Limit   int    `json:"limit,omitempty"`
	Offset  int    `json:"offset,omitempty"`
}

// SignalList is a page of signals, oldest first.
type SignalList = app.Page[experience.FeedbackSignal]

// ListSignals lists stored feedback signals.
func (s *Service) ListSignals(ctx context.Context, q SignalQuery) (*SignalList, error) {
	const op = "list signals"
	project, limit, err := s.env.PageQuery(op, q.Project, q.Limit, q.Offset, "bead_id", q.TaskID)
	if err != nil {
		return nil, err
	}
	typ := experience.SignalType(q.Type)
	if q.Type != "" && !slices.Contains(experience.SignalTypes, typ) {
		return nil, app.Invalid(op, "type", "unknown signal type %q (want one of %s)", q.Type, joinStrings(experience.SignalTypes))
	}
	f := store.SignalFilter{TaskID: q.TaskID, Type: typ, Limit: limit, Offset: q.Offset}
	return app.ListPage(ctx, s.env, op, project, limit, q.Offset,
		func(tx store.Tx) (int64, error) { return tx.CountSignals(ctx, project, f) },
		func(tx store.Tx) ([]experience.FeedbackSignal, error) { return tx.ListSignals(ctx, project, f) })
}

// ExperienceInput asks for a task's experience.
type ExperienceInput struct {
	Project string `json:"project,omitempty"`
	TaskID  string `json:"bead_id"`
	// Mode is minimal, balanced or full; empty means experience.mode.
	Mode string `json:"mode,omitempty"`
}

// ExperienceResult reports an extraction.
type ExperienceResult struct {
	Project string `json:"project"`
	TaskID  string `json:"bead_id"`
	// Cached is true when the task's experience had been extracted before:
	// nothing was called or written.
	Cached bool            `json:"cached"`
	Mode   experience.Mode `json:"mode"`
	// Calls counts the model calls this request made.
	Calls      int                        `json:"llm_calls"`
	Experience *experience.TaskExperience `json:"experience,omitempty"`
	// Signals are the signals stored by this request.
	Signals []experience.FeedbackSignal `json:"signals"`
	// Heuristics are the merge decisions of the experience's lessons.
	Heuristics []HeuristicChange `json:"heuristics"`
	Message    string            `json:"message,omitempty"`
}

// HeuristicChange is what a lesson of an experience did to the heuristic
// store: created a candidate, updated a near duplicate, or appended
// evidence to a related heuristic.
type HeuristicChange struct {
	Action      experience.EvidenceAction  `json:"action"`
	HeuristicID string                     `json:"heuristic_id"`
	Similarity  float64                    `json:"similarity"`
	Status      experience.HeuristicStatus `json:"status"`
	Rule        string                     `json:"rule"`
	Transition  *experience.Transition     `json:"transition,omitempty"`
}

// ExtractExperience extracts what a finished task teaches: goal, success
// criteria, failed attempts, the working approach, and transferable
// heuristics, which are merged into the heuristic store. Extraction is
// cached per task: asking again returns the stored experience without a
// model call. Without a chat model (or in minimal mode) only rule-based
// signals are extracted; the calling agent can still provide the
// experience through ExtractionRequest and SubmitExtraction.
func (s *Service) ExtractExperience(ctx context.Context, in ExperienceInput) (*ExperienceResult, error) {
	const op = "extract experience"
	now := s.env.Now()
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "bead_id", in.TaskID); err != nil {
		return nil, err
	}
	mode, err := s.mode(op, in.Mode)
	if err != nil {
		return nil, err
	}
	if !s.cfg.ExtractionEnabled {
		return nil, &app.Error{Op: op, Kind: app.KindConflict, Message: "experience extraction is disabled",
			Hint: "set experience.extraction_enabled = true in kaizen.toml"}
	}
	// One extraction per task at a time: a concurrent request waits and
	// then finds the cached experience.
	defer s.writers.lock("task\x00" + project + "\x00" + in.TaskID)()
	if cached, err := s.cachedExperience(ctx, op, project, in.TaskID); err != nil || cached != nil {
		return cached, err
	}
	turns, err := s.taskTurns(ctx, op, project, in.TaskID)
	if err != nil {
		return nil, err
	}
	if mode == experience.ModeMinimal || s.chat == nil {
		res := &ExperienceResult{Project: project, TaskID: in.TaskID, Mode: experience.ModeMinimal,
			Heuristics: []HeuristicChange{}}
		sigs := experience.ExtractSignalsByRules(turns, now)
		err := s.env.Update(ctx, op, func(tx store.Tx) error {
			var err error
			res.Signals, _, err = s.replaceSignals(ctx, tx, project, in.TaskID, experience.ExtractorRules, sigs, now)
			return err
		})
		if err != nil {
			return nil, err
		}
		if s.chat == nil {
			res.Message = "no chat model is configured: feedback signals were found by rules; the calling agent can " +
				"extract the experience (extraction_request, then extraction_submit)"
		} else {
			res.Message = "minimal mode makes no model call: feedback signals were found by rules"
		}
		return res, nil
	}
	exp, err := experience.ExtractWithModel(ctx, s.chat, s.extractInput(ctx, project, in.TaskID, turns), mode, now)
	if err != nil {
		return nil, modelError(op, err)
	}
	res, err := s.storeExperience(ctx, op, exp, now)
	if err != nil {
		return nil, err
	}
	res.Calls = exp.Calls
	return res, nil
}

func (s *Service) mode(op, name string) (experience.Mode, error) {
	if name == "" {
		return s.cfg.Mode, nil
	}
	m := experience.Mode(strings.ToLower(name))
	if !slices.Contains(experience.Modes, m) {
		return "", app.Invalid(op, "mode", "unknown mode %q (want minimal, balanced or full)", name)
	}
	return m, nil
}

// cachedExperience returns the stored experience of a task as a cached
// result, or nil when there is none.
func (s *Service) cachedExperience(ctx context.Context, op, project, taskID string) (*ExperienceResult, error) {
	var res *ExperienceResult
	err := s.env.View(ctx, op, func(tx store.Tx) error {
		exp, err := tx.GetExperience(ctx, project, taskID)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		res = &ExperienceResult{Project: project, TaskID: taskID, Cached: true, Mode: exp.Mode, Experience: &exp,
			Signals: exp.Signals, Heuristics: []HeuristicChange{}}
		return nil
	})
	return res, err
}

// storeExperience stores a new experience with its signals and merges its
// heuristics, in one transaction. When the task already has an experience
// (a concurrent writer won), that one is returned and nothing is written.
func (s *Service) storeExperience(ctx context.Context, op string, exp experience.TaskExperience, now time.Time) (*ExperienceResult, error) {
	app.ScrubStruct(&exp) // a model's or an agent's text, made from turns
	project := exp.Project
	exp.CreatedAt = now
	var cands []experience.TransferableHeuristic
	var vecs [][]float32
	if s.cfg.HeuristicsEnabled && len(exp.Heuristics) > 0 {
		cands = exp.Heuristics
		texts := make([]string, len(cands))
		for i, c := range cands {
			texts[i] = experience.HeuristicText(c.Kind, c.Trigger, c.Rule)
		}
		var err error
		if vecs, err = s.embed(ctx, op, texts...); err != nil {
			return nil, err
		}
	}
	defer s.writers.lock("heuristics\x00" + project)()
	// The merge judge's verdicts, asked before the transaction so that no
	// model call holds it (nil without the model).
	verdicts, err := s.judgeLessons(ctx, op, project, cands, vecs)
	if err != nil {
		return nil, err
	}
	res := &ExperienceResult{Project: project, TaskID: exp.TaskID, Mode: exp.Mode, Heuristics: []HeuristicChange{}}
	var after func()
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		res.Cached, res.Heuristics = false, []HeuristicChange{}
		w, err := s.vecWriter(ctx, tx, project)
		if err != nil {
			return err
		}
		sigs, _, err := s.replaceSignals(ctx, tx, project, exp.TaskID, exp.Extractor, exp.Signals, now)
		if err != nil {
			return err
		}
		stored := exp
		stored.Signals = sigs
		ok, err := tx.InsertExperience(ctx, stored)
		if err != nil {
			return err
		}
		if !ok {
			return errCached
		}
		res.Experience, res.Signals = &stored, sigs
		if len(cands) > 0 {
			if res.Heuristics, err = s.mergeHeuristics(ctx, tx, w, exp.TaskID, cands, vecs, verdicts, now); err != nil {
				return err
			}
		}
		after, err = w.finish(ctx, tx)
		return err
	})
	if errors.Is(err, errCached) {
		return s.cachedExperience(ctx, op, project, exp.TaskID)
	}
	if err != nil {
		return nil, err
	}
	after()
	return res, nil
}

// errCached rolls back a transaction that found the experience already
// stored.
var errCached = errors.New("experience already extracted")

// ExtractionRequestInput asks for the instructions of the
// agent-as-extractor flow.
type ExtractionRequestInput struct {
	Project string `json:"project,omitempty"`
	TaskID  string `json:"bead_id"`
	// Kind is "experience" (with inline signals; default), "signals" or
	// "skill" (a skill from the task's experience).
	Kind string `json:"kind,omitempty"`
	Mode string `json:"mode,omitempty"`
	// Skill names an existing skill to upgrade (kind skill).
	Skill string `json:"skill,omitempty"`
}

// ExtractionRequest returns what the calling agent needs to extract a
// task's signals, experience or skill itself: instructions, the JSON
// schema, and the transcript. The agent then calls SubmitExtraction.
func (s *Service) ExtractionRequest(ctx context.Context, in ExtractionRequestInput) (*experience.AgentTask, error) {
	const op = "extraction request"
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "bead_id", in.TaskID); err != nil {
		return nil, err
	}
	kind, err := extractionKind(op, in.Kind)
	if err != nil {
		return nil, err
	}
	if kind == "skill" {
		return s.skillRequest(ctx, op, project, in.TaskID, in.Skill)
	}
	mode, err := s.mode(op, in.Mode)
	if err != nil {
		return nil, err
	}
	if kind == "experience" {
		if cached, err := s.cachedExperience(ctx, op, project, in.TaskID); err != nil {
			return nil, err
		} else if cached != nil {
			return nil, &app.Error{Op: op, Kind: app.KindConflict, Field: "bead_id",
				Message: "the experience of task " + in.TaskID + " was already extracted", Next: "get_experience"}
		}
	}
	turns, err := s.taskTurns(ctx, op, project, in.TaskID)
	if err != nil {
		return nil, err
	}
	task, err := experience.AgentExtractionTask(s.extractInput(ctx, project, in.TaskID, turns), kind, mode)
	if err != nil {
		return nil, app.Invalid(op, "kind", "%s", err.Error())
	}
	return &task, nil
}

func extractionKind(op, k string) (string, error) {
	switch k = strings.ToLower(k); k {
	case "":
		return experience.AgentKindExperience, nil
	case experience.AgentKindExperience, experience.AgentKindSignals, experience.AgentKindSkill:
		return k, nil
	}
	return "", app.Invalid(op, "kind", "unknown kind %q (want experience, signals or skill)", k)
}

// ExtractionSubmitInput submits what the agent extracted.
type ExtractionSubmitInput struct {
	Project string `json:"project,omitempty"`
	TaskID  string `json:"bead_id"`
	Kind    string `json:"kind,omitempty"`
	// Result is the JSON object matching the schema of the request.
	Result json.RawMessage `json:"result"`
	Skill  string          `json:"skill,omitempty"`
}

// ExtractionSubmitResult reports a submission.
type ExtractionSubmitResult struct {
	Kind       string            `json:"kind"`
	Signals    *SignalsResult    `json:"signals,omitempty"`
	Experience *ExperienceResult `json:"experience,omitempty"`
	Skill      *SkillResult      `json:"skill,omitempty"`
}

// maxSubmitBytes bounds an agent's submission.
const maxSubmitBytes = 256 << 10

// SubmitExtraction validates and stores what the calling agent extracted
// (signals, an experience with its heuristics, or a skill).
func (s *Service) SubmitExtraction(ctx context.Context, in ExtractionSubmitInput) (*ExtractionSubmitResult, error) {
	const op = "extraction submit"
	in.Result = app.ScrubJSON(in.Result) // an agent's extraction: untrusted text
	now := s.env.Now()
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "bead_id", in.TaskID); err != nil {
		return nil, err
	}
	kind, err := extractionKind(op, in.Kind)
	if err != nil {
		return nil, err
	}
	if len(in.Result) == 0 {
		return nil, app.Invalid(op, "result", "is required: the JSON object the request's schema describes")
	}
	if len(in.Result) > maxSubmitBytes {
		return nil, app.Invalid(op, "result", "is larger than %d bytes", maxSubmitBytes)
	}
	in.Result = unquoteObject(in.Result)
	out := &ExtractionSubmitResult{Kind: kind}
	submitErr := func(err error) error {
		var ee *experience.ExtractionError
		if errors.As(err, &ee) {
			field := "result"
			if ee.Field != "" {
				field += "." + ee.Field
			}
			return &app.Error{Op: op, Kind: app.KindInvalid, Field: field, Message: ee.Message, Err: err}
		}
		return app.Invalid(op, "result", "%s", err.Error())
	}
	switch kind {
	case "signals":
		sigs, err := experience.ParseSignalsJSON(in.Result, project, in.TaskID, experience.ExtractorAgent, now)
		if err != nil {
			return nil, submitErr(err)
		}
		res := &SignalsResult{Project: project, TaskID: in.TaskID, Extractor: experience.ExtractorAgent}
		err = s.env.Update(ctx, op, func(tx store.Tx) error {
			var err error
			res.Signals, res.Replaced, err = s.replaceSignals(ctx, tx, project, in.TaskID, experience.ExtractorAgent, sigs, now)
			return err
		})
		if err != nil {
			return nil, err
		}
		out.Signals = res
	case "experience":
		exp, err := experience.ParseExperienceJSON(in.Result, project, in.TaskID, experience.ExtractorAgent, now)
		if err != nil {
			return nil, submitErr(err)
		}
		if exp.Mode == "" {
			exp.Mode = s.cfg.Mode
		}
		defer s.writers.lock("task\x00" + project + "\x00" + in.TaskID)()
		res, err := s.storeExperience(ctx, op, exp, now)
		if err != nil {
			return nil, err
		}
		if res.Cached {
			res.Message = "the experience of this task was already stored; the submission was not used"
		}
		out.Experience = res
	case "skill":
		res, err := s.submitSkill(ctx, op, project, in.TaskID, in.Skill, in.Result, now)
		if err != nil {
			return nil, err
		}
		out.Skill = res
	}
	return out, nil
}

// GetExperience returns a task's stored experience.
func (s *Service) GetExperience(ctx context.Context, project, taskID string) (*experience.TaskExperience, error) {
	const op = "get experience"
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "bead_id", taskID); err != nil {
		return nil, err
	}
	var exp experience.TaskExperience
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		var err error
		exp, err = tx.GetExperience(ctx, project, taskID)
		if errors.Is(err, store.ErrNotFound) {
			return &app.Error{Op: op, Kind: app.KindNotFound, Field: "bead_id",
				Message: "task " + taskID + " has no extracted experience", Next: "extract_experience"}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &exp, nil
}

// ExperienceQuery lists stored experiences.
type ExperienceQuery struct {
	Project string `json:"project,omitempty"`
	Limit   int    `json:"limit,omitempty"`
	Offset  int    `json:"offset,omitempty"`
}

// ExperienceList is a page of experiences, newest first.
type ExperienceList = app.Page[experience.TaskExperience]

// ListExperiences lists stored task experiences, newest first.
func (s *Service) ListExperiences(ctx context.Context, q ExperienceQuery) (*ExperienceList, error) {
	const op = "list experiences"
	project, limit, err := s.env.PageQuery(op, q.Project, q.Limit, q.Offset)
	if err != nil {
		return nil, err
	}
	return app.ListPage(ctx, s.env, op, project, limit, q.Offset,
		func(tx store.Tx) (int64, error) { return tx.CountExperiences(ctx, project) },
		func(tx store.Tx) ([]experience.TaskExperience, error) {
			return tx.ListExperiences(ctx, project, store.PageFilter{Limit: limit, Offset: q.Offset})
		})
}

// joinStrings joins string-typed values with ", ".
func joinStrings[T ~string](vs []T) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = string(v)
	}
	return strings.Join(parts, ", ")
}

// unquoteObject accepts a result sent as a JSON string holding the object
// ("{\"goal\": …}", an easy mistake for an agent): it is the object it
// holds. Anything else is returned unchanged for validation to judge.
func unquoteObject(raw json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '"' {
		return raw
	}
	var s string
	if json.Unmarshal(t, &s) != nil {
		return raw
	}
	inner := bytes.TrimSpace([]byte(s))
	if len(inner) > 0 && inner[0] == '{' && json.Valid(inner) {
		return inner
	}
	return raw
}
