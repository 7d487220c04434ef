package viewer

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/explore"
	"github.com/kaizenhq/kaizen/learning"
)

func TestDecayProjectionUsesTheEngineFormula(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	w := learning.CriterionWeight{Criterion: "no_bugs", HelpfulSum: 4, HarmfulSum: 1, HalfLifeDays: 90}
	pts := decayProjection(w, now, 180)
	if pts[0].Day != 0 || pts[0].Helpful != 4 || pts[0].Harmful != 1 || pts[0].Factor != 1 {
		t.Errorf("first point %+v", pts[0])
	}
	if last := pts[len(pts)-1]; last.Day != 180 || math.Abs(last.Helpful-1) > 1e-12 || math.Abs(last.Harmful-0.25) > 1e-12 {
		t.Errorf("last point %+v, want day 180: 1, 0.25", last)
	}
	for _, p := range pts {
		f := learning.DecayFactor(now, now.Add(time.Duration(p.Day)*24*time.Hour), 90)
		if p.Factor != f || p.Helpful != 4*f || p.Harmful != 1*f {
			t.Errorf("day %d: %+v, factor %v", p.Day, p, f)
		}
		if p.Day == 90 && math.Abs(p.Helpful-2) > 1e-12 {
			t.Errorf("one half-life: helpful %v, want 2", p.Helpful)
		}
	}
	if len(pts) > 62 {
		t.Errorf("%d samples, want about 60", len(pts))
	}

	c := decayChart("no_bugs", pts, 90)
	if len(c.Lines) != 2 || c.Lines[0].Class != "helpful" || c.Lines[1].Class != "harmful" {
		t.Fatalf("lines %+v", c.Lines)
	}
	if len(c.Markers) != 2 || !strings.HasPrefix(c.Markers[0].Label, "90d: ×0.5") || !strings.HasPrefix(c.Markers[1].Label, "180d: ×0.25") {
		t.Errorf("half-life markers %+v", c.Markers)
	}
	// The helpful line starts at the top tick's scale and ends at a quarter.
	first := strings.Fields(c.Lines[0].Points)[0]
	if !strings.HasPrefix(first, "48.0,") {
		t.Errorf("helpful line starts at %s", first)
	}

	// Without evidence the chart shows the half-life curve of one event.
	pts = decayProjection(learning.CriterionWeight{HalfLifeDays: 30}, now, 60)
	c = decayChart("one feedback event", pts, 30)
	if len(c.Lines) != 1 || c.Lines[0].Class != "factor" || !strings.Contains(c.Label, "half-life 30 days") {
		t.Errorf("empty criterion chart: %+v", c)
	}
}

func TestSuccessChart(t *testing.T) {
	t.Parallel()
	day := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	days := make([]dayBucket, 7)
	for i := range days {
		days[i].Day = day.AddDate(0, 0, i)
	}
	if c := successChart(days); c.Empty == "" {
		t.Error("no outcomes: the chart is not empty")
	}
	days[0] = dayBucket{Day: days[0].Day, Total: 4, Succeeded: 3}
	days[1] = dayBucket{Day: days[1].Day, Total: 2, Succeeded: 2}
	days[4] = dayBucket{Day: days[4].Day, Total: 1, Succeeded: 0}
	days[5] = dayBucket{Day: days[5].Day, Total: 2, Succeeded: 1}
	c := successChart(days)
	if c.Empty != "" || len(c.Bars) != 4 || len(c.Dots) != 4 {
		t.Fatalf("chart %+v", c)
	}
	// Day 2–3 have no outcomes: the line breaks there.
	if len(c.Lines) != 2 {
		t.Errorf("lines %+v, want two segments", c.Lines)
	}
	if c.Dots[0].Title != "2025-03-01: 3/4 succeeded (75%)" {
		t.Errorf("dot title %q", c.Dots[0].Title)
	}
	// 100% is at the top of the plot, 0% at the bottom.
	if c.Dots[1].Y != c.Top || c.Dots[2].Y != c.Bottom {
		t.Errorf("dots %+v", c.Dots)
	}
	// The tallest bar is the busiest day.
	if c.Bars[0].H != c.plotH() {
		t.Errorf("bars %+v", c.Bars)
	}
}

func TestNiceTicks(t *testing.T) {
	t.Parallel()
	for top, want := range map[float64]string{
		1: "0 0.5 1", 4: "0 1 2 3 4", 7: "0 2 4 6", 15: "0 5 10 15", 230: "0 100 200", 0: "0",
	} {
		var got []string
		for _, v := range niceTicks(top) {
			got = append(got, strconv.FormatFloat(v, 'f', -1, 64))
		}
		if strings.Join(got, " ") != want {
			t.Errorf("niceTicks(%v) = %v, want %s", top, got, want)
		}
	}
}

func TestTimelineChart(t *testing.T) {
	t.Parallel()
	if c := timelineChart(&explore.Timeline{}); c.Empty == "" {
		t.Error("no rounds: the timeline is not empty")
	}
	tl := &explore.Timeline{
		Rounds: []explore.RoundRecord{
			{Round: 1, Phase: "SCAN", Calls: []explore.CallRecord{{Name: "Grep", Kind: explore.KindSearch, New: true}}, NewInfo: true,
				Nudges: []explore.Nudge{{Kind: explore.NudgePlanning, Text: "Plan first.\nsecond line", Round: 1, Phase: "SCAN"}}},
			{Round: 2, Phase: "SCAN", Calls: []explore.CallRecord{{Name: "Grep", Kind: explore.KindSearch}, {Name: "Read", Kind: explore.KindRead}},
				Transitions: []explore.PhaseChange{{From: "SCAN", To: "EXPLORE", Round: 2, Cause: explore.CauseMetrics}},
				Nudges: []explore.Nudge{{Kind: explore.NudgePhaseTransition, Text: "Moved.", Round: 2, Phase: "EXPLORE"},
					{Kind: "made_up", Text: "?", Round: 2, Phase: "EXPLORE"}}},
			{Round: 3, Phase: "EXPLORE"},
			// Round 4 has no record: it keeps the phase before it.
			{Round: 5, Phase: "DONE", Exit: explore.ExitHardLimit,
				Transitions: []explore.PhaseChange{{From: "EXPLORE", To: "DONE", Round: 5, Cause: explore.CauseMaxIterations, Reason: "budget"}}},
		},
		Exit: explore.ExitHardLimit, ExitRound: 5,
	}
	c := timelineChart(tl)
	if c.Empty != "" {
		t.Fatalf("chart %+v", c)
	}
	slot := (c.Right - c.Left) / 5
	// One band per stretch of rounds in a phase, coloured by position.
	want := []band{
		{X: c.Left, W: 2 * slot, Class: "phase-0", Title: "SCAN: rounds 1–2", Label: "SCAN"},
		{X: c.Left + 2*slot, W: 2 * slot, Class: "phase-1", Title: "EXPLORE: rounds 3–4", Label: "EXPLORE"},
		{X: c.Left + 4*slot, W: slot, Class: "phase-2", Title: "DONE: round 5", Label: "DONE"},
	}
	if len(c.Bands) != len(want) {
		t.Fatalf("bands %+v", c.Bands)
	}
	for i, w := range want {
		g := c.Bands[i]
		if math.Abs(g.X-w.X) > 1e-9 || math.Abs(g.W-w.W) > 1e-9 || g.Class != w.Class || g.Title != w.Title || g.Label != w.Label ||
			g.Y != c.Top || g.H != c.Bottom-c.Top {
			t.Errorf("band %d: %+v, want %+v", i, g, w)
		}
	}
	// Tool calls per round on whole-number ticks; the busiest round is
	// the tallest bar.
	if len(c.Bars) != 2 || c.Bars[1].H <= c.Bars[0].H || math.Abs(c.Bars[1].H-0.9*(c.Bottom-c.Top)) > 1e-9 {
		t.Errorf("bars %+v", c.Bars)
	}
	if c.Bars[1].Title != "round 2 · SCAN · 2 tool calls: Grep, Read" {
		t.Errorf("bar title %q", c.Bars[1].Title)
	}
	var ticks []string
	for _, k := range c.YTicks {
		ticks = append(ticks, k.Label)
	}
	if strings.Join(ticks, " ") != "0 1 2" {
		t.Errorf("y ticks %v", ticks)
	}
	// New information: a mark for each round with tool calls.
	if len(c.Info) != 2 || c.Info[0].Class != "info" || c.Info[1].Class != "noinfo" || c.Info[0].Title != "round 1: new information (Grep)" {
		t.Errorf("info %+v", c.Info)
	}
	// Nudges: several in a round sit side by side; unknown kinds share a class.
	if len(c.Nudges) != 3 || c.Nudges[0].Class != "nudge-planning" || c.Nudges[1].Class != "nudge-phase-transition" ||
		c.Nudges[2].Class != "nudge-other" || c.Nudges[1].X >= c.Nudges[2].X || c.Nudges[0].Y != c.NudgeY {
		t.Errorf("nudges %+v", c.Nudges)
	}
	if c.Nudges[0].Title != "round 1 · planning nudge (SCAN): Plan first." {
		t.Errorf("nudge title %q", c.Nudges[0].Title)
	}
	center2 := c.Left + 1.5*slot
	if math.Abs((c.Nudges[1].X+c.Nudges[2].X)/2-center2) > 1e-9 {
		t.Errorf("round 2's nudges are not centred on it: %v %v", c.Nudges[1].X, c.Nudges[2].X)
	}
	// Phase changes at the band edges: after round 2 (end of a round), before
	// round 5 (forced at its start); the exit after round 5.
	if len(c.Changes) != 3 {
		t.Fatalf("changes %+v", c.Changes)
	}
	if ch := c.Changes[0]; math.Abs(ch.X-(c.Left+2*slot)) > 1e-9 || ch.Class != "change" || ch.Title != "round 2: SCAN → EXPLORE (metrics)" {
		t.Errorf("change %+v", ch)
	}
	if ch := c.Changes[1]; math.Abs(ch.X-(c.Left+4*slot)) > 1e-9 || ch.Title != "round 5: EXPLORE → DONE (max_iterations): budget" {
		t.Errorf("forced change %+v", ch)
	}
	if ch := c.Changes[2]; ch.X != c.Right || ch.Class != "exit" || ch.Label != "exit: hard_limit" || !ch.End {
		t.Errorf("exit %+v", ch)
	}
	var legend []string
	for _, l := range c.Legend {
		legend = append(legend, l.Class)
	}
	if strings.Join(legend, " ") != "phase-0 phase-1 phase-2 calls info nudge change exit" {
		t.Errorf("legend %v", legend)
	}

	// Colours repeat after phaseColours phases; a name that does not fit
	// its band is left to the tooltip and the legend.
	var rounds []explore.RoundRecord
	for i := range phaseColours + 1 {
		rounds = append(rounds, explore.RoundRecord{Round: i + 1, Phase: strings.Repeat("P", 20) + strconv.Itoa(i)})
	}
	c = timelineChart(&explore.Timeline{Rounds: rounds})
	if len(c.Bands) != phaseColours+1 || c.Bands[phaseColours].Class != "phase-0" || c.Bands[0].Label != "" {
		t.Errorf("bands %+v", c.Bands)
	}
	if len(c.Bars) != 0 || len(c.YTicks) != 1 || len(c.Changes) != 0 {
		t.Errorf("a timeline without calls: %+v", c)
	}
}

func TestMeterAndBudgetUse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		used, limit, scale, mark int
		w, markX                 float64
		class                    string
	}{
		{used: 1, limit: 4, w: 50},
		{used: 3, limit: 4, w: 150, class: "near"},
		{used: 8, limit: 6, scale: 8, mark: 6, w: 200, markX: 150, class: "over"},
		{used: 9, limit: 6, scale: 8, w: 200, class: "over"}, // past the scale: a full bar
		{used: 0, limit: 0, w: 0},
		{used: -1, limit: 2, w: 0},
		{used: 2, limit: 10, mark: 8, w: 40, markX: 160},
	} {
		m := newMeter("x", tc.used, tc.limit, tc.scale, tc.mark)
		if m.Used != tc.w || m.Mark != tc.markX || m.Class != tc.class || m.Width != 200 {
			t.Errorf("newMeter(%d, %d, %d, %d) = %+v", tc.used, tc.limit, tc.scale, tc.mark, m)
		}
	}

	m := explore.Metrics{Counters: explore.Counters{Iteration: 8, PhaseRounds: 2, SearchRoundsInPhase: 2, RoundsSinceSubmit: 2},
		Phase: "SUMMARIZE"}
	b := explore.Budget{MaxIterations: 6, SearchBudget: 4, SearchBudgetGrace: 2, IdleRoundsToExit: 2, TerminalGraceRounds: 3, HardExitRounds: 2}
	rows := budgetUse(m, b, 7)
	got := map[string]budgetRow{}
	for _, r := range rows {
		got[r.Setting] = r
	}
	if r := got["max_iterations"]; r.Used != 8 || r.Limit != 6 || r.Meter.Class != "over" || r.Meter.Mark != 150 || !strings.Contains(r.Note, "= 8 rounds") {
		t.Errorf("rounds %+v", r)
	}
	if r := got["search_budget"]; r.Name != "Search rounds in SUMMARIZE" || r.Used != 2 || r.Limit != 4 || !strings.Contains(r.Note, "7 search round(s)") {
		t.Errorf("search %+v", r)
	}
	if r := got["max_submits"]; !r.NA || r.Note != "This budget allows no submits." {
		t.Errorf("submits %+v", r)
	}
	if r := got["idle_rounds_to_exit"]; !r.NA {
		t.Errorf("rounds since a submit before any submit: %+v", r)
	}
	m.SubmitCount, b.MaxSubmits, b.SoftSubmitLimit = 3, 10, 8
	got = map[string]budgetRow{}
	for _, r := range budgetUse(m, b, 7) {
		got[r.Setting] = r
	}
	if r := got["max_submits"]; r.NA || r.Used != 3 || r.Limit != 10 || r.Meter.Mark != 160 {
		t.Errorf("submits %+v", r)
	}
	if r := got["idle_rounds_to_exit"]; r.NA || r.Meter.Class != "over" {
		t.Errorf("rounds since the last submit %+v", r)
	}
	if l := runtimeLimits(explore.AnalystBudget()); len(l) != 2 || l[0].Setting != "max_session_input_tokens" {
		t.Errorf("runtime limits %+v", l)
	}
	if l := runtimeLimits(explore.Budget{TimeoutMS: 480000}); len(l) != 1 || l[0].Value != "8m0s" {
		t.Errorf("timeout %+v", l)
	}
}

func TestFirstLine(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                "",
		"  one  ":         "one",
		"one\ntwo":        "one",
		"abcdefghijklmno": "abcdefghij…",
		"äöüäöüäöüäöü":    "äöüäöüäöüä…",
	} {
		if got := firstLine(in, 10); got != want {
			t.Errorf("firstLine(%q) = %q, want %q", in, got, want)
		}
	}
}
