package team

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
)

// Registry knows the payload schema of each typed message type and decodes
// payloads strictly: unknown fields are refused, required fields and ranges
// checked. Types it does not know are user-defined: their data may be any
// JSON value. The zero value and a nil *Registry know the built-in types.
//
// Field names are snake_case. Where the seed spells a field in camelCase
// (vote.proposalId, sync_checkpoint.trackA_state …) the seed's spelling is
// accepted on input as an alias and decoded into the snake_case field;
// giving both spellings is an error.
type Registry struct {
	extra map[MessageType]spec
}

type spec struct {
	aliases map[string]string // seed spelling → snake_case field
	decode  func(MessageType, []byte) (any, error)
}

// NewRegistry returns a registry with the built-in types.
func NewRegistry() *Registry { return &Registry{} }

// Register adds a user-defined typed message: validate receives the raw data
// and returns an error when it does not fit. Built-in types cannot be
// replaced.
func (r *Registry) Register(t MessageType, validate func(json.RawMessage) error) error {
	if !ValidName(string(t)) {
		return invalid("register message type", "type", "%q is not a valid type name", t)
	}
	if _, ok := builtin[t]; ok {
		return invalid("register message type", "type", "%q is built in", t)
	}
	if validate == nil {
		return invalid("register message type", "validate", "required")
	}
	if r.extra == nil {
		r.extra = map[MessageType]spec{}
	}
	r.extra[t] = spec{decode: func(t MessageType, data []byte) (any, error) {
		if err := validate(data); err != nil {
			return nil, &PayloadError{Type: t, Reason: err.Error()}
		}
		return json.RawMessage(data), nil
	}}
	return nil
}

// Typed reports whether t has a schema (built in or registered).
func (r *Registry) Typed(t MessageType) bool {
	if _, ok := builtin[t]; ok {
		return true
	}
	if r != nil {
		_, ok := r.extra[t]
		return ok
	}
	return false
}

// BuiltinTypes lists the built-in typed message types.
func BuiltinTypes() []MessageType {
	out := make([]MessageType, 0, len(builtin))
	for _, t := range builtinOrder {
		out = append(out, t)
	}
	return out
}

// Decode validates data as the payload of type t and returns the typed
// value: a pointer to the payload struct for built-in types (e.g.
// *ReviewResult), json.RawMessage for registered and user-defined types.
// Empty data decodes as an empty object. Errors are *PayloadError.
func (r *Registry) Decode(t MessageType, data json.RawMessage) (any, error) {
	if len(data) > MaxDataLen {
		return nil, &PayloadError{Type: t, Reason: fmt.Sprintf("%d bytes, at most %d", len(data), MaxDataLen)}
	}
	s, ok := builtin[t]
	if !ok && r != nil {
		s, ok = r.extra[t]
	}
	if !ok {
		if len(data) == 0 {
			return json.RawMessage(nil), nil
		}
		if !json.Valid(data) {
			return nil, &PayloadError{Type: t, Reason: "data is not valid JSON"}
		}
		return json.RawMessage(data), nil
	}
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}")
	}
	if len(s.aliases) > 0 {
		var err error
		if data, err = renameAliases(t, data, s.aliases); err != nil {
			return nil, err
		}
	}
	return s.decode(t, data)
}

func renameAliases(t MessageType, data []byte, aliases map[string]string) ([]byte, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, &PayloadError{Type: t, Reason: "data must be a JSON object: " + err.Error()}
	}
	changed := false
	for alias, canon := range aliases {
		v, ok := obj[alias]
		if !ok {
			continue
		}
		if _, both := obj[canon]; both {
			return nil, &PayloadError{Type: t, Field: canon, Reason: "given both as " + canon + " and as " + alias}
		}
		obj[canon] = v
		delete(obj, alias)
		changed = true
	}
	if !changed {
		return data, nil
	}
	return json.Marshal(obj)
}

// validator is implemented by every built-in payload struct.
type validator interface {
	validate(t MessageType) error
}

// strict decodes into a fresh T refusing unknown fields and trailing data,
// then validates.
func strict[T any, P interface {
	*T
	validator
}]() func(MessageType, []byte) (any, error) {
	return func(t MessageType, data []byte) (any, error) {
		v := P(new(T))
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			return nil, &PayloadError{Type: t, Reason: cleanJSONError(err)}
		}
		if _, err := dec.Token(); err == nil {
			return nil, &PayloadError{Type: t, Reason: "trailing data after the JSON object"}
		}
		if err := v.validate(t); err != nil {
			return nil, err
		}
		return v, nil
	}
}

func cleanJSONError(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("malformed JSON at byte %d: %s", se.Offset, se.Error())
	}
	return err.Error()
}

// freeObject accepts any JSON object (typed-but-unspecified base types).
type freeObject map[string]json.RawMessage

func (freeObject) validate(MessageType) error { return nil }

var builtinOrder = []MessageType{
	MsgPlanReady, MsgPlanApproved, MsgPlanRevision, MsgTaskUnblocked, MsgImplComplete, MsgImplProgress,
	MsgTestResult, MsgReviewResult, MsgFixRequired, MsgError, MsgProgress, MsgBlocker, MsgTaskComplete,
	MsgShutdown, MsgStateUpdate, MsgVote, MsgEscalate, MsgIncrementReady, MsgSwarmJoin, MsgSwarmDiagnosis,
	MsgConsultRequest, MsgConsultResponse, MsgSyncCheckpoint, MsgRetroFinding, MsgProposal,
	MsgAnalysisResult, MsgConsultOutcome, MsgRetroRequest, MsgEscalationReport, MsgResolution,
}

// builtin is never modified after package initialisation.
var builtin = map[MessageType]spec{
	MsgPlanReady:        {decode: strict[PlanReady]()},
	MsgPlanApproved:     {decode: strict[PlanApproved]()},
	MsgPlanRevision:     {decode: strict[PlanRevision]()},
	MsgTaskUnblocked:    {decode: strict[TaskUnblocked]()},
	MsgImplComplete:     {decode: strict[ImplComplete]()},
	MsgImplProgress:     {decode: strict[freeObject]()},
	MsgTestResult:       {decode: strict[TestResult]()},
	MsgReviewResult:     {decode: strict[ReviewResult]()},
	MsgFixRequired:      {decode: strict[FixRequired]()},
	MsgError:            {decode: strict[ErrorReport]()},
	MsgProgress:         {decode: strict[ProgressReport]()},
	MsgBlocker:          {decode: strict[Blocker]()},
	MsgTaskComplete:     {decode: strict[freeObject]()},
	MsgShutdown:         {decode: strict[freeObject]()},
	MsgStateUpdate:      {decode: strict[freeObject]()},
	MsgVote:             {aliases: map[string]string{"proposalId": "proposal_id"}, decode: strict[Vote]()},
	MsgEscalate:         {aliases: map[string]string{"fromLevel": "from_level", "toLevel": "to_level", "attemptsAtCurrent": "attempts_at_current", "diagnosisChain": "diagnosis_chain", "diagnosisHistory": "diagnosis_chain"}, decode: strict[Escalate]()},
	MsgIncrementReady:   {decode: strict[IncrementReady]()},
	MsgSwarmJoin:        {decode: strict[SwarmJoin]()},
	MsgSwarmDiagnosis:   {decode: strict[SwarmDiagnosis]()},
	MsgConsultRequest:   {decode: strict[ConsultRequest]()},
	MsgConsultResponse:  {decode: strict[ConsultResponse]()},
	MsgSyncCheckpoint:   {aliases: map[string]string{"trackA_state": "track_a_state", "trackB_state": "track_b_state", "syncId": "sync_id"}, decode: strict[SyncCheckpoint]()},
	MsgRetroFinding:     {decode: strict[RetroFinding]()},
	MsgProposal:         {decode: strict[Proposal]()},
	MsgAnalysisResult:   {decode: strict[AnalysisResult]()},
	MsgConsultOutcome:   {decode: strict[ConsultOutcome]()},
	MsgRetroRequest:     {decode: strict[RetroRequest]()},
	MsgEscalationReport: {decode: strict[EscalationReport]()},
	MsgResolution:       {decode: strict[Resolution]()},
}

// --- helpers for validation ---

func perr(t MessageType, field, format string, args ...any) error {
	return &PayloadError{Type: t, Field: field, Reason: fmt.Sprintf(format, args...)}
}

func checkUnit(t MessageType, field string, v float64) error {
	if math.IsNaN(v) || v < 0 || v > 1 {
		return perr(t, field, "%v is outside 0..1", v)
	}
	return nil
}

func checkStrings(t MessageType, field string, ss []string) error {
	for i, s := range ss {
		if s == "" {
			return perr(t, fmt.Sprintf("%s[%d]", field, i), "empty")
		}
	}
	return nil
}

// --- payloads ---

// Verdict is a reviewer's judgement (CP-2).
type Verdict string

// Verdicts.
const (
	VerdictApprove     Verdict = "APPROVE"
	VerdictConditional Verdict = "CONDITIONAL"
	VerdictBlock       Verdict = "BLOCK"
)

// Severity ranks a finding.
type Severity string

// Severities, most severe first.
const (
	SeverityCritical Severity = "critical"
	SeverityHigh     Severity = "high"
	SeverityMedium   Severity = "medium"
	SeverityLow      Severity = "low"
)

// Severities lists the severities, most severe first.
var Severities = []Severity{SeverityCritical, SeverityHigh, SeverityMedium, SeverityLow}

// Rank is 0 for critical … 3 for low, -1 if unknown.
func (s Severity) Rank() int {
	for i, v := range Severities {
		if v == s {
			return i
		}
	}
	return -1
}

// Finding is one problem a reviewer or analyst reports.
type Finding struct {
	File        string `json:"file,omitempty"`
	Line        int    `json:"line,omitempty"`
	Description string `json:"description"`
	Suggestion  string `json:"suggestion,omitempty"`
}

// Key identifies a finding across review rounds: file, line and description.
func (f Finding) Key() string { return fmt.Sprintf("%s:%d:%s", f.File, f.Line, f.Description) }

func (f Finding) check(t MessageType, field string) error {
	if f.Description == "" {
		return perr(t, field+".description", "required")
	}
	if f.Line < 0 {
		return perr(t, field+".line", "negative")
	}
	return nil
}

// Findings groups findings by severity, as the seed's review_result does.
type Findings struct {
	Critical []Finding `json:"critical,omitempty"`
	High     []Finding `json:"high,omitempty"`
	Medium   []Finding `json:"medium,omitempty"`
	Low      []Finding `json:"low,omitempty"`
}

// Total counts every finding.
func (f Findings) Total() int { return len(f.Critical) + len(f.High) + len(f.Medium) + len(f.Low) }

// BySeverity returns the findings of one severity.
func (f Findings) BySeverity(s Severity) []Finding {
	switch s {
	case SeverityCritical:
		return f.Critical
	case SeverityHigh:
		return f.High
	case SeverityMedium:
		return f.Medium
	case SeverityLow:
		return f.Low
	}
	return nil
}

func (f Findings) check(t MessageType) error {
	for _, s := range Severities {
		for i, x := range f.BySeverity(s) {
			if err := x.check(t, fmt.Sprintf("findings.%s[%d]", s, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// ReviewResult is the seed's review_result payload (CP-2's feedback signal).
type ReviewResult struct {
	Verdict   Verdict  `json:"verdict"`
	Findings  Findings `json:"findings"`
	Iteration int      `json:"iteration,omitempty"`
	Delta     string   `json:"delta,omitempty"`
	// DesignIssue marks findings the producer cannot fix (a design flaw):
	// CP-2 escalates instead of looping (an addition to the seed's shape).
	DesignIssue bool   `json:"design_issue,omitempty"`
	Summary     string `json:"summary,omitempty"`
}

func (p *ReviewResult) validate(t MessageType) error {
	switch p.Verdict {
	case VerdictApprove, VerdictConditional, VerdictBlock:
	default:
		return perr(t, "verdict", "%q is not APPROVE, CONDITIONAL or BLOCK", p.Verdict)
	}
	if p.Iteration < 0 {
		return perr(t, "iteration", "negative")
	}
	return p.Findings.check(t)
}

// Passes applies CP-2's success gate: APPROVE, or CONDITIONAL without
// critical findings.
func (p *ReviewResult) Passes() bool {
	return p.Verdict == VerdictApprove || (p.Verdict == VerdictConditional && len(p.Findings.Critical) == 0)
}

// VoteChoice is a voter's answer (CP-4).
type VoteChoice string

// Vote choices.
const (
	VoteApprove VoteChoice = "APPROVE"
	VoteReject  VoteChoice = "REJECT"
	VoteAbstain VoteChoice = "ABSTAIN"
)

// Vote is the seed's vote payload. The seed's proposalId is accepted as an
// alias of proposal_id.
type Vote struct {
	ProposalID string     `json:"proposal_id"`
	Vote       VoteChoice `json:"vote"`
	Rationale  string     `json:"rationale"`
	Conditions []string   `json:"conditions,omitempty"`
	Confidence *float64   `json:"confidence,omitempty"`
	// Block marks a BLOCK-level rejection: the proposal cannot pass while it stands.
	Block bool `json:"block,omitempty"`
}

func (p *Vote) validate(t MessageType) error {
	if p.ProposalID == "" {
		return perr(t, "proposal_id", "required")
	}
	switch p.Vote {
	case VoteApprove, VoteReject, VoteAbstain:
	default:
		return perr(t, "vote", "%q is not APPROVE, REJECT or ABSTAIN", p.Vote)
	}
	if p.Rationale == "" {
		return perr(t, "rationale", "required (the seed: a vote must give its reason)")
	}
	if p.Confidence != nil {
		if err := checkUnit(t, "confidence", *p.Confidence); err != nil {
			return err
		}
	}
	if p.Block && p.Vote != VoteReject {
		return perr(t, "block", "only a REJECT can be BLOCK-level")
	}
	return checkStrings(t, "conditions", p.Conditions)
}

// DiagnosisEntry is one level's contribution to an escalation's diagnosis chain.
type DiagnosisEntry struct {
	Level          int      `json:"level"`
	Agent          string   `json:"agent,omitempty"`
	Attempts       int      `json:"attempts"`
	Diagnosis      string   `json:"diagnosis,omitempty"`
	Tried          []string `json:"tried,omitempty"`
	Recommendation string   `json:"recommendation,omitempty"`
}

// Escalate is the seed's escalate payload (CP-5).
type Escalate struct {
	Issue             string           `json:"issue"`
	FromLevel         int              `json:"from_level"`
	ToLevel           int              `json:"to_level"`
	AttemptsAtCurrent int              `json:"attempts_at_current"`
	DiagnosisChain    []DiagnosisEntry `json:"diagnosis_chain,omitempty"`
}

func (p *Escalate) validate(t MessageType) error {
	if p.Issue == "" {
		return perr(t, "issue", "required")
	}
	if p.FromLevel < 0 || p.FromLevel > 3 {
		return perr(t, "from_level", "%d is outside 0..3", p.FromLevel)
	}
	if p.ToLevel <= p.FromLevel || p.ToLevel > 3 {
		return perr(t, "to_level", "%d must be above from_level %d and at most 3", p.ToLevel, p.FromLevel)
	}
	if p.AttemptsAtCurrent < 0 {
		return perr(t, "attempts_at_current", "negative")
	}
	for i, d := range p.DiagnosisChain {
		if d.Level < 0 || d.Level > 3 || d.Attempts < 0 {
			return perr(t, fmt.Sprintf("diagnosis_chain[%d]", i), "level outside 0..3 or negative attempts")
		}
	}
	return nil
}

// SwarmJoin is the seed's swarm_join broadcast (CP-7).
type SwarmJoin struct {
	Issue          string          `json:"issue"`
	AffectedTasks  []string        `json:"affected_tasks,omitempty"`
	DiagnosisSoFar json.RawMessage `json:"diagnosis_so_far,omitempty"`
	Assignment     string          `json:"assignment,omitempty"`
	Round          int             `json:"round,omitempty"`
	Exclude        []string        `json:"exclude,omitempty"` // fixes already tried (round 2)
}

func (p *SwarmJoin) validate(t MessageType) error {
	if p.Issue == "" {
		return perr(t, "issue", "required")
	}
	if p.Round < 0 {
		return perr(t, "round", "negative")
	}
	return nil
}

// SwarmDiagnosis is one agent's diagnosis in a swarm (CP-7).
type SwarmDiagnosis struct {
	Perspective   string  `json:"perspective"`
	RootCause     string  `json:"root_cause"`
	Confidence    float64 `json:"confidence"`
	FixSuggestion string  `json:"fix_suggestion"`
}

func (p *SwarmDiagnosis) validate(t MessageType) error {
	switch {
	case p.Perspective == "":
		return perr(t, "perspective", "required")
	case p.RootCause == "":
		return perr(t, "root_cause", "required")
	case p.FixSuggestion == "":
		return perr(t, "fix_suggestion", "required")
	}
	return checkUnit(t, "confidence", p.Confidence)
}

// Urgency of a consultation; it sets the timeout (CP-8).
type Urgency string

// Urgencies.
const (
	UrgencyBlocking Urgency = "blocking"
	UrgencyNormal   Urgency = "normal"
	UrgencyLow      Urgency = "low"
)

// ConsultRequest is the seed's consult_request payload (CP-8).
type ConsultRequest struct {
	Topic    string   `json:"topic"`
	Question string   `json:"question"`
	Context  string   `json:"context,omitempty"`
	Options  []string `json:"options,omitempty"`
	Urgency  Urgency  `json:"urgency,omitempty"` // default normal
	FollowUp bool     `json:"follow_up,omitempty"`
}

func (p *ConsultRequest) validate(t MessageType) error {
	if p.Topic == "" {
		return perr(t, "topic", "required")
	}
	if p.Question == "" {
		return perr(t, "question", "required")
	}
	switch p.Urgency {
	case "", UrgencyBlocking, UrgencyNormal, UrgencyLow:
	default:
		return perr(t, "urgency", "%q is not blocking, normal or low", p.Urgency)
	}
	return checkStrings(t, "options", p.Options)
}

// ConsultResponse is the seed's consult_response payload (CP-8).
type ConsultResponse struct {
	Recommendation string   `json:"recommendation"`
	Rationale      string   `json:"rationale,omitempty"`
	Confidence     float64  `json:"confidence"`
	References     []string `json:"references,omitempty"`
	Caveats        []string `json:"caveats,omitempty"`
	Alternative    string   `json:"alternative,omitempty"`
}

func (p *ConsultResponse) validate(t MessageType) error {
	if p.Recommendation == "" {
		return perr(t, "recommendation", "required")
	}
	return checkUnit(t, "confidence", p.Confidence)
}

// ConsultOutcome is the requester's answer after receiving advice (CP-8).
type ConsultOutcome struct {
	Applied             bool   `json:"applied"`
	ConflictsWithDesign bool   `json:"conflicts_with_design,omitempty"`
	Note                string `json:"note,omitempty"`
}

func (p *ConsultOutcome) validate(t MessageType) error {
	if p.Applied && p.ConflictsWithDesign {
		return perr(t, "conflicts_with_design", "advice that conflicts with the design cannot be applied as is")
	}
	return nil
}

// Alignment of a sync point (CP-9).
type Alignment string

// Alignments.
const (
	Aligned    Alignment = "ALIGNED"
	Misaligned Alignment = "MISALIGNED"
)

// SyncCheckpoint is the seed's sync_checkpoint payload (CP-9). The seed's
// trackA_state / trackB_state spellings are accepted as aliases.
type SyncCheckpoint struct {
	SyncID      string    `json:"sync_id"`
	Status      Alignment `json:"status"`
	TrackAState string    `json:"track_a_state,omitempty"`
	TrackBState string    `json:"track_b_state,omitempty"`
	Conflicts   []string  `json:"conflicts,omitempty"`
	// Adjust says which track must change: "A", "B" or "both" (the
	// coordinator's mediation; default both).
	Adjust string `json:"adjust,omitempty"`
}

func (p *SyncCheckpoint) validate(t MessageType) error {
	if p.SyncID == "" {
		return perr(t, "sync_id", "required")
	}
	if p.Status != Aligned && p.Status != Misaligned {
		return perr(t, "status", "%q is not ALIGNED or MISALIGNED", p.Status)
	}
	switch p.Adjust {
	case "", "A", "B", "both":
	default:
		return perr(t, "adjust", "%q is not A, B or both", p.Adjust)
	}
	return checkStrings(t, "conflicts", p.Conflicts)
}

// RetroFinding is one agent's retrospective (CP-10).
type RetroFinding struct {
	WentWell    []string `json:"went_well,omitempty"`
	Difficult   []string `json:"difficult,omitempty"`
	Suggestions []string `json:"suggestions,omitempty"`
	Patterns    []string `json:"patterns,omitempty"`
}

func (p *RetroFinding) validate(t MessageType) error {
	for _, f := range []struct {
		n  string
		ss []string
	}{{"went_well", p.WentWell}, {"difficult", p.Difficult}, {"suggestions", p.Suggestions}, {"patterns", p.Patterns}} {
		if err := checkStrings(t, f.n, f.ss); err != nil {
			return err
		}
	}
	return nil
}

// RetroRequest asks a member for its retrospective (CP-10).
type RetroRequest struct {
	Questions []string `json:"questions,omitempty"`
}

func (p *RetroRequest) validate(MessageType) error { return nil }

// IncrementGate is the seed's per-increment gate (CP-6).
type IncrementGate struct {
	SyntaxClean        bool `json:"syntax_clean"`
	NoRegression       bool `json:"no_regression"`
	IncrementTestsPass bool `json:"increment_tests_pass"`
}

// Passed reports whether every criterion holds.
func (g IncrementGate) Passed() bool { return g.SyntaxClean && g.NoRegression && g.IncrementTestsPass }

// Failures names the criteria that do not hold.
func (g IncrementGate) Failures() []string {
	var out []string
	if !g.SyntaxClean {
		out = append(out, "syntax_clean")
	}
	if !g.NoRegression {
		out = append(out, "no_regression")
	}
	if !g.IncrementTestsPass {
		out = append(out, "increment_tests_pass")
	}
	return out
}

// IncrementReady is the seed's increment_ready payload (CP-6): the
// validator's gate decision for one increment.
type IncrementReady struct {
	Increment     string         `json:"increment"`
	Status        string         `json:"status"` // PASS or FAIL
	Gate          *IncrementGate `json:"gate,omitempty"`
	FailedGates   []string       `json:"failed_gates,omitempty"`
	AffectedFiles []string       `json:"affected_files,omitempty"`
	Suggestion    string         `json:"suggestion,omitempty"`
}

func (p *IncrementReady) validate(t MessageType) error {
	if p.Increment == "" {
		return perr(t, "increment", "required")
	}
	if p.Status != "PASS" && p.Status != "FAIL" {
		return perr(t, "status", "%q is not PASS or FAIL", p.Status)
	}
	if p.Gate != nil && p.Gate.Passed() != (p.Status == "PASS") {
		return perr(t, "status", "%s contradicts the gate %+v", p.Status, *p.Gate)
	}
	for i, g := range p.FailedGates {
		switch g {
		case "syntax_clean", "no_regression", "increment_tests_pass":
		default:
			return perr(t, fmt.Sprintf("failed_gates[%d]", i), "%q is not a gate criterion", g)
		}
	}
	return nil
}

// Passed reports the gate decision.
func (p *IncrementReady) Passed() bool { return p.Status == "PASS" }

// Failed lists the failed criteria (from failed_gates, else from the gate).
func (p *IncrementReady) Failed() []string {
	if len(p.FailedGates) > 0 || p.Gate == nil {
		return p.FailedGates
	}
	return p.Gate.Failures()
}

// TestResult reports a test run (CP-1 TEST, CP-6 final validation, CP-7 verification).
type TestResult struct {
	PassRate   *float64 `json:"pass_rate,omitempty"`
	Passed     int      `json:"passed,omitempty"`
	Failed     int      `json:"failed,omitempty"`
	Total      int      `json:"total,omitempty"`
	Regression bool     `json:"regression,omitempty"` // the change broke something that passed before
	Failures   []string `json:"failures,omitempty"`
	Summary    string   `json:"summary,omitempty"`
}

func (p *TestResult) validate(t MessageType) error {
	if p.Passed < 0 || p.Failed < 0 || p.Total < 0 {
		return perr(t, "passed", "counts must not be negative")
	}
	if p.Total > 0 && p.Passed+p.Failed > p.Total {
		return perr(t, "total", "passed %d + failed %d exceed total %d", p.Passed, p.Failed, p.Total)
	}
	if p.PassRate != nil {
		return checkUnit(t, "pass_rate", *p.PassRate)
	}
	if p.Total == 0 && p.Passed+p.Failed == 0 {
		return perr(t, "pass_rate", "give pass_rate or test counts")
	}
	return nil
}

// Rate is the pass rate: pass_rate when given, else passed/total (or
// passed/(passed+failed) without a total).
func (p *TestResult) Rate() float64 {
	if p.PassRate != nil {
		return *p.PassRate
	}
	total := p.Total
	if total == 0 {
		total = p.Passed + p.Failed
	}
	if total == 0 {
		return 0
	}
	return float64(p.Passed) / float64(total)
}

// PlanReady announces a plan (CP-1).
type PlanReady struct {
	Summary string          `json:"summary,omitempty"`
	Plan    json.RawMessage `json:"plan,omitempty"`
	Tasks   []PlanItem      `json:"tasks,omitempty"`
}

func (p *PlanReady) validate(t MessageType) error {
	for i, it := range p.Tasks {
		if it.ID == "" {
			return perr(t, fmt.Sprintf("tasks[%d].id", i), "required")
		}
	}
	return nil
}

// PlanApproved approves a plan (CP-1).
type PlanApproved struct {
	Notes string `json:"notes,omitempty"`
}

func (p *PlanApproved) validate(MessageType) error { return nil }

// PlanRevision rejects a plan with feedback (CP-1).
type PlanRevision struct {
	Feedback string `json:"feedback"`
}

func (p *PlanRevision) validate(t MessageType) error {
	if p.Feedback == "" {
		return perr(t, "feedback", "required: say what to revise")
	}
	return nil
}

// TaskUnblocked announces a task that became ready.
type TaskUnblocked struct {
	TaskID  string `json:"task_id"`
	Subject string `json:"subject,omitempty"`
}

func (p *TaskUnblocked) validate(t MessageType) error {
	if p.TaskID == "" {
		return perr(t, "task_id", "required")
	}
	return nil
}

// ImplComplete announces finished implementation work (CP-1, CP-2, CP-6).
type ImplComplete struct {
	TaskID       string   `json:"task_id,omitempty"`
	ItemID       string   `json:"item_id,omitempty"`
	Status       string   `json:"status,omitempty"`
	CommitHash   string   `json:"commit_hash,omitempty"`
	Summary      string   `json:"summary,omitempty"`
	FilesChanged []string `json:"files_changed,omitempty"`
}

func (p *ImplComplete) validate(MessageType) error { return nil }

// FixRequired asks a producer to fix (CP-2 findings, CP-6 failed gates).
type FixRequired struct {
	Iteration   int       `json:"iteration,omitempty"`
	Findings    *Findings `json:"findings,omitempty"`
	Increment   string    `json:"increment,omitempty"`
	FailedGates []string  `json:"failed_gates,omitempty"`
	Suggestion  string    `json:"suggestion,omitempty"`
}

func (p *FixRequired) validate(t MessageType) error {
	if p.Iteration < 0 {
		return perr(t, "iteration", "negative")
	}
	if p.Findings != nil {
		return p.Findings.check(t)
	}
	return nil
}

// ErrorReport is the error message payload.
type ErrorReport struct {
	Message string          `json:"message"`
	Code    string          `json:"code,omitempty"`
	TaskID  string          `json:"task_id,omitempty"`
	Details json.RawMessage `json:"details,omitempty"`
}

func (p *ErrorReport) validate(t MessageType) error {
	if p.Message == "" {
		return perr(t, "message", "required")
	}
	return nil
}

// ProgressReport is the peer's progress message payload.
type ProgressReport struct {
	TaskID      string `json:"task_id,omitempty"`
	Role        string `json:"role,omitempty"`
	Status      string `json:"status,omitempty"`
	ProgressPct int    `json:"progress_pct,omitempty"`
	Phase       string `json:"phase,omitempty"`
	KeyInfo     string `json:"key_info,omitempty"`
}

func (p *ProgressReport) validate(t MessageType) error {
	if p.ProgressPct < 0 || p.ProgressPct > 100 {
		return perr(t, "progress_pct", "%d is outside 0..100", p.ProgressPct)
	}
	return nil
}

// Blocker is the peer's blocker message payload.
type Blocker struct {
	BlockerDetail string   `json:"blocker_detail"`
	Severity      Severity `json:"severity,omitempty"`
	Attempted     []string `json:"attempted,omitempty"`
}

func (p *Blocker) validate(t MessageType) error {
	if p.BlockerDetail == "" {
		return perr(t, "blocker_detail", "required")
	}
	if p.Severity != "" && p.Severity.Rank() < 0 {
		return perr(t, "severity", "%q is not critical, high, medium or low", p.Severity)
	}
	return nil
}

// ProposalOption is one option of a proposal (CP-4).
type ProposalOption struct {
	ID          string   `json:"id"`
	Description string   `json:"description,omitempty"`
	Pros        []string `json:"pros,omitempty"`
	Cons        []string `json:"cons,omitempty"`
}

// Proposal is the seed's proposal (CP-4), sent to voters.
type Proposal struct {
	ID       string           `json:"id"`
	Title    string           `json:"title"`
	Options  []ProposalOption `json:"options,omitempty"`
	Context  string           `json:"context,omitempty"`
	Deadline time.Time        `json:"deadline,omitzero"`
	Round    int              `json:"round,omitempty"`
}

func (p *Proposal) validate(t MessageType) error {
	if p.ID == "" {
		return perr(t, "id", "required")
	}
	if p.Title == "" {
		return perr(t, "title", "required")
	}
	seen := map[string]bool{}
	for i, o := range p.Options {
		if o.ID == "" || seen[o.ID] {
			return perr(t, fmt.Sprintf("options[%d].id", i), "required and unique")
		}
		seen[o.ID] = true
	}
	return nil
}

// AnalysisFinding is a finding of one CP-3 worker, with its severity.
type AnalysisFinding struct {
	Finding
	ID       string   `json:"id,omitempty"` // stable identity across workers; default file:line:description
	Severity Severity `json:"severity,omitempty"`
}

// Key identifies the finding across workers.
func (f AnalysisFinding) Key() string {
	if f.ID != "" {
		return f.ID
	}
	return f.Finding.Key()
}

// AnalysisResult is one CP-3 worker's result (the seed's "{angle}_result").
// Claims are the worker's positions on named questions ("cache": "yes");
// two workers claiming different values for one question conflict.
type AnalysisResult struct {
	Angle      string            `json:"angle,omitempty"`
	Summary    string            `json:"summary,omitempty"`
	Findings   []AnalysisFinding `json:"findings,omitempty"`
	Claims     map[string]string `json:"claims,omitempty"`
	Confidence *float64          `json:"confidence,omitempty"`
}

func (p *AnalysisResult) validate(t MessageType) error {
	for i, f := range p.Findings {
		if err := f.check(t, fmt.Sprintf("findings[%d]", i)); err != nil {
			return err
		}
		if f.Severity != "" && f.Severity.Rank() < 0 {
			return perr(t, fmt.Sprintf("findings[%d].severity", i), "%q is not critical, high, medium or low", f.Severity)
		}
	}
	for k, v := range p.Claims {
		if k == "" || v == "" {
			return perr(t, "claims", "empty question or position")
		}
	}
	if p.Confidence != nil {
		return checkUnit(t, "confidence", *p.Confidence)
	}
	return nil
}

// EscalationReport is a CP-5 level's answer on its attempt.
type EscalationReport struct {
	Resolved       bool     `json:"resolved"`
	Diagnosis      string   `json:"diagnosis,omitempty"`
	Tried          []string `json:"tried,omitempty"`
	Recommendation string   `json:"recommendation,omitempty"`
	Solution       string   `json:"solution,omitempty"`
	// Architectural: the root cause is a design flaw (CP-5 falls back to CP-1).
	Architectural bool `json:"architectural,omitempty"`
}

func (p *EscalationReport) validate(t MessageType) error {
	if p.Resolved && p.Architectural {
		return perr(t, "architectural", "a resolved issue needs no replanning")
	}
	return checkStrings(t, "tried", p.Tried)
}

// Resolution carries an escalation's answer back to the agent (CP-5).
type Resolution struct {
	Issue      string `json:"issue"`
	Level      int    `json:"level"`
	Solution   string `json:"solution"`
	Workaround bool   `json:"workaround,omitempty"` // the most conservative option, taken without an answer
}

func (p *Resolution) validate(t MessageType) error {
	if p.Issue == "" || p.Solution == "" {
		return perr(t, "solution", "issue and solution required")
	}
	if p.Level < 0 || p.Level > 3 {
		return perr(t, "level", "%d is outside 0..3", p.Level)
	}
	return nil
}
