package explore

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// ExitReason says why a session ended.
type ExitReason string

// Exit reasons.
const (
	ExitScanTerminal   ExitReason = "scan_terminal"   // an exit-on-terminal strategy reached its terminal phase
	ExitGraceExhausted ExitReason = "grace_exhausted" // terminal_grace_rounds rounds ticked in the terminal phase
	ExitHardLimit      ExitReason = "hard_limit"      // max_iterations + hard_exit_rounds rounds ticked
	ExitForced         ExitReason = "forced_exit"     // hard_exit_rounds rounds after graceful exit started
	ExitFinalAnswer    ExitReason = "final_answer"    // the agent's text reply was accepted as final
)

func (r ExitReason) valid() bool {
	switch r {
	case "", ExitScanTerminal, ExitGraceExhausted, ExitHardLimit, ExitForced, ExitFinalAnswer:
		return true
	}
	return false
}

// Causes of a phase change.
const (
	CauseMetrics       = "metrics"        // an on_metrics condition held at the end of a round
	CauseText          = "text"           // an on_text condition held on a text reply
	CauseMaxIterations = "max_iterations" // ShouldExit forced the terminal phase
	CauseForced        = "forced"         // ForceTerminal was called
)

// PhaseChange records one phase change.
type PhaseChange struct {
	From   string    `json:"from"`
	To     string    `json:"to"`
	Round  int       `json:"round"`
	Cause  string    `json:"cause"`
	Reason string    `json:"reason,omitempty"`
	At     time.Time `json:"at,omitzero"` // absent when the events carry no time (replay)
}

// RoundState is what the tracker knows about the current round.
type RoundState struct {
	Open         bool `json:"open"`         // ticked and not yet ended
	Transitioned bool `json:"transitioned"` // the phase changed since the last tick
	Calls        int  `json:"calls"`
	Submits      int  `json:"submits"`
	NewInfo      bool `json:"new_info"`
	Searched     bool `json:"searched"`
	Read         bool `json:"read"`
	OnPlan       bool `json:"on_plan"`
}

// NudgeState is the nudge bookkeeping.
type NudgeState struct {
	Given            map[NudgeKind]int `json:"given"`
	LastRound        int               `json:"last_round"` // round of the last Nudge() delivery
	QueuedFor        int               `json:"queued_for"` // round an end-of-round or text nudge was handed out for
	Pending          *Nudge            `json:"pending,omitempty"`
	Routine          int               `json:"routine"`
	LastRoutineRound int               `json:"last_routine_round"`
	// SummaryShown records that the terminal-format instruction reached the
	// agent, before the reply of round SummaryShownAt.
	SummaryShown   bool `json:"summary_shown"`
	SummaryShownAt int  `json:"summary_shown_at"`
}

// StateVersion is the version of the State layout.
const StateVersion = 1

// State is the whole state of a tracker as a plain value. It round-trips
// through encoding/json exactly, so a service can persist a session between
// hook calls: Restore(json(Snapshot())) behaves like the original.
type State struct {
	Version       int           `json:"version"`
	Strategy      Strategy      `json:"strategy"`
	Budget        Budget        `json:"budget"`
	Phase         string        `json:"phase"`
	Now           time.Time     `json:"now"` // time of the last tick
	Counters      Counters      `json:"counters"`
	Files         KeySet        `json:"files"`
	Patterns      KeySet        `json:"patterns"`
	Queries       KeySet        `json:"queries"`
	Round         RoundState    `json:"round"`
	Graceful      bool          `json:"graceful"`
	GracefulRound int           `json:"graceful_round"`
	ForcedReason  string        `json:"forced_reason,omitempty"`
	Exit          ExitReason    `json:"exit,omitempty"`
	History       []PhaseChange `json:"history,omitempty"`
	Nudges        NudgeState    `json:"nudges"`
	Plan          PlanState     `json:"plan"`
}

// Tracker controls one exploration session of an agent loop. It is not safe
// for concurrent use; a service serialises the events of one session.
//
// The loop calls, per round: Tick, ShouldExit, Nudge, PhaseContext and
// ToolChoice before the model call; RollbackTick if the call failed;
// RecordThought with the model's reasoning text, RecordToolCall per tool
// call and EndRound after tool calls, or OnTextResponse when the model
// answered with text. ForceTerminal may come at any time.
type Tracker struct {
	s   State
	bus *Bus
}

// Option configures a Tracker.
type Option func(*Tracker)

// WithBus makes the tracker emit phase, nudge and exit signals on b.
func WithBus(b *Bus) Option { return func(t *Tracker) { t.bus = b } }

// New starts a session in the strategy's first phase. The strategy and
// budget are validated (*StrategyError, *BudgetError).
func New(strategy Strategy, budget Budget, opts ...Option) (*Tracker, error) {
	if err := strategy.Validate(); err != nil {
		return nil, err
	}
	if err := budget.Validate(); err != nil {
		return nil, err
	}
	t := &Tracker{s: State{
		Version:  StateVersion,
		Strategy: strategy.Clone(),
		Budget:   budget,
		Phase:    strategy.Phases[0].Name,
		Files:    KeySet{},
		Patterns: KeySet{},
		Queries:  KeySet{},
		Nudges:   NudgeState{Given: map[NudgeKind]int{}},
	}}
	for _, o := range opts {
		o(t)
	}
	return t, nil
}

// Restore rebuilds a tracker from a snapshot, validating it (*StateError,
// or the strategy's and budget's errors).
func Restore(s State, opts ...Option) (*Tracker, error) {
	if s.Version != StateVersion {
		return nil, &StateError{Field: "version", Err: fmt.Errorf("%w: %d (want %d)", ErrBadValue, s.Version, StateVersion)}
	}
	if err := s.Strategy.Validate(); err != nil {
		return nil, err
	}
	if err := s.Budget.Validate(); err != nil {
		return nil, err
	}
	if s.Strategy.PhaseIndex(s.Phase) < 0 {
		return nil, &StateError{Field: "phase", Err: fmt.Errorf("%w: %q", ErrUnknownPhase, s.Phase)}
	}
	if !s.Counters.valid() || s.GracefulRound < 0 || s.Nudges.Routine < 0 || s.Plan.Replans < 0 || s.Plan.Unplanned < 0 || s.Plan.OffPlan < 0 {
		return nil, &StateError{Field: "counters", Err: fmt.Errorf("%w: negative counter", ErrBadValue)}
	}
	if !s.Exit.valid() {
		return nil, &StateError{Field: "exit", Err: fmt.Errorf("%w: unknown exit reason %q", ErrBadValue, s.Exit)}
	}
	for _, h := range s.History {
		if s.Strategy.PhaseIndex(h.From) < 0 || s.Strategy.PhaseIndex(h.To) < 0 {
			return nil, &StateError{Field: "history", Err: fmt.Errorf("%w: %s→%s", ErrUnknownPhase, h.From, h.To)}
		}
	}
	t := &Tracker{s: cloneState(s)}
	for _, set := range []*KeySet{&t.s.Files, &t.s.Patterns, &t.s.Queries} {
		if *set == nil {
			*set = KeySet{}
		}
	}
	if t.s.Nudges.Given == nil {
		t.s.Nudges.Given = map[NudgeKind]int{}
	}
	if over := len(t.s.Plan.Recent) - t.s.Strategy.Nudges.DeviationWindow; over > 0 {
		t.s.Plan.Recent = t.s.Plan.Recent[over:]
	}
	for _, o := range opts {
		o(t)
	}
	return t, nil
}

// Snapshot returns a deep copy of the tracker's state.
func (t *Tracker) Snapshot() State { return cloneState(t.s) }

func cloneState(s State) State {
	c := s
	c.Strategy = s.Strategy.Clone()
	c.Files, c.Patterns, c.Queries = maps.Clone(s.Files), maps.Clone(s.Patterns), maps.Clone(s.Queries)
	c.History = slices.Clone(s.History)
	c.Nudges.Given = maps.Clone(s.Nudges.Given)
	if s.Nudges.Pending != nil {
		p := *s.Nudges.Pending
		c.Nudges.Pending = &p
	}
	c.Plan.Steps = slices.Clone(s.Plan.Steps)
	for i := range c.Plan.Steps {
		c.Plan.Steps[i].Keywords = slices.Clone(c.Plan.Steps[i].Keywords)
	}
	c.Plan.Recent = slices.Clone(s.Plan.Recent)
	return c
}

// ── lifecycle ───────────────────────────────────────────────────────────

// Tick starts a round: iteration and phase_rounds grow by one. A round still
// open (no EndRound or OnTextResponse) is ended first; a phase-transition
// nudge it yields is kept and handed out by the next Nudge call. Once the
// round limit is reached Tick ends the session (hard_limit) even if
// ShouldExit was not called.
func (t *Tracker) Tick(now time.Time) {
	if t.s.Exit != "" {
		return
	}
	if t.s.Round.Open && t.closeRound() {
		t.s.Nudges.Pending = t.transitionNudge()
	}
	c := &t.s.Counters
	if c.Iteration >= t.s.Budget.MaxIterations+t.s.Budget.HardExitRounds {
		t.exit(ExitHardLimit)
		return
	}
	c.Iteration++
	c.PhaseRounds++
	t.s.Round.Open, t.s.Round.Transitioned = true, false
	t.s.Now = now
}

// RollbackTick undoes the current round's tick after a failed or empty model
// call, so it costs no budget. It does nothing once the round has ended.
func (t *Tracker) RollbackTick() {
	if t.s.Exit != "" || !t.s.Round.Open {
		return
	}
	c := &t.s.Counters
	c.Iteration--
	if !t.s.Round.Transitioned && c.PhaseRounds > 0 {
		c.PhaseRounds--
	}
	t.s.Round.Open = false
}

// ShouldExit reports whether the loop must stop, checked right after Tick:
// an exit-on-terminal strategy in its terminal phase (scan_terminal);
// terminal_grace_rounds rounds in the terminal phase (grace_exhausted);
// max_iterations + hard_exit_rounds rounds (hard_limit); hard_exit_rounds
// rounds after graceful exit started (forced_exit). At max_iterations
// outside the terminal phase it forces the terminal phase and starts
// graceful exit instead (tool choice none, force_exit nudges) and returns
// false. Once it has returned true it keeps doing so.
func (t *Tracker) ShouldExit() (ExitReason, bool) {
	if t.s.Exit != "" {
		return t.s.Exit, true
	}
	c, b := &t.s.Counters, &t.s.Budget
	terminal := t.terminal()
	switch {
	case terminal && t.s.Strategy.ExitOnTerminal:
		t.exit(ExitScanTerminal)
	case terminal && c.PhaseRounds >= b.TerminalGraceRounds:
		t.exit(ExitGraceExhausted)
	case c.Iteration >= b.MaxIterations+b.HardExitRounds:
		t.exit(ExitHardLimit)
	case t.s.Graceful && c.Iteration >= t.s.GracefulRound+b.HardExitRounds:
		t.exit(ExitForced)
	case c.Iteration >= b.MaxIterations && !terminal:
		t.forceTerminal(CauseMaxIterations, "")
	}
	return t.s.Exit, t.s.Exit != ""
}

// ForceTerminal moves the session to the terminal phase and starts graceful
// exit (for example under token pressure): tool choice becomes none, each
// following round's Nudge is a force_exit nudge carrying the strategy's
// final-answer format, and the session ends hard_exit_rounds rounds later.
func (t *Tracker) ForceTerminal(reason string) {
	if t.s.Exit != "" {
		return
	}
	t.forceTerminal(CauseForced, reason)
}

func (t *Tracker) forceTerminal(cause, reason string) {
	if !t.terminal() {
		t.transition(t.s.Strategy.Terminal(), cause, reason)
	}
	if !t.s.Graceful {
		// Graceful exit starts with the current round if it is still open,
		// else with the next one.
		t.s.Graceful, t.s.GracefulRound = true, t.s.Counters.Iteration
		if !t.s.Round.Open {
			t.s.GracefulRound++
		}
	}
	if reason != "" {
		t.s.ForcedReason = reason
	}
}

// RecordToolCall records one tool call of the current round. Successful
// calls that add an unseen file, pattern or query are new information;
// search calls that found something mark the round as a search round (the
// search budget counts rounds, not calls, and an empty search costs none);
// read calls mark it a read round (the read budget); successful submit calls count against max_submits;
// successful note_finding calls count as findings. Calls after the session
// ended are ignored. A call without a name or with an unknown status is an
// error wrapping ErrInvalidToolCall.
func (t *Tracker) RecordToolCall(call ToolCall) (CallResult, error) {
	if err := call.Validate(); err != nil {
		return CallResult{}, err
	}
	if t.s.Exit != "" {
		return CallResult{Ignored: true}, nil
	}
	kind := classify(t.s.Strategy.Tools, &call)
	c, r := &t.s.Counters, &t.s.Round
	c.TotalToolCalls++
	r.Calls++
	res := CallResult{Kind: kind}
	if call.ok() {
		c.ObservedCalls++
		res.New = observe(t, kind, &call)
		if kind.evidence() {
			c.EvidenceCount++
		}
		switch kind {
		case KindSearch:
			// only a search that found something uses the search budget
			if call.found() {
				r.Searched = true
			}
		case KindRead:
			r.Read = true
		case KindSubmit:
			c.SubmitCount++
			c.RoundsSinceSubmit = 0
			r.Submits++
		case KindFinding:
			c.FindingCount++
			verified, depth := findingQuality(call.Args)
			if verified {
				c.VerifiedFindingCount++
			}
			if depth {
				c.DepthSlottedFindings++
			}
		}
	}
	if res.New {
		r.NewInfo = true
	}
	if t.s.Plan.match(kind, &call, c.Iteration) {
		r.OnPlan = true
	}
	return res, nil
}

func (t *Tracker) addFile(k string) bool    { return t.s.Files.add(k) }
func (t *Tracker) addPattern(k string) bool { return t.s.Patterns.add(k) }
func (t *Tracker) addQuery(k string) bool   { return t.s.Queries.add(k) }

// RecordThought records the model's reasoning text of this round. When a
// plan was asked for (planning or replan nudge), a numbered plan in the text
// becomes the session's plan.
func (t *Tracker) RecordThought(text string) {
	if t.s.Exit != "" || strings.TrimSpace(text) == "" {
		return
	}
	t.s.Counters.Thoughts++
	t.s.Plan.capture(text, t.s.Counters.Iteration)
}

// EndRound ends a round with tool calls: it updates the round counters
// (new information, submits, search and idle rounds), checks the current
// phase's on_metrics transitions and returns the phase-transition nudge if
// the phase changed (none when an exit-on-terminal strategy enters its
// terminal phase). It does nothing if no round is open.
func (t *Tracker) EndRound() *Nudge {
	if t.s.Exit != "" || !t.s.Round.Open {
		return nil
	}
	if !t.closeRound() {
		return nil
	}
	n := t.transitionNudge()
	if n != nil {
		t.deliverAfterReply(n)
	}
	return n
}

// closeRound applies the end-of-round counters and the metrics transition
// check; it reports whether the phase changed.
func (t *Tracker) closeRound() bool {
	r, c := &t.s.Round, &t.s.Counters
	r.Open = false
	c.RoundsEnded++
	if r.NewInfo {
		c.RoundsSinceNewInfo = 0
		c.NewInfoRounds++
	} else {
		c.RoundsSinceNewInfo++
	}
	if r.Submits > 0 {
		c.RoundsSinceSubmit = 0
	} else {
		c.RoundsSinceSubmit++
	}
	if r.Searched {
		c.SearchRoundsInPhase++
	}
	if r.Read {
		c.ReadRoundsInPhase++
	}
	if r.Calls > 0 {
		c.ToolRoundsInPhase++
		c.ConsecutiveIdleRounds = 0
		t.s.Plan.endRound(r.OnPlan, t.s.Strategy.Nudges.DeviationWindow)
	} else {
		c.ConsecutiveIdleRounds++
	}
	r.Calls, r.Submits = 0, 0
	r.NewInfo, r.Searched, r.Read, r.OnPlan = false, false, false, false
	if r.Transitioned {
		return false // at most one phase change per round
	}
	if tr := t.firstTransition(false); tr != nil {
		t.transition(tr.To, CauseMetrics, "")
		return true
	}
	return false
}

// TextAction is the decision on a text reply.
type TextAction string

// Text-reply decisions.
const (
	TextFinal    TextAction = "final"    // accept the reply as the final answer; the session ends
	TextDigest   TextAction = "digest"   // the session just entered the terminal phase: send the digest nudge and continue
	TextContinue TextAction = "continue" // keep the loop going (with Nudge when set)
)

// TextDecision is the answer to a text reply.
type TextDecision struct {
	Action TextAction `json:"action"`
	Nudge  *Nudge     `json:"nudge,omitempty"`
	Phase  string     `json:"phase"`
}

// Final reports whether the reply ends the session.
func (d TextDecision) Final() bool { return d.Action == TextFinal }

// OnTextResponse handles a reply without tool calls. It ends the round if
// it is open (a text round: no tools, no new information), then, unless the
// phase already changed this round, checks the on_text transitions. Then:
//
//	terminal phase, exit-on-terminal or no summary format  → final
//	terminal phase, format instruction already seen         → final
//	terminal phase, format instruction queued for next turn → continue
//	terminal phase, format instruction never sent           → digest (nudge: the format)
//	working phase, final_when holds                         → final
//	working phase, phase changed on this reply              → continue (nudge: phase transition)
//	working phase otherwise                                 → continue (nudge: first on_text rule, if any)
//
// A final decision ends the session (final_answer).
func (t *Tracker) OnTextResponse(text string) TextDecision {
	if t.s.Exit != "" {
		return TextDecision{Action: TextFinal, Phase: t.s.Phase}
	}
	t.RecordThought(text)
	before := len(t.s.History)
	if t.s.Round.Open {
		t.closeRound()
	}
	if !t.s.Round.Transitioned {
		if tr := t.firstTransition(true); tr != nil {
			t.transition(tr.To, CauseText, "")
		}
	}
	moved := len(t.s.History) > before
	iter := t.s.Counters.Iteration
	d := TextDecision{Action: TextContinue, Phase: t.s.Phase}
	ns := &t.s.Nudges
	switch {
	case t.terminal():
		switch {
		case t.s.Strategy.ExitOnTerminal || t.s.Strategy.Summary == "":
			d.Action = TextFinal
		case ns.SummaryShown && ns.SummaryShownAt <= iter:
			d.Action = TextFinal
		case ns.SummaryShown:
			// The transition nudge with the format goes out before the next reply.
		default:
			d.Action = TextDigest
			d.Nudge = t.newNudge(NudgeDigest, t.text(string(NudgeDigest)), true, "", "")
		}
	case t.phase().FinalWhen.holds(t):
		d.Action = TextFinal
	case moved:
		d.Nudge = t.transitionNudge()
	case ns.QueuedFor <= iter && !t.s.Round.Transitioned:
		for i := range t.phase().OnText {
			if rule := &t.phase().OnText[i]; rule.When.holds(t) {
				d.Nudge = t.newNudge(NudgeContinue, rule.Text, false, "", "")
				break
			}
		}
	}
	if d.Nudge != nil {
		t.deliverAfterReply(d.Nudge)
	}
	if d.Action == TextFinal {
		t.exit(ExitFinalAnswer)
	}
	return d
}

// ── nudges ──────────────────────────────────────────────────────────────

// Nudge returns at most one nudge per round, to send before the model call,
// or nil. Priority: force_exit (every round of graceful exit; it carries the
// final-answer format), a phase-transition nudge left pending by an implicit
// round end, then the routine nudges convergence (once), budget_warning
// (once), reflection and planning/replan. Routine nudges are skipped in the
// terminal phase, in phases that mute them, in the round right after an
// end-of-round or text nudge, and when the routine-nudge cap or gap applies.
func (t *Tracker) Nudge() *Nudge {
	ns, r := &t.s.Nudges, t.s.Counters.Iteration
	if t.s.Exit != "" || r == 0 || ns.LastRound == r {
		return nil
	}
	if t.s.Graceful && r >= t.s.GracefulRound {
		ns.Pending = nil
		return t.deliverNow(t.newNudge(NudgeForceExit, t.text(string(NudgeForceExit)), true, "", ""))
	}
	if p := ns.Pending; p != nil {
		ns.Pending = nil
		p.Round = r
		return t.deliverNow(p)
	}
	pol := &t.s.Strategy.Nudges
	if ns.QueuedFor >= r || t.terminal() ||
		pol.MaxRoutineNudges > 0 && ns.Routine >= pol.MaxRoutineNudges ||
		pol.NudgeGapRounds > 0 && ns.Routine > 0 && r-ns.LastRoutineRound < pol.NudgeGapRounds {
		return nil
	}
	kind := t.routineKind()
	if kind == "" {
		return nil
	}
	ns.Routine++
	ns.LastRoutineRound = r
	switch kind {
	case NudgePlanning:
		t.s.Plan.Asked, t.s.Plan.Expect = true, true
	case NudgeReplan:
		t.s.Plan.Replans++
		t.s.Plan.Since, t.s.Plan.Expect = r, true
	}
	return t.deliverNow(t.newNudge(kind, t.text(string(kind)), false, "", ""))
}

// routineKind picks the first routine nudge whose trigger holds.
func (t *Tracker) routineKind() NudgeKind {
	pol, c, ns := &t.s.Strategy.Nudges, &t.s.Counters, &t.s.Nudges
	muted := t.phase().Mute
	on := func(k NudgeKind) bool { return !slices.Contains(muted, k) }
	r := c.Iteration
	if on(NudgeConvergence) && ns.Given[NudgeConvergence] == 0 && pol.ConvergenceStaleRounds > 0 &&
		c.RoundsSinceNewInfo >= pol.ConvergenceStaleRounds && r >= pol.MinExploreIterations {
		return NudgeConvergence
	}
	if on(NudgeBudgetWarning) && ns.Given[NudgeBudgetWarning] == 0 && pol.BudgetWarningFraction > 0 &&
		r >= t.fractionOfMax(pol.BudgetWarningFraction) {
		return NudgeBudgetWarning
	}
	if on(NudgeReflection) && t.s.Strategy.Reflection && c.TotalToolCalls > 0 {
		periodic := pol.ReflectionInterval > 0 && r > 1 && r%pol.ReflectionInterval == 0
		stale := pol.ReflectionStaleRounds > 0 && c.RoundsSinceNewInfo >= pol.ReflectionStaleRounds && r >= pol.ReflectionMinIteration
		if periodic || stale {
			return NudgeReflection
		}
	}
	if !t.s.Strategy.Planning {
		return ""
	}
	if on(NudgePlanning) && !t.s.Plan.Asked {
		return NudgePlanning
	}
	if on(NudgeReplan) && t.replanDue() {
		return NudgeReplan
	}
	return ""
}

// replanDue: a plan exists and is not being replaced; replans left and
// before the cutoff; at least min_replan_gap rounds since the plan; and
// either replan_interval rounds since it, or drift (off_plan_rounds
// consecutive off-plan tool rounds, or deviation above the threshold over a
// full window).
func (t *Tracker) replanDue() bool {
	p, pol, r := &t.s.Plan, &t.s.Strategy.Nudges, t.s.Counters.Iteration
	if len(p.Steps) == 0 || p.Expect || p.Replans >= pol.MaxReplans {
		return false
	}
	if pol.ReplanCutoffFraction > 0 && r >= t.fractionOfMax(pol.ReplanCutoffFraction) {
		return false
	}
	since := r - p.Since
	if since < pol.MinReplanGap {
		return false
	}
	periodic := pol.ReplanInterval > 0 && since >= pol.ReplanInterval
	drift := pol.OffPlanRounds > 0 && p.OffPlan >= pol.OffPlanRounds ||
		pol.DeviationThreshold > 0 && len(p.Recent) >= pol.DeviationWindow && p.deviation() > pol.DeviationThreshold
	return periodic || drift
}

func (t *Tracker) fractionOfMax(f float64) int {
	return int(math.Floor(f * float64(t.s.Budget.MaxIterations)))
}

// transitionNudge builds the nudge for the phase change just recorded.
func (t *Tracker) transitionNudge() *Nudge {
	if len(t.s.History) == 0 {
		return nil
	}
	h := t.s.History[len(t.s.History)-1]
	toTerminal := h.To == t.s.Strategy.Terminal()
	if toTerminal && t.s.Strategy.ExitOnTerminal {
		return nil
	}
	body := t.phase().Enter
	if body == "" {
		body = t.text(string(NudgePhaseTransition))
	}
	return t.newNudge(NudgePhaseTransition, body, toTerminal, h.From, h.To)
}

func (t *Tracker) carriesSummary(n *Nudge) bool {
	if t.s.Strategy.Summary == "" {
		return false
	}
	return n.Kind == NudgeForceExit || n.Kind == NudgeDigest ||
		n.Kind == NudgePhaseTransition && n.Phase == t.s.Strategy.Terminal()
}

// deliverNow books a nudge sent before this round's model call.
func (t *Tracker) deliverNow(n *Nudge) *Nudge {
	ns := &t.s.Nudges
	ns.LastRound = t.s.Counters.Iteration
	if t.carriesSummary(n) && !(ns.SummaryShown && ns.SummaryShownAt <= ns.LastRound) {
		ns.SummaryShown, ns.SummaryShownAt = true, ns.LastRound
	}
	t.book(n)
	return n
}

// deliverAfterReply books a nudge handed out after this round's reply; it
// reaches the agent before the next round's model call.
func (t *Tracker) deliverAfterReply(n *Nudge) {
	ns := &t.s.Nudges
	next := t.s.Counters.Iteration + 1
	ns.QueuedFor = next
	if t.carriesSummary(n) && !ns.SummaryShown {
		ns.SummaryShown, ns.SummaryShownAt = true, next
	}
	t.book(n)
}

func (t *Tracker) book(n *Nudge) {
	t.s.Nudges.Given[n.Kind]++
	if t.bus != nil {
		v := 0.5
		if n.Kind == NudgeForceExit {
			v = 1
		}
		t.bus.Send(SignalNudge, "explore.tracker", v, map[string]any{
			"kind": string(n.Kind), "round": n.Round, "phase": n.Phase, "strategy": t.s.Strategy.Name,
		}, t.s.Now)
	}
}

// ── phases ──────────────────────────────────────────────────────────────

func (t *Tracker) phase() *Phase {
	s := &t.s.Strategy
	for i := range s.Phases {
		if s.Phases[i].Name == t.s.Phase {
			return &s.Phases[i]
		}
	}
	return &s.Phases[0] // unreachable: Restore and New check the phase
}

func (t *Tracker) terminal() bool { return t.s.Phase == t.s.Strategy.Terminal() }

// firstTransition returns the first transition out of the current phase
// whose on_text (text) or on_metrics condition holds.
func (t *Tracker) firstTransition(text bool) *Transition {
	trs := t.s.Strategy.Transitions
	for i := range trs {
		if trs[i].From != t.s.Phase {
			continue
		}
		cond := &trs[i].OnMetrics
		if text {
			cond = &trs[i].OnText
		}
		if cond.holds(t) {
			return &trs[i]
		}
	}
	return nil
}

func (t *Tracker) transition(to, cause, reason string) {
	from := t.s.Phase
	t.s.Phase = to
	t.s.Counters.resetPhase()
	t.s.Round.Transitioned = true
	round := t.s.Counters.Iteration
	t.s.History = append(t.s.History, PhaseChange{From: from, To: to, Round: round, Cause: cause, Reason: reason, At: t.s.Now})
	if t.bus != nil {
		v := 0.5
		if t.terminal() {
			v = 1
		}
		t.bus.Send(SignalPhase, "explore.tracker", v, map[string]any{
			"from": from, "to": to, "round": round, "cause": cause, "strategy": t.s.Strategy.Name,
		}, t.s.Now)
	}
}

func (t *Tracker) exit(reason ExitReason) {
	t.s.Exit = reason
	t.s.Round.Open = false
	if t.bus != nil {
		t.bus.Send(SignalExit, "explore.tracker", 0, map[string]any{
			"total_iterations": t.s.Counters.Iteration, "reason": string(reason), "strategy": t.s.Strategy.Name,
		}, t.s.Now)
	}
}

// ── queries ─────────────────────────────────────────────────────────────

// ToolChoice returns the tool policy for the next model call: none during
// graceful exit and after the session ended, else the phase's first choice
// rule that holds, else the phase's default.
func (t *Tracker) ToolChoice() ToolChoice {
	if t.s.Exit != "" || t.s.Graceful {
		return ToolChoice{Mode: ChoiceNone}
	}
	ph := t.phase()
	mode := ph.ToolChoice
	for i := range ph.Choices {
		if ph.Choices[i].When.holds(t) {
			mode = ph.Choices[i].Mode
			break
		}
	}
	if mode == "" {
		mode = ChoiceAuto
	}
	return ToolChoice{Mode: mode, Tools: slices.Clone(ph.Tools)}
}

// PhaseContext returns a short status line for the agent (an ephemeral
// message, so the system prompt stays cacheable): during graceful exit the
// forced-exit text; with 1–2 rounds left outside the terminal phase an
// urgent line; else the phase's first context rule that holds; else
// "Round i/max · label · n rounds left".
func (t *Tracker) PhaseContext() string {
	if t.s.Exit != "" {
		return ""
	}
	if t.s.Graceful {
		return t.expand(t.text(string(NudgeForceExit)), "", "")
	}
	if left := t.s.Budget.MaxIterations - t.s.Counters.Iteration; !t.terminal() && left >= 1 && left <= 2 {
		return t.expand(t.text("urgent"), "", "")
	}
	ph := t.phase()
	for i := range ph.Context {
		if ph.Context[i].When.holds(t) {
			return t.expand(ph.Context[i].Text, "", "")
		}
	}
	return t.expand(t.text("round"), "", "")
}

// Phase returns the current phase.
func (t *Tracker) Phase() string { return t.s.Phase }

// Iteration returns the number of rounds ticked (and not rolled back).
func (t *Tracker) Iteration() int { return t.s.Counters.Iteration }

// Done reports whether the session has ended, and why.
func (t *Tracker) Done() (ExitReason, bool) { return t.s.Exit, t.s.Exit != "" }

// GracefulExit reports whether graceful exit has started.
func (t *Tracker) GracefulExit() bool { return t.s.Graceful }

// HardExit reports whether hard_exit_rounds rounds have passed since
// graceful exit started (the next ShouldExit returns forced_exit).
func (t *Tracker) HardExit() bool {
	return t.s.Graceful && t.s.Counters.Iteration >= t.s.GracefulRound+t.s.Budget.HardExitRounds
}

// TotalSubmits returns the number of accepted submits.
func (t *Tracker) TotalSubmits() int { return t.s.Counters.SubmitCount }

// StrategyName returns the strategy's name.
func (t *Tracker) StrategyName() string { return t.s.Strategy.Name }

// Strategy returns a copy of the session's strategy.
func (t *Tracker) Strategy() Strategy { return t.s.Strategy.Clone() }

// Budget returns the session's budget.
func (t *Tracker) Budget() Budget { return t.s.Budget }

// History returns the phase changes so far.
func (t *Tracker) History() []PhaseChange { return slices.Clone(t.s.History) }

// PlanProgress returns the plan's progress.
func (t *Tracker) PlanProgress() PlanProgress { return t.s.Plan.progress() }

// Quality returns the reasoning-quality score.
func (t *Tracker) Quality() Quality { return t.quality() }

// Metrics returns a snapshot of the session's metrics.
func (t *Tracker) Metrics() Metrics {
	m := Metrics{
		Counters:       t.s.Counters,
		Strategy:       t.s.Strategy.Name,
		Pipeline:       t.s.Strategy.Pipeline,
		Phase:          t.s.Phase,
		UniqueFiles:    len(t.s.Files),
		UniquePatterns: len(t.s.Patterns),
		UniqueQueries:  len(t.s.Queries),
		GracefulExit:   t.s.Graceful,
		Exit:           t.s.Exit,
		Transitions:    len(t.s.History),
		Nudges:         maps.Clone(t.s.Nudges.Given),
		Plan:           t.s.Plan.progress(),
	}
	if t.s.Counters.RoundsEnded > 0 {
		m.NewInfoRate = float64(t.s.Counters.NewInfoRounds) / float64(t.s.Counters.RoundsEnded)
	}
	return m
}
