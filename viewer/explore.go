package viewer

import (
	"context"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/explore"
)

// Exploration sessions (package explore, kaizen.Engine.ExploreState): the
// project's sessions, and a page per session with its budget use, phase
// timeline, rounds and nudges. Session ids are text agents chose (any one
// line), so every link to a session escapes the id as a path segment.

// sessionPath is the URL path of a session's page.
func sessionPath(id string) string { return "/explore/" + url.PathEscape(id) }

// nudgeTotal is the number of nudges a session gave.
func nudgeTotal(m explore.Metrics) int {
	n := 0
	for _, c := range m.Nudges {
		n += c
	}
	return n
}

// ---- the list ----

// maxSessionScan bounds the sessions a search reads: the engine's query
// has no text filter, so the viewer matches the newest sessions itself.
const maxSessionScan = 2000

// sessionScanChunk is the page size of that scan.
const sessionScanChunk = 500

type exploreData struct {
	base
	Q, Status string
	Items     []sessionRow
	listView
	// A search read Scanned of the Sessions sessions; Capped when that is
	// not all of them.
	Scanned  int
	Sessions int64
	Capped   bool
}

// sessionRow is one session in the list.
type sessionRow struct {
	kaizen.ExploreInfo
	Link    string
	Updated time.Time
	Nudges  int
}

func (v *Viewer) exploreList(w http.ResponseWriter, r *http.Request) error {
	q, search, offset, limit, err := listParams(r, "q")
	if err != nil {
		return err
	}
	status, err := q.oneOf("status", "", "active")
	if err != nil {
		return err
	}
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	d := exploreData{base: v.base(r, "Exploration", "explore"), Q: search, Status: status}
	query := kaizen.ExploreQuery{Project: d.Project, ActiveOnly: status == "active"}
	var items []kaizen.ExploreInfo
	var total int64
	if search == "" {
		query.Limit, query.Offset = limit, offset
		list, err := v.e.ListExploreSessions(ctx, query)
		if err != nil {
			return err
		}
		items, total = list.Items, list.Total
	} else {
		matched, err := v.searchSessions(ctx, query, search, &d)
		if err != nil {
			return err
		}
		items = matched[min(offset, len(matched)):min(offset+limit, len(matched))]
		total = int64(len(matched))
	}
	for _, s := range items {
		d.Items = append(d.Items, sessionRow{ExploreInfo: s, Link: link(sessionPath(s.SessionID), "project", d.Project),
			Updated: s.UpdatedAt, Nudges: nudgeTotal(s.Metrics)})
	}
	d.listView = paging("/explore", []any{"project", d.Project, "q", search, "status", status}, offset, limit, total, len(d.Items))
	return v.renderList(w, r, "explore", d)
}

// searchSessions returns the sessions, most recently updated first, whose
// id, strategy, phase or exit reason contains search (case-insensitive),
// among the newest maxSessionScan.
func (v *Viewer) searchSessions(ctx context.Context, query kaizen.ExploreQuery, search string, d *exploreData) ([]kaizen.ExploreInfo, error) {
	needle := strings.ToLower(search)
	var matched []kaizen.ExploreInfo
	for query.Offset = 0; query.Offset < maxSessionScan; query.Offset += sessionScanChunk {
		query.Limit = min(sessionScanChunk, maxSessionScan-query.Offset)
		page, err := v.e.ListExploreSessions(ctx, query)
		if err != nil {
			return nil, err
		}
		for _, s := range page.Items {
			for _, f := range []string{s.SessionID, s.Strategy, s.Phase, s.Exit} {
				if strings.Contains(strings.ToLower(f), needle) {
					matched = append(matched, s)
					break
				}
			}
		}
		d.Scanned += len(page.Items)
		d.Sessions = page.Total
		if len(page.Items) < query.Limit {
			break
		}
	}
	d.Capped = int64(d.Scanned) < d.Sessions
	return matched, nil
}

// ---- a session ----

// sessionView is what a session's page shows above and below its rounds.
type sessionView struct {
	Info     *kaizen.ExploreInfo
	TL       *explore.Timeline
	Path     string // the page's path (the id escaped)
	Self     string // the page's URL (live refresh, permalink)
	Created  time.Time
	Updated  time.Time
	Budget   []budgetRow
	Limits   []limitRow
	Chart    timeline
	Nudges   []explore.Nudge
	ByKind   []kindCount
	Searches int // search rounds in the whole session
}

// budgetRow is one line of the budget-use table.
type budgetRow struct {
	Name    string // what is counted
	Setting string // the budget setting it counts against
	Used    int
	Limit   int
	NA      bool // the limit does not apply (shown without a bar)
	Meter   meter
	Note    string
}

// limitRow is a limit the tracker carries for the agent's runtime.
type limitRow struct {
	Setting string
	Value   string
}

type kindCount struct {
	Kind  explore.NudgeKind
	Class string
	Count int
}

// budgetUse compares what a session used with its budget, from the
// tracker's metrics (whose *_in_phase counters restart at each phase
// change).
func budgetUse(m explore.Metrics, b explore.Budget, searches int) []budgetRow {
	hard := b.MaxIterations + b.HardExitRounds
	rows := []budgetRow{{
		Name: "Rounds", Setting: "max_iterations", Used: m.Iteration, Limit: b.MaxIterations,
		Meter: newMeter("rounds used", m.Iteration, b.MaxIterations, hard, b.MaxIterations),
		Note: "Reaching max_iterations forces the terminal phase (graceful exit); the hard limit is max_iterations + hard_exit_rounds = " +
			strconv.Itoa(hard) + " rounds.",
	}, {
		Name: "Search rounds in " + m.Phase, Setting: "search_budget", Used: m.SearchRoundsInPhase, Limit: b.SearchBudget,
		Meter: newMeter("search rounds in the current phase", m.SearchRoundsInPhase, b.SearchBudget, 0, 0),
		Note: "Counted per phase (restarts at every phase change); " + strconv.Itoa(searches) +
			" search round(s) in the whole session. The strategy's conditions decide what the budget does.",
	}}
	submits := budgetRow{Name: "Submits", Setting: "max_submits", Used: m.SubmitCount, Limit: b.MaxSubmits}
	if b.MaxSubmits == 0 {
		submits.NA, submits.Note = true, "This budget allows no submits."
	} else {
		soft := 0
		if b.SoftSubmitLimit > 0 && b.SoftSubmitLimit < b.MaxSubmits {
			soft = b.SoftSubmitLimit
		}
		submits.Meter = newMeter("submits", m.SubmitCount, b.MaxSubmits, 0, soft)
		submits.Note = "Hard cap; after soft_submit_limit = " + strconv.Itoa(b.SoftSubmitLimit) + " a text reply may end production."
	}
	rows = append(rows, submits)
	sinceSubmit := budgetRow{Name: "Rounds since the last submit", Setting: "idle_rounds_to_exit", Used: m.RoundsSinceSubmit, Limit: b.IdleRoundsToExit,
		Note: "After at least one submit, this many rounds without one end production."}
	if m.SubmitCount == 0 {
		sinceSubmit.NA, sinceSubmit.Note = true, "No submit yet. "+sinceSubmit.Note
	} else {
		sinceSubmit.Meter = newMeter("rounds since the last submit", m.RoundsSinceSubmit, b.IdleRoundsToExit, 0, 0)
	}
	rows = append(rows, sinceSubmit,
		budgetRow{Name: "Idle rounds", Setting: "search_budget_grace", Used: m.ConsecutiveIdleRounds, Limit: b.SearchBudgetGrace,
			Meter: newMeter("consecutive idle rounds", m.ConsecutiveIdleRounds, b.SearchBudgetGrace, 0, 0),
			Note:  "Consecutive rounds without tool calls; without any submit, this many end production."},
		budgetRow{Name: "Rounds in " + m.Phase, Setting: "terminal_grace_rounds", Used: m.PhaseRounds, Limit: b.TerminalGraceRounds,
			Meter: newMeter("rounds in the current phase", m.PhaseRounds, b.TerminalGraceRounds, 0, 0),
			Note:  "Counts only in the strategy's terminal (last) phase: the session exits after this many rounds there."},
	)
	return rows
}

// runtimeLimits are the limits the tracker only carries (the agent's
// runtime enforces them; kaizen does not see their use).
func runtimeLimits(b explore.Budget) []limitRow {
	var out []limitRow
	if b.MaxSessionInputTokens > 0 {
		out = append(out, limitRow{"max_session_input_tokens", strconv.Itoa(b.MaxSessionInputTokens)})
	}
	if b.MaxSessionTokens > 0 {
		out = append(out, limitRow{"max_session_tokens", strconv.Itoa(b.MaxSessionTokens)})
	}
	if b.TimeoutMS > 0 {
		out = append(out, limitRow{"timeout_ms", (time.Duration(b.TimeoutMS) * time.Millisecond).String()})
	}
	return out
}

// searchRounds counts the rounds with a successful search call, as the
// tracker counts search rounds.
func searchRounds(rounds []explore.RoundRecord) int {
	n := 0
	for _, r := range rounds {
		for _, c := range r.Calls {
			if c.Kind == explore.KindSearch && (c.Status == "" || c.Status == explore.StatusOK) {
				n++
				break
			}
		}
	}
	return n
}

func newSessionView(project string, info *kaizen.ExploreInfo) *sessionView {
	tl := info.Timeline
	if tl == nil { // ExploreState always sets it; be safe
		tl = &explore.Timeline{Strategy: info.Strategy, Metrics: info.Metrics}
	}
	s := &sessionView{Info: info, TL: tl, Path: sessionPath(info.SessionID),
		Created: info.CreatedAt, Updated: info.UpdatedAt, Searches: searchRounds(tl.Rounds)}
	s.Self = link(s.Path, "project", project)
	s.Budget = budgetUse(info.Metrics, tl.Budget, s.Searches)
	s.Limits = runtimeLimits(tl.Budget)
	s.Chart = timelineChart(tl)
	for _, r := range tl.Rounds {
		s.Nudges = append(s.Nudges, r.Nudges...)
	}
	for _, k := range slices.Sorted(maps.Keys(info.Metrics.Nudges)) {
		s.ByKind = append(s.ByKind, kindCount{k, nudgeClass(k), info.Metrics.Nudges[k]})
	}
	return s
}

type sessionData struct {
	base
	S *sessionView
	// The rounds table: its filters, phases and page.
	Q, Phase string
	Phases   []string
	Items    []explore.RoundRecord
	listView
}

// roundMatches reports whether a round mentions needle (lower case) in a
// tool name, a nudge, a phase change or its other events.
func roundMatches(r *explore.RoundRecord, needle string) bool {
	fields := []string{string(r.Text), r.Forced, string(r.Exit), string(r.ToolChoice)}
	for _, c := range r.Calls {
		fields = append(fields, c.Name, string(c.Kind), string(c.Status))
	}
	for _, n := range r.Nudges {
		fields = append(fields, string(n.Kind), n.Text)
	}
	for _, h := range r.Transitions {
		fields = append(fields, h.From, h.To, h.Cause, h.Reason)
	}
	for _, f := range fields {
		if strings.Contains(strings.ToLower(f), needle) {
			return true
		}
	}
	return false
}

// exploreSession serves a session's page, or one of its live regions for
// htmx: the header with budget and timeline (session-live), the rounds
// table (list) or the nudges (nudges).
func (v *Viewer) exploreSession(w http.ResponseWriter, r *http.Request) error {
	q, search, offset, limit, err := listParams(r, "q")
	if err != nil {
		return err
	}
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	project := v.project(r)
	info, err := v.e.ExploreState(ctx, project, r.PathValue("id"))
	if err != nil {
		return err
	}
	s := newSessionView(project, info)
	phases, _ := phaseOrder(s.TL)
	phase, err := q.oneOf("phase", append([]string{""}, phases...)...)
	if err != nil {
		return err
	}
	d := sessionData{S: s, Q: search, Phase: phase, Phases: phases}
	needle := strings.ToLower(search)
	var rounds []explore.RoundRecord
	for i := range s.TL.Rounds {
		rd := &s.TL.Rounds[i]
		if (phase == "" || rd.Phase == phase) && (needle == "" || roundMatches(rd, needle)) {
			rounds = append(rounds, *rd)
		}
	}
	d.Items = rounds[min(offset, len(rounds)):min(offset+limit, len(rounds))]
	d.listView = paging(s.Path, []any{"project", project, "q", search, "phase", phase}, offset, limit, int64(len(rounds)), len(d.Items))
	switch target(r) {
	case "list", "session-live", "nudges":
		d.base = v.base(r, "", "explore")
		v.render(w, r, http.StatusOK, "explore-session", d, target(r))
		return nil
	}
	d.base = v.base(r, "Exploration session "+info.SessionID, "explore")
	d.Path = "/explore" // the project switcher leaves the session (ids are per project)
	v.render(w, r, http.StatusOK, "explore-session", d, "layout")
	return nil
}

// noSession answers /explore/ without an id.
func (v *Viewer) noSession(http.ResponseWriter, *http.Request) error {
	return viewError{status: http.StatusNotFound, message: "no exploration session given: pick one from the list"}
}
