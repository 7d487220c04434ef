package explore

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// PlanState tracks the agent's numbered plan: elicited by a planning nudge,
// captured from the agent's next thought or reply, matched against tool calls.
type PlanState struct {
	Asked     bool       `json:"asked"`  // the planning nudge was given
	Expect    bool       `json:"expect"` // the next plan in a thought replaces the current one
	Steps     []PlanStep `json:"steps,omitempty"`
	Versions  int        `json:"versions"`         // plans captured so far
	Since     int        `json:"since"`            // round the current plan (or last replan) dates from
	Replans   int        `json:"replans"`          // replan nudges given
	Unplanned int        `json:"unplanned"`        // tool calls that matched no step
	OffPlan   int        `json:"off_plan"`         // consecutive tool rounds matching no step
	Recent    []bool     `json:"recent,omitempty"` // last tool rounds, true = matched a step
}

// PlanStep is one step of a plan.
type PlanStep struct {
	Text     string   `json:"text"`
	Keywords []string `json:"keywords,omitempty"` // lower-case identifiers named in the step
	Done     bool     `json:"done"`
	DoneAt   int      `json:"done_at,omitempty"`
}

// PlanProgress summarises the plan.
type PlanProgress struct {
	Steps     int     `json:"steps"`
	Covered   int     `json:"covered"`
	Deviation float64 `json:"deviation"` // share of recent tool rounds that matched no step
	Unplanned int     `json:"unplanned"`
	OffPlan   int     `json:"off_plan"`
	Replans   int     `json:"replans"`
	Versions  int     `json:"versions"`
}

func (p *PlanState) covered() int {
	n := 0
	for _, s := range p.Steps {
		if s.Done {
			n++
		}
	}
	return n
}

// deviation is the share of the recent tool rounds whose calls matched no
// plan step. It starts at 0 and measures drift, not incompleteness (the
// peer's "deviation" was 1 − covered/total, which starts near 1).
func (p *PlanState) deviation() float64 {
	if len(p.Recent) == 0 {
		return 0
	}
	off := 0
	for _, on := range p.Recent {
		if !on {
			off++
		}
	}
	return float64(off) / float64(len(p.Recent))
}

func (p *PlanState) progress() PlanProgress {
	return PlanProgress{
		Steps: len(p.Steps), Covered: p.covered(), Deviation: p.deviation(),
		Unplanned: p.Unplanned, OffPlan: p.OffPlan, Replans: p.Replans, Versions: p.Versions,
	}
}

// capture replaces the plan with one found in text, if a plan is expected.
func (p *PlanState) capture(text string, round int) bool {
	if !p.Expect {
		return false
	}
	steps := extractPlan(text)
	if len(steps) == 0 {
		return false
	}
	p.Steps, p.Expect, p.Since = steps, false, round
	p.Versions++
	p.OffPlan, p.Recent = 0, nil
	return true
}

// match marks the first open step the call serves: by a step keyword found in
// the call's arguments, else by the tool kind. A call that serves only steps
// already done is on plan but marks nothing; a call serving none is unplanned.
func (p *PlanState) match(kind ToolKind, c *ToolCall, round int) bool {
	if len(p.Steps) == 0 {
		return false
	}
	args := argsText(c)
	pick := func(open bool, f func(*PlanStep) bool) int {
		for i := range p.Steps {
			if p.Steps[i].Done != open && f(&p.Steps[i]) {
				return i
			}
		}
		return -1
	}
	byKeyword := func(s *PlanStep) bool {
		for _, k := range s.Keywords {
			if strings.Contains(args, k) {
				return true
			}
		}
		return false
	}
	byKind := func(s *PlanStep) bool { return stepFits(kind, s.Text) }
	i := pick(true, byKeyword)
	if i < 0 {
		i = pick(true, byKind)
	}
	if i >= 0 {
		p.Steps[i].Done, p.Steps[i].DoneAt = true, round
		return true
	}
	if pick(false, byKeyword) >= 0 || pick(false, byKind) >= 0 {
		return true
	}
	p.Unplanned++
	return false
}

// endRound records whether a round with tool calls followed the plan.
func (p *PlanState) endRound(onPlan bool, window int) {
	if len(p.Steps) == 0 {
		return
	}
	if onPlan {
		p.OffPlan = 0
	} else {
		p.OffPlan++
	}
	p.Recent = append(p.Recent, onPlan)
	if over := len(p.Recent) - window; over > 0 {
		p.Recent = append(p.Recent[:0], p.Recent[over:]...)
	}
}

// stepWords maps a tool kind to words that describe it in a plan step.
var stepWords = map[ToolKind][]string{
	KindList:    {"overview", "structure", "layout", "director", "tree", "list", "概览", "结构", "目录"},
	KindQuery:   {"class", "hierarch", "call", "dependenc", "graph", "inherit", "类", "调用", "依赖"},
	KindRead:    {"read", "file", "open", "inspect", "look at", "阅读", "文件", "查看"},
	KindSearch:  {"search", "analy", "find", "grep", "locate", "pattern", "搜索", "分析", "查找"},
	KindExec:    {"run", "test", "build", "execute", "运行", "测试"},
	KindWrite:   {"write", "edit", "change", "fix", "修改", "编写"},
	KindSubmit:  {"submit", "record", "save", "提交", "记录"},
	KindFinding: {"finding", "note", "record", "记录", "发现"},
}

func stepFits(kind ToolKind, text string) bool {
	text = strings.ToLower(text)
	for _, w := range stepWords[kind] {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

const (
	maxPlanScan  = 2000
	maxPlanSteps = 10
)

var planMarkers = []string{"plan:", "plan：", "steps:", "计划:", "计划：", "步骤:", "步骤："}

// extractPlan finds a numbered (or bulleted, after a "plan:" marker) list in
// the first 2000 bytes of text. Steps must be longer than 5 characters; a
// plan needs at least two.
func extractPlan(text string) []PlanStep {
	if len(text) > maxPlanScan {
		cut := maxPlanScan
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
	}
	lower := strings.ToLower(text)
	start := -1
	for _, m := range planMarkers {
		if i := strings.Index(lower, m); i >= 0 && (start < 0 || i < start) {
			start = i + len(m)
		}
	}
	bullets := start >= 0
	if start < 0 {
		for off, line := 0, ""; off < len(text); off += len(line) {
			line = text[off:]
			if nl := strings.IndexByte(line, '\n'); nl >= 0 {
				line = line[:nl+1]
			}
			if t := strings.TrimSpace(line); strings.HasPrefix(t, "1.") || strings.HasPrefix(t, "1)") || strings.HasPrefix(t, "1、") {
				start = off
				break
			}
		}
	}
	if start < 0 {
		return nil
	}
	var steps []PlanStep
	for line := range strings.Lines(text[start:]) {
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		item, ok := listItem(t, bullets)
		if !ok {
			if len(steps) > 0 {
				break
			}
			continue
		}
		if utf8.RuneCountInString(item) > 5 {
			steps = append(steps, PlanStep{Text: item, Keywords: stepKeywords(item)})
			if len(steps) == maxPlanSteps {
				break
			}
		}
	}
	if len(steps) < 2 {
		return nil
	}
	return steps
}

// listItem strips "1.", "2)", "3、" (and "-", "*", "•" when bullets) from a line.
func listItem(line string, bullets bool) (string, bool) {
	i := 0
	for i < len(line) && line[i] >= '0' && line[i] <= '9' {
		i++
	}
	if i > 0 && i < len(line) {
		rest := line[i:]
		for _, sep := range []string{".", ")", "、"} {
			if r, ok := strings.CutPrefix(rest, sep); ok {
				return strings.TrimSpace(r), true
			}
		}
		return "", false
	}
	if bullets {
		for _, b := range []string{"- ", "* ", "• "} {
			if r, ok := strings.CutPrefix(line, b); ok {
				return strings.TrimSpace(r), true
			}
		}
	}
	return "", false
}

// stepKeywords extracts quoted or backticked identifiers (3+ characters),
// CamelCase words and acronym-led words, lower-cased and deduplicated.
func stepKeywords(step string) []string {
	var out []string
	add := func(w string) {
		w = strings.ToLower(strings.Trim(w, ".,;:()[]"))
		if utf8.RuneCountInString(w) < 3 {
			return
		}
		for _, k := range out {
			if k == w {
				return
			}
		}
		out = append(out, w)
	}
	for _, q := range []string{"`", "\"", "'"} {
		parts := strings.Split(step, q)
		for i := 1; i < len(parts)-1; i += 2 {
			if isIdentifier(parts[i]) {
				add(parts[i])
			}
		}
	}
	for _, w := range strings.FieldsFunc(step, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '.' || r == '/')
	}) {
		if camelOrAcronym(w) {
			add(w)
		}
	}
	return out
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_./-:", r)) {
			return false
		}
	}
	return true
}

// camelOrAcronym: a lower→upper change inside the word (getUser, TrackerState)
// or two leading capitals (HTTPServer, API).
func camelOrAcronym(w string) bool {
	rs := []rune(w)
	if len(rs) >= 2 && unicode.IsUpper(rs[0]) && unicode.IsUpper(rs[1]) {
		return true
	}
	for i := 1; i < len(rs); i++ {
		if unicode.IsLower(rs[i-1]) && unicode.IsUpper(rs[i]) {
			return true
		}
	}
	return false
}

// Quality is the reasoning-quality score of a session (0..100) and its parts.
type Quality struct {
	Score       int     `json:"score"`
	Thought     float64 `json:"thought"`     // thoughts per round, ≤ 1
	Reflection  float64 `json:"reflection"`  // reflection nudges per round, ≤ 1
	Action      float64 `json:"action"`      // tool calls per round / 3, ≤ 1
	Observation float64 `json:"observation"` // 1 when any call succeeded
	HasPlan     bool    `json:"has_plan"`
	PlanScore   float64 `json:"plan_score"` // 0.6·covered/steps + 0.4·(1 − deviation)
}

func (t *Tracker) quality() Quality {
	c := &t.s.Counters
	rounds := float64(max(c.Iteration, 1))
	q := Quality{
		Thought:    math.Min(float64(c.Thoughts)/rounds, 1),
		Reflection: math.Min(float64(t.s.Nudges.Given[NudgeReflection])/rounds, 1),
		Action:     math.Min(float64(c.TotalToolCalls)/rounds/3, 1),
	}
	if c.ObservedCalls > 0 {
		q.Observation = 1
	}
	p := &t.s.Plan
	if len(p.Steps) > 0 {
		q.HasPlan = true
		q.PlanScore = 0.6*float64(p.covered())/float64(len(p.Steps)) + 0.4*(1-p.deviation())
		q.Score = int(math.Round(100 * (0.3*q.Thought + 0.15*q.Reflection + 0.15*q.Action + 0.15*q.Observation + 0.25*q.PlanScore)))
	} else {
		q.Score = int(math.Round(100 * (0.4*q.Thought + 0.2*q.Reflection + 0.2*q.Action + 0.2*q.Observation)))
	}
	return q
}
