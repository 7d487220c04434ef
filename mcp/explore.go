package mcp

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/explore"
)

// The exploration tracker's tools (seed 002): an agent loop reports its
// rounds, tool calls and replies to a session, and gets back the phase,
// the tool choice and the one nudge to follow. Each calls one engine
// method; sessions are persisted, so a daemon restart keeps them.

func init() { registerTools(exploreTools) }

type exploreStateInput struct {
	Project   string `json:"project,omitempty"`
	SessionID string `json:"session_id"`
}

var (
	sessionIDField = field{desc: "Id of the exploration session: your agent session id (one session per exploration).", required: true}
	strategyNames  = explore.BuiltinStrategies()
)

// eventFields describe the properties of one explore_event event.
var eventFields = map[string]string{
	"type": "What happened: tick (a model call starts a round), rollback (that model call failed: the round is undone), " +
		"tool_call (one tool call of the round), end_round (the round's tool calls are done), " +
		"thought (reasoning text beside tool calls), text (a reply without tool calls), " +
		"force_terminal (wrap up now, e.g. the context is nearly full).",
	"time":   "When the event happened, RFC 3339 (tick only; default now).",
	"name":   "tool_call: the tool's name, e.g. grep, read_file, submit_finding.",
	"args":   "tool_call: the tool's arguments as an object (paths, patterns and queries in them count as information).",
	"status": "tool_call: ok (default), error, rejected or duplicate (the last two for submits).",
	"output": "tool_call: the result text; search hits in it (path:line:… lines) count as files seen.",
	"files":  "tool_call: files the result showed, when you know them.",
	"hits": "tool_call: how many results a search returned, when you know it; a search that found nothing " +
		"(hits 0, an empty or \"no matches\" output) does not use the search budget.",
	"text":   "text and thought: the reply or reasoning text.",
	"reason": "force_terminal: why the session must wrap up.",
}

// describeItems documents the properties of an array property's items,
// reporting described properties that do not exist and undescribed ones.
func describeItems(s *jsonschema.Schema, prop string, descs map[string]string, enums map[string][]string) (problems []string) {
	p := s.Properties[prop]
	if p == nil || p.Items == nil {
		return []string{fmt.Sprintf("property %q has no item schema", prop)}
	}
	items := p.Items
	for name := range descs {
		if _, ok := items.Properties[name]; !ok {
			problems = append(problems, fmt.Sprintf("%s: described item property %q does not exist", prop, name))
		}
	}
	for name, ps := range items.Properties {
		d, ok := descs[name]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: item property %q has no description", prop, name))
		}
		if len(ps.Types) == 2 && ps.Types[0] == "null" {
			ps.Type, ps.Types = ps.Types[1], nil
		}
		ps.Description = d
		if vs := enums[name]; len(vs) > 0 {
			ps.Enum = make([]any, len(vs))
			for i, v := range vs {
				ps.Enum[i] = v
			}
		}
	}
	items.Required = []string{"type"}
	return problems
}

func exploreTools() []*toolDef {
	start := define(toolDef{
		name:  "explore_start",
		title: "Start an exploration session",
		description: "Start tracking an exploration of the codebase (investigating, analysing, searching before you act). " +
			"The tracker moves you through phases (for example scan → explore → verify → record → summarize), " +
			"counts new information and budgets, and tells you when to change phase or stop. " +
			"Starting an existing session returns it unchanged. Then report each round with explore_event.",
		effect: idempotent,
		fields: map[string]field{
			"session_id": sessionIDField,
			"strategy": {desc: "Built-in strategy (default: the project's setting, else analyst): analyst for investigations, " +
				"analyst-evidence when findings need evidence, bootstrap and producer for writing documents, scan for quick surveys.",
				enum: strategyNames},
			"strategy_toml": {desc: "A custom strategy in TOML (see kaizen's docs/explore.md); overrides strategy. Rarely needed."},
			"budget_toml":   {desc: "Budget overrides in TOML, e.g. max_iterations = 30. Rarely needed."},
		},
	}, func(ctx context.Context, e *kaizen.Engine, in kaizen.ExploreStartInput) (kaizen.ExploreInfo, error) {
		return deref(e.ExploreStart(ctx, in))
	}, exploreInfoText)

	event := define(toolDef{
		name:  "explore_event",
		title: "Report exploration events",
		description: "Report what happened in your exploration loop, in order, and get back what to do next. " +
			"A round is: tick (before the model call), then one tool_call per tool call, then end_round; " +
			"a reply without tool calls is a text event (it may end the session as your final answer). " +
			"The result has the current phase, the tool choice for the round, and at most one nudge: follow the nudge's text. " +
			"When done is true, stop exploring and give your answer.",
		effect: additive,
		// event_id and at serve kaizen's hooks (a delivery applied once)
		hidden: []string{"event_id", "at"},
		fields: map[string]field{
			"session_id": sessionIDField,
			"events":     {desc: "The events, in the order they happened (at least one).", required: true},
			"auto_start": {desc: "Start the session with the project's settings when it does not exist yet (refused when exploration is not enabled for the project)."},
		},
	}, func(ctx context.Context, e *kaizen.Engine, in kaizen.ExploreEventInput) (kaizen.ExploreEventResult, error) {
		return deref(e.ExploreEvent(ctx, in))
	}, exploreEventText)
	if p := describeItems(event.input, "events", eventFields, map[string][]string{
		"type": {string(explore.EventTick), string(explore.EventRollback), string(explore.EventToolCall), string(explore.EventEndRound),
			string(explore.EventThought), string(explore.EventText), string(explore.EventForceTerminal)},
		"status": {string(explore.StatusOK), string(explore.StatusError), string(explore.StatusRejected), string(explore.StatusDuplicate)},
	}); len(p) > 0 {
		for _, s := range p {
			definitionProblems = append(definitionProblems, event.name+": "+s)
		}
	}

	state := define(toolDef{
		name:  "explore_state",
		title: "Exploration session state",
		description: "Show an exploration session: phase, round, whether it has ended and why, its metrics " +
			"(tool calls, unique files, new-information rate, budgets used) and the per-round timeline with the nudges given.",
		effect: readOnly,
		fields: map[string]field{"session_id": sessionIDField},
	}, func(ctx context.Context, e *kaizen.Engine, in exploreStateInput) (kaizen.ExploreInfo, error) {
		return deref(e.ExploreState(ctx, in.Project, in.SessionID))
	}, exploreInfoText)

	return []*toolDef{start, event, state}
}

// --- text renderings

func exploreInfoText(s kaizen.ExploreInfo) string {
	var b strings.Builder
	m := s.Metrics
	fmt.Fprintf(&b, "Exploration session %s (strategy %s): phase %s, round %d", s.SessionID, s.Strategy, s.Phase, s.Iteration)
	if s.Done {
		fmt.Fprintf(&b, ", ended (%s)", s.Exit)
	}
	fmt.Fprintf(&b, ".\n%d tool calls, %d unique files, %d unique patterns, %d unique queries; new information in %.0f%% of rounds.\n",
		m.TotalToolCalls, m.UniqueFiles, m.UniquePatterns, m.UniqueQueries, 100*m.NewInfoRate)
	if tl := s.Timeline; tl != nil {
		nudges := 0
		for _, r := range tl.Rounds {
			for _, n := range r.Nudges {
				if nudges == 0 {
					b.WriteString("\nNudges given:\n")
				}
				nudges++
				fmt.Fprintf(&b, "- round %d (%s, %s): %s\n", r.Round, n.Phase, n.Kind, oneLine(n.Text))
			}
		}
	}
	return b.String()
}

func exploreEventText(r kaizen.ExploreEventResult) string {
	var b strings.Builder
	s := r.Session
	if s.Done {
		fmt.Fprintf(&b, "The exploration has ended (%s): stop exploring and give your answer.\n", s.Exit)
	} else {
		fmt.Fprintf(&b, "Phase %s, round %d.\n", s.Phase, s.Iteration)
	}
	for i := len(r.Steps) - 1; i >= 0; i-- {
		if c := r.Steps[i].Choice; c != nil {
			fmt.Fprintf(&b, "Tool choice this round: %s", c.Mode)
			if len(c.Tools) > 0 {
				fmt.Fprintf(&b, " (%s)", strings.Join(c.Tools, ", "))
			}
			b.WriteString(".\n")
			break
		}
	}
	if n := r.Nudge; n != nil {
		fmt.Fprintf(&b, "\n%s\n", n.Text)
	}
	return b.String()
}
