package viewer

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/learning"
)

// Each page handler validates its query, asks the engine, and renders the
// whole page — or, for an htmx request, only the fragment the request
// targets (the list or the detail panel), so that search, paging and live
// updates swap just that part.

// The overview is in overview.go.

// ---- outcomes ----

type outcomesData struct {
	base
	Task  string
	Items outcomeTable
	listView
}

func (v *Viewer) outcomes(w http.ResponseWriter, r *http.Request) error {
	_, task, offset, limit, err := listParams(r, "task")
	if err != nil {
		return err
	}
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	d := outcomesData{base: v.base(r, "Outcomes", "outcomes"), Task: task}
	list, err := v.e.ListOutcomes(ctx, kaizen.OutcomeQuery{Project: d.Project, TaskID: task, Limit: limit, Offset: offset})
	if err != nil {
		return err
	}
	if d.Items, err = v.outcomeTable(ctx, d.Project, list.Items, true); err != nil {
		return err
	}
	d.listView = paging("/outcomes", []any{"project", d.Project, "task", task}, offset, limit, list.Total, len(list.Items))
	return v.renderList(w, r, "outcomes", d)
}

// listView is what every list page shows besides its items: its paging bar,
// and its own URL, which live updates reload.
type listView struct {
	Pager pager
	Self  string
}

// paging builds a list's paging bar and URL from its path and filters
// (key/value pairs as for link).
func paging(path string, filters []any, offset, limit int, total int64, shown int) listView {
	at := func(off int) string {
		return link(path, append(slices.Clone(filters), "offset", off, "limit", pageLimit(limit))...)
	}
	return listView{Self: at(offset), Pager: newPager(offset, limit, total, shown, at)}
}

// pageLimit leaves the default page size out of links.
func pageLimit(limit int) int {
	if limit == defaultPageSize {
		return 0
	}
	return limit
}

// list renders a list page, or its list fragment for htmx.
func (v *Viewer) renderList(w http.ResponseWriter, r *http.Request, set string, d any) error {
	if target(r) == "list" {
		v.render(w, r, http.StatusOK, set, d, "list")
		return nil
	}
	v.render(w, r, http.StatusOK, set, d, "layout")
	return nil
}

// ---- patterns ----

type patternsData struct {
	base
	Q, State, Tag string
	States        []learning.MaturityState
	Items         []kaizen.PatternInfo
	listView
	Panel *panelData
}

var allStates = []learning.MaturityState{learning.Proven, learning.Established, learning.Candidate, learning.Deprecated}

func (v *Viewer) patterns(w http.ResponseWriter, r *http.Request) error {
	q, search, offset, limit, err := listParams(r, "q")
	if err != nil {
		return err
	}
	tag, err := q.str("tag")
	if err != nil {
		return err
	}
	state, err := q.oneOf("state", "", "proven", "established", "candidate", "deprecated")
	if err != nil {
		return err
	}
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	d := patternsData{base: v.base(r, "Patterns", "patterns"), Q: search, State: state, Tag: tag, States: allStates}
	list, err := v.e.ListPatterns(ctx, kaizen.PatternQuery{Project: d.Project, Kind: learning.KindPattern,
		State: learning.MaturityState(state), Tag: tag, Search: search, Limit: limit, Offset: offset})
	if err != nil {
		return err
	}
	d.Items = list.Items
	d.listView = paging("/patterns", []any{"project", d.Project, "q", search, "state", state, "tag", tag}, offset, limit, list.Total, len(list.Items))
	return v.renderList(w, r, "patterns", d)
}

// panelData is the detail panel of a pattern: its record, the explanation
// of its state, and the actions.
type panelData struct {
	Project string
	Detail  *kaizen.PatternDetail
	Explain *learning.PatternExplanation
	Flash   *flash
	// Self is the panel's URL (live refresh, permalink).
	Self string
}

// Actionable reports whether the manual actions apply (not to
// anti-patterns: they act on the source pattern).
func (p panelData) Actionable() bool { return p.Detail.Kind == learning.KindPattern }

func (v *Viewer) panel(ctx context.Context, project, id string) (*panelData, error) {
	d, err := v.e.GetPattern(ctx, project, id)
	if err != nil {
		return nil, err
	}
	x, err := v.e.ExplainPattern(ctx, project, d.ID)
	if err != nil {
		return nil, err
	}
	return &panelData{Project: project, Detail: d, Explain: x,
		Self: link("/patterns/"+d.ID, "project", project)}, nil
}

// pattern serves a pattern's detail: the panel alone for htmx, else a
// page of its own.
func (v *Viewer) pattern(w http.ResponseWriter, r *http.Request) error {
	if _, err := queryOf(r); err != nil {
		return err
	}
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	project := v.project(r)
	p, err := v.panel(ctx, project, r.PathValue("id"))
	if err != nil {
		return err
	}
	if t := target(r); t == "detail" || t == "pattern-panel" {
		v.render(w, r, http.StatusOK, "pattern", p, "panel")
		return nil
	}
	b := v.base(r, "Pattern "+p.Detail.ID, "patterns")
	b.Path = "/patterns" // the project switcher leaves the pattern (ids are per project)
	v.render(w, r, http.StatusOK, "pattern", struct {
		base
		Panel *panelData
	}{b, p}, "layout")
	return nil
}

// ---- anti-patterns ----

type antiPatternsData struct {
	base
	Q     string
	Items []kaizen.PatternInfo
	listView
}

func (v *Viewer) antiPatterns(w http.ResponseWriter, r *http.Request) error {
	_, search, offset, limit, err := listParams(r, "q")
	if err != nil {
		return err
	}
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	d := antiPatternsData{base: v.base(r, "Anti-patterns", "anti-patterns"), Q: search}
	list, err := v.e.ListPatterns(ctx, kaizen.PatternQuery{Project: d.Project, Kind: learning.KindAntiPattern,
		Search: search, Limit: limit, Offset: offset})
	if err != nil {
		return err
	}
	d.Items = list.Items
	d.listView = paging("/anti-patterns", []any{"project", d.Project, "q", search}, offset, limit, list.Total, len(list.Items))
	return v.renderList(w, r, "anti-patterns", d)
}

// ---- criteria ----

type criteriaData struct {
	base
	Q     string
	Items []learning.CriterionWeight
	listView
	Days     int
	Selected *learning.CriterionExplanation
	Chart    chart
	Points   []decayPoint
	HalfLife float64
}

func (v *Viewer) criteria(w http.ResponseWriter, r *http.Request) error {
	q, search, offset, limit, err := listParams(r, "q")
	if err != nil {
		return err
	}
	selected, err := q.str("criterion")
	if err != nil {
		return err
	}
	days, err := q.intIn("days", 180, 7, 730)
	if err != nil {
		return err
	}
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	d := criteriaData{base: v.base(r, "Criteria", "criteria"), Q: search, Days: days,
		HalfLife: v.e.Config().Learning.HalfLifeDays}
	all, err := v.e.ListCriteria(ctx, d.Project)
	if err != nil {
		return err
	}
	// The engine lists every criterion (a handful per project); search and
	// paging happen here.
	matched := slices.DeleteFunc(slices.Clone(all.Items), func(c learning.CriterionWeight) bool {
		return search != "" && !strings.Contains(strings.ToLower(c.Criterion), strings.ToLower(search))
	})
	d.Items = matched[min(offset, len(matched)):min(offset+limit, len(matched))]
	d.listView = paging("/criteria", []any{"project", d.Project, "q", search, "criterion", selected, "days", daysParam(days)}, offset, limit, int64(len(matched)), len(d.Items))

	if selected == "" && len(d.Items) > 0 {
		selected = d.Items[0].Criterion
	}
	name := "one feedback event"
	weight := learning.CriterionWeight{HalfLifeDays: d.HalfLife}
	if selected != "" {
		x, err := v.e.ExplainCriterion(ctx, d.Project, selected)
		if err != nil {
			return err
		}
		d.Selected, weight, name = x, x.Weight, selected
	}
	d.Points = decayProjection(weight, v.e.Now(), days)
	d.Chart = decayChart(name, d.Points, weight.HalfLifeDays)
	return v.renderList(w, r, "criteria", d)
}

func daysParam(days int) int {
	if days == 180 {
		return 0
	}
	return days
}

// ---- errors ----

type errorsData struct {
	base
	Q, Task, Type, Status string
	Types                 []learning.ErrorType
	Groups                []taskGroup
	listView
}

// taskGroup is the errors of one task on the page.
type taskGroup struct {
	Task   string
	Errors []errorRow
	Open   int
}

// errorRow is one error with what its row needs.
type errorRow struct {
	learning.ErrorEntry
	ProjectName string
}

var errorTypes = []learning.ErrorType{"validation", "timeout", "conflict", "tool_failure", "unknown"}

func (v *Viewer) errorList(w http.ResponseWriter, r *http.Request) error {
	q, search, offset, limit, err := listParams(r, "q")
	if err != nil {
		return err
	}
	task, err := q.str("task")
	if err != nil {
		return err
	}
	typ, err := q.oneOf("type", "", "validation", "timeout", "conflict", "tool_failure", "unknown")
	if err != nil {
		return err
	}
	status, err := q.oneOf("status", "", "open", "all")
	if err != nil {
		return err
	}
	if status == "" {
		status = "open"
	}
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	d := errorsData{base: v.base(r, "Errors", "errors"), Q: search, Task: task, Type: typ, Status: status, Types: errorTypes}
	list, err := v.e.ListErrors(ctx, kaizen.ErrorQuery{Project: d.Project, TaskID: task, Type: typ, Search: search,
		UnresolvedOnly: status == "open", Limit: limit, Offset: offset})
	if err != nil {
		return err
	}
	index := map[string]int{}
	for _, e := range list.Items {
		i, ok := index[e.TaskID]
		if !ok {
			i = len(d.Groups)
			index[e.TaskID] = i
			d.Groups = append(d.Groups, taskGroup{Task: e.TaskID})
		}
		d.Groups[i].Errors = append(d.Groups[i].Errors, errorRow{e, d.Project})
		if !e.Resolved {
			d.Groups[i].Open++
		}
	}
	statusParam := status
	if statusParam == "open" {
		statusParam = ""
	}
	d.listView = paging("/errors", []any{"project", d.Project, "q", search, "task", task, "type", typ, "status", statusParam}, offset, limit, list.Total, len(list.Items))
	return v.renderList(w, r, "errors", d)
}
