package trace

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// FixSource says where the fix applied before an attempt came from (seed:
// "self_correction" | "user_hint" | "failure_pattern").
type FixSource string

// The seed's fix sources.
const (
	FixSelfCorrection FixSource = "self_correction"
	FixUserHint       FixSource = "user_hint"
	FixFailurePattern FixSource = "failure_pattern"
)

// Valid reports whether s is one of the seed's fix sources (the empty
// source, meaning no fix, is not valid here).
func (s FixSource) Valid() bool {
	return s == FixSelfCorrection || s == FixUserHint || s == FixFailurePattern
}

// Well-known keys of Attempt.Context.
const (
	// ContextCommand is the command line as run.
	ContextCommand = "command"
	// ContextFamily is the command family of ContextCommand.
	ContextFamily = "command_family"
	// ContextCwd is the working directory.
	ContextCwd = "cwd"
	// ContextTool is the agent tool that ran the attempt (e.g. "Bash").
	ContextTool = "tool"
)

// Size bounds enforced by validation. They keep persisted rows and hook
// state small; callers truncate with Truncate before building records.
const (
	MaxIDLen           = 256
	MaxAttempts        = 100
	MaxTextLen         = 64 << 10 // result and error of one attempt
	MaxFixLen          = 4 << 10
	MaxContextEntries  = 64
	MaxContextKeyLen   = 128
	MaxContextValueLen = 4 << 10
	MaxArtifacts       = 64
	MaxSignatures      = 16
	MaxStrategies      = 16
	MaxFixActions      = 32
	MaxConditionLen    = 1 << 10
	MaxExampleErrors   = 5
	MaxExampleLen      = 2 << 10
	MaxPatternTraceIDs = 50
	MaxPatternFixes    = 8
)

// FixActionKind is one kind of action between two attempts.
type FixActionKind string

// Fix action kinds.
const (
	ActionEdit    FixActionKind = "edit"    // a file was edited
	ActionCommand FixActionKind = "command" // another command ran
	ActionPrompt  FixActionKind = "prompt"  // the user said something
	ActionNote    FixActionKind = "note"    // the assistant said what it would do
)

// FixAction is one action taken between a failed attempt and the next one.
// Together they are the fix applied (Attempt.FixApplied is their summary).
type FixAction struct {
	Kind   FixActionKind `json:"kind"`
	Detail string        `json:"detail"`
	// Correction is set on prompts that read as a user correcting the agent.
	Correction bool `json:"correction,omitempty"`
	// ExitCode of a command action, when known.
	ExitCode *int `json:"exit_code,omitempty"`
	// Failed is set on a command action that failed.
	Failed bool `json:"failed,omitempty"`
}

// Attempt is one try at a skill (seed: Attempt). Index counts from 1.
// Error is empty when the seed says None; FixApplied and FixSource are empty
// when no fix was applied.
type Attempt struct {
	Index              int               `json:"index"`
	Timestamp          time.Time         `json:"timestamp"`
	Context            map[string]string `json:"context"`
	ActivatedArtifacts []string          `json:"activated_artifacts"`
	Result             string            `json:"result"`
	Success            bool              `json:"success"`
	Error              string            `json:"error,omitempty"`
	FixApplied         string            `json:"fix_applied,omitempty"`
	FixSource          FixSource         `json:"fix_source,omitempty"`

	// Beyond the seed.

	// ExitCode of the command, when the attempt was a command.
	ExitCode *int `json:"exit_code,omitempty"`
	// DurationMS of the attempt itself, when known.
	DurationMS int64 `json:"duration_ms,omitempty"`
	// ErrorType is the detected error type (see Fingerprint).
	ErrorType string `json:"error_type,omitempty"`
	// Signatures identify the error: fingerprint hashes and, once a
	// Grouper has seen it, the group id.
	Signatures []string `json:"signatures,omitempty"`
	// FixActions are the actions FixApplied summarises.
	FixActions []FixAction `json:"fix_actions,omitempty"`
	// WarnedPatterns are failure patterns a pre-execution check warned
	// about before this attempt (for effectiveness learning).
	WarnedPatterns []string `json:"warned_patterns,omitempty"`
}

// ExecutionTrace is the whole chain of attempts at one skill within one task
// (seed: ExecutionTrace).
type ExecutionTrace struct {
	ID           string    `json:"id"`
	SkillID      string    `json:"skill_id"`
	TaskID       string    `json:"task_id"`
	Attempts     []Attempt `json:"attempts"`
	FinalSuccess bool      `json:"final_success"`
	CreatedAt    time.Time `json:"created_at"`
	DurationMS   int64     `json:"duration_ms"`

	// Beyond the seed.

	// SessionID of the agent session the trace was assembled from.
	SessionID string `json:"session_id,omitempty"`
	// Family is the command family when the skill is a command family.
	Family string `json:"command_family,omitempty"`
	// Open is true while the chain may still get attempts; FinalSuccess
	// is false until it closes.
	Open bool `json:"open,omitempty"`
	// Strategies are the decomposition strategies (methodologies) the task
	// used, for the scheduled review's methodology effectiveness.
	Strategies []string `json:"strategies,omitempty"`
}

// Status is "open", "succeeded" or "failed".
func (t *ExecutionTrace) Status() string {
	switch {
	case t.Open:
		return "open"
	case t.FinalSuccess:
		return "succeeded"
	default:
		return "failed"
	}
}

// Recovered reports the seed's most valuable case: the chain succeeded after
// at least one failed attempt (final_success && len(attempts) > 1).
func (t *ExecutionTrace) Recovered() bool {
	return !t.Open && t.FinalSuccess && len(t.Attempts) > 1
}

// GaveUp reports a closed chain in which every attempt failed.
func (t *ExecutionTrace) GaveUp() bool { return !t.Open && !t.FinalSuccess && len(t.Attempts) > 0 }

// Validate checks the trace and its attempts: ids and sizes within bounds,
// attempt indexes 1..n in order, timestamps set and not going back, fix
// sources valid and only with a fix, only the last attempt successful,
// FinalSuccess equal to the last attempt's success once the trace is closed.
func (t *ExecutionTrace) Validate() error {
	const obj = "trace"
	if err := firstError(
		checkID(ErrInvalidTrace, obj, "id", t.ID, true),
		checkID(ErrInvalidTrace, obj, "skill_id", t.SkillID, true),
		checkID(ErrInvalidTrace, obj, "task_id", t.TaskID, false),
		checkID(ErrInvalidTrace, obj, "session_id", t.SessionID, false),
		checkText(ErrInvalidTrace, obj, "command_family", t.Family, MaxIDLen),
	); err != nil {
		return err
	}
	if t.CreatedAt.IsZero() {
		return invalid(ErrInvalidTrace, obj, "created_at", "is not set")
	}
	if t.DurationMS < 0 {
		return invalid(ErrInvalidTrace, obj, "duration_ms", "is negative (%d)", t.DurationMS)
	}
	if len(t.Strategies) > MaxStrategies {
		return tooLarge(ErrInvalidTrace, obj, "strategies", len(t.Strategies), MaxStrategies)
	}
	for i, s := range t.Strategies {
		if err := checkID(ErrInvalidTrace, obj, fmt.Sprintf("strategies[%d]", i), s, true); err != nil {
			return err
		}
	}
	if len(t.Attempts) == 0 {
		return invalid(ErrInvalidTrace, obj, "attempts", "a trace has at least one attempt")
	}
	if len(t.Attempts) > MaxAttempts {
		return tooLarge(ErrInvalidTrace, obj, "attempts", len(t.Attempts), MaxAttempts)
	}
	var prev time.Time
	for i := range t.Attempts {
		a := &t.Attempts[i]
		aobj := fmt.Sprintf("trace.attempts[%d]", i)
		if a.Index != i+1 {
			return invalid(ErrInvalidAttempt, aobj, "index", "is %d, want %d (indexes count from 1 in order)", a.Index, i+1)
		}
		if err := a.validate(aobj); err != nil {
			return err
		}
		if a.Timestamp.Before(prev) {
			return invalid(ErrInvalidAttempt, aobj, "timestamp", "goes back in time (%s before %s)",
				a.Timestamp.Format(time.RFC3339Nano), prev.Format(time.RFC3339Nano))
		}
		prev = a.Timestamp
		if a.Success && i < len(t.Attempts)-1 {
			return invalid(ErrInvalidAttempt, aobj, "success", "only the last attempt of a chain may succeed")
		}
	}
	last := t.Attempts[len(t.Attempts)-1]
	switch {
	case t.Open && (t.FinalSuccess || last.Success):
		return invalid(ErrInvalidTrace, obj, "open", "an open trace has not succeeded yet")
	case !t.Open && t.FinalSuccess != last.Success:
		return invalid(ErrInvalidTrace, obj, "final_success", "is %v but the last attempt's success is %v", t.FinalSuccess, last.Success)
	}
	return nil
}

func (a *Attempt) validate(obj string) error {
	if a.Timestamp.IsZero() {
		return invalid(ErrInvalidAttempt, obj, "timestamp", "is not set")
	}
	if len(a.Context) > MaxContextEntries {
		return tooLarge(ErrInvalidAttempt, obj, "context", len(a.Context), MaxContextEntries)
	}
	for _, k := range sortedKeys(a.Context) {
		if k == "" || len(k) > MaxContextKeyLen || !utf8.ValidString(k) {
			return invalid(ErrInvalidAttempt, obj, "context", "key %.40q is empty, too long or not UTF-8", k)
		}
		if err := checkText(ErrInvalidAttempt, obj, "context["+k+"]", a.Context[k], MaxContextValueLen); err != nil {
			return err
		}
	}
	if len(a.ActivatedArtifacts) > MaxArtifacts {
		return tooLarge(ErrInvalidAttempt, obj, "activated_artifacts", len(a.ActivatedArtifacts), MaxArtifacts)
	}
	for i, s := range a.ActivatedArtifacts {
		if err := checkID(ErrInvalidAttempt, obj, fmt.Sprintf("activated_artifacts[%d]", i), s, true); err != nil {
			return err
		}
	}
	if err := checkText(ErrInvalidAttempt, obj, "result", a.Result, MaxTextLen); err != nil {
		return err
	}
	if err := checkText(ErrInvalidAttempt, obj, "error", a.Error, MaxTextLen); err != nil {
		return err
	}
	if a.Success && a.Error != "" {
		return invalid(ErrInvalidAttempt, obj, "error", "a successful attempt has no error")
	}
	if err := checkText(ErrInvalidAttempt, obj, "fix_applied", a.FixApplied, MaxFixLen); err != nil {
		return err
	}
	switch {
	case a.FixSource != "" && !a.FixSource.Valid():
		return invalid(ErrInvalidAttempt, obj, "fix_source", "%q is not one of self_correction, user_hint, failure_pattern", a.FixSource)
	case a.FixSource != "" && a.FixApplied == "":
		return invalid(ErrInvalidAttempt, obj, "fix_source", "is set but fix_applied is empty")
	case a.FixSource == "" && a.FixApplied != "":
		return invalid(ErrInvalidAttempt, obj, "fix_source", "is empty but fix_applied is set")
	}
	if a.DurationMS < 0 {
		return invalid(ErrInvalidAttempt, obj, "duration_ms", "is negative (%d)", a.DurationMS)
	}
	if err := checkText(ErrInvalidAttempt, obj, "error_type", a.ErrorType, MaxIDLen); err != nil {
		return err
	}
	if len(a.Signatures) > MaxSignatures {
		return tooLarge(ErrInvalidAttempt, obj, "signatures", len(a.Signatures), MaxSignatures)
	}
	for i, s := range a.Signatures {
		if err := checkID(ErrInvalidAttempt, obj, fmt.Sprintf("signatures[%d]", i), s, true); err != nil {
			return err
		}
	}
	if len(a.FixActions) > MaxFixActions {
		return tooLarge(ErrInvalidAttempt, obj, "fix_actions", len(a.FixActions), MaxFixActions)
	}
	for i, fa := range a.FixActions {
		f := fmt.Sprintf("fix_actions[%d]", i)
		switch fa.Kind {
		case ActionEdit, ActionCommand, ActionPrompt, ActionNote:
		default:
			return invalid(ErrInvalidAttempt, obj, f, "kind %q is not edit, command, prompt or note", fa.Kind)
		}
		if err := checkText(ErrInvalidAttempt, obj, f, fa.Detail, MaxFixLen); err != nil {
			return err
		}
	}
	if len(a.WarnedPatterns) > MaxSignatures {
		return tooLarge(ErrInvalidAttempt, obj, "warned_patterns", len(a.WarnedPatterns), MaxSignatures)
	}
	for i, s := range a.WarnedPatterns {
		if err := checkID(ErrInvalidAttempt, obj, fmt.Sprintf("warned_patterns[%d]", i), s, true); err != nil {
			return err
		}
	}
	return nil
}

// ExecutionRecord is one call of an artifact (script, template, file) and its
// result (seed: Artifact.execution_history). ContextHash summarises the
// context of the call (see ContextHash).
type ExecutionRecord struct {
	Timestamp   time.Time `json:"timestamp"`
	Success     bool      `json:"success"`
	Error       string    `json:"error,omitempty"`
	ContextHash string    `json:"context_hash"`

	// Beyond the seed: the artifact and the trace of the call.
	ArtifactID string `json:"artifact_id,omitempty"`
	TraceID    string `json:"trace_id,omitempty"`
}

// Validate checks the record's fields and sizes.
func (r *ExecutionRecord) Validate() error {
	const obj = "execution_record"
	if r.Timestamp.IsZero() {
		return invalid(ErrInvalidRecord, obj, "timestamp", "is not set")
	}
	if r.Success && r.Error != "" {
		return invalid(ErrInvalidRecord, obj, "error", "a successful call has no error")
	}
	return firstError(
		checkID(ErrInvalidRecord, obj, "context_hash", r.ContextHash, true),
		checkText(ErrInvalidRecord, obj, "error", r.Error, MaxTextLen),
		checkID(ErrInvalidRecord, obj, "artifact_id", r.ArtifactID, false),
		checkID(ErrInvalidRecord, obj, "trace_id", r.TraceID, false),
	)
}

// FixTally counts how often one suggested fix resolved the pattern.
type FixTally struct {
	Fix   string    `json:"fix"`
	Count int       `json:"count"`
	Last  time.Time `json:"last"`
}

// FailurePattern records under which condition a skill fails, and the known
// fix (seed: Skill.failure_patterns). The fields after SuggestedFix go beyond
// the seed: they make the pattern matchable, explainable and traceable.
type FailurePattern struct {
	Condition    string    `json:"condition"`
	ErrorType    string    `json:"error_type"`
	Frequency    int       `json:"frequency"`
	LastOccurred time.Time `json:"last_occurred"`
	SuggestedFix string    `json:"suggested_fix,omitempty"`

	// ID is stable: derived from the skill and the first error signature.
	ID      string `json:"id"`
	SkillID string `json:"skill_id"`
	// Family is the command family the pattern was seen with.
	Family string `json:"command_family,omitempty"`
	// Context holds the context values (e.g. cwd) common to every
	// occurrence; a query matching them is more likely the same situation.
	Context map[string]string `json:"context,omitempty"`
	// Args are the command arguments seen with the failure (bounded).
	Args []string `json:"args,omitempty"`
	// Template is the error's masked message template.
	Template string `json:"template,omitempty"`
	// Signatures identify the error (fingerprint hashes, group ids);
	// an error matches the pattern when any of its signatures is here.
	Signatures []string `json:"signatures"`
	// GroupingVersion of the signatures (see GroupingVersion).
	GroupingVersion int `json:"grouping_version"`
	// ExampleErrors are up to MaxExampleErrors recent error excerpts.
	ExampleErrors []string `json:"example_errors,omitempty"`
	// TraceIDs are the traces behind the pattern (newest last, bounded).
	TraceIDs []string `json:"trace_ids,omitempty"`
	// Fixes tally the fixes that resolved it; SuggestedFix is the top one.
	Fixes         []FixTally `json:"fixes,omitempty"`
	FirstOccurred time.Time  `json:"first_occurred"`
	// Weight is the warning effectiveness weight (starts at 1): a warned
	// attempt that succeeds raises it, one that fails lowers it; below
	// CheckConfig.WeightFloor the pattern stops warning.
	Weight   float64 `json:"weight"`
	Warnings int     `json:"warnings"`
	Helped   int     `json:"helped"`
	Misled   int     `json:"misled"`
}

// Validate checks the pattern's fields and sizes.
func (p *FailurePattern) Validate() error {
	const obj = "failure_pattern"
	if err := firstError(
		checkID(ErrInvalidPattern, obj, "id", p.ID, true),
		checkID(ErrInvalidPattern, obj, "skill_id", p.SkillID, true),
		checkText(ErrInvalidPattern, obj, "condition", p.Condition, MaxConditionLen),
	); err != nil {
		return err
	}
	if strings.TrimSpace(p.Condition) == "" {
		return invalid(ErrInvalidPattern, obj, "condition", "is empty")
	}
	if err := checkID(ErrInvalidPattern, obj, "error_type", p.ErrorType, true); err != nil {
		return err
	}
	if p.Frequency < 1 {
		return invalid(ErrInvalidPattern, obj, "frequency", "is %d, a pattern has occurred at least once", p.Frequency)
	}
	if p.LastOccurred.IsZero() {
		return invalid(ErrInvalidPattern, obj, "last_occurred", "is not set")
	}
	if !p.FirstOccurred.IsZero() && p.FirstOccurred.After(p.LastOccurred) {
		return invalid(ErrInvalidPattern, obj, "first_occurred", "is after last_occurred")
	}
	if err := firstError(
		checkText(ErrInvalidPattern, obj, "suggested_fix", p.SuggestedFix, MaxFixLen),
		checkText(ErrInvalidPattern, obj, "template", p.Template, MaxExampleLen),
		checkText(ErrInvalidPattern, obj, "command_family", p.Family, MaxIDLen),
	); err != nil {
		return err
	}
	if len(p.Context) > MaxContextEntries {
		return tooLarge(ErrInvalidPattern, obj, "context", len(p.Context), MaxContextEntries)
	}
	for _, k := range sortedKeys(p.Context) {
		if err := checkText(ErrInvalidPattern, obj, "context["+k+"]", p.Context[k], MaxContextValueLen); err != nil {
			return err
		}
	}
	for field, list := range map[string][]string{"args": p.Args, "signatures": p.Signatures} {
		if len(list) > 4*MaxSignatures {
			return tooLarge(ErrInvalidPattern, obj, field, len(list), 4*MaxSignatures)
		}
	}
	if len(p.Signatures) == 0 {
		return invalid(ErrInvalidPattern, obj, "signatures", "a pattern has at least one error signature")
	}
	for i, s := range p.Signatures {
		if err := checkID(ErrInvalidPattern, obj, fmt.Sprintf("signatures[%d]", i), s, true); err != nil {
			return err
		}
	}
	if p.GroupingVersion < 1 {
		return invalid(ErrInvalidPattern, obj, "grouping_version", "is %d, versions start at 1", p.GroupingVersion)
	}
	if len(p.ExampleErrors) > MaxExampleErrors {
		return tooLarge(ErrInvalidPattern, obj, "example_errors", len(p.ExampleErrors), MaxExampleErrors)
	}
	for i, e := range p.ExampleErrors {
		if err := checkText(ErrInvalidPattern, obj, fmt.Sprintf("example_errors[%d]", i), e, MaxExampleLen); err != nil {
			return err
		}
	}
	if len(p.TraceIDs) > MaxPatternTraceIDs {
		return tooLarge(ErrInvalidPattern, obj, "trace_ids", len(p.TraceIDs), MaxPatternTraceIDs)
	}
	if len(p.Fixes) > MaxPatternFixes {
		return tooLarge(ErrInvalidPattern, obj, "fixes", len(p.Fixes), MaxPatternFixes)
	}
	for i, f := range p.Fixes {
		if f.Count < 1 {
			return invalid(ErrInvalidPattern, obj, fmt.Sprintf("fixes[%d].count", i), "is %d", f.Count)
		}
		if err := checkText(ErrInvalidPattern, obj, fmt.Sprintf("fixes[%d].fix", i), f.Fix, MaxFixLen); err != nil {
			return err
		}
	}
	if math.IsNaN(p.Weight) || math.IsInf(p.Weight, 0) || p.Weight < 0 {
		return invalid(ErrInvalidPattern, obj, "weight", "is %v, want a finite number ≥ 0", p.Weight)
	}
	if p.Warnings < 0 || p.Helped < 0 || p.Misled < 0 {
		return invalid(ErrInvalidPattern, obj, "warnings", "counts are negative")
	}
	return nil
}

// firstError returns the first non-nil error.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func checkID(sentinel error, obj, field, s string, required bool) error {
	switch {
	case s == "" && required:
		return invalid(sentinel, obj, field, "is empty")
	case len(s) > MaxIDLen:
		return tooLarge(sentinel, obj, field, len(s), MaxIDLen)
	case !utf8.ValidString(s):
		return invalid(sentinel, obj, field, "is not valid UTF-8")
	case strings.ContainsAny(s, "\x00\n\r"):
		return invalid(sentinel, obj, field, "contains a control character")
	}
	return nil
}

func checkText(sentinel error, obj, field, s string, limit int) error {
	if len(s) > limit {
		return tooLarge(sentinel, obj, field, len(s), limit)
	}
	if !utf8.ValidString(s) {
		return invalid(sentinel, obj, field, "is not valid UTF-8")
	}
	if strings.IndexByte(s, 0) >= 0 {
		return invalid(sentinel, obj, field, "contains a NUL byte")
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Truncate shortens s to at most n bytes on a rune boundary, replacing
// invalid UTF-8 and NUL bytes, and marks a cut with "…". Use it to bring
// untrusted text within the bounds above before validation.
func Truncate(s string, n int) string {
	s = cleanText(s)
	if len(s) <= n {
		return s
	}
	if n <= len(cutMark) {
		return ""
	}
	cut := n - len(cutMark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + cutMark
}

// TruncateTail keeps the last n bytes of s (output tails hold the error),
// on a rune boundary, marking the cut with "…".
func TruncateTail(s string, n int) string {
	s = cleanText(s)
	if len(s) <= n {
		return s
	}
	if n <= len(cutMark) {
		return ""
	}
	start := len(s) - (n - len(cutMark))
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return cutMark + s[start:]
}

const cutMark = "…"

// cleanText replaces invalid UTF-8 and drops NUL bytes.
func cleanText(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "")
	}
	return s
}
