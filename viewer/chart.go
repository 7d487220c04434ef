package viewer

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kaizenhq/kaizen/explore"
	"github.com/kaizenhq/kaizen/learning"
)

// Charts are rendered on the server as SVG (templates/partials.html,
// "chart"): this file computes the geometry, the template only prints
// numbers and labels (escaped like everything else). Styling comes from
// classes in viewer.css; the strict style-src forbids style attributes.

// chart is the geometry of one SVG chart.
type chart struct {
	Label         string // accessible name (aria-label)
	Width, Height float64
	// The plot area.
	Left, Top, Right, Bottom float64
	YTicks, Y2Ticks, XTicks  []tick
	Lines                    []line
	Dots                     []dot
	Bars                     []bar
	Markers                  []marker
	Pins                     []pin  // linked marks above the plot (curve.go)
	Areas                    []area // interval bands, drawn under the lines
	Legend                   []legendEntry
	Empty                    string // shown instead of the plot when there is no data
}

type tick struct {
	X, Y  float64
	Label string
}

type line struct {
	Class  string
	Points string // "x,y x,y …"
}

type dot struct {
	X, Y  float64
	Class string
	Title string
}

type bar struct {
	X, Y, W, H float64
	Class      string
	Title      string
}

type marker struct {
	X     float64
	Label string
	// End anchors the label's end at the line (near the right edge).
	End bool
	// Class and Title style a marker and give it a tooltip (timeline).
	Class, Title string
}

type legendEntry struct {
	Class, Label string
}

func newChart(label string) chart {
	return chart{Label: label, Width: 720, Height: 240, Left: 48, Top: 16, Right: 672, Bottom: 204}
}

func (c chart) plotW() float64 { return c.Right - c.Left }
func (c chart) plotH() float64 { return c.Bottom - c.Top }

func pt(x, y float64) string {
	return strconv.FormatFloat(x, 'f', 1, 64) + "," + strconv.FormatFloat(y, 'f', 1, 64)
}

// dayBucket is one day of outcomes.
type dayBucket struct {
	Day       time.Time
	Total     int
	Succeeded int
}

// Rate is the day's success rate, NaN without outcomes.
func (b dayBucket) Rate() float64 {
	if b.Total == 0 {
		return math.NaN()
	}
	return float64(b.Succeeded) / float64(b.Total)
}

// successChart plots the daily success rate (line, left axis 0–100 %)
// over the daily outcome counts (bars, right axis). Days without outcomes
// break the line.
func successChart(days []dayBucket) chart {
	c := newChart("Success rate per day over the last " + strconv.Itoa(len(days)) + " days")
	c.Right = 660
	maxCount := 0
	for _, d := range days {
		maxCount = max(maxCount, d.Total)
	}
	if maxCount == 0 {
		c.Empty = "No outcomes in this period."
		return c
	}
	slot, x, yRate := c.rateAxes(len(days), maxCount, func(i int) string { return days[i].Day.Format("Jan 2") })
	var seg []string
	flush := func() {
		if len(seg) > 1 {
			c.Lines = append(c.Lines, line{Class: "rate", Points: strings.Join(seg, " ")})
		}
		seg = nil
	}
	for i, d := range days {
		day := d.Day.Format("2006-01-02")
		if d.Total > 0 {
			h := float64(d.Total) / float64(maxCount) * c.plotH()
			c.Bars = append(c.Bars, bar{X: x(i) - slot*0.35, Y: c.Bottom - h, W: slot * 0.7, H: h, Class: "count",
				Title: fmt.Sprintf("%s: %d outcome(s)", day, d.Total)})
		}
		if d.Total == 0 {
			flush()
			continue
		}
		y := yRate(d.Rate())
		seg = append(seg, pt(x(i), y))
		c.Dots = append(c.Dots, dot{X: x(i), Y: y, Class: "rate",
			Title: fmt.Sprintf("%s: %d/%d succeeded (%.0f%%)", day, d.Succeeded, d.Total, d.Rate()*100)})
	}
	flush()
	c.Legend = []legendEntry{{"rate", "success rate (left axis)"}, {"count", "outcomes per day (right axis)"}}
	return c
}

// rateAxes sets up a chart of n slots with a rate on the left axis (0–100
// %) and counts up to maxCount on the right one, labelling about six
// slots with label(i). It returns the slot width, the x of a slot's middle
// and the y of a rate.
func (c *chart) rateAxes(n, maxCount int, label func(i int) string) (float64, func(int) float64, func(float64) float64) {
	slot := c.plotW() / float64(n)
	x := func(i int) float64 { return c.Left + slot*(float64(i)+0.5) }
	yRate := func(r float64) float64 { return c.Bottom - r*c.plotH() }
	for _, r := range []float64{0, 0.25, 0.5, 0.75, 1} {
		c.YTicks = append(c.YTicks, tick{X: c.Left, Y: yRate(r), Label: strconv.Itoa(int(r*100)) + "%"})
	}
	for _, k := range niceTicks(float64(maxCount)) {
		c.Y2Ticks = append(c.Y2Ticks, tick{X: c.Right, Y: c.Bottom - k/float64(maxCount)*c.plotH(), Label: strconv.Itoa(int(k))})
	}
	step := max(1, n/6)
	for i := 0; i < n; i += step {
		c.XTicks = append(c.XTicks, tick{X: x(i), Y: c.Bottom, Label: label(i)})
	}
	return slot, x, yRate
}

// niceTicks returns up to five round tick values from 0 to at least top.
func niceTicks(top float64) []float64 {
	if top <= 0 {
		return []float64{0}
	}
	step := math.Pow(10, math.Floor(math.Log10(top/4)))
	for _, m := range []float64{1, 2, 5, 10} {
		if top/(step*m) <= 4 {
			step *= m
			break
		}
	}
	var out []float64
	for v := 0.0; v <= top+step/2 && len(out) < 6; v += step {
		if v <= top {
			out = append(out, v)
		}
	}
	return out
}

// decayPoint is one sample of the decay projection.
type decayPoint struct {
	Day              int
	Helpful, Harmful float64
	Factor           float64 // 0.5^(day/half-life)
}

// decayProjection projects a criterion's decayed evidence over the next
// days with no new feedback, with the engine's decay formula
// (learning.DecayFactor).
func decayProjection(w learning.CriterionWeight, now time.Time, days int) []decayPoint {
	step := max(1, days/60)
	var out []decayPoint
	for d := 0; ; d += step {
		d = min(d, days)
		f := learning.DecayFactor(now, now.Add(time.Duration(d)*24*time.Hour), w.HalfLifeDays)
		out = append(out, decayPoint{Day: d, Helpful: w.HelpfulSum * f, Harmful: w.HarmfulSum * f, Factor: f})
		if d == days {
			return out
		}
	}
}

// decayChart plots a projection: the decayed helpful and harmful sums
// when there is evidence, else the half-life curve of one event. Vertical
// markers show each half-life.
func decayChart(name string, pts []decayPoint, halfLife float64) chart {
	days := pts[len(pts)-1].Day
	c := newChart(fmt.Sprintf("Decay of the evidence of %s over the next %d days", name, days))
	top := 0.0
	for _, p := range pts {
		top = max(top, p.Helpful, p.Harmful)
	}
	curve := top == 0
	if curve {
		top = 1
		c.Label = fmt.Sprintf("Weight of one feedback event over the next %d days (half-life %.0f days)", days, halfLife)
	}
	ticks := niceTicks(top)
	if last := ticks[len(ticks)-1]; last < top {
		top = last + (ticks[1] - ticks[0])
		ticks = append(ticks, top)
	}
	x := func(d int) float64 { return c.Left + float64(d)/float64(max(days, 1))*c.plotW() }
	y := func(v float64) float64 { return c.Bottom - v/top*c.plotH() }
	for _, t := range ticks {
		c.YTicks = append(c.YTicks, tick{X: c.Left, Y: y(t), Label: strconv.FormatFloat(t, 'f', -1, 64)})
	}
	xstep := max(1, days/6)
	for d := 0; d <= days; d += xstep {
		c.XTicks = append(c.XTicks, tick{X: x(d), Y: c.Bottom, Label: "+" + strconv.Itoa(d) + "d"})
	}
	for k := 1; halfLife > 0 && float64(k)*halfLife <= float64(days); k++ {
		d := float64(k) * halfLife
		mx := c.Left + d/float64(days)*c.plotW()
		c.Markers = append(c.Markers, marker{X: mx, End: mx > c.Right-90,
			Label: fmt.Sprintf("%.0fd: ×%s", d, strconv.FormatFloat(math.Pow(0.5, float64(k)), 'f', -1, 64))})
	}
	series := func(class string, val func(decayPoint) float64) {
		s := make([]string, len(pts))
		for i, p := range pts {
			s[i] = pt(x(p.Day), y(val(p)))
		}
		c.Lines = append(c.Lines, line{Class: class, Points: strings.Join(s, " ")})
	}
	if curve {
		series("factor", func(p decayPoint) float64 { return p.Factor })
		c.Legend = []legendEntry{{"factor", "0.5^(days / half-life)"}}
		return c
	}
	series("helpful", func(p decayPoint) float64 { return p.Helpful })
	series("harmful", func(p decayPoint) float64 { return p.Harmful })
	c.Legend = []legendEntry{{"helpful", "decayed helpful evidence"}, {"harmful", "decayed harmful evidence"}}
	return c
}

// ---- exploration sessions ----

// phaseColours is the number of phase colours in viewer.css (phase-0 …
// phase-7). Phase names are strategy data, so they never become class
// names: a phase gets the colour of its position.
const phaseColours = 8

// timeline is the phase timeline of an exploration session: rounds on the
// x axis, a coloured band per phase, the tool calls of each round as bars
// (left axis), and rows of marks above the plot for the nudges given and
// the rounds that brought new information; dashed lines mark the phase
// changes and the exit.
type timeline struct {
	Label                    string
	Width, Height            float64
	Left, Top, Right, Bottom float64 // the plot: bands and bars
	NudgeY, InfoY            float64 // the rows of marks above the plot
	RowLabels                []tick
	YTicks, XTicks           []tick
	Bands                    []band
	Bars                     []bar
	Nudges, Info             []dot
	Changes                  []marker // phase changes and the exit
	Legend                   []legendEntry
	Empty                    string
}

// band is one phase's stretch of rounds.
type band struct {
	X, Y, W, H   float64
	Class, Title string
	// Label is the phase name printed in the band, "" when it does not fit.
	Label string
}

// phaseOrder returns the phases of a timeline in the order they appear
// (rounds and phase changes), with each one's colour class.
func phaseOrder(tl *explore.Timeline) ([]string, map[string]string) {
	var order []string
	class := map[string]string{}
	add := func(p string) {
		if _, ok := class[p]; !ok && p != "" {
			class[p] = "phase-" + strconv.Itoa(len(order)%phaseColours)
			order = append(order, p)
		}
	}
	for _, r := range tl.Rounds {
		for _, h := range r.Transitions {
			add(h.From)
		}
		add(r.Phase)
		for _, h := range r.Transitions {
			add(h.To)
		}
	}
	return order, class
}

// nudgeClass is the colour class of a nudge kind; kinds the viewer does not
// know share one.
func nudgeClass(k explore.NudgeKind) string {
	switch k {
	case explore.NudgeForceExit, explore.NudgeConvergence, explore.NudgeBudgetWarning, explore.NudgeReflection,
		explore.NudgePlanning, explore.NudgeReplan, explore.NudgePhaseTransition, explore.NudgeDigest, explore.NudgeContinue:
		return "nudge-" + strings.ReplaceAll(string(k), "_", "-")
	}
	return "nudge-other"
}

// callNames lists a round's tool calls by name.
func callNames(calls []explore.CallRecord, onlyNew bool) string {
	var names []string
	for _, c := range calls {
		if !onlyNew || c.New {
			names = append(names, c.Name)
		}
	}
	return strings.Join(names, ", ")
}

// timelineChart lays out a session's timeline.
func timelineChart(tl *explore.Timeline) timeline {
	c := timeline{Label: "Phase timeline of the session: phases, tool calls, nudges and new information per round",
		Width: 720, Height: 250, Left: 72, Top: 56, Right: 700, Bottom: 212, NudgeY: 16, InfoY: 36}
	if len(tl.Rounds) == 0 {
		c.Empty = "No rounds yet."
		return c
	}
	first, last := tl.Rounds[0].Round, tl.Rounds[0].Round
	maxCalls := 0
	byRound := map[int]*explore.RoundRecord{}
	for i := range tl.Rounds {
		r := &tl.Rounds[i]
		first, last = min(first, r.Round), max(last, r.Round)
		maxCalls = max(maxCalls, len(r.Calls))
		byRound[r.Round] = r
	}
	n := last - first + 1
	slot := (c.Right - c.Left) / float64(n)
	left := func(round int) float64 { return c.Left + slot*float64(round-first) }
	center := func(round int) float64 { return left(round) + slot/2 }
	plotH := c.Bottom - c.Top
	phases, class := phaseOrder(tl)

	// Left axis: tool calls per round, whole numbers.
	top := 1.0
	for _, t := range niceTicks(float64(maxCalls)) {
		if t == math.Trunc(t) {
			c.YTicks = append(c.YTicks, tick{X: c.Left, Y: 0, Label: strconv.Itoa(int(t))})
			top = max(top, t)
		}
	}
	if top < float64(maxCalls) { // niceTicks stops below the top: add it
		top = float64(maxCalls)
		c.YTicks = append(c.YTicks, tick{X: c.Left, Label: strconv.Itoa(maxCalls)})
	}
	y := func(v float64) float64 { return c.Bottom - v/top*plotH*0.9 }
	for i := range c.YTicks {
		v, _ := strconv.Atoi(c.YTicks[i].Label)
		c.YTicks[i].Y = y(float64(v))
	}
	c.RowLabels = []tick{{X: c.Left, Y: c.NudgeY, Label: "nudges"}, {X: c.Left, Y: c.InfoY, Label: "new info"}}
	step := max(1, (n+11)/12)
	for r := first; r <= last; r += step {
		c.XTicks = append(c.XTicks, tick{X: center(r), Y: c.Bottom, Label: strconv.Itoa(r)})
	}

	// Bands: consecutive rounds in one phase (a round without a record
	// keeps the phase before it).
	phase, from := "", first
	flush := func(to int) {
		if phase == "" {
			return
		}
		b := band{X: left(from), Y: c.Top, W: left(to) + slot - left(from), H: plotH, Class: class[phase]}
		if from == to {
			b.Title = fmt.Sprintf("%s: round %d", phase, from)
		} else {
			b.Title = fmt.Sprintf("%s: rounds %d–%d", phase, from, to)
		}
		if b.W >= 7*float64(utf8.RuneCountInString(phase))+8 {
			b.Label = phase
		}
		c.Bands = append(c.Bands, b)
	}
	for r := first; r <= last; r++ {
		rec, ok := byRound[r]
		if !ok || rec.Phase == phase {
			continue
		}
		flush(r - 1)
		phase, from = rec.Phase, r
	}
	flush(last)

	for r := first; r <= last; r++ {
		rec, ok := byRound[r]
		if !ok {
			continue
		}
		x := center(r)
		if k := len(rec.Calls); k > 0 {
			w := min(slot*0.6, 28)
			calls := "1 tool call"
			if k > 1 {
				calls = strconv.Itoa(k) + " tool calls"
			}
			c.Bars = append(c.Bars, bar{X: x - w/2, Y: y(float64(k)), W: w, H: c.Bottom - y(float64(k)), Class: "calls",
				Title: fmt.Sprintf("round %d · %s · %s: %s", r, rec.Phase, calls, callNames(rec.Calls, false))})
			if rec.NewInfo {
				c.Info = append(c.Info, dot{X: x, Y: c.InfoY, Class: "info",
					Title: fmt.Sprintf("round %d: new information (%s)", r, callNames(rec.Calls, true))})
			} else {
				c.Info = append(c.Info, dot{X: x, Y: c.InfoY, Class: "noinfo", Title: fmt.Sprintf("round %d: nothing new", r)})
			}
		}
		gap := min(9, slot/float64(max(len(rec.Nudges), 1)))
		for j, nd := range rec.Nudges {
			c.Nudges = append(c.Nudges, dot{X: x + (float64(j)-float64(len(rec.Nudges)-1)/2)*gap, Y: c.NudgeY,
				Class: nudgeClass(nd.Kind), Title: fmt.Sprintf("round %d · %s nudge (%s): %s", r, nd.Kind, nd.Phase, firstLine(nd.Text, 120))})
		}
		for _, h := range rec.Transitions {
			// A change at the start of a round (max_iterations) is drawn
			// before it; one at the end of a round after it.
			mx := left(r) + slot
			if rec.Phase == h.To {
				mx = left(r)
			}
			title := fmt.Sprintf("round %d: %s → %s (%s)", r, h.From, h.To, h.Cause)
			if h.Reason != "" {
				title += ": " + h.Reason
			}
			c.Changes = append(c.Changes, marker{X: mx, Class: "change", Title: title})
		}
	}
	if tl.Exit != "" {
		mx := left(max(first, min(tl.ExitRound, last))) + slot
		c.Changes = append(c.Changes, marker{X: mx, Class: "exit", End: mx > c.Right-110,
			Label: "exit: " + string(tl.Exit), Title: fmt.Sprintf("the session ended in round %d: %s", tl.ExitRound, tl.Exit)})
	}
	for _, p := range phases {
		c.Legend = append(c.Legend, legendEntry{class[p], p})
	}
	c.Legend = append(c.Legend, legendEntry{"calls", "tool calls per round (left axis)"},
		legendEntry{"info", "new information"}, legendEntry{"nudge", "nudge"}, legendEntry{"change", "phase change"})
	if tl.Exit != "" {
		c.Legend = append(c.Legend, legendEntry{"exit", "exit"})
	}
	return c
}

// firstLine is the first line of s, at most limit runes ("…" when cut).
func firstLine(s string, limit int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if utf8.RuneCountInString(s) > limit {
		s = string([]rune(s)[:limit]) + "…"
	}
	return s
}

// meter is a horizontal SVG bar: how much of a limit is used.
type meter struct {
	Width, Height float64
	Used          float64 // width of the used part
	Mark          float64 // x of a secondary limit, 0 for none
	Class         string  // "", "near" (≥ 75 %) or "over" (at or past the limit)
	Label         string  // accessible name
}

// newMeter draws used out of scale, with a tick at mark (0: none); limit
// decides the colour.
func newMeter(label string, used, limit, scale, mark int) meter {
	m := meter{Width: 200, Height: 14, Label: label}
	scale = max(scale, limit, used, 1)
	m.Used = m.Width * float64(min(max(used, 0), scale)) / float64(scale)
	if mark > 0 && mark < scale {
		m.Mark = m.Width * float64(mark) / float64(scale)
	}
	switch {
	case limit > 0 && used >= limit:
		m.Class = "over"
	case limit > 0 && float64(used) >= 0.75*float64(limit):
		m.Class = "near"
	}
	return m
}
