// Package explore is kaizen's exploration tracker: a controller for the
// reason-act loop of an AI coding agent that explores a code base. It
// decides when the agent should change phase, when it must stop, which tool
// policy the next model call gets, and which single nudge (if any) to add to
// the conversation each round, so agents neither stop too early nor loop
// until their budget is gone.
//
// # Model
//
// A session runs a [Strategy] under a [Budget]. A strategy is data: an
// ordered list of phases (the last is the terminal phase, where the agent
// writes its final answer), forward transitions keyed from→to whose
// conditions are [Condition] values over named metrics and budget values
// ("submit_count > 0 or search_rounds_in_phase >= search_budget"), per-phase
// tool-choice rules and texts, and a nudge policy. The built-in strategies
// (bootstrap, bootstrap-skill, analyst, analyst-evidence, producer, scan) are
// TOML files embedded in the package and loaded by the same
// [LoadStrategyTOML] that reads user strategies, so custom strategies have
// exactly the built-ins' power.
//
// The agent's loop reports events to a [Tracker], one round per model call:
//
//	t.Tick(now)                    // round starts
//	if _, exit := t.ShouldExit(); exit { stop }
//	n := t.Nudge()                 // ≤ 1 nudge per round, or nil
//	ctx := t.PhaseContext()        // short status line
//	choice := t.ToolChoice()       // auto / required / none (+ allowed tools)
//	… model call; on failure t.RollbackTick() (failed calls cost no budget)
//	t.RecordThought(reasoning)
//	t.RecordToolCall(call) …       // per call: new information, searches, submits
//	t.EndRound()                   // counters, metrics transitions, transition nudge
//	// or, for a reply without tool calls:
//	d := t.OnTextResponse(text)    // final / digest / continue
//
// [Tracker.ForceTerminal] starts graceful exit at any time (for example under
// token pressure). Reaching max_iterations outside the terminal phase does the
// same. During graceful exit the tool choice is none and every round's nudge is
// a force_exit nudge carrying the strategy's final-answer format; the session
// ends hard_exit_rounds rounds later at the latest, and never later than
// max_iterations + hard_exit_rounds rounds.
//
// New information is detected from the keys a call adds: unique files (read,
// or seen in search hits), unique search patterns and unique queries
// (listings, shell commands, other tools by a hash of their arguments).
// Only search calls consume the search budget, which counts rounds with at
// least one search. Tool names are classified into kinds by
// [DefaultToolKinds] (Claude Code, opencode, Codex, Cursor, MCP-style and the
// peer's code.*/graph.* names), extended by a strategy's Tools map.
//
// The tracker emits phase, nudge and exit [Signal] values on an optional
// synchronous [Bus]. Its whole state is a plain [State] value that
// round-trips through encoding/json, so a service can persist a session
// between hook calls ([Tracker.Snapshot], [Restore]). [Replay] runs a
// recorded JSON-lines agent log ([ParseEvents]) through a strategy and
// returns a per-round [Timeline]; [RenderTimeline] prints it.
//
// The package is pure: no clocks (times are passed in), no randomness, no I/O
// beyond parsing bytes and readers.
//
// # Fixes to the peer's defects
//
// The design follows the seed (AutoSnippet/Alembic ExplorationTracker) with
// two defects fixed:
//
//   - The forced-exit instruction reaches the agent. The peer only sets its
//     graceful-exit round together with the move to the terminal phase, where
//     its nudge generator returns nothing, so forced runs never saw the
//     final-answer format. Here force_exit is checked before the terminal-phase
//     guard: the round graceful exit starts, and every round after it, Nudge
//     returns a force_exit nudge that includes the strategy's Summary (the
//     dimensionDigest JSON template for bootstrap, the Markdown report for
//     analyst).
//   - Plan deviation measures deviation. The peer's deviationScore was
//     1 − covered/total, i.e. incompleteness: it starts near 1, so its
//     "> 0.6" trigger asked for a new plan about every three rounds. Here
//     deviation is the share of the last deviation_window tool rounds whose
//     calls matched no plan step (0 for a fresh plan), and replans are capped
//     per session (max_replans; 1 for bootstrap, which also stops replanning at
//     65 % of the budget), kept min_replan_gap rounds apart and muted in
//     phases that list replan in their mute list.
//
// Also: a session changes phase at most once per round (the peer could skip
// two phases when a metrics and a text transition fired in one round), and a
// rollback after a forced phase change no longer drives phase_rounds negative.
package explore
