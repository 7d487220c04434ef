package experience

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kaizenhq/kaizen/model"
)

// Limits of an extraction. Text fields longer than their cap are cut (the
// cut text ends with "…"); lists longer than their cap keep their first
// items. Neither is an error: a verbose model still yields an experience.
const (
	// ExtractMaxJSONBytes is the largest JSON document the Parse functions
	// accept (agent submissions and model replies alike).
	ExtractMaxJSONBytes = 1 << 20
	// ExtractMaxSignals, ExtractMaxFailedAttempts, ExtractMaxHeuristics and
	// ExtractMaxCriteria cap the lists of an extraction.
	ExtractMaxSignals        = 30
	ExtractMaxFailedAttempts = 10
	ExtractMaxHeuristics     = 10
	ExtractMaxCriteria       = 10
	// DefaultTranscriptChars is the transcript budget when
	// [ExtractInput.MaxTranscriptChars] is 0.
	DefaultTranscriptChars = 24000
)

// Caps of text fields, in characters (runes).
const (
	extractCapGoal      = 1000
	extractCapCriterion = 300
	extractCapLabel     = 120
	extractCapApproach  = 1000
	extractCapReason    = 1000
	extractCapReplaced  = 500
	extractCapWorking   = 2000
	extractCapTrigger   = 300
	extractCapRule      = 500
	extractCapWhy       = 500
	extractCapEvidence  = 500
	extractCapTurnID    = 128
	extractCapOutcome   = 2000
)

// Model call parameters: a low temperature for faithful extraction, and
// reply budgets large enough for the capped lists.
const (
	extractTemperature     = 0.1
	extractSignalsTokens   = 2500
	extractExperienceToken = 4000
)

// ExtractionError is an invalid extraction input, reply or submission.
// Field is a JSON path into the document ("transferable_heuristics[2].kind")
// or the name of the input field; it is empty when the error concerns the
// whole document.
type ExtractionError struct {
	Field   string
	Message string
}

func (e *ExtractionError) Error() string {
	if e.Field == "" {
		return "experience: extraction: " + e.Message
	}
	return "experience: extraction: " + e.Field + ": " + e.Message
}

func extractErr(field, format string, a ...any) error {
	return &ExtractionError{Field: field, Message: fmt.Sprintf(format, a...)}
}

// ExtractInput is a finished task to learn from.
type ExtractInput struct {
	Project string
	TaskID  string
	// Turns are the task's captured turns, oldest first.
	Turns []Turn
	// Outcome is an optional one-paragraph summary of the task's recorded
	// outcome and errors (capped at 2000 characters in prompts).
	Outcome string
	// MaxTranscriptChars is the transcript budget in characters;
	// 0 means [DefaultTranscriptChars].
	MaxTranscriptChars int
}

func (in ExtractInput) budget() int {
	if in.MaxTranscriptChars <= 0 {
		return DefaultTranscriptChars
	}
	return in.MaxTranscriptChars
}

func (in ExtractInput) check() error {
	if strings.TrimSpace(in.TaskID) == "" {
		return extractErr("task_id", "is required")
	}
	if len(in.Turns) == 0 {
		return extractErr("turns", "the task has no turns to extract from")
	}
	return nil
}

// ExtractWithModel extracts a task's experience with a chat model. Mode
// balanced makes exactly one call (the experience with inline feedback
// signals); full makes exactly two (the signals, then the experience given
// them); minimal makes none and returns an [*ExtractionError]. Each reply
// is validated like [ParseExperienceJSON] (unknown fields tolerated) inside
// the request's Accept, so a reply that is malformed or breaks the schema
// counts as a failure of the provider that sent it and the next provider
// of the chain is tried. The result has Mode, Extractor (llm), Calls,
// CreatedAt (now), Project and TaskID set; its signals have no ids (the
// caller assigns them).
func ExtractWithModel(ctx context.Context, chat model.Chat, in ExtractInput, mode Mode, now time.Time) (TaskExperience, error) {
	switch mode {
	case ModeMinimal:
		return TaskExperience{}, extractErr("mode", "minimal mode extracts no experience (it makes no model call; only rule-based signals are kept)")
	case ModeBalanced, ModeFull:
	default:
		return TaskExperience{}, extractErr("mode", "unknown mode %q (want minimal, balanced or full)", mode)
	}
	if chat == nil {
		return TaskExperience{}, extractErr("chat", "no chat model configured")
	}
	if err := in.check(); err != nil {
		return TaskExperience{}, err
	}
	transcript := Transcript(in.Turns, in.budget())
	var (
		signals []FeedbackSignal
		calls   int
		user    string
		system  string
	)
	if mode == ModeFull {
		var err error
		signals, err = extractSignalsCall(ctx, chat, in, transcript, now)
		calls++
		if err != nil {
			return TaskExperience{}, fmt.Errorf("experience: extract signals (call 1 of 2): %w", err)
		}
		system = extractExperienceGivenSignalsPrompt()
		user = extractUserMessage(in, transcript, signals, true)
	} else {
		system = extractExperiencePrompt()
		user = extractUserMessage(in, transcript, nil, false)
	}
	var exp TaskExperience
	accept := func(content string) error {
		raw, err := model.DecodeJSON[extractRawObject](content, model.DecodeOptions{RejectRepaired: true})
		if err != nil {
			return err
		}
		e, err := ParseExperienceJSON(raw, in.Project, in.TaskID, ExtractorLLM, now)
		if err != nil {
			return err
		}
		exp = e
		return nil
	}
	req := model.ChatRequest{
		Messages:    []model.Message{{Role: model.RoleSystem, Content: system}, {Role: model.RoleUser, Content: user}},
		Temperature: model.Temperature(extractTemperature),
		MaxTokens:   extractExperienceToken,
		Accept:      accept,
	}
	_, _, err := model.ChatJSON[extractRawObject](ctx, chat, req, model.DecodeOptions{RejectRepaired: true})
	calls++
	if err != nil {
		step := "experience (1 call)"
		if mode == ModeFull {
			step = "experience (call 2 of 2)"
		}
		return TaskExperience{}, fmt.Errorf("experience: extract %s: %w", step, err)
	}
	if mode == ModeFull {
		exp.Signals = signals
	}
	exp.Mode = mode
	exp.Calls = calls
	return exp, nil
}

// ExtractSignalsWithModel extracts a task's feedback signals with one chat
// call, validated like [ParseSignalsJSON] (unknown fields tolerated).
// Signals below [MinSignalConfidence] are dropped.
func ExtractSignalsWithModel(ctx context.Context, chat model.Chat, in ExtractInput, now time.Time) ([]FeedbackSignal, error) {
	if chat == nil {
		return nil, extractErr("chat", "no chat model configured")
	}
	if err := in.check(); err != nil {
		return nil, err
	}
	signals, err := extractSignalsCall(ctx, chat, in, Transcript(in.Turns, in.budget()), now)
	if err != nil {
		return nil, fmt.Errorf("experience: extract signals: %w", err)
	}
	return signals, nil
}

func extractSignalsCall(ctx context.Context, chat model.Chat, in ExtractInput, transcript string, now time.Time) ([]FeedbackSignal, error) {
	var signals []FeedbackSignal
	accept := func(content string) error {
		raw, err := model.DecodeJSON[extractRawObject](content, model.DecodeOptions{RejectRepaired: true})
		if err != nil {
			return err
		}
		s, err := ParseSignalsJSON(raw, in.Project, in.TaskID, ExtractorLLM, now)
		if err != nil {
			return err
		}
		signals = s
		return nil
	}
	req := model.ChatRequest{
		Messages: []model.Message{{Role: model.RoleSystem, Content: extractSignalsPrompt()},
			{Role: model.RoleUser, Content: extractUserMessage(in, transcript, nil, false)}},
		Temperature: model.Temperature(extractTemperature),
		MaxTokens:   extractSignalsTokens,
		Accept:      accept,
	}
	if _, _, err := model.ChatJSON[extractRawObject](ctx, chat, req, model.DecodeOptions{RejectRepaired: true}); err != nil {
		return nil, err
	}
	return signals, nil
}

// extractRawObject is a JSON object kept as raw bytes: decoding anything
// else (an array, a number) fails, so the JSON extraction of a model reply
// moves on to the next candidate.
type extractRawObject []byte

func (r *extractRawObject) UnmarshalJSON(b []byte) error {
	t := bytes.TrimLeft(b, " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		return errors.New("not a JSON object")
	}
	*r = append((*r)[:0], b...)
	return nil
}

// ParseSignalsJSON validates a feedback-signals document
// ({"feedback_signals": [...]}, see [SignalsSchema]) from a model reply
// (by = llm) or an agent submission (by = agent; unknown fields are then
// rejected). Signals below [MinSignalConfidence] are dropped, duplicates
// (same type, source, turn and evidence) merged keeping the highest
// confidence, text trimmed and capped, and at most [ExtractMaxSignals] kept.
// Errors are [*ExtractionError] with the JSON path of the problem.
func ParseSignalsJSON(data []byte, project, taskID string, by Extractor, now time.Time) ([]FeedbackSignal, error) {
	strict := by == ExtractorAgent
	obj, err := extractTopObject(data, []string{"feedback_signals"}, strict)
	if err != nil {
		return nil, err
	}
	if _, ok := obj["feedback_signals"]; !ok {
		return nil, extractErr("feedback_signals", "is required")
	}
	return extractSignalList(obj, "", project, taskID, by, now, strict)
}

// ParseExperienceJSON validates a task-experience document (see
// [ExperienceSchema]) from a model reply (by = llm) or an agent submission
// (by = agent; unknown fields are then rejected). goal is required and
// non-empty; so are each failed attempt's approach_summary and each
// heuristic's kind, trigger and rule; enums must match; inline
// feedback_signals are validated like [ParseSignalsJSON]. Text is trimmed
// and capped, duplicates removed and lists capped. The result has
// Project, TaskID, Extractor and CreatedAt set, not Mode or Calls.
func ParseExperienceJSON(data []byte, project, taskID string, by Extractor, now time.Time) (TaskExperience, error) {
	strict := by == ExtractorAgent
	obj, err := extractTopObject(data, []string{"goal", "success_criteria", "failed_attempts", "working_approach",
		"transferable_heuristics", "feedback_signals"}, strict)
	if err != nil {
		return TaskExperience{}, err
	}
	exp := TaskExperience{Project: project, TaskID: taskID, Extractor: by, CreatedAt: now,
		SuccessCriteria: []string{}, FailedAttempts: []FailedAttempt{}, Heuristics: []TransferableHeuristic{},
		Signals: []FeedbackSignal{}}
	if exp.Goal, err = extractString(obj, "", "goal", true, extractCapGoal); err != nil {
		return TaskExperience{}, err
	}
	if exp.SuccessCriteria, err = extractStringList(obj, "", "success_criteria", ExtractMaxCriteria, extractCapCriterion); err != nil {
		return TaskExperience{}, err
	}
	if exp.WorkingApproach, err = extractString(obj, "", "working_approach", false, extractCapWorking); err != nil {
		return TaskExperience{}, err
	}
	attempts, err := extractArray(obj, "", "failed_attempts")
	if err != nil {
		return TaskExperience{}, err
	}
	seen := map[string]bool{}
	for i, raw := range attempts {
		p := fmt.Sprintf("failed_attempts[%d]", i)
		fa, err := extractAttempt(raw, p, strict)
		if err != nil {
			if !strict {
				continue // a model's invalid attempt is dropped on its own
			}
			return TaskExperience{}, err
		}
		key := extractNorm(fa.Label) + "\x00" + extractNorm(fa.Approach)
		if seen[key] {
			continue
		}
		seen[key] = true
		if len(exp.FailedAttempts) < ExtractMaxFailedAttempts {
			exp.FailedAttempts = append(exp.FailedAttempts, fa)
		}
	}
	heuristics, err := extractArray(obj, "", "transferable_heuristics")
	if err != nil {
		return TaskExperience{}, err
	}
	seen = map[string]bool{}
	for i, raw := range heuristics {
		p := fmt.Sprintf("transferable_heuristics[%d]", i)
		th, err := extractHeuristic(raw, p, strict)
		if err != nil {
			if !strict {
				continue // a model's invalid heuristic is dropped on its own
			}
			return TaskExperience{}, err
		}
		key := string(th.Kind) + "\x00" + extractNorm(th.Trigger) + "\x00" + extractNorm(th.Rule)
		if seen[key] {
			continue
		}
		seen[key] = true
		if len(exp.Heuristics) < ExtractMaxHeuristics {
			exp.Heuristics = append(exp.Heuristics, th)
		}
	}
	if _, ok := obj["feedback_signals"]; ok {
		if exp.Signals, err = extractSignalList(obj, "", project, taskID, by, now, strict); err != nil {
			return TaskExperience{}, err
		}
	}
	return exp, nil
}

func extractSignalList(obj map[string]json.RawMessage, path, project, taskID string, by Extractor, now time.Time, strict bool) ([]FeedbackSignal, error) {
	items, err := extractArray(obj, path, "feedback_signals")
	if err != nil {
		return nil, err
	}
	out := []FeedbackSignal{}
	index := map[string]int{}
	for i, raw := range items {
		p := extractJoin(path, fmt.Sprintf("feedback_signals[%d]", i))
		fs, err := extractSignal(raw, p, strict)
		if err != nil {
			if !strict {
				continue // a model's invalid signal is dropped on its own (seed 001)
			}
			return nil, err
		}
		fs.Project, fs.TaskID, fs.Extractor, fs.CreatedAt = project, taskID, by, now
		if fs.Confidence < MinSignalConfidence {
			continue
		}
		key := string(fs.Type) + "\x00" + string(fs.Source) + "\x00" + fs.TurnID + "\x00" + extractNorm(fs.Evidence)
		if k, ok := index[key]; ok {
			out[k].Confidence = max(out[k].Confidence, fs.Confidence)
			continue
		}
		if len(out) >= ExtractMaxSignals {
			continue
		}
		index[key] = len(out)
		out = append(out, fs)
	}
	return out, nil
}

// extractTopObject checks a whole document (size, UTF-8, NUL bytes, one
// JSON object and nothing after it) and returns its fields.
func extractTopObject(data []byte, allowed []string, strict bool) (map[string]json.RawMessage, error) {
	if len(data) > ExtractMaxJSONBytes {
		return nil, extractErr("", "document is %d bytes, limit %d", len(data), ExtractMaxJSONBytes)
	}
	if !utf8.Valid(data) {
		return nil, extractErr("", "document is not valid UTF-8")
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return nil, extractErr("", "document contains a NUL byte")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, extractErr("", "not valid JSON: %v", err)
	}
	if _, err := dec.Token(); err == nil {
		return nil, extractErr("", "unexpected data after the JSON object")
	}
	return extractObject(raw, "", allowed, strict)
}

// extractObject decodes a JSON object; with strict, a field not in
// allowed is an error naming it.
func extractObject(raw json.RawMessage, path string, allowed []string, strict bool) (map[string]json.RawMessage, error) {
	t := bytes.TrimLeft(raw, " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		return nil, extractErr(path, "must be an object")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, extractErr(path, "not a valid object: %v", err)
	}
	if !strict {
		extractSnakeAliases(m)
	}
	if strict {
		var unknown []string
		for k := range m {
			if !slices.Contains(allowed, k) {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			slices.Sort(unknown)
			return nil, extractErr(extractJoin(path, unknown[0]), "unknown field (allowed: %s)", strings.Join(allowed, ", "))
		}
	}
	return m, nil
}

func extractJoin(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func extractIsNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}

// extractString returns a trimmed string field, cut to maxRunes. A missing
// or null field is "" (an error when required, as is an empty one).
func extractString(m map[string]json.RawMessage, path, key string, required bool, maxRunes int) (string, error) {
	field := extractJoin(path, key)
	raw, ok := m[key]
	if !ok || extractIsNull(raw) {
		if required {
			return "", extractErr(field, "is required")
		}
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", extractErr(field, "must be a string")
	}
	if strings.IndexByte(s, 0) >= 0 {
		return "", extractErr(field, "contains a NUL character")
	}
	s = strings.TrimSpace(s)
	if required && s == "" {
		return "", extractErr(field, "must not be empty")
	}
	return extractCap(s, maxRunes), nil
}

// extractCap cuts s to at most n runes, the last being "…" when cut.
func extractCap(s string, n int) string {
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i < len(s) && count < n-1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	return strings.TrimRight(s[:i], " \t\r\n") + "…"
}

func extractArray(m map[string]json.RawMessage, path, key string) ([]json.RawMessage, error) {
	raw, ok := m[key]
	if !ok || extractIsNull(raw) {
		return nil, nil
	}
	t := bytes.TrimLeft(raw, " \t\r\n")
	if len(t) == 0 || t[0] != '[' {
		return nil, extractErr(extractJoin(path, key), "must be an array")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, extractErr(extractJoin(path, key), "not a valid array: %v", err)
	}
	return items, nil
}

// extractStringList returns the non-empty, distinct strings of an array
// field, each capped, at most maxItems.
func extractStringList(m map[string]json.RawMessage, path, key string, maxItems, maxRunes int) ([]string, error) {
	items, err := extractArray(m, path, key)
	if err != nil {
		return nil, err
	}
	out := []string{}
	seen := map[string]bool{}
	for i, raw := range items {
		field := extractJoin(path, fmt.Sprintf("%s[%d]", key, i))
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, extractErr(field, "must be a string")
		}
		if strings.IndexByte(s, 0) >= 0 {
			return nil, extractErr(field, "contains a NUL character")
		}
		s = extractCap(strings.TrimSpace(s), maxRunes)
		if s == "" || seen[extractNorm(s)] {
			continue
		}
		seen[extractNorm(s)] = true
		if len(out) < maxItems {
			out = append(out, s)
		}
	}
	return out, nil
}

// extractEnum returns a required enum field; the value is matched after
// trimming and lower-casing.
func extractEnum[T ~string](m map[string]json.RawMessage, path, key string, values []T) (T, error) {
	s, err := extractString(m, path, key, true, 64)
	if err != nil {
		return "", err
	}
	v := T(strings.ToLower(s))
	if !slices.Contains(values, v) {
		names := make([]string, len(values))
		for i, x := range values {
			names[i] = string(x)
		}
		return "", extractErr(extractJoin(path, key), "%q is not one of %s", s, strings.Join(names, ", "))
	}
	return v, nil
}

func extractConfidence(m map[string]json.RawMessage, path string) (float64, error) {
	field := extractJoin(path, "confidence")
	raw, ok := m["confidence"]
	if !ok || extractIsNull(raw) {
		return 0, extractErr(field, "is required")
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, extractErr(field, "must be a number")
	}
	if f < 0 || f > 1 {
		return 0, extractErr(field, "must be between 0 and 1, got %v", f)
	}
	return f, nil
}

// extractNorm is the comparison form of a text: lower case, single spaces.
func extractNorm(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// Agent-as-extractor tools.
const (
	// SubmitExperienceTool is the MCP tool an agent calls with an
	// extraction of kind signals or experience.
	SubmitExperienceTool = "extraction_submit"
	// SubmitSkillTool is the MCP tool an agent calls with a skill.
	SubmitSkillTool = "extraction_submit"
)

// Kinds of [AgentTask].
const (
	AgentKindSignals    = "signals"
	AgentKindExperience = "experience"
	AgentKindSkill      = "skill"
)

// AgentTask is an extraction handed to the calling agent (the
// agent-as-extractor MCP flow): the agent reads Instructions and
// Transcript, produces one JSON object matching Schema, and calls the
// Submit tool with it; kaizen validates the submission with
// [ParseSignalsJSON], [ParseExperienceJSON] (by = agent) or
// [ParseSkillJSON].
type AgentTask struct {
	// Kind is "signals", "experience" or "skill".
	Kind   string `json:"kind"`
	TaskID string `json:"task_id"`
	// Mode is recorded on the resulting experience.
	Mode         Mode            `json:"mode"`
	Instructions string          `json:"instructions"`
	Schema       json.RawMessage `json:"schema"`
	// Transcript is the material to extract from: the task's rendered
	// conversation, or for a skill the experience, heuristics and
	// current skill.
	Transcript string `json:"transcript"`
	// Submit is the tool the agent must call with its JSON.
	Submit string `json:"submit"`
}

// AgentExtractionTask builds the task of kind "signals" or "experience"
// (the experience includes inline signals) for the calling agent. An empty
// mode means balanced; the agent's work costs kaizen no model call, so
// every valid mode is accepted and only recorded.
func AgentExtractionTask(in ExtractInput, kind string, mode Mode) (AgentTask, error) {
	if mode == "" {
		mode = ModeBalanced
	}
	if !slices.Contains(Modes, mode) {
		return AgentTask{}, extractErr("mode", "unknown mode %q (want minimal, balanced or full)", mode)
	}
	if err := in.check(); err != nil {
		return AgentTask{}, err
	}
	t := AgentTask{Kind: kind, TaskID: in.TaskID, Mode: mode, Submit: SubmitExperienceTool}
	transcript := Transcript(in.Turns, in.budget())
	switch kind {
	case AgentKindSignals:
		t.Schema = SignalsSchema
		t.Instructions = extractAgentInstructions(extractSignalsPrompt(), kind, in.TaskID)
	case AgentKindExperience:
		t.Schema = ExperienceSchema
		t.Instructions = extractAgentInstructions(extractExperiencePrompt(), kind, in.TaskID)
	default:
		return AgentTask{}, extractErr("kind", "unknown extraction kind %q (want signals or experience)", kind)
	}
	t.Transcript = extractUserMessage(in, transcript, nil, false)
	return t, nil
}

// extractAttempt validates one failed attempt.
func extractAttempt(raw json.RawMessage, p string, strict bool) (FailedAttempt, error) {
	var fa FailedAttempt
	a, err := extractObject(raw, p, []string{"attempt_label", "approach_summary", "failure_reason", "replaced_by"}, strict)
	if err != nil {
		return fa, err
	}
	if fa.Label, err = extractString(a, p, "attempt_label", false, extractCapLabel); err != nil {
		return fa, err
	}
	if fa.Approach, err = extractString(a, p, "approach_summary", true, extractCapApproach); err != nil {
		return fa, err
	}
	if fa.FailureReason, err = extractString(a, p, "failure_reason", false, extractCapReason); err != nil {
		return fa, err
	}
	if fa.ReplacedBy, err = extractString(a, p, "replaced_by", false, extractCapReplaced); err != nil {
		return fa, err
	}
	return fa, nil
}

// extractHeuristic validates one transferable heuristic. From a model
// (not strict) a missing kind is "avoid", as in the seed's parser.
func extractHeuristic(raw json.RawMessage, p string, strict bool) (TransferableHeuristic, error) {
	var th TransferableHeuristic
	h, err := extractObject(raw, p, []string{"kind", "trigger", "rule", "why", "evidence"}, strict)
	if err != nil {
		return th, err
	}
	if k, ok := h["kind"]; !strict && (!ok || extractIsNull(k)) {
		h["kind"] = json.RawMessage(`"avoid"`)
	}
	if th.Kind, err = extractEnum(h, p, "kind", HeuristicKinds); err != nil {
		return th, err
	}
	if th.Trigger, err = extractString(h, p, "trigger", true, extractCapTrigger); err != nil {
		return th, err
	}
	if th.Rule, err = extractString(h, p, "rule", true, extractCapRule); err != nil {
		return th, err
	}
	if th.Why, err = extractString(h, p, "why", false, extractCapWhy); err != nil {
		return th, err
	}
	if th.Evidence, err = extractString(h, p, "evidence", false, extractCapEvidence); err != nil {
		return th, err
	}
	return th, nil
}

// extractSignal validates one feedback signal. From a model (not strict)
// an unknown or missing source is "user", as the seed maps it; every other
// problem is an error (and the caller drops the signal alone).
func extractSignal(raw json.RawMessage, p string, strict bool) (FeedbackSignal, error) {
	var fs FeedbackSignal
	s, err := extractObject(raw, p, []string{"type", "source", "evidence", "turn_id", "confidence"}, strict)
	if err != nil {
		return fs, err
	}
	if fs.Type, err = extractEnum(s, p, "type", SignalTypes); err != nil {
		return fs, err
	}
	if fs.Source, err = extractEnum(s, p, "source", SignalSources); err != nil {
		if strict {
			return fs, err
		}
		fs.Source = SourceUser
	}
	if fs.Evidence, err = extractString(s, p, "evidence", true, extractCapEvidence); err != nil {
		return fs, err
	}
	if fs.TurnID, err = extractString(s, p, "turn_id", false, extractCapTurnID); err != nil {
		if strict {
			return fs, err
		}
		fs.TurnID = "" // the seed: turnId || ""
	}
	if fs.Confidence, err = extractConfidence(s, p); err != nil {
		return fs, err
	}
	return fs, nil
}

// extractSnakeAliases lets a model reply use the seed's camelCase keys
// (failedAttempts, transferableHeuristics, turnId…): each camelCase key
// whose snake_case form is absent is copied to it.
func extractSnakeAliases(m map[string]json.RawMessage) {
	for k, v := range m {
		snake := extractSnake(k)
		if snake == k {
			continue
		}
		if _, ok := m[snake]; !ok {
			m[snake] = v
		}
	}
}

// extractSnake converts camelCase to snake_case ("turnId" → "turn_id").
func extractSnake(k string) string {
	var b strings.Builder
	for i, r := range k {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r + ('a' - 'A'))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
