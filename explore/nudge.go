package explore

import (
	"slices"
	"strings"
)

// NudgeKind names a kind of nudge.
type NudgeKind string

// Nudge kinds. Routine nudges (convergence, budget_warning, reflection,
// planning, replan) come from Tracker.Nudge at the start of a round, in that
// priority after force_exit and a pending phase transition. Phase-transition
// nudges come from the end of a round; digest and continue nudges answer a
// text reply.
const (
	NudgeForceExit       NudgeKind = "force_exit"       // graceful exit started: stop tools, give the final answer
	NudgeConvergence     NudgeKind = "convergence"      // nothing new for a while: stop searching (once)
	NudgeBudgetWarning   NudgeKind = "budget_warning"   // most rounds used (once)
	NudgeReflection      NudgeKind = "reflection"       // take stock
	NudgePlanning        NudgeKind = "planning"         // write a numbered plan
	NudgeReplan          NudgeKind = "replan"           // the plan has drifted: update it
	NudgePhaseTransition NudgeKind = "phase_transition" // the session moved to another phase
	NudgeDigest          NudgeKind = "digest"           // text reply entered the terminal phase: give the summary in its format
	NudgeContinue        NudgeKind = "continue"         // text reply in a working phase: keep going
)

func (k NudgeKind) routine() bool {
	switch k {
	case NudgeConvergence, NudgeBudgetWarning, NudgeReflection, NudgePlanning, NudgeReplan:
		return true
	}
	return false
}

// Nudge is one message for the agent, to be appended to its conversation
// before the next model call (for hooks: returned as additional context).
type Nudge struct {
	Kind NudgeKind `json:"kind"`
	Text string    `json:"text"`
	// Round is the round the nudge was produced in, Phase the phase it speaks about.
	Round int    `json:"round"`
	Phase string `json:"phase"`
}

// TextKeys lists the keys of Strategy.Texts: the routine and forced-exit
// nudge kinds, "phase_transition" (generic transition text), "digest" (lead-in
// of the digest nudge), "urgent" and "round" (phase-context lines) and
// "footer" (appended to every nudge).
func TextKeys() []string {
	return []string{
		string(NudgeForceExit), string(NudgeConvergence), string(NudgeBudgetWarning),
		string(NudgeReflection), string(NudgePlanning), string(NudgeReplan),
		string(NudgePhaseTransition), string(NudgeDigest), "urgent", "round", "footer",
	}
}

// DefaultTexts returns the default texts for TextKeys.
func DefaultTexts() map[string]string {
	m := make(map[string]string, len(defaultTexts))
	for k, v := range defaultTexts {
		m[k] = v
	}
	return m
}

var defaultTexts = map[string]string{
	string(NudgeForceExit): "The exploration budget is spent. Do not call any more tools: give your final answer now.",
	string(NudgeConvergence): "{rounds_since_new_info} rounds have brought nothing new " +
		"({unique_files} files, {unique_patterns} patterns seen so far). Your exploration has converged: " +
		"stop searching and turn what you know into output.",
	string(NudgeBudgetWarning): "{iteration} of {max_iterations} rounds are used and {rounds_left} remain. " +
		"Drop side paths, finish the most valuable open point and get ready to wrap up.",
	string(NudgeReflection): "Take stock before your next call: what have you established so far " +
		"({unique_files} files, {unique_patterns} patterns, {submit_count} submitted)? " +
		"What is still unknown, and which single next step would settle most of it?",
	string(NudgePlanning): "Before you go on, write a short numbered plan of 3 to 6 steps " +
		"(for example: get an overview, find the key patterns, read the key files, summarise), " +
		"then start on step 1 in the same reply.",
	string(NudgeReplan): "Your recent rounds have drifted from your plan " +
		"({plan_covered_steps} of {plan_steps} steps done, deviation {plan_deviation}). " +
		"Write an updated numbered plan from what you now know, then continue with its first open step.",
	string(NudgePhaseTransition): "Phase change: {from} → {to}.",
	string(NudgeDigest):          "Stop calling tools and write your final answer now.",
	"urgent":                     "Only {rounds_left} round(s) left: finish the current step and wrap up.",
	"round":                      "Round {iteration}/{max_iterations} · {label} · {rounds_left} rounds left.",
	"footer":                     "(Guidance from the exploration tracker; do not quote it in your reply.)",
}

// textNames are the placeholders that are not metric or budget names.
var textNames = []string{"phase", "label", "from", "to", "submit_tool", "strategy"}

func textName(s string) bool { return slices.Contains(textNames, s) }

// eachPlaceholder calls f with the name of every {name} placeholder, where
// name is a lower-case identifier; other braces (JSON templates) are text.
func eachPlaceholder(s string, f func(string)) {
	for i := 0; i < len(s); i++ {
		if s[i] != '{' {
			continue
		}
		j := i + 1
		for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] == '_' || s[j] >= '0' && s[j] <= '9') {
			j++
		}
		if j > i+1 && j < len(s) && s[j] == '}' {
			f(s[i+1 : j])
			i = j
		}
	}
}

// expand replaces placeholders; vars holds the text names, anything else is
// resolved as a metric or budget value.
func (t *Tracker) expand(s string, from, to string) string {
	if !strings.Contains(s, "{") {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '{' {
			continue
		}
		j := i + 1
		for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] == '_' || s[j] >= '0' && s[j] <= '9') {
			j++
		}
		if j == i+1 || j >= len(s) || s[j] != '}' {
			continue
		}
		name := s[i+1 : j]
		var val string
		switch name {
		case "phase":
			val = t.s.Phase
		case "label":
			val = t.phase().Label
		case "from":
			val = from
		case "to":
			val = to
		case "submit_tool":
			val = t.s.Strategy.SubmitTool
		case "strategy":
			val = t.s.Strategy.Name
		default:
			v, ok := t.lookup(name)
			if !ok {
				continue
			}
			val = formatNumber(v)
		}
		b.WriteString(s[last:i])
		b.WriteString(val)
		last = j + 1
		i = j
	}
	b.WriteString(s[last:])
	return b.String()
}

// text returns the strategy's text for key, or the default.
func (t *Tracker) text(key string) string {
	if s, ok := t.s.Strategy.Texts[key]; ok {
		return s
	}
	return defaultTexts[key]
}

// newNudge builds a nudge: the expanded body plus, when summary is set, the
// strategy's terminal-format instruction, plus the footer.
func (t *Tracker) newNudge(kind NudgeKind, body string, summary bool, from, to string) *Nudge {
	var b strings.Builder
	b.WriteString(t.expand(body, from, to))
	if summary && t.s.Strategy.Summary != "" {
		b.WriteString("\n\n")
		b.WriteString(t.expand(t.s.Strategy.Summary, from, to))
	}
	if f := t.text("footer"); f != "" {
		b.WriteString("\n")
		b.WriteString(f)
	}
	return &Nudge{Kind: kind, Text: b.String(), Round: t.s.Counters.Iteration, Phase: t.s.Phase}
}
