package explore

import (
	"embed"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// ChoiceMode tells the agent's runtime whether the next model call may, must
// or must not call tools.
type ChoiceMode string

// Tool-choice modes.
const (
	ChoiceAuto     ChoiceMode = "auto"
	ChoiceRequired ChoiceMode = "required"
	ChoiceNone     ChoiceMode = "none"
)

func (m ChoiceMode) valid() bool {
	return m == ChoiceAuto || m == ChoiceRequired || m == ChoiceNone
}

// ToolChoice is the tool policy for the next model call: the mode and, when
// not empty, the only tools to offer (the analyst's RECORD phase offers only
// note_finding).
type ToolChoice struct {
	Mode  ChoiceMode `json:"mode"`
	Tools []string   `json:"tools,omitempty"`
}

// ChoiceRule sets the tool-choice mode when its condition holds.
type ChoiceRule struct {
	When Condition  `json:"when"`
	Mode ChoiceMode `json:"mode"`
}

// TextRule yields a text when its condition holds. Texts may contain
// placeholders: {metric_or_budget_name}, {phase}, {label}, {from}, {to},
// {submit_tool}, {strategy}.
type TextRule struct {
	When Condition `json:"when"`
	Text string    `json:"text"`
}

// Phase is one step of a strategy. Rule lists are checked in order; the first
// rule whose condition holds wins.
type Phase struct {
	Name  string `json:"name"`
	Label string `json:"label,omitempty"`
	// ToolChoice is the mode when no Choices rule holds ("" means auto).
	ToolChoice ChoiceMode   `json:"tool_choice,omitempty"`
	Choices    []ChoiceRule `json:"choices,omitempty"`
	// Tools, when set, narrows the tools offered in this phase.
	Tools []string `json:"tools,omitempty"`
	// Enter is the phase-transition nudge sent when a round ends in this phase.
	Enter string `json:"enter,omitempty"`
	// Context yields the status line for PhaseContext.
	Context []TextRule `json:"context,omitempty"`
	// OnText yields the nudge for a text reply that does not end the phase.
	OnText []TextRule `json:"on_text,omitempty"`
	// FinalWhen accepts a text reply in this phase as the final answer.
	FinalWhen Condition `json:"final_when"`
	// Mute lists routine nudge kinds that never fire in this phase.
	Mute []NudgeKind `json:"mute,omitempty"`
}

// Transition moves the session from one phase to a later one. OnMetrics is
// checked at the end of every round, OnText when the agent replies with text.
// Transitions out of a phase are checked in the order the strategy lists them,
// and a session changes phase at most once per round.
type Transition struct {
	From      string    `json:"from"`
	To        string    `json:"to"`
	OnMetrics Condition `json:"on_metrics"`
	OnText    Condition `json:"on_text"`
}

// NudgePolicy holds the thresholds of the routine nudges. A zero stale-round
// count, interval, fraction, threshold or cap turns that trigger or limit
// off; zero minimums and gaps impose none.
type NudgePolicy struct {
	// Convergence: once, when rounds_since_new_info ≥ ConvergenceStaleRounds
	// and iteration ≥ MinExploreIterations (seed: 3 and 10).
	ConvergenceStaleRounds int `json:"convergence_stale_rounds" toml:"convergence_stale_rounds"`
	MinExploreIterations   int `json:"min_explore_iterations" toml:"min_explore_iterations"`
	// BudgetWarningFraction: once, at iteration ≥ floor(fraction·max_iterations) (seed: 0.75).
	BudgetWarningFraction float64 `json:"budget_warning_fraction" toml:"budget_warning_fraction"`
	// Reflection: every ReflectionInterval rounds (seed: 5), or when
	// rounds_since_new_info ≥ ReflectionStaleRounds (2) and iteration ≥
	// ReflectionMinIteration (4).
	ReflectionInterval     int `json:"reflection_interval" toml:"reflection_interval"`
	ReflectionStaleRounds  int `json:"reflection_stale_rounds" toml:"reflection_stale_rounds"`
	ReflectionMinIteration int `json:"reflection_min_iteration" toml:"reflection_min_iteration"`
	// Replanning: periodic every ReplanInterval rounds (seed: 8), never closer
	// than MinReplanGap (3); at most MaxReplans per session (0: no replans);
	// none from floor(ReplanCutoffFraction·max_iterations) on (0: no cutoff).
	ReplanInterval       int     `json:"replan_interval" toml:"replan_interval"`
	MinReplanGap         int     `json:"min_replan_gap" toml:"min_replan_gap"`
	MaxReplans           int     `json:"max_replans" toml:"max_replans"`
	ReplanCutoffFraction float64 `json:"replan_cutoff_fraction" toml:"replan_cutoff_fraction"`
	// Deviation replans: OffPlanRounds consecutive tool rounds matching no
	// plan step (seed: 3), or a deviation above DeviationThreshold (0.6) over
	// the last DeviationWindow tool rounds (5, must be ≥ 1).
	OffPlanRounds      int     `json:"off_plan_rounds" toml:"off_plan_rounds"`
	DeviationThreshold float64 `json:"deviation_threshold" toml:"deviation_threshold"`
	DeviationWindow    int     `json:"deviation_window" toml:"deviation_window"`
	// MaxRoutineNudges caps routine nudges per session (0: no cap);
	// NudgeGapRounds is the minimum distance between two routine nudges (0: none).
	// Forced-exit, phase-transition and text nudges are never capped.
	MaxRoutineNudges int `json:"max_routine_nudges" toml:"max_routine_nudges"`
	NudgeGapRounds   int `json:"nudge_gap_rounds" toml:"nudge_gap_rounds"`
}

// DefaultNudgePolicy returns the seed's nudge thresholds, with at most two
// replans and no routine-nudge cap.
func DefaultNudgePolicy() NudgePolicy {
	return NudgePolicy{
		ConvergenceStaleRounds: 3,
		MinExploreIterations:   10,
		BudgetWarningFraction:  0.75,
		ReflectionInterval:     5,
		ReflectionStaleRounds:  2,
		ReflectionMinIteration: 4,
		ReplanInterval:         8,
		MinReplanGap:           3,
		MaxReplans:             2,
		OffPlanRounds:          3,
		DeviationThreshold:     0.6,
		DeviationWindow:        5,
	}
}

// Strategy is an exploration strategy as data: ordered phases (the last is the
// terminal phase), forward transitions between them, per-phase tool choice and
// texts, and the nudge policy. Built-in strategies are TOML files embedded in
// the package (see BuiltinStrategy); LoadStrategyTOML reads user strategies in
// the same format. Treat a Strategy as immutable once a Tracker uses it.
type Strategy struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Pipeline labels the kind of run (bootstrap, analyst, producer, scan…).
	Pipeline    string       `json:"pipeline,omitempty"`
	Phases      []Phase      `json:"phases"`
	Transitions []Transition `json:"transitions"`
	// Reflection and Planning enable those routine nudges.
	Reflection bool `json:"reflection"`
	Planning   bool `json:"planning"`
	// ExitOnTerminal ends the session as soon as it is in the terminal phase
	// (scan: results live in the submit calls, no summary is needed).
	ExitOnTerminal bool `json:"exit_on_terminal"`
	// SubmitTool names the submit tool in texts ({submit_tool}).
	SubmitTool string `json:"submit_tool,omitempty"`
	// Summary is the terminal-format instruction (what the final answer must
	// look like). It is sent with the transition into the terminal phase, with
	// every forced-exit nudge and as the digest nudge; empty means any text
	// reply in the terminal phase is final.
	Summary string      `json:"summary,omitempty"`
	Nudges  NudgePolicy `json:"nudges"`
	// Texts overrides default nudge texts; keys are TextKeys.
	Texts map[string]string `json:"texts,omitempty"`
	// Tools extends the default tool classification (see DefaultToolKinds).
	Tools map[string]ToolKind `json:"tools,omitempty"`
}

// Terminal returns the name of the terminal (last) phase.
func (s *Strategy) Terminal() string {
	if len(s.Phases) == 0 {
		return ""
	}
	return s.Phases[len(s.Phases)-1].Name
}

// PhaseIndex returns the position of the named phase, or -1.
func (s *Strategy) PhaseIndex(name string) int {
	for i := range s.Phases {
		if s.Phases[i].Name == name {
			return i
		}
	}
	return -1
}

// Clone returns a copy that shares nothing mutable with s.
func (s Strategy) Clone() Strategy {
	c := s
	c.Phases = make([]Phase, len(s.Phases))
	for i, p := range s.Phases {
		p.Choices = slices.Clone(p.Choices)
		p.Tools = slices.Clone(p.Tools)
		p.Context = slices.Clone(p.Context)
		p.OnText = slices.Clone(p.OnText)
		p.Mute = slices.Clone(p.Mute)
		c.Phases[i] = p
	}
	c.Transitions = slices.Clone(s.Transitions)
	c.Texts = maps.Clone(s.Texts)
	c.Tools = maps.Clone(s.Tools)
	return c
}

// Validate reports the first problem as a *StrategyError.
func (s *Strategy) Validate() error {
	fail := func(field string, err error) error {
		return &StrategyError{Strategy: s.Name, Field: field, Err: err}
	}
	if strings.TrimSpace(s.Name) == "" {
		return fail("name", fmt.Errorf("%w: a strategy needs a name", ErrBadValue))
	}
	if len(s.Phases) < 2 {
		return fail("phase", fmt.Errorf("%w: need at least one working phase and a terminal (last) phase, got %d phases", ErrMissingTerminal, len(s.Phases)))
	}
	index := make(map[string]int, len(s.Phases))
	for i, p := range s.Phases {
		field := fmt.Sprintf("phase[%d]", i)
		if strings.TrimSpace(p.Name) == "" || strings.ContainsAny(p.Name, " \t\n{}") {
			return fail(field+".name", fmt.Errorf("%w: phase name %q must be non-empty without spaces or braces", ErrBadValue, p.Name))
		}
		if _, dup := index[p.Name]; dup {
			return fail(field+".name", fmt.Errorf("%w: %s", ErrDuplicatePhase, p.Name))
		}
		index[p.Name] = i
		if err := s.validatePhase(p); err != nil {
			return err
		}
	}
	terminal := len(s.Phases) - 1
	out := make([]int, len(s.Phases))
	in := make([]int, len(s.Phases))
	seen := map[[2]string]bool{}
	for i, tr := range s.Transitions {
		field := fmt.Sprintf("transition[%d]", i)
		from, ok := index[tr.From]
		if !ok {
			return fail(field+".from", fmt.Errorf("%w: %q", ErrUnknownPhase, tr.From))
		}
		to, ok := index[tr.To]
		if !ok {
			return fail(field+".to", fmt.Errorf("%w: %q", ErrUnknownPhase, tr.To))
		}
		if from == terminal {
			return fail(field, fmt.Errorf("%w: %s is the terminal phase", ErrTerminalTransition, tr.From))
		}
		if to <= from {
			return fail(field, fmt.Errorf("%w: %s→%s (phases only move forward)", ErrBackwardTransition, tr.From, tr.To))
		}
		key := [2]string{tr.From, tr.To}
		if seen[key] {
			return fail(field, fmt.Errorf("%w: %s→%s", ErrDuplicateTransition, tr.From, tr.To))
		}
		seen[key] = true
		if err := s.validateCondition(field+".on_metrics", tr.OnMetrics); err != nil {
			return err
		}
		if err := s.validateCondition(field+".on_text", tr.OnText); err != nil {
			return err
		}
		out[from]++
		in[to]++
	}
	for i, p := range s.Phases[:terminal] {
		if out[i] == 0 {
			return fail("phase["+p.Name+"]", fmt.Errorf("%w: add a transition from %s or make it the last phase", ErrDeadEndPhase, p.Name))
		}
		if i > 0 && in[i] == 0 {
			return fail("phase["+p.Name+"]", fmt.Errorf("%w: no transition leads to %s", ErrUnreachablePhase, p.Name))
		}
	}
	if err := s.validateText("summary", s.Summary); err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(s.Texts)) {
		if !slices.Contains(TextKeys(), k) {
			return fail("texts."+k, fmt.Errorf("%w: text key %q (want one of %s)", ErrBadNudgeKind, k, strings.Join(TextKeys(), ", ")))
		}
		if err := s.validateText("texts."+k, s.Texts[k]); err != nil {
			return err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Tools)) {
		if strings.TrimSpace(k) == "" {
			return fail("tools", fmt.Errorf("%w: empty tool name", ErrBadValue))
		}
		if !s.Tools[k].valid() {
			return fail("tools."+k, fmt.Errorf("%w: %q", ErrBadToolKind, s.Tools[k]))
		}
	}
	return s.validatePolicy()
}

func (s *Strategy) validatePhase(p Phase) error {
	field := "phase[" + p.Name + "]"
	fail := func(f string, err error) error { return &StrategyError{Strategy: s.Name, Field: field + f, Err: err} }
	if p.ToolChoice != "" && !p.ToolChoice.valid() {
		return fail(".tool_choice", fmt.Errorf("%w: %q (want auto, required or none)", ErrBadToolChoice, p.ToolChoice))
	}
	for i, r := range p.Choices {
		f := fmt.Sprintf(".choice[%d]", i)
		if !r.Mode.valid() {
			return fail(f+".mode", fmt.Errorf("%w: %q (want auto, required or none)", ErrBadToolChoice, r.Mode))
		}
		if err := s.validateCondition(field+f+".when", r.When); err != nil {
			return err
		}
	}
	for _, list := range []struct {
		name  string
		rules []TextRule
	}{{"context", p.Context}, {"on_text", p.OnText}} {
		for i, r := range list.rules {
			sub := fmt.Sprintf(".%s[%d]", list.name, i)
			if strings.TrimSpace(r.Text) == "" {
				return fail(sub+".text", fmt.Errorf("%w: empty text", ErrBadValue))
			}
			if err := s.validateCondition(field+sub+".when", r.When); err != nil {
				return err
			}
			if err := s.validateText(field+sub+".text", r.Text); err != nil {
				return err
			}
		}
	}
	if err := s.validateCondition(field+".final_when", p.FinalWhen); err != nil {
		return err
	}
	if err := s.validateText(field+".enter", p.Enter); err != nil {
		return err
	}
	for _, k := range p.Mute {
		if !k.routine() {
			return fail(".mute", fmt.Errorf("%w: %q is not a routine nudge (want convergence, budget_warning, reflection, planning or replan)", ErrBadNudgeKind, k))
		}
	}
	return nil
}

func (s *Strategy) validateCondition(field string, c Condition) error {
	if msg := c.check(); msg != "" {
		return &StrategyError{Strategy: s.Name, Field: field, Err: fmt.Errorf("%w: %s", ErrBadCondition, msg)}
	}
	var unknown string
	c.names(func(n string) {
		if unknown == "" && !knownName(n) {
			unknown = n
		}
	})
	if unknown != "" {
		return &StrategyError{Strategy: s.Name, Field: field, Err: fmt.Errorf("%w: %q in %q", ErrUnknownName, unknown, c.String())}
	}
	return nil
}

func (s *Strategy) validateText(field, text string) error {
	var unknown string
	eachPlaceholder(text, func(name string) {
		if unknown == "" && !knownName(name) && !textName(name) {
			unknown = name
		}
	})
	if unknown != "" {
		return &StrategyError{Strategy: s.Name, Field: field, Err: fmt.Errorf("%w: placeholder {%s}", ErrUnknownName, unknown)}
	}
	return nil
}

func (s *Strategy) validatePolicy() error {
	p := s.Nudges
	ints := []struct {
		name string
		v    int
	}{
		{"convergence_stale_rounds", p.ConvergenceStaleRounds}, {"min_explore_iterations", p.MinExploreIterations},
		{"reflection_interval", p.ReflectionInterval}, {"reflection_stale_rounds", p.ReflectionStaleRounds},
		{"reflection_min_iteration", p.ReflectionMinIteration}, {"replan_interval", p.ReplanInterval},
		{"min_replan_gap", p.MinReplanGap}, {"max_replans", p.MaxReplans}, {"off_plan_rounds", p.OffPlanRounds},
		{"max_routine_nudges", p.MaxRoutineNudges}, {"nudge_gap_rounds", p.NudgeGapRounds},
	}
	for _, f := range ints {
		if f.v < 0 || f.v > maxBudgetRounds {
			return &StrategyError{Strategy: s.Name, Field: "nudges." + f.name, Err: fmt.Errorf("%w: %d (want 0..%d)", ErrBadValue, f.v, maxBudgetRounds)}
		}
	}
	if p.DeviationWindow < 1 || p.DeviationWindow > 100 {
		return &StrategyError{Strategy: s.Name, Field: "nudges.deviation_window", Err: fmt.Errorf("%w: %d (want 1..100)", ErrBadValue, p.DeviationWindow)}
	}
	fracs := []struct {
		name string
		v    float64
	}{
		{"budget_warning_fraction", p.BudgetWarningFraction}, {"replan_cutoff_fraction", p.ReplanCutoffFraction},
		{"deviation_threshold", p.DeviationThreshold},
	}
	for _, f := range fracs {
		if !(f.v >= 0 && f.v <= 1) {
			return &StrategyError{Strategy: s.Name, Field: "nudges." + f.name, Err: fmt.Errorf("%w: %v (want 0..1)", ErrBadValue, f.v)}
		}
	}
	return nil
}

// ── built-in strategies ─────────────────────────────────────────────────

//go:embed strategies/*.toml
var builtinFS embed.FS

var builtinNames = []string{"bootstrap", "bootstrap-skill", "analyst", "analyst-evidence", "producer", "scan"}

// builtins are parsed on first use, not at program start.
var builtins = sync.OnceValue(func() map[string]Strategy {
	m := make(map[string]Strategy, len(builtinNames))
	for _, name := range builtinNames {
		data, err := builtinFS.ReadFile("strategies/" + name + ".toml")
		if err != nil {
			panic("explore: missing built-in strategy " + name)
		}
		s, err := LoadStrategyTOML(data)
		if err != nil {
			panic("explore: built-in strategy " + name + ": " + err.Error())
		}
		m[name] = s
	}
	return m
})

// BuiltinStrategies lists the names of the built-in strategies.
func BuiltinStrategies() []string { return slices.Clone(builtinNames) }

// BuiltinStrategy returns a copy of a built-in strategy: bootstrap,
// bootstrap-skill, analyst, analyst-evidence, producer or scan.
func BuiltinStrategy(name string) (Strategy, error) {
	s, ok := builtins()[name]
	if !ok {
		return Strategy{}, fmt.Errorf("%w: %q (want one of %s)", ErrUnknownStrategy, name, strings.Join(builtinNames, ", "))
	}
	return s.Clone(), nil
}

// BuiltinStrategyTOML returns the TOML source of a built-in strategy, a good
// starting point for a custom one.
func BuiltinStrategyTOML(name string) ([]byte, error) {
	if _, ok := builtins()[name]; !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownStrategy, name)
	}
	return builtinFS.ReadFile("strategies/" + name + ".toml")
}

// ResolveStrategy picks a built-in strategy the way the seed resolves it for
// system runs: "analyst" and "producer" by name, anything else bootstrap, in
// its skill-only variant when skillOnly (the dimension outputs a skill).
func ResolveStrategy(name string, skillOnly bool) Strategy {
	switch {
	case name == "analyst" || name == "producer":
	case skillOnly:
		name = "bootstrap-skill"
	default:
		name = "bootstrap"
	}
	return builtins()[name].Clone()
}

// BudgetFor returns the per-pipeline budget for a strategy's pipeline:
// analyst, producer, scan, or the seed's default budget.
func BudgetFor(pipeline string) Budget {
	switch pipeline {
	case "analyst":
		return AnalystBudget()
	case "producer":
		return ProducerBudget()
	case "scan":
		return ScanBudget(false)
	case "evolver":
		return EvolverBudget()
	case "consolidation_gate":
		return ConsolidationGateBudget()
	}
	return DefaultBudget()
}
