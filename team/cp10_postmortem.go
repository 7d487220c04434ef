package team

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ExecutionData is what the coordinator collects before a post-mortem.
type ExecutionData struct {
	TotalTasks    int `json:"total_tasks"`
	Completed     int `json:"completed"`
	Failed        int `json:"failed"`
	Cancelled     int `json:"cancelled"`
	TotalMessages int `json:"total_messages"`
	Escalations   int `json:"escalations"`
	FixCycles     int `json:"fix_cycles"`
	Errors        int `json:"errors"`
}

// HistoryItem is one bus message of a member, for members that are gone.
type HistoryItem struct {
	Type    MessageType `json:"type"`
	Summary string      `json:"summary"`
}

// PostMortemInput starts a CP-10 Post-Mortem run.
type PostMortemInput struct {
	Team string `json:"team"`
	// Execution is nil when the data could not be collected: the report is
	// then partial.
	Execution    *ExecutionData           `json:"execution,omitempty"`
	Participants []string                 `json:"participants,omitempty"` // members asked for a retrospective
	Gone         []string                 `json:"gone,omitempty"`         // members already shut down
	History      map[string][]HistoryItem `json:"history,omitempty"`      // bus history per member
	// WorkSucceeded is the outcome of the work under review; the reusable
	// patterns are recorded with it (a pattern seen in failed work is not
	// evidence that it works). nil: derived from the execution data (no
	// failed task), false when that is missing too.
	WorkSucceeded *bool `json:"work_succeeded,omitempty"`
	// Subject says what the team worked on; it is the trigger of the
	// heuristics made from the improvement actions.
	Subject string `json:"subject,omitempty"`
}

// workSucceeded is the outcome the post-mortem's patterns are recorded with.
func (in PostMortemInput) workSucceeded() bool {
	if in.WorkSucceeded != nil {
		return *in.WorkSucceeded
	}
	return in.Execution != nil && in.Execution.Failed == 0 && (in.Execution.TotalTasks == 0 || in.Execution.Completed > 0)
}

// PostMortemReport is the seed's structured report.
type PostMortemReport struct {
	Team               string        `json:"team"`
	Timestamp          time.Time     `json:"timestamp"`
	ExecutionSummary   ExecutionData `json:"execution_summary"`
	WhatWentWell       []string      `json:"what_went_well"`
	WhatWasDifficult   []string      `json:"what_was_difficult"`
	ImprovementActions []string      `json:"improvement_actions"`
	ReusablePatterns   []string      `json:"reusable_patterns"`
	Recommendations    []string      `json:"recommendations"`
	Partial            bool          `json:"partial,omitempty"` // execution data missing
	Minimal            bool          `json:"minimal,omitempty"` // nothing notable
	Sources            []string      `json:"sources,omitempty"` // "member: retro" or "member: bus history"
	Missing            []string      `json:"missing,omitempty"` // members with neither
}

// FromHistory summarises a gone member's bus messages as a retrospective:
// errors, blockers, escalations and fix requests are difficulties;
// completions are what went well.
func FromHistory(items []HistoryItem) RetroFinding {
	var f RetroFinding
	for _, it := range items {
		s := strings.TrimSpace(it.Summary)
		if s == "" {
			s = string(it.Type)
		}
		switch it.Type {
		case MsgError, MsgBlocker, MsgEscalate, MsgFixRequired:
			f.Difficult = append(f.Difficult, s)
		case MsgImplComplete, MsgTaskComplete, MsgPlanApproved:
			f.WentWell = append(f.WentWell, s)
		}
	}
	return f
}

// BuildReport aggregates retrospectives into the seed's report: entries are
// deduplicated case-insensitively and ordered by how many members gave
// them, then alphabetically; recommendations follow from the execution data.
func BuildReport(team string, now time.Time, exec *ExecutionData, findings map[string]RetroFinding) PostMortemReport {
	rep := PostMortemReport{Team: team, Timestamp: now, Partial: exec == nil}
	if exec != nil {
		rep.ExecutionSummary = *exec
	}
	members := slices.Sorted(func(yield func(string) bool) {
		for m := range findings {
			if !yield(m) {
				return
			}
		}
	})
	collect := func(get func(RetroFinding) []string) []string {
		count := map[string]int{}
		text := map[string]string{}
		for _, m := range members {
			seen := map[string]bool{}
			for _, s := range get(findings[m]) {
				k := strings.ToLower(strings.Join(strings.Fields(s), " "))
				if k == "" || seen[k] {
					continue
				}
				seen[k] = true
				count[k]++
				if _, ok := text[k]; !ok {
					text[k] = strings.TrimSpace(s)
				}
			}
		}
		keys := make([]string, 0, len(count))
		for k := range count {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b string) int {
			if c := cmp.Compare(count[b], count[a]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		out := make([]string, 0, len(keys))
		for _, k := range keys {
			out = append(out, text[k])
		}
		return out
	}
	rep.WhatWentWell = collect(func(f RetroFinding) []string { return f.WentWell })
	rep.WhatWasDifficult = collect(func(f RetroFinding) []string { return f.Difficult })
	rep.ImprovementActions = collect(func(f RetroFinding) []string { return f.Suggestions })
	rep.ReusablePatterns = collect(func(f RetroFinding) []string { return f.Patterns })
	rep.Recommendations = recommendations(exec)
	rep.Minimal = !notable(rep)
	return rep
}

func recommendations(e *ExecutionData) []string {
	out := []string{}
	if e == nil {
		return append(out, "Execution data was missing: record task and bus data for the next post-mortem")
	}
	if e.TotalTasks > 0 && e.Completed < e.TotalTasks {
		out = append(out, fmt.Sprintf("%d of %d tasks did not complete: review their failure causes before the next plan", e.TotalTasks-e.Completed, e.TotalTasks))
	}
	if e.Escalations > 0 {
		out = append(out, fmt.Sprintf("%d escalation(s): record what the higher level knew so L0 can handle it next time", e.Escalations))
	}
	if e.FixCycles >= 3 {
		out = append(out, fmt.Sprintf("%d fix cycles: tighten the plan's acceptance criteria and review earlier", e.FixCycles))
	}
	if e.Errors > 0 {
		out = append(out, fmt.Sprintf("%d error message(s): check the error accumulator for repeated signatures", e.Errors))
	}
	return out
}

// notable: the report says something worth remembering.
func notable(r PostMortemReport) bool {
	if len(r.WhatWasDifficult)+len(r.ImprovementActions)+len(r.ReusablePatterns) > 0 {
		return true
	}
	e := r.ExecutionSummary
	return e.Failed > 0 || e.Escalations > 0 || e.FixCycles > 0 || e.Errors > 0
}

// CP-10 state.
const p10Collect = "COLLECT"

type postMortem struct {
	In       PostMortemInput         `json:"in"`
	Findings map[string]RetroFinding `json:"findings,omitempty"`
}

func (p *postMortem) start(c *ctx, input json.RawMessage) error {
	const op = "start CP-10"
	if err := decodeInput(op, input, &p.In); err != nil {
		return err
	}
	if !ValidName(p.In.Team) {
		return invalid(op, "team", "%q is not a valid team name", p.In.Team)
	}
	for _, m := range p.In.Participants {
		if !ValidName(m) {
			return invalid(op, "participants", "%q is not a valid member name", m)
		}
	}
	c.r.MaxIterations, c.r.Iteration = 1, 1
	if len(p.In.Subject) > 4096 {
		return invalid(op, "subject", "at most 4096 bytes")
	}
	if len(p.In.Participants) == 0 {
		c.to(p10Collect, "no member to ask: report from execution data and bus history")
		p.report(c)
		return nil
	}
	q := &RetroRequest{Questions: []string{"What went well?", "What was difficult?", "What should change next time?", "Which reusable patterns did you find?"}}
	for _, m := range p.In.Participants {
		c.send(m, MsgRetroRequest, "Post-mortem request", q)
	}
	c.setTimer("retro", c.r.Config.PostMortem.RetroTimeout)
	c.to(p10Collect, fmt.Sprintf("retrospectives requested from %d member(s)", len(p.In.Participants)))
	return nil
}

func (p *postMortem) handle(c *ctx, s signal) error {
	switch {
	case s.kind == sigReport && s.typ == MsgRetroFinding && slices.Contains(p.In.Participants, s.from):
		if _, dup := p.Findings[s.from]; dup {
			return nil
		}
		if p.Findings == nil {
			p.Findings = map[string]RetroFinding{}
		}
		p.Findings[s.from] = *s.payload.(*RetroFinding)
		if len(p.Findings) == len(p.In.Participants) {
			c.cancelTimer("retro")
			p.report(c)
		}
	case s.kind == sigTimer && s.key == "retro":
		c.r.Errors++
		c.note(fmt.Sprintf("timeout: %d of %d retrospectives; use what arrived", len(p.Findings), len(p.In.Participants)))
		p.report(c)
	}
	return nil
}

func (p *postMortem) report(c *ctx) {
	all := map[string]RetroFinding{}
	var sources, missing []string
	for m, f := range p.Findings {
		all[m] = f
	}
	for _, m := range slices.Concat(p.In.Participants, p.In.Gone) {
		if _, ok := all[m]; ok {
			sources = append(sources, m+": retro")
			continue
		}
		if h := p.In.History[m]; len(h) > 0 {
			all[m] = FromHistory(h)
			sources = append(sources, m+": bus history")
			continue
		}
		if !slices.Contains(missing, m) {
			missing = append(missing, m)
		}
	}
	rep := BuildReport(p.In.Team, c.now, p.In.Execution, all)
	rep.Sources, rep.Missing = sources, missing
	if rep.Minimal {
		c.finish(OutcomeSuccess, "nothing notable: minimal report, no memory write", rep)
		return
	}
	// The seed's learning loop: reusable patterns go to the learning
	// system as pattern observations carrying the outcome of the work they
	// were seen in; improvement actions become heuristics of the
	// experience system (a rule for next time, triggered by this kind of
	// work, backed by what was difficult).
	ok := p.In.workSucceeded()
	ctxText := "post-mortem of team " + p.In.Team
	if p.In.Subject != "" {
		ctxText += ": " + p.In.Subject
	}
	for _, pat := range rep.ReusablePatterns {
		c.learn(CmdRecordPattern, Learning{Content: pat, Context: ctxText, Evidence: sources, Success: ok})
	}
	trigger := cmp.Or(p.In.Subject, "team "+p.In.Team+" plans and runs its next task")
	for _, act := range rep.ImprovementActions {
		c.learn(CmdRecordHeuristic, Learning{Content: act, Context: ctxText, Trigger: trigger, Evidence: rep.WhatWasDifficult, Success: ok})
	}
	c.finish(OutcomeSuccess, fmt.Sprintf("report: %d went well, %d difficult, %d action(s), %d pattern(s)", len(rep.WhatWentWell), len(rep.WhatWasDifficult), len(rep.ImprovementActions), len(rep.ReusablePatterns)), rep)
}
