package viewer

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/kaizenhq/kaizen"
)

// The learning curve (issue 11's learning page, the overview's slot 7):
// how the project's success rate evolved as outcomes accumulated — a
// rolling rate over the outcome number inside its 95 % Wilson interval,
// and the cumulative rate — with the changes of the guidance marked on
// it (patterns becoming proven or deprecated, inverted into anti-patterns,
// recovered), each linked to the pattern's "why" panel. It reads one
// engine call, Engine.LearningCurve.

func init() {
	registerOverviewSection(overviewSection{Order: 7, ID: "learning-curve", Read: curveSection})
}

// curveWindows are the window sizes the page offers.
var curveWindows = []int{5, 10, 20, 50, 100}

// pin is a linked mark on a chart: guidance changes on the learning curve.
type pin struct {
	X, Y  float64
	Class string
	Title string
	Link  string
	// Guide is the y where the pin's dashed guide line ends (the curve).
	Guide float64
}

// curveChange is a guidance change as the viewer shows it.
type curveChange struct {
	kaizen.CurveChange
	Link, TaskLink string
	Label, Class   string
}

// changeLabel says what a change did, and the class that colours it.
func changeLabel(c kaizen.CurveChange) (label, class string) {
	switch c.Kind {
	case kaizen.CurveProven:
		label, class = "became proven", "proven"
	case kaizen.CurveDeprecated:
		label, class = "became deprecated", "deprecated"
	case kaizen.CurveAntiPattern:
		label, class = "inverted into an anti-pattern", "anti"
	case kaizen.CurveRecovered:
		label, class = "recovered: its anti-pattern withdrawn", "recovered"
	default:
		label, class = c.Kind, "other"
	}
	if c.Manual {
		label += " (by hand)"
	}
	return label, class
}

func curveChanges(project string, cs []kaizen.CurveChange) []curveChange {
	out := make([]curveChange, 0, len(cs))
	for _, c := range cs {
		label, class := changeLabel(c)
		v := curveChange{CurveChange: c, Label: label, Class: class,
			Link: link("/patterns/"+url.PathEscape(c.PatternID), "project", project)}
		if c.TaskID != "" {
			v.TaskLink = link(taskPath(c.TaskID), "project", project)
		}
		out = append(out, v)
	}
	return out
}

// curveChart plots the learning curve over the outcome number: the rolling
// rate (line) inside its 95 % Wilson interval (band), the cumulative rate
// (dashed line), and a pin per kind of change at each place the guidance
// changed, in a strip above the plot, linked to the pattern's panel.
func curveChart(c *kaizen.LearningCurve, changes []curveChange) chart {
	ch := newChart(fmt.Sprintf("Learning curve: success rate of the last %d outcomes with its 95%% interval, and the cumulative rate, over %d outcomes; %d guidance change(s) marked",
		c.Window, c.Outcomes, len(changes)))
	ch.Top = 44
	ch.Height = 256
	ch.Bottom = 220
	if len(c.Points) == 0 {
		ch.Empty = "No outcomes yet: the curve starts with the first recorded outcome."
		return ch
	}
	lo, hi := c.Points[0].Outcome, c.Points[len(c.Points)-1].Outcome
	x := func(o int) float64 {
		if hi == lo {
			return ch.Left + ch.plotW()/2
		}
		return ch.Left + float64(o-lo)/float64(hi-lo)*ch.plotW()
	}
	y := func(r float64) float64 { return ch.Bottom - r*ch.plotH() }
	for _, r := range []float64{0, 0.25, 0.5, 0.75, 1} {
		ch.YTicks = append(ch.YTicks, tick{X: ch.Left, Y: y(r), Label: strconv.Itoa(int(r*100)) + "%"})
	}
	seen := map[int]bool{}
	for k := range 6 {
		o := lo + (hi-lo)*k/5
		if !seen[o] {
			seen[o] = true
			ch.XTicks = append(ch.XTicks, tick{X: x(o), Y: ch.Bottom, Label: "#" + strconv.Itoa(o)})
		}
	}
	var upper, lower, roll, cum []string
	for _, p := range c.Points {
		upper = append(upper, pt(x(p.Outcome), y(p.Rolling.High)))
		roll = append(roll, pt(x(p.Outcome), y(p.Rolling.Rate)))
		cum = append(cum, pt(x(p.Outcome), y(p.Cumulative.Rate)))
	}
	for i := len(c.Points) - 1; i >= 0; i-- {
		lower = append(lower, pt(x(c.Points[i].Outcome), y(c.Points[i].Rolling.Low)))
	}
	if len(c.Points) == 1 { // a single outcome: a small band and a dot
		p := c.Points[0]
		upper = []string{pt(x(p.Outcome)-6, y(p.Rolling.High)), pt(x(p.Outcome)+6, y(p.Rolling.High))}
		lower = []string{pt(x(p.Outcome)+6, y(p.Rolling.Low)), pt(x(p.Outcome)-6, y(p.Rolling.Low))}
	}
	ch.Areas = append(ch.Areas, area{Class: "interval", Points: strings.Join(append(upper, lower...), " ")})
	if len(c.Points) > 1 {
		ch.Lines = append(ch.Lines, line{Class: "cumulative", Points: strings.Join(cum, " ")},
			line{Class: "rate", Points: strings.Join(roll, " ")})
	}
	if len(c.Points) <= 80 {
		for _, p := range c.Points {
			ch.Dots = append(ch.Dots, dot{X: x(p.Outcome), Y: y(p.Rolling.Rate), Class: "rate", Title: pointTitle(c.Window, p)})
		}
	}
	// The pins: changes at the same place (within 6 px) share a column,
	// one pin per kind in a fixed row; a pin's tooltip names every change
	// it stands for and it links to the first one's pattern.
	rateAt := func(o int) float64 {
		i, found := slices.BinarySearchFunc(c.Points, o, func(p kaizen.CurvePoint, o int) int { return p.Outcome - o })
		if !found {
			i = min(i, len(c.Points)-1)
		}
		return c.Points[i].Rolling.Rate
	}
	rows := map[string]float64{"proven": 12, "recovered": 21, "deprecated": 30, "anti": 39}
	type key struct {
		col   int
		class string
	}
	groups := map[key]*pin{}
	var order []key
	for _, v := range changes {
		o := min(max(v.Outcome, lo), hi)
		k := key{int(x(o) / 6), v.Class}
		p := groups[k]
		text := fmt.Sprintf("Outcome #%d, %s: %s %s (%s)", v.Outcome, v.At.UTC().Format("2006-01-02 15:04"), v.Content, v.Label, v.Detail)
		if p == nil {
			row, ok := rows[v.Class]
			if !ok {
				row = 39
			}
			p = &pin{X: x(o), Y: row, Class: v.Class, Title: text, Link: v.Link, Guide: y(rateAt(o))}
			groups[k] = p
			order = append(order, k)
			continue
		}
		p.Title += "\n" + text
	}
	for _, k := range order {
		ch.Pins = append(ch.Pins, *groups[k])
	}
	ch.Legend = []legendEntry{{"rate", fmt.Sprintf("success of the last %d outcomes", c.Window)}, {"interval", "95% Wilson interval"},
		{"cumulative", "cumulative success"}, {"pin-proven", "became proven"}, {"pin-anti", "anti-pattern"},
		{"pin-recovered", "recovered"}, {"pin-deprecated", "deprecated"}}
	return ch
}

func pointTitle(window int, p kaizen.CurvePoint) string {
	r := p.Rolling
	return fmt.Sprintf("Outcome #%d (%s): %d of the last %d succeeded (%s, 95%% interval %s–%s); cumulative %s",
		p.Outcome, p.At.UTC().Format("2006-01-02 15:04"), r.Succeeded, r.Total, pct0(r.Rate), pct0(r.Low), pct0(r.High), pct0(p.Cumulative.Rate))
}

// curveTable is the curve's text equivalent: at most rows evenly chosen
// points (the last included).
func curveTable(c *kaizen.LearningCurve, rows int) *dataTable {
	t := &dataTable{Caption: fmt.Sprintf("Success of the last %d outcomes at each outcome, with its 95%% Wilson interval, and the cumulative success", c.Window),
		Head: []string{"Outcome", "Finished", "Succeeded", "Rate", "95% interval", "Cumulative"}}
	n := len(c.Points)
	for k := range min(rows, n) {
		i := k * (n - 1) / max(min(rows, n)-1, 1)
		p := c.Points[i]
		r := p.Rolling
		t.Rows = append(t.Rows, []string{"#" + strconv.Itoa(p.Outcome), p.At.UTC().Format("2006-01-02 15:04"),
			fmt.Sprintf("%d of %d", r.Succeeded, r.Total), pct0(r.Rate), pct0(r.Low) + "–" + pct0(r.High),
			fmt.Sprintf("%s (%d of %d)", pct0(p.Cumulative.Rate), p.Cumulative.Succeeded, p.Cumulative.Total)})
	}
	return t
}

// curveSummary says in a sentence how the rate moved and how often the
// guidance changed.
func curveSummary(c *kaizen.LearningCurve) string {
	if c.Outcomes == 0 {
		return ""
	}
	count := map[string]int{}
	for _, ch := range c.Changes {
		count[ch.Kind]++
	}
	var s string
	if c.Outcomes <= c.Window {
		s = fmt.Sprintf("Over %d outcome(s): %s. The project has no more outcomes than the window (%d), so the curve is the running rate; a smaller window shows it move.",
			c.Outcomes+c.Skipped, rateText(c.Last), c.Window)
	} else {
		s = fmt.Sprintf("Over %d outcomes, the success of the last %d went from %s at the start to %s now. %s",
			c.Outcomes+c.Skipped, c.Window, rateText(c.First), rateText(c.Last), trendVerdict(c.Last, c.First))
	}
	var parts []string
	for _, k := range []struct{ kind, text string }{{kaizen.CurveProven, "%d became proven"},
		{kaizen.CurveAntiPattern, "%d inverted into anti-patterns"}, {kaizen.CurveRecovered, "%d recovered"},
		{kaizen.CurveDeprecated, "%d became deprecated"}} {
		if n := count[k.kind]; n > 0 {
			parts = append(parts, fmt.Sprintf(k.text, n))
		}
	}
	if c.ChangesTotal == 0 {
		s += " The guidance has not changed yet."
	} else {
		s += fmt.Sprintf(" The guidance changed %d time(s): %s.", c.ChangesTotal, strings.Join(parts, ", "))
	}
	if c.ChangesTotal > len(c.Changes) {
		s += fmt.Sprintf(" The newest %d are shown.", len(c.Changes))
	}
	if c.Skipped > 0 {
		s += fmt.Sprintf(" The curve covers the newest %d outcomes; %d older ones are counted out.", c.Outcomes, c.Skipped)
	}
	return s
}

// curveSection is the overview's learning curve: the chart, its table,
// and the latest changes of the guidance (they are context, not counted
// as new things learned: the sections below list those of the period).
func curveSection(ctx context.Context, v *Viewer, p *overviewPeriod) (*sectionView, error) {
	c, err := v.e.LearningCurve(ctx, kaizen.CurveQuery{Project: p.Project})
	if err != nil {
		return nil, err
	}
	s := &sectionView{Title: "Learning curve", Context: true, Intro: curveSummary(c),
		Empty: "No outcomes yet. The curve shows how the success rate moves as outcomes accumulate, and when patterns became proven or anti-patterns.",
		More:  link("/learning", "project", p.Project), MoreLabel: "The learning curve and every change of the guidance"}
	if c.Outcomes == 0 {
		return s, nil
	}
	changes := curveChanges(p.Project, c.Changes)
	chart := curveChart(c, changes)
	s.Chart, s.Table = &chart, curveTable(c, 25)
	for i := len(changes) - 1; i >= 0 && len(s.Items) < 5; i-- {
		ch := changes[i]
		it := sectionItem{Title: ch.Content, Link: ch.Link, Badge: ch.Label, BadgeClass: "change-" + ch.Class,
			Meta: fmt.Sprintf("at outcome #%d · %s · %s", ch.Outcome, ch.At.UTC().Format("2006-01-02 15:04 UTC"), ch.Detail)}
		if !ch.Current {
			it.Meta += " · no longer so"
		}
		if ch.TaskLink != "" {
			it.EvidenceLabel = "the outcome that made it"
			it.Evidence = []evidenceLink{{Label: ch.TaskID, Link: ch.TaskLink}}
		}
		s.Items = append(s.Items, it)
	}
	return s, nil
}

// ---- the page ----

type curveData struct {
	base
	Window  int
	Windows []int
	Curve   *kaizen.LearningCurve
	Summary string
	Chart   chart
	Table   *dataTable
	// Changes are newest first.
	Changes []curveChange
	// Kinds are the rankings by kind of task.
	Kinds []kindRanking
}

func (v *Viewer) learningCurve(w http.ResponseWriter, r *http.Request) error {
	q, err := queryOf(r)
	if err != nil {
		return err
	}
	window, err := q.intIn("window", kaizen.DefaultCurveWindow, 1, kaizen.MaxCurveWindow)
	if err != nil {
		return err
	}
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	d := curveData{base: v.base(r, "Learning curve", "learning"), Window: window, Windows: curveWindows}
	if !slices.Contains(d.Windows, window) {
		d.Windows = append(slices.Clone(d.Windows), window)
		slices.Sort(d.Windows)
	}
	c, err := v.e.LearningCurve(ctx, kaizen.CurveQuery{Project: d.Project, Window: window})
	if err != nil {
		return err
	}
	d.Curve, d.Summary = c, curveSummary(c)
	changes := curveChanges(d.Project, c.Changes)
	d.Chart, d.Table = curveChart(c, changes), curveTable(c, 60)
	slices.Reverse(changes)
	d.Changes = changes
	if d.Kinds, err = kindRankings(ctx, v.e, d.Project); err != nil {
		return err
	}
	return v.renderList(w, r, "learning", d)
}
