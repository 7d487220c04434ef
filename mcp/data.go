package mcp

import (
	"context"
	"fmt"
	"strings"

	"github.com/kaizenhq/kaizen"
)

// The data a user owns over MCP: forget a record, correct a heuristic,
// and the digest of what was learned in a period.

func init() { registerTools(dataTools) }

// forgetKinds are the kinds of record the forget tool deletes.
var forgetKinds = []string{"outcome", "turn", "memory", "heuristic", "skill"}

// forgetInput names the record to forget.
type forgetInput struct {
	Project string `json:"project,omitempty"`
	Kind    string `json:"kind"`
	ID      string `json:"id"`
}

// forgetOutput is what forgetting removed: Outcome for an outcome,
// Forgotten for the others.
type forgetOutput struct {
	Kind      string                      `json:"kind"`
	Outcome   *kaizen.DeleteOutcomeResult `json:"outcome,omitempty"`
	Forgotten *kaizen.ForgetResult        `json:"forgotten,omitempty"`
}

func forget(ctx context.Context, e *kaizen.Engine, in forgetInput) (forgetOutput, error) {
	fi := kaizen.ForgetInput{Project: in.Project, ID: in.ID}
	out := forgetOutput{Kind: in.Kind}
	var err error
	switch in.Kind {
	case "outcome":
		out.Outcome, err = e.DeleteOutcome(ctx, fi)
	case "turn":
		out.Forgotten, err = e.DeleteTurn(ctx, fi)
	case "memory":
		out.Forgotten, err = e.ForgetMemory(ctx, fi)
	case "heuristic":
		out.Forgotten, err = e.DeleteHeuristic(ctx, fi)
	case "skill":
		out.Forgotten, err = e.DeleteSkill(ctx, fi)
	default:
		err = &kaizen.Error{Op: "forget", Kind: kaizen.KindInvalid, Field: "kind",
			Message: fmt.Sprintf("unknown kind %q", in.Kind), Hint: "one of " + strings.Join(forgetKinds, ", ")}
	}
	return out, err
}

func forgetText(o forgetOutput) string {
	if r := o.Outcome; r != nil {
		return fmt.Sprintf("Deleted outcome %s of task %s: %d pattern observation(s) removed, %d pattern(s) recomputed, "+
			"patterns removed %v, anti-patterns removed %v, %d criterion weight(s) recomputed.",
			r.Outcome.ID, r.Outcome.TaskID, r.Observations, len(r.Patterns), r.PatternsRemoved, r.AntiPatternsRemoved, len(r.Criteria))
	}
	r := o.Forgotten
	if r == nil {
		return "Nothing was forgotten."
	}
	return fmt.Sprintf("Forgot %s %s: removed from recall indexes %v, %d signal(s) removed, %d recall(s) changed, %d skill(s) changed.",
		r.Kind, r.ID, r.Unindexed, r.Signals, r.Recalls, r.Skills)
}

func learnedText(l kaizen.Learned) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Learned in project %s since %s (%d outcomes, success %d/%d, 95%% interval %.0f–%.0f%%):\n",
		l.Project, l.Since.Format("2006-01-02 15:04"), l.Outcomes, l.Trend.Current.Succeeded, l.Trend.Current.Total,
		l.Trend.Current.Low*100, l.Trend.Current.High*100)
	for _, p := range l.NewProven {
		fmt.Fprintf(&b, "- newly proven: %q (%s, %d observation(s) in the period)\n", p.Content, p.ID, p.EvidenceTotal)
	}
	for _, a := range l.NewAntiPatterns {
		fmt.Fprintf(&b, "- new anti-pattern: %q (%s)\n", a.Content, a.Reason)
	}
	for _, p := range l.NewDeprecated {
		fmt.Fprintf(&b, "- newly deprecated: %q\n", p.Content)
	}
	for _, h := range l.HeuristicsCreated {
		fmt.Fprintf(&b, "- heuristic created: %s %q\n", h.ID, oneLine(h.Rule))
	}
	for _, h := range l.HeuristicsPromoted {
		fmt.Fprintf(&b, "- heuristic promoted (%s): %s %q\n", h.Status, h.ID, oneLine(h.Rule))
	}
	for _, h := range l.HeuristicsStale {
		fmt.Fprintf(&b, "- heuristic gone stale: %s %q\n", h.ID, oneLine(h.Rule))
	}
	for _, s := range l.SkillsActivated {
		fmt.Fprintf(&b, "- skill activated: %s (v%d)\n", s.Name, s.Version)
	}
	if l.Empty() {
		b.WriteString("Nothing new was learned in the period.\n")
	}
	return b.String()
}

func dataTools() []*toolDef {
	return []*toolDef{
		define(toolDef{
			name:  "forget",
			title: "Forget a record",
			description: "Delete something kaizen recorded, when the user asks for it: an outcome (what it taught is recomputed: " +
				"pattern counts and maturity, inversions, criterion weights), a captured turn (gone from recall, signals quoting it " +
				"and later exports), a memory (a turn taken out of recall, the turn kept), a heuristic or a skill (gone from recall " +
				"and later exports). It cannot be undone.",
			effect: destructive,
			fields: map[string]field{
				"kind": {desc: "What to forget: outcome, turn, memory, heuristic or skill.", required: true, enum: forgetKinds},
				"id":   {desc: "The record's id (out-…, turn-…, heur-…; a skill's id or name).", required: true},
			},
		}, forget, forgetText),
		define(toolDef{
			name:  "edit_heuristic",
			title: "Correct a heuristic",
			description: "Rewrite a heuristic's trigger, rule or why when it is worded wrongly (fields left out keep their text). " +
				"Recall follows the new text; the old text stays in the heuristic's evidence.",
			effect: idempotent,
			fields: map[string]field{
				"heuristic_id": {desc: "The heuristic's id (heur-…).", required: true},
				"trigger":      {desc: "The new trigger: when the heuristic applies."},
				"rule":         {desc: "The new rule: what to do or avoid."},
				"why":          {desc: "The new reason."},
			},
		}, func(ctx context.Context, e *kaizen.Engine, in kaizen.HeuristicEditInput) (kaizen.HeuristicActionResult, error) {
			return deref(e.EditHeuristic(ctx, in))
		}, heuristicActionText("edited")),
		define(toolDef{
			name:  "learned",
			title: "What kaizen learned lately",
			description: "Summarise what the project learned in a period: patterns newly proven or deprecated and new anti-patterns " +
				"with the outcomes behind them, heuristics created, promoted or gone stale, skills activated, and the success rate " +
				"with its 95% interval against the period before.",
			effect: readOnly,
			fields: map[string]field{
				"since": {desc: "Start of the period, RFC 3339 (e.g. 2025-01-31T00:00:00Z). Give since or days.", format: "date-time"},
				"days":  intField("The period: the last this many days (default 7).", 1, 3660),
			},
		}, func(ctx context.Context, e *kaizen.Engine, in kaizen.LearnedQuery) (kaizen.Learned, error) {
			return deref(e.Learned(ctx, in))
		}, learnedText),
	}
}
