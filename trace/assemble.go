package trace

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// EventKind is the kind of a session event.
type EventKind string

// Session event kinds.
const (
	// EventCommand: a shell command ran (Command, ExitCode, Output).
	EventCommand EventKind = "command"
	// EventEdit: the agent edited a file (Path).
	EventEdit EventKind = "edit"
	// EventPrompt: the user said something (Text).
	EventPrompt EventKind = "prompt"
	// EventAssistant: the assistant said something (Text).
	EventAssistant EventKind = "assistant"
	// EventSessionEnd: the session ended; open chains close as failed.
	EventSessionEnd EventKind = "session_end"
)

// Event is one event of an agent session, in order. Optional fields may be
// left empty.
type Event struct {
	// ID, when set, makes feeding idempotent: an event whose id was among
	// the last 64 seen is ignored (hooks may deliver twice).
	ID   string    `json:"id,omitempty"`
	Kind EventKind `json:"kind"`
	Time time.Time `json:"time"`

	// Command events.
	Command string `json:"command,omitempty"`
	// ExitCode of the command; nil when the client did not report it
	// (success is then inferred from the output, see InferFailure).
	ExitCode   *int   `json:"exit_code,omitempty"`
	Output     string `json:"output,omitempty"`
	DurationMS int64  `json:"duration_ms,omitempty"`
	// Context of the command (cwd, tool, …).
	Context map[string]string `json:"context,omitempty"`
	// Artifacts the command used (scripts, templates, files).
	Artifacts []string `json:"artifacts,omitempty"`
	// SkillID names a kaizen skill the command runs; empty means the
	// command family is the skill ("cmd:<family>").
	SkillID string `json:"skill_id,omitempty"`
	// WarnedPatterns: failure patterns a pre-execution check warned about
	// before this command.
	WarnedPatterns []string `json:"warned_patterns,omitempty"`
	// FixApplied/FixSource: a fix the agent says it applied before this
	// command (e.g. a failure pattern's fix, source failure_pattern).
	FixApplied string    `json:"fix_applied,omitempty"`
	FixSource  FixSource `json:"fix_source,omitempty"`

	// Edit events.
	Path string `json:"path,omitempty"`
	// Prompt and assistant events.
	Text string `json:"text,omitempty"`

	// TaskID and Strategies, when known, are copied onto new traces.
	TaskID     string   `json:"task_id,omitempty"`
	Strategies []string `json:"strategies,omitempty"`
}

// AssemblyConfig configures trace assembly.
type AssemblyConfig struct {
	// RecordSingleSuccess records a command that passes at the first try
	// as a one-attempt trace (seed scenario 1). Default true.
	RecordSingleSuccess bool `toml:"record_single_success" json:"record_single_success"`
	// MaxAttempts closes a chain as failed after this many failed attempts
	// (default 20).
	MaxAttempts int `toml:"max_attempts" json:"max_attempts"`
	// IdleTimeout closes an open chain as failed when the session moves on
	// without rerunning it for this long (default 2h; 0 disables).
	IdleTimeout time.Duration `toml:"idle_timeout" json:"idle_timeout"`
	// MaxOpenChains per session; the oldest closes first (default 16).
	MaxOpenChains int `toml:"max_open_chains" json:"max_open_chains"`
	// MaxResultLen bytes of output kept as Attempt.Result (default 4096,
	// the tail).
	MaxResultLen int `toml:"max_result_len" json:"max_result_len"`
	// MaxErrorLen bytes of error excerpt kept as Attempt.Error (default 2048).
	MaxErrorLen int `toml:"max_error_len" json:"max_error_len"`
	// IgnoreFamilies are command families that never form traces (in
	// addition to inspection commands, see IsInspection).
	IgnoreFamilies []string `toml:"ignore_families" json:"ignore_families"`
}

// DefaultAssemblyConfig returns the defaults documented on AssemblyConfig.
func DefaultAssemblyConfig() AssemblyConfig {
	return AssemblyConfig{RecordSingleSuccess: true, MaxAttempts: 20, IdleTimeout: 2 * time.Hour, MaxOpenChains: 16,
		MaxResultLen: 4096, MaxErrorLen: 2048}
}

// Validate checks the ranges.
func (c AssemblyConfig) Validate() error {
	const obj = "assembly"
	switch {
	case c.MaxAttempts < 1 || c.MaxAttempts > MaxAttempts:
		return invalid(ErrInvalidConfig, obj, "max_attempts", "is %d, want 1..%d", c.MaxAttempts, MaxAttempts)
	case c.IdleTimeout < 0:
		return invalid(ErrInvalidConfig, obj, "idle_timeout", "is negative")
	case c.MaxOpenChains < 1 || c.MaxOpenChains > 256:
		return invalid(ErrInvalidConfig, obj, "max_open_chains", "is %d, want 1..256", c.MaxOpenChains)
	case c.MaxResultLen < 0 || c.MaxResultLen > MaxTextLen:
		return invalid(ErrInvalidConfig, obj, "max_result_len", "is %d, want 0..%d", c.MaxResultLen, MaxTextLen)
	case c.MaxErrorLen < 64 || c.MaxErrorLen > MaxTextLen:
		return invalid(ErrInvalidConfig, obj, "max_error_len", "is %d, want 64..%d", c.MaxErrorLen, MaxTextLen)
	}
	return nil
}

// Chain is an open chain of attempts of one skill in a session.
type Chain struct {
	Trace ExecutionTrace `json:"trace"`
	// Pending are the actions since the chain's last attempt: the fix the
	// next attempt will carry.
	Pending []FixAction `json:"pending,omitempty"`
	// LastTime is the time of the chain's last attempt.
	LastTime time.Time `json:"last_time"`
}

// AssemblerState is the whole state of trace assembly for one session. It
// is a plain value: persist it between hook calls (JSON) and pass it back.
type AssemblerState struct {
	SessionID string    `json:"session_id"`
	TaskID    string    `json:"task_id,omitempty"`
	Seq       int       `json:"seq"`
	LastTime  time.Time `json:"last_time"`
	Open      []Chain   `json:"open,omitempty"`
	// Recent event ids, for idempotent feeding.
	Recent     []string `json:"recent,omitempty"`
	Strategies []string `json:"strategies,omitempty"`
	Ended      bool     `json:"ended,omitempty"`
}

// NewAssemblerState starts the state of a session.
func NewAssemblerState(sessionID string) (AssemblerState, error) {
	if err := checkID(ErrInvalidEvent, "session", "id", sessionID, true); err != nil {
		return AssemblerState{}, err
	}
	return AssemblerState{SessionID: sessionID}, nil
}

// Update kinds.
const (
	UpdateOpened  = "opened"  // a chain started with a failed attempt
	UpdateAttempt = "attempt" // a failed attempt was added to an open chain
	UpdateClosed  = "closed"  // the chain ended (succeeded or failed)
)

// TraceUpdate is a change of a trace caused by one event; Trace is a copy.
type TraceUpdate struct {
	Kind  string         `json:"kind"`
	Trace ExecutionTrace `json:"trace"`
}

const maxRecentIDs = 64

// Feed applies one event to a session's assembly state and returns the new
// state and the traces it changed. It does not modify st. A failed attempt
// carries its fingerprint hashes in Signatures; a service that also runs a
// Grouper may append the group id (Assignment.GroupID).
//
// Rules: a command whose family is an inspection (ls, git status…) or is
// ignored changes nothing. Otherwise the command's skill is SkillID or
// "cmd:<family>". A run of a skill with an open chain adds an attempt
// carrying the fix applied since the chain's last attempt: the edits,
// other commands, user prompts and assistant plans in between; its source
// is user_hint when a prompt in between reads as a correction
// (IsCorrection), else self_correction (or the event's own FixSource). A
// passing run closes the chain as succeeded; a failing run keeps it open
// (up to MaxAttempts). A run with no open chain that passes is a
// one-attempt trace (RecordSingleSuccess); one that fails opens a chain.
// Session end, and IdleTimeout without a rerun, close open chains as
// failed.
func Feed(st AssemblerState, ev Event, cfg AssemblyConfig) (AssemblerState, []TraceUpdate, error) {
	if err := cfg.Validate(); err != nil {
		return st, nil, err
	}
	if err := validateState(&st); err != nil {
		return st, nil, err
	}
	if err := validateEvent(&ev); err != nil {
		return st, nil, err
	}
	if ev.Time.Before(st.LastTime) {
		return st, nil, invalid(ErrInvalidEvent, "event", "time", "%s is before the session's last event %s",
			ev.Time.Format(time.RFC3339Nano), st.LastTime.Format(time.RFC3339Nano))
	}
	if ev.ID != "" && contains(st.Recent, ev.ID) {
		return st, nil, nil
	}
	st = cloneState(st)
	if ev.ID != "" {
		st.Recent = append(st.Recent, ev.ID)
		if len(st.Recent) > maxRecentIDs {
			st.Recent = st.Recent[len(st.Recent)-maxRecentIDs:]
		}
	}
	st.LastTime = ev.Time
	if st.TaskID == "" && ev.TaskID != "" {
		st.TaskID = ev.TaskID
	}
	if len(ev.Strategies) > 0 {
		st.Strategies = boundedStrings(ev.Strategies, MaxStrategies)
	}
	if st.Ended && ev.Kind != EventSessionEnd {
		st.Ended = false // the session resumed
	}
	var updates []TraceUpdate
	// chains the session left idle for too long close as failed
	if cfg.IdleTimeout > 0 {
		kept := st.Open[:0]
		for _, ch := range st.Open {
			if ev.Time.Sub(ch.LastTime) > cfg.IdleTimeout {
				updates = append(updates, closeChain(&ch, false, ch.LastTime))
				continue
			}
			kept = append(kept, ch)
		}
		st.Open = kept
	}
	switch ev.Kind {
	case EventSessionEnd:
		for i := range st.Open {
			updates = append(updates, closeChain(&st.Open[i], false, ev.Time))
		}
		st.Open = nil
		st.Ended = true
	case EventEdit:
		st.addPending(FixAction{Kind: ActionEdit, Detail: Truncate(ev.Path, 512)}, "")
	case EventPrompt:
		text := strings.TrimSpace(ev.Text)
		if text != "" {
			st.addPending(FixAction{Kind: ActionPrompt, Detail: Truncate(text, 1024), Correction: IsCorrection(text)}, "")
		}
	case EventAssistant:
		text := strings.TrimSpace(ev.Text)
		if text != "" {
			st.addPending(FixAction{Kind: ActionNote, Detail: firstSentence(text, 400)}, "")
		}
	case EventCommand:
		ups, err := st.command(ev, cfg)
		if err != nil {
			return st, nil, err
		}
		updates = append(updates, ups...)
	}
	return st, updates, nil
}

// addPending records an action for every open chain except the one of
// skill `except` (a run is not a fix of itself).
func (st *AssemblerState) addPending(a FixAction, except string) {
	for i := range st.Open {
		ch := &st.Open[i]
		if except != "" && ch.Trace.SkillID == except {
			continue
		}
		if a.Kind == ActionNote {
			// keep only the latest plan
			kept := ch.Pending[:0]
			for _, p := range ch.Pending {
				if p.Kind != ActionNote {
					kept = append(kept, p)
				}
			}
			ch.Pending = kept
		}
		ch.Pending = append(ch.Pending, a)
		if len(ch.Pending) > MaxFixActions {
			ch.Pending = ch.Pending[len(ch.Pending)-MaxFixActions:]
		}
	}
}

func (st *AssemblerState) command(ev Event, cfg AssemblyConfig) ([]TraceUpdate, error) {
	cmd, err := ParseCommand(ev.Command)
	if err != nil {
		return nil, &ValidationError{Object: "event", Field: "command", Msg: err.Error(), Err: ErrInvalidEvent}
	}
	if IsInspection(cmd) || contains(cfg.IgnoreFamilies, cmd.Family) {
		return nil, nil
	}
	failed := InferFailure(ev.ExitCode, ev.Output)
	skill := ev.SkillID
	if skill == "" {
		skill = "cmd:" + cmd.Family
	}
	skill = Truncate(skill, MaxIDLen)
	a := Attempt{
		Timestamp:          ev.Time,
		Context:            attemptContext(ev, cmd),
		ActivatedArtifacts: boundedStrings(append(CommandArtifacts(cmd), ev.Artifacts...), MaxArtifacts),
		Result:             TruncateTail(ev.Output, cfg.MaxResultLen),
		Success:            !failed,
		ExitCode:           ev.ExitCode,
		DurationMS:         max(ev.DurationMS, 0),
		WarnedPatterns:     boundedStrings(ev.WarnedPatterns, MaxSignatures),
	}
	if failed {
		sig := Fingerprint(ev.Output, ev.Command)
		a.ErrorType = sig.Type
		a.Signatures = []string{sig.Strict, sig.Loose}
		a.Error = ErrorExcerpt(ev.Output, cfg.MaxErrorLen)
		if a.Error == "" {
			code := "unknown"
			if ev.ExitCode != nil {
				code = fmt.Sprint(*ev.ExitCode)
			}
			a.Error = "exit status " + code
		}
	}
	// this run is a fix action for the other open chains
	st.addPending(FixAction{Kind: ActionCommand, Detail: Truncate(cmd.Raw, 300), ExitCode: copyInt(ev.ExitCode), Failed: failed}, skill)

	var updates []TraceUpdate
	idx := -1
	for i := range st.Open {
		if st.Open[i].Trace.SkillID == skill {
			idx = i
			break
		}
	}
	if idx >= 0 {
		ch := &st.Open[idx]
		a.Index = len(ch.Trace.Attempts) + 1
		a.FixActions = ch.Pending
		a.FixApplied = DescribeFix(ch.Pending)
		a.FixSource = fixSource(ch.Pending)
		if ev.FixApplied != "" && ev.FixSource.Valid() {
			a.FixApplied = Truncate(strings.TrimSpace(ev.FixApplied+"; "+a.FixApplied), MaxFixLen)
			a.FixSource = ev.FixSource
		}
		if a.FixApplied == "" {
			a.FixSource = ""
		}
		ch.Pending = nil
		ch.LastTime = ev.Time
		ch.Trace.Attempts = append(ch.Trace.Attempts, a)
		switch {
		case !failed:
			updates = append(updates, closeChain(ch, true, ev.Time))
			st.Open = append(st.Open[:idx], st.Open[idx+1:]...)
		case len(ch.Trace.Attempts) >= cfg.MaxAttempts:
			updates = append(updates, closeChain(ch, false, ev.Time))
			st.Open = append(st.Open[:idx], st.Open[idx+1:]...)
		default:
			ch.Trace.DurationMS = durationMS(ch.Trace.CreatedAt, ev.Time, a.DurationMS)
			updates = append(updates, TraceUpdate{Kind: UpdateAttempt, Trace: cloneTrace(ch.Trace)})
		}
		return updates, nil
	}
	a.Index = 1
	if ev.FixApplied != "" && ev.FixSource.Valid() {
		a.FixApplied, a.FixSource = Truncate(ev.FixApplied, MaxFixLen), ev.FixSource
	}
	st.Seq++
	tr := ExecutionTrace{
		ID:         traceID(st.SessionID, st.Seq),
		SkillID:    skill,
		TaskID:     cmp.Or(ev.TaskID, st.TaskID),
		Attempts:   []Attempt{a},
		CreatedAt:  ev.Time,
		SessionID:  st.SessionID,
		Family:     cmd.Family,
		Strategies: boundedStrings(firstNonEmptySlice(ev.Strategies, st.Strategies), MaxStrategies),
		Open:       true,
	}
	if !failed {
		if !cfg.RecordSingleSuccess {
			return updates, nil
		}
		ch := Chain{Trace: tr, LastTime: ev.Time}
		return append(updates, closeChain(&ch, true, ev.Time)), nil
	}
	tr.DurationMS = max(a.DurationMS, 0)
	if len(st.Open) >= cfg.MaxOpenChains {
		updates = append(updates, closeChain(&st.Open[0], false, st.Open[0].LastTime))
		st.Open = st.Open[1:]
	}
	st.Open = append(st.Open, Chain{Trace: tr, LastTime: ev.Time})
	return append(updates, TraceUpdate{Kind: UpdateOpened, Trace: cloneTrace(tr)}), nil
}

func exitSuffix(code *int, failed bool) string {
	switch {
	case code != nil && *code != 0:
		return fmt.Sprintf(" (exit %d)", *code)
	case failed:
		return " (failed)"
	}
	return ""
}

func copyInt(p *int) *int {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func fixSource(pending []FixAction) FixSource {
	if len(pending) == 0 {
		return ""
	}
	for _, p := range pending {
		if p.Kind == ActionPrompt && p.Correction {
			return FixUserHint
		}
	}
	return FixSelfCorrection
}

func closeChain(ch *Chain, success bool, end time.Time) TraceUpdate {
	tr := &ch.Trace
	tr.Open = false
	tr.FinalSuccess = success
	var last int64
	if n := len(tr.Attempts); n > 0 {
		last = tr.Attempts[n-1].DurationMS
		if !success && tr.Attempts[n-1].Success {
			tr.FinalSuccess = true
		}
	}
	tr.DurationMS = durationMS(tr.CreatedAt, end, last)
	if !success {
		// the pending actions after the last failure are not a fix of
		// anything; they are dropped with the chain.
		ch.Pending = nil
	}
	return TraceUpdate{Kind: UpdateClosed, Trace: cloneTrace(*tr)}
}

func durationMS(start, end time.Time, lastAttempt int64) int64 {
	d := end.Sub(start).Milliseconds()
	if d < 0 {
		d = 0
	}
	return d + max(lastAttempt, 0)
}

func traceID(session string, seq int) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d", session, seq)))
	return "tr-" + hex.EncodeToString(h[:])[:16]
}

func attemptContext(ev Event, cmd Command) map[string]string {
	ctx := map[string]string{}
	for _, k := range sortedKeys(ev.Context) {
		if len(ctx) >= MaxContextEntries-3 {
			break
		}
		if k == "" || len(k) > MaxContextKeyLen {
			continue
		}
		ctx[Truncate(k, MaxContextKeyLen)] = Truncate(ev.Context[k], MaxContextValueLen)
	}
	ctx[ContextCommand] = Truncate(cmd.Raw, MaxContextValueLen)
	ctx[ContextFamily] = Truncate(cmd.Family, MaxContextValueLen)
	if cmd.Dir != "" {
		if cwd := ctx[ContextCwd]; cwd != "" && !strings.HasPrefix(cmd.Dir, "/") {
			ctx[ContextCwd] = Truncate(strings.TrimSuffix(cwd, "/")+"/"+cmd.Dir, MaxContextValueLen)
		} else {
			ctx[ContextCwd] = Truncate(cmd.Dir, MaxContextValueLen)
		}
	}
	return ctx
}

// InferFailure decides whether a command failed: by its exit code when
// known, else by whether its output holds an error that a detector
// recognises with confidence (a traceback, a panic, a compiler error, a
// `command not found`…); a generic line with the word "error" is not enough.
func InferFailure(exitCode *int, output string) bool {
	if exitCode != nil {
		return *exitCode != 0
	}
	if strings.TrimSpace(output) == "" {
		return false
	}
	f := analyze(output, "")
	return f.score >= 50
}

// ErrorExcerpt returns the part of an output that shows the error: the key
// line a detector found with a few lines around it, or the output's tail.
// At most n bytes.
func ErrorExcerpt(output string, n int) string {
	out := strings.TrimSpace(strings.ReplaceAll(output, "\r\n", "\n"))
	if out == "" {
		return ""
	}
	f := analyze(out, "")
	if f.score >= 10 && f.raw != "" {
		first := strings.SplitN(f.raw, "\n", 2)[0]
		if k := strings.Index(out, first); k >= 0 {
			start := k
			for i := 0; i < 3 && start > 0; i++ {
				start = strings.LastIndexByte(out[:start-1], '\n') + 1
				if start <= 0 {
					start = 0
					break
				}
			}
			end := k + len(first)
			for i := 0; i < 8 && end < len(out); i++ {
				nl := strings.IndexByte(out[end+1:], '\n')
				if nl < 0 {
					end = len(out)
					break
				}
				end += 1 + nl
			}
			return Truncate(out[start:end], n)
		}
	}
	return TruncateTail(out, n)
}

func validateEvent(ev *Event) error {
	const obj = "event"
	switch ev.Kind {
	case EventCommand, EventEdit, EventPrompt, EventAssistant, EventSessionEnd:
	default:
		return invalid(ErrInvalidEvent, obj, "kind", "%.40q is not command, edit, prompt, assistant or session_end", string(ev.Kind))
	}
	if ev.Time.IsZero() {
		return invalid(ErrInvalidEvent, obj, "time", "is not set")
	}
	if err := checkID(ErrInvalidEvent, obj, "id", ev.ID, false); err != nil {
		return err
	}
	if err := checkID(ErrInvalidEvent, obj, "skill_id", ev.SkillID, false); err != nil {
		return err
	}
	if err := checkID(ErrInvalidEvent, obj, "task_id", ev.TaskID, false); err != nil {
		return err
	}
	if ev.FixSource != "" && !ev.FixSource.Valid() {
		return invalid(ErrInvalidEvent, obj, "fix_source", "%.40q is not one of self_correction, user_hint, failure_pattern", string(ev.FixSource))
	}
	switch ev.Kind {
	case EventCommand:
		if strings.TrimSpace(ev.Command) == "" {
			return invalid(ErrInvalidEvent, obj, "command", "is empty")
		}
		if len(ev.Command) > MaxCommandLen {
			return tooLarge(ErrInvalidEvent, obj, "command", len(ev.Command), MaxCommandLen)
		}
		if ev.DurationMS < 0 {
			return invalid(ErrInvalidEvent, obj, "duration_ms", "is negative")
		}
		if len(ev.Context) > MaxContextEntries {
			return tooLarge(ErrInvalidEvent, obj, "context", len(ev.Context), MaxContextEntries)
		}
	case EventEdit:
		if strings.TrimSpace(ev.Path) == "" {
			return invalid(ErrInvalidEvent, obj, "path", "is empty")
		}
	}
	return nil
}

func validateState(st *AssemblerState) error {
	const obj = "assembler_state"
	if err := checkID(ErrInvalidState, obj, "session_id", st.SessionID, true); err != nil {
		return err
	}
	if st.Seq < 0 || len(st.Open) > 256 || len(st.Recent) > 4*maxRecentIDs {
		return invalid(ErrInvalidState, obj, "seq", "counters or sizes out of range")
	}
	for i := range st.Open {
		tr := st.Open[i].Trace
		if !tr.Open {
			return invalid(ErrInvalidState, obj, fmt.Sprintf("open[%d]", i), "holds a closed trace")
		}
		if err := tr.Validate(); err != nil {
			return &ValidationError{Object: obj, Field: fmt.Sprintf("open[%d]", i), Msg: err.Error(), Err: ErrInvalidState}
		}
	}
	return nil
}

func cloneState(st AssemblerState) AssemblerState {
	c := st
	c.Recent = append([]string(nil), st.Recent...)
	c.Strategies = append([]string(nil), st.Strategies...)
	c.Open = make([]Chain, len(st.Open))
	for i, ch := range st.Open {
		c.Open[i] = Chain{Trace: cloneTrace(ch.Trace), Pending: append([]FixAction(nil), ch.Pending...), LastTime: ch.LastTime}
	}
	return c
}

func cloneTrace(t ExecutionTrace) ExecutionTrace {
	c := t
	c.Strategies = append([]string(nil), t.Strategies...)
	c.Attempts = make([]Attempt, len(t.Attempts))
	for i, a := range t.Attempts {
		ca := a
		if a.Context != nil {
			ca.Context = make(map[string]string, len(a.Context))
			for k, v := range a.Context {
				ca.Context[k] = v
			}
		}
		ca.ActivatedArtifacts = append([]string(nil), a.ActivatedArtifacts...)
		ca.Signatures = append([]string(nil), a.Signatures...)
		ca.FixActions = make([]FixAction, len(a.FixActions))
		for j, fa := range a.FixActions {
			fa.ExitCode = copyInt(fa.ExitCode)
			ca.FixActions[j] = fa
		}
		if a.FixActions == nil {
			ca.FixActions = nil
		}
		ca.WarnedPatterns = append([]string(nil), a.WarnedPatterns...)
		if a.ExitCode != nil {
			v := *a.ExitCode
			ca.ExitCode = &v
		}
		c.Attempts[i] = ca
	}
	return c
}

func boundedStrings(in []string, n int) []string {
	var out []string
	for _, s := range in {
		s = strings.TrimSpace(s)
		if s == "" || contains(out, s) {
			continue
		}
		if len(out) >= n {
			break
		}
		out = append(out, Truncate(strings.NewReplacer("\n", " ", "\r", " ").Replace(s), MaxIDLen))
	}
	return out
}

func firstNonEmptySlice(a, b []string) []string {
	if len(a) > 0 {
		return a
	}
	return b
}

// LastFailure returns the last attempt of the session's open chain for a
// command (or for skillID when set): the attempt a pre-execution check
// should pass as CheckQuery.RecentSignatures when the agent retries.
func (st *AssemblerState) LastFailure(command, skillID string) (Attempt, bool) {
	if skillID == "" {
		c, err := ParseCommand(command)
		if err != nil {
			return Attempt{}, false
		}
		skillID = "cmd:" + c.Family
	}
	for i := range st.Open {
		tr := &st.Open[i].Trace
		if tr.SkillID == skillID && len(tr.Attempts) > 0 {
			return cloneTrace(*tr).Attempts[len(tr.Attempts)-1], true
		}
	}
	return Attempt{}, false
}

// scriptRunners run a script file given as their first argument.
var scriptRunners = set("python", "node", "bash", "sh", "zsh", "ruby", "php", "perl", "deno", "bun", "Rscript", "pwsh", "lua")

// CommandArtifacts returns the project files a command runs: a script
// given by path (./scripts/test.sh, bin/api) or passed to an interpreter
// (python app/main.py, node server.js).
func CommandArtifacts(c Command) []string {
	var out []string
	if strings.Contains(c.Program, "/") || isPathWord(c.Program) {
		out = append(out, c.Program)
	}
	if scriptRunners[c.Program] {
		if words := strings.Fields(strings.TrimPrefix(c.Family, c.Program)); len(words) == 1 && !strings.HasPrefix(words[0], "-") && isPathWord(words[0]) {
			out = append(out, words[0])
		}
	}
	return out
}
