package viewer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/learning"
)

// The overview answers "what has kaizen learned lately": for a period (the
// last days, or since the user's last visit) the patterns that became
// proven, the anti-patterns that appeared, heuristics created, promoted or
// gone stale, skills activated — each with the outcomes behind it and a
// link to its explanation — and the success trend with its interval; then
// the project's counts, the daily success chart and the recent outcomes.
//
// The learned part is a list of sections, each a function (overviewSection
// and registerOverviewSection below): a subsystem shows what it learned by
// registering a section from a file of its own, without touching this one.
// Failure patterns (the trace subsystem), team runs and the learning curve
// of the learning loop are meant to come this way.

// overviewSection is one part of the overview's "learned lately".
type overviewSection struct {
	// Order places the section: lower first. The built-in ones use 5
	// (the success trend), 10–60 (patterns, heuristics, skills); 7 is
	// kept for the learning curve of the learning loop, 70 and 80 for the
	// failure patterns and the team runs.
	Order int
	// ID is the section's element id ([a-z0-9-]).
	ID string
	// Read builds the section for a period. A nil view leaves the
	// section out; an error fails the page.
	Read func(ctx context.Context, v *Viewer, p *overviewPeriod) (*sectionView, error)
}

// overviewSections are the registered sections, by Order.
var overviewSections []overviewSection

// registerOverviewSection adds a section to the overview; call it from an
// init function.
func registerOverviewSection(s overviewSection) {
	overviewSections = append(overviewSections, s)
	slices.SortStableFunc(overviewSections, func(a, b overviewSection) int { return a.Order - b.Order })
}

// overviewPeriod is what a section reads for: the project, the period,
// and the engine's digest of it (read once for every section).
type overviewPeriod struct {
	Project string
	Since   time.Time
	Until   time.Time
	Learned *kaizen.Learned
}

// sectionView is a section as the overview shows it: a title, a sentence,
// items with their evidence, and optionally a chart with its data table
// (the chart's text equivalent).
type sectionView struct {
	ID, Title string
	Intro     string
	Items     []sectionItem
	// Empty is shown when there are no items and no chart: what would
	// appear here, and where it comes from.
	Empty string
	Chart *chart
	Table *dataTable
	// More links to the full list.
	More, MoreLabel string
	// Context marks a section whose items are context, not new things
	// learned: they are not counted as such (the learning curve).
	Context bool
}

// sectionItem is one thing learned, linked to its explanation.
type sectionItem struct {
	Title, Link       string
	Badge, BadgeClass string
	Meta              string
	Evidence          []evidenceLink
	// EvidenceLabel introduces the evidence ("outcomes behind it").
	EvidenceLabel string
	// MoreEvidence counts the evidence not listed.
	MoreEvidence int
}

// evidenceLink is an outcome (or task) behind an item.
type evidenceLink struct {
	Label, Link, Class, Title string
}

// dataTable is the text equivalent of a chart.
type dataTable struct {
	Caption string
	Head    []string
	Rows    [][]string
}

func init() {
	funcs["taskpath"] = taskPath
	funcs["sessionpath"] = sessionPath
	registerOverviewSection(overviewSection{Order: 5, ID: "trend", Read: trendSection})
	registerOverviewSection(overviewSection{Order: 10, ID: "new-proven", Read: provenSection})
	registerOverviewSection(overviewSection{Order: 20, ID: "new-anti-patterns", Read: antiPatternSection})
	registerOverviewSection(overviewSection{Order: 25, ID: "new-deprecated", Read: deprecatedSection})
	registerOverviewSection(overviewSection{Order: 30, ID: "heuristics-created", Read: heuristicSection("heuristics-created",
		"Heuristics created", func(l *kaizen.Learned) []kaizen.HeuristicLearned { return l.HeuristicsCreated },
		"No heuristic was created. Heuristics are the lessons of task experiences: they appear after a task's experience is extracted (by the daemon's worker with a chat model, or by the agent through extraction_request).")})
	registerOverviewSection(overviewSection{Order: 40, ID: "heuristics-promoted", Read: heuristicSection("heuristics-promoted",
		"Heuristics promoted", func(l *kaizen.Learned) []kaizen.HeuristicLearned { return l.HeuristicsPromoted },
		"No heuristic was promoted. A candidate becomes active when it is supported by 2 tasks with 3 evidence records, or adopted by a skill.")})
	registerOverviewSection(overviewSection{Order: 50, ID: "heuristics-stale", Read: heuristicSection("heuristics-stale",
		"Heuristics gone stale", func(l *kaizen.Learned) []kaizen.HeuristicLearned { return l.HeuristicsStale },
		"No heuristic went stale. One does after 3 misleading verdicts in a row, when superseded, or marked outdated.")})
	registerOverviewSection(overviewSection{Order: 60, ID: "skills-activated", Read: skillSection})
}

// taskPath is a task's page, its id escaped as one path segment.
func taskPath(id string) string { return "/tasks/" + url.PathEscape(id) }

type overviewData struct {
	base
	Days int
	// Since is "visit" when the period is "since your last visit".
	Since     string
	LastVisit time.Time
	Period    overviewPeriod
	Sections  []*sectionView
	// NewItems counts what the learned sections list.
	NewItems int

	Outcomes     int64
	Patterns     int
	States       []stateCount
	AntiPatterns int64
	Criteria     int
	OpenErrors   int64
	Tasks        int64
	Heuristics   int64
	Recent       outcomeTable
	Buckets      []dayBucket
	Chart        chart
	// Window totals of the chart.
	WindowTotal, WindowSucceeded int
	// Capped: the window holds more outcomes than the chart reads.
	Capped bool
	// Empty is set when the project holds no data: the next steps.
	Empty *emptyState
}

type stateCount struct {
	State learning.MaturityState
	Count int
}

// ChartLimit is the most outcomes the chart reads.
func (overviewData) ChartLimit() int { return maxChartOutcomes }

// WindowRate is the success rate over the chart's window.
func (d overviewData) WindowRate() float64 {
	return dayBucket{Total: d.WindowTotal, Succeeded: d.WindowSucceeded}.Rate()
}

// maxChartOutcomes bounds the outcomes read for the success chart.
const maxChartOutcomes = 50_000

// Periods of the overview's range selector.
var overviewRanges = []struct {
	Days  int
	Label string
}{{7, "last 7 days"}, {30, "last 30 days"}, {90, "last 90 days"}, {365, "last 365 days"}}

// Ranges lists the selector's periods.
func (overviewData) Ranges() []struct {
	Days  int
	Label string
} {
	return overviewRanges
}

func (v *Viewer) overview(w http.ResponseWriter, r *http.Request) error {
	q, err := queryOf(r)
	if err != nil {
		return err
	}
	days, err := q.intIn("days", 30, 7, 365)
	if err != nil {
		return err
	}
	since, err := q.oneOf("since", "", "visit")
	if err != nil {
		return err
	}
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	d := overviewData{base: v.base(r, "Overview", "overview"), Days: days, Since: since}
	project := d.Project
	now := v.e.Now()
	d.LastVisit = v.visit(w, r, project, now)
	from := now.Add(-time.Duration(days) * 24 * time.Hour)
	if since == "visit" {
		if !d.LastVisit.IsZero() {
			from = d.LastVisit
		}
		// The chart covers the period since the visit (at least a week).
		d.Days = min(max(7, int(math.Ceil(now.Sub(from).Hours()/24))), 365)
	}
	lq := kaizen.LearnedQuery{Project: project, Since: from.Format(time.RFC3339Nano)}
	learned, err := v.e.Learned(ctx, lq)
	if err != nil {
		return err
	}
	d.Period = overviewPeriod{Project: project, Since: learned.Since, Until: learned.Until, Learned: learned}
	for _, s := range overviewSections {
		sv, err := s.Read(ctx, v, &d.Period)
		if err != nil {
			return err
		}
		if sv != nil {
			if sv.ID == "" {
				sv.ID = s.ID
			}
			if sv.ID != "trend" && !sv.Context {
				d.NewItems += len(sv.Items)
			}
			d.Sections = append(d.Sections, sv)
		}
	}
	if err := v.overviewCounts(ctx, &d); err != nil {
		return err
	}
	if d.Buckets, d.Capped, err = v.successByDay(ctx, project, d.Days); err != nil {
		return err
	}
	for _, b := range d.Buckets {
		d.WindowTotal += b.Total
		d.WindowSucceeded += b.Succeeded
	}
	d.Chart = successChart(d.Buckets)
	if d.Outcomes == 0 && d.Patterns == 0 && d.Tasks == 0 && d.Heuristics == 0 && d.OpenErrors == 0 {
		d.Empty = v.emptyState(ctx, project)
	}
	if target(r) == "overview-live" {
		v.render(w, r, http.StatusOK, "overview", d, "live")
		return nil
	}
	v.render(w, r, http.StatusOK, "overview", d, "layout")
	return nil
}

// overviewCounts reads the project's counts and recent outcomes.
func (v *Viewer) overviewCounts(ctx context.Context, d *overviewData) error {
	project := d.Project
	recent, err := v.e.ListOutcomes(ctx, kaizen.OutcomeQuery{Project: project, Limit: 10})
	if err != nil {
		return err
	}
	d.Outcomes = recent.Total
	if d.Recent, err = v.outcomeTable(ctx, project, recent.Items, false); err != nil {
		return err
	}
	counts := map[learning.MaturityState]int{}
	for offset := 0; ; offset += 1000 {
		page, err := v.e.ListPatterns(ctx, kaizen.PatternQuery{Project: project, Kind: learning.KindPattern, Limit: 1000, Offset: offset})
		if err != nil {
			return err
		}
		for _, p := range page.Items {
			counts[p.Maturity.State]++
		}
		d.Patterns += len(page.Items)
		if len(page.Items) < 1000 {
			break
		}
	}
	for _, s := range allStates {
		d.States = append(d.States, stateCount{s, counts[s]})
	}
	anti, err := v.e.ListPatterns(ctx, kaizen.PatternQuery{Project: project, Kind: learning.KindAntiPattern, Limit: 1})
	if err != nil {
		return err
	}
	d.AntiPatterns = anti.Total
	criteria, err := v.e.ListCriteria(ctx, project)
	if err != nil {
		return err
	}
	d.Criteria = int(criteria.Total)
	open, err := v.e.ListErrors(ctx, kaizen.ErrorQuery{Project: project, UnresolvedOnly: true, Limit: 1})
	if err != nil {
		return err
	}
	d.OpenErrors = open.Total
	tasks, err := v.e.ListTasks(ctx, kaizen.TaskQuery{Project: project, Limit: 1})
	if err != nil {
		return err
	}
	d.Tasks = tasks.Total
	hs, err := v.e.ListHeuristics(ctx, kaizen.HeuristicQuery{Project: project, Limit: 1})
	if err != nil {
		return err
	}
	d.Heuristics = hs.Total
	return nil
}

// successByDay counts the outcomes of the last days days (engine's series).
func (v *Viewer) successByDay(ctx context.Context, project string, days int) ([]dayBucket, bool, error) {
	series, capped, err := v.e.OutcomeSeries(ctx, project, days)
	buckets := make([]dayBucket, len(series))
	for i, d := range series {
		buckets[i] = dayBucket{Day: d.Day, Total: d.Total, Succeeded: d.Succeeded}
	}
	return buckets, capped, err
}

// ---- the last visit ----

// visitGap is the pause after which a page view starts a new visit.
const visitGap = 30 * time.Minute

// visitCookie is the name of the cookie that remembers a browser's visits
// of a project's overview (the project's name is hashed: it is text agents
// chose, and a cookie name allows few characters).
func visitCookie(project string) string {
	sum := sha256.Sum256([]byte(project))
	return "kaizen_visit_" + hex.EncodeToString(sum[:6])
}

// visit returns the end of this browser's previous visit of the project's
// overview (zero on a first visit) and records the current view. The
// cookie holds "previous.latest" in Unix seconds: a view more than
// visitGap after the latest starts a new visit, whose previous visit ended
// at the latest view. Fragments (live refreshes) do not count as views.
func (v *Viewer) visit(w http.ResponseWriter, r *http.Request, project string, now time.Time) time.Time {
	var prev, latest int64
	if c, err := r.Cookie(visitCookie(project)); err == nil {
		prev, latest = parseVisit(c.Value)
	}
	if target(r) == "" {
		if latest > 0 && now.Unix()-latest > int64(visitGap/time.Second) {
			prev = latest
		}
		http.SetCookie(w, &http.Cookie{Name: visitCookie(project), Value: fmt.Sprintf("%d.%d", prev, now.Unix()),
			Path: "/", MaxAge: 400 * 24 * 3600, HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	}
	if prev == 0 {
		return time.Time{}
	}
	return time.Unix(prev, 0).UTC()
}

// parseVisit reads a visit cookie's value, "previous.latest" in Unix
// seconds; anything else (a tampered or old cookie) reads as no visit:
// both zero. It guarantees 0 <= previous <= latest.
func parseVisit(v string) (prev, latest int64) {
	a, b, ok := strings.Cut(v, ".")
	if !ok {
		return 0, 0
	}
	p, err1 := strconv.ParseInt(a, 10, 64)
	l, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || p < 0 || l < 0 || p > l {
		return 0, 0
	}
	return p, l
}

// ---- the learned sections ----

func pct0(f float64) string { return strconv.FormatFloat(f*100, 'f', 0, 64) + "%" }

// rateText describes a success rate with its interval.
func rateText(r kaizen.RateInterval) string {
	if r.Total == 0 {
		return "no outcomes"
	}
	return fmt.Sprintf("%d of %d succeeded (%s, 95%% interval %s–%s)", r.Succeeded, r.Total, pct0(r.Rate), pct0(r.Low), pct0(r.High))
}

func trendSection(_ context.Context, _ *Viewer, p *overviewPeriod) (*sectionView, error) {
	t := p.Learned.Trend
	s := &sectionView{Title: "Success trend",
		Intro: "This period: " + rateText(t.Current) + ". The period before: " + rateText(t.Previous) + ". " + trendVerdict(t.Current, t.Previous)}
	c := trendChart(t.Buckets)
	s.Chart = &c
	tbl := &dataTable{Caption: "Success per bucket with its 95% Wilson interval", Head: []string{"From", "To", "Outcomes", "Succeeded", "Rate", "95% interval"}}
	for _, b := range t.Buckets {
		rate, ci := "–", "–"
		if b.Total > 0 {
			rate, ci = pct0(b.Rate), pct0(b.Low)+"–"+pct0(b.High)
		}
		tbl.Rows = append(tbl.Rows, []string{b.From.Format("2006-01-02 15:04"), b.To.Format("2006-01-02 15:04"),
			strconv.Itoa(b.Total), strconv.Itoa(b.Succeeded), rate, ci})
	}
	s.Table = tbl
	return s, nil
}

// trendVerdict compares two rates by their intervals.
func trendVerdict(cur, prev kaizen.RateInterval) string {
	switch {
	case cur.Total == 0 || prev.Total == 0:
		return "Not enough outcomes to compare."
	case cur.Low > prev.High:
		return "Better than before: the intervals do not overlap."
	case cur.High < prev.Low:
		return "Worse than before: the intervals do not overlap."
	}
	return "No clear change: the intervals overlap."
}

// observations turns the observations behind a change into evidence links
// to their tasks.
func observations(project string, obs []kaizen.LearnedObservation) []evidenceLink {
	out := make([]evidenceLink, 0, len(obs))
	for _, o := range obs {
		class, result := "bad", "failure"
		if o.Success {
			class, result = "ok", "success"
		}
		out = append(out, evidenceLink{Label: o.TaskID, Link: link(taskPath(o.TaskID), "project", project), Class: class,
			Title: fmt.Sprintf("%s, %s feedback, %s", result, o.Type, o.At.UTC().Format("2006-01-02 15:04 UTC"))})
	}
	return out
}

func patternItems(project string, changes []kaizen.PatternChange) []sectionItem {
	var items []sectionItem
	for _, c := range changes {
		badge := string(c.From) + " → " + string(c.To)
		if c.Manual {
			badge += " (manual)"
		}
		items = append(items, sectionItem{Title: c.Content, Link: link("/patterns/"+url.PathEscape(c.ID), "project", project),
			Badge: badge, BadgeClass: "state-" + string(c.To),
			Meta: fmt.Sprintf("%d succeeded, %d failed · success %s (95%% interval %s–%s)", c.SuccessCount, c.FailureCount,
				pct0(float64(c.SuccessCount)/math.Max(1, float64(c.SuccessCount+c.FailureCount))), pct0(c.SuccessCI95[0]), pct0(c.SuccessCI95[1])),
			EvidenceLabel: fmt.Sprintf("%d outcome(s) in the period", c.EvidenceTotal),
			Evidence:      observations(project, c.Evidence), MoreEvidence: c.EvidenceTotal - len(c.Evidence)})
	}
	return items
}

func provenSection(_ context.Context, _ *Viewer, p *overviewPeriod) (*sectionView, error) {
	return &sectionView{Title: "Newly proven patterns", Items: patternItems(p.Project, p.Learned.NewProven),
		Empty: "No pattern became proven. A pattern is proven with at least 5 decayed helpful outcomes and under 15% harmful ones; its panel explains what it still lacks.",
		More:  link("/patterns", "project", p.Project, "state", "proven"), MoreLabel: "All proven patterns"}, nil
}

func deprecatedSection(_ context.Context, _ *Viewer, p *overviewPeriod) (*sectionView, error) {
	if len(p.Learned.NewDeprecated) == 0 {
		return nil, nil // shown only when something was deprecated
	}
	return &sectionView{Title: "Newly deprecated patterns", Items: patternItems(p.Project, p.Learned.NewDeprecated),
		More: link("/patterns", "project", p.Project, "state", "deprecated"), MoreLabel: "All deprecated patterns"}, nil
}

func antiPatternSection(_ context.Context, _ *Viewer, p *overviewPeriod) (*sectionView, error) {
	s := &sectionView{Title: "New anti-patterns",
		Empty: "No pattern was inverted. A pattern becomes an anti-pattern after at least 3 observations with 60% or more failures.",
		More:  link("/anti-patterns", "project", p.Project), MoreLabel: "All anti-patterns"}
	for _, a := range p.Learned.NewAntiPatterns {
		s.Items = append(s.Items, sectionItem{Title: a.Content, Link: link("/patterns/"+url.PathEscape(a.ID), "project", p.Project),
			Badge: "inverted " + a.CreatedAt.UTC().Format("Jan 2"), BadgeClass: "state-deprecated", Meta: a.Reason,
			EvidenceLabel: fmt.Sprintf("%d failed outcome(s) behind it", a.FailureTotal),
			Evidence:      observations(p.Project, a.Failures), MoreEvidence: a.FailureTotal - len(a.Failures)})
	}
	return s, nil
}

func heuristicSection(id, title string, pick func(*kaizen.Learned) []kaizen.HeuristicLearned, empty string) func(context.Context, *Viewer, *overviewPeriod) (*sectionView, error) {
	return func(_ context.Context, _ *Viewer, p *overviewPeriod) (*sectionView, error) {
		s := &sectionView{ID: id, Title: title, Empty: empty, More: link("/heuristics", "project", p.Project), MoreLabel: "All heuristics"}
		for _, h := range pick(p.Learned) {
			it := sectionItem{Title: h.Rule, Link: link(heuristicPath(h.ID), "project", p.Project),
				Badge: string(h.Status), BadgeClass: "state-" + string(h.Status),
				Meta: fmt.Sprintf("%s · when %s · %d task(s), %d evidence · %s", h.Kind, h.Trigger, h.SupportTasks, h.Evidence,
					h.At.UTC().Format("2006-01-02 15:04 UTC"))}
			if h.Reason != "" {
				it.Meta += " · " + h.Reason
			}
			if h.SourceTaskID != "" {
				it.EvidenceLabel = "learned from"
				it.Evidence = []evidenceLink{{Label: h.SourceTaskID, Link: link(taskPath(h.SourceTaskID), "project", p.Project)}}
			}
			s.Items = append(s.Items, it)
		}
		return s, nil
	}
}

func skillSection(_ context.Context, _ *Viewer, p *overviewPeriod) (*sectionView, error) {
	s := &sectionView{Title: "Skills activated",
		Empty: "No skill was activated. Skills are written from task experiences (kaizen skill generate, or the agent) and recalled once active.",
		More:  link("/skills", "project", p.Project), MoreLabel: "All skills"}
	for _, k := range p.Learned.SkillsActivated {
		s.Items = append(s.Items, sectionItem{Title: k.Name, Link: link(skillPath(k.ID), "project", p.Project),
			Badge: fmt.Sprintf("v%d active", k.Version), BadgeClass: "state-active",
			Meta: k.Description + " · " + k.At.UTC().Format("2006-01-02 15:04 UTC")})
	}
	return s, nil
}
