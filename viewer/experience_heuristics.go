package viewer

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/experience"
)

// Heuristics: the list (status, kind, search) and a page per heuristic
// with its lifecycle, evidence, verdicts and recalls, and the forms that
// judge it (HeuristicFeedback) or change its state by hand
// (HeuristicAction).

// ---- the list ----

type heuristicsData struct {
	base
	Q, Status, Kind string
	Statuses        []string
	Kinds           []string
	Items           []experience.Heuristic
	listView
}

func (v *Viewer) heuristicList(w http.ResponseWriter, r *http.Request) error {
	q, search, offset, limit, err := listParams(r, "q")
	if err != nil {
		return err
	}
	status, err := q.oneOf("status", anyOf(experience.HeuristicStatuses)...)
	if err != nil {
		return err
	}
	kind, err := q.oneOf("kind", anyOf(experience.HeuristicKinds)...)
	if err != nil {
		return err
	}
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	d := heuristicsData{base: v.base(r, "Heuristics", "heuristics"), Q: search, Status: status, Kind: kind,
		Statuses: names(experience.HeuristicStatuses), Kinds: names(experience.HeuristicKinds)}
	query := kaizen.HeuristicQuery{Project: d.Project, Kind: kind, Search: search, Limit: limit, Offset: offset}
	if status != "" {
		query.Status = []string{status}
	}
	list, err := v.e.ListHeuristics(ctx, query)
	if err != nil {
		return err
	}
	d.Items = list.Items
	d.listView = paging("/heuristics", []any{"project", d.Project, "q", search, "status", status, "kind", kind},
		offset, limit, list.Total, len(list.Items))
	return v.renderList(w, r, "experience_heuristics", d)
}

// ---- a heuristic ----

// lifeEvent is one dated line of a heuristic's timeline.
type lifeEvent struct {
	At   time.Time
	What string // created, evidence, feedback, validated, recalled, status
	Text string
	Task string // a task the event names, "" if none
	// TaskPage is where the task's link goes: its experience for the
	// tasks that taught the heuristic, its turns for a verdict's task
	// (which may have no experience).
	TaskPage string
	// Recall is the recall a verdict was given on, "" if none.
	Recall string
}

// heuristicView is a heuristic's panel: its record, history and forms.
type heuristicView struct {
	Project  string
	D        *kaizen.HeuristicDetail
	H        experience.Heuristic
	Timeline []lifeEvent
	Flash    *flash
	Self     string // the panel's URL (live refresh, permalink)
	Path     string // the heuristic's path (the id escaped)
	// Which manual actions apply to its state.
	CanRetire, CanRestore bool
}

// lifecycleOf orders what is dated in a heuristic's history: its creation,
// each evidence record and verdict, its last validation and recall, and
// its last status change (the engine keeps the current status and its
// reason, not every past transition).
func lifecycleOf(project string, d *kaizen.HeuristicDetail) []lifeEvent {
	h := d.Heuristic
	taught := func(task string) string {
		if task == "" {
			return ""
		}
		return link(experiencePath(task), "project", project)
	}
	ev := []lifeEvent{{At: h.CreatedAt, What: "created", Text: "created as " + string(experience.StatusCandidate),
		Task: h.SourceTaskID, TaskPage: taught(h.SourceTaskID)}}
	for _, e := range d.Evidence {
		if e.Action == experience.EvidenceCreated {
			continue // the creation line above
		}
		ev = append(ev, lifeEvent{At: e.CreatedAt, What: "evidence", Text: string(e.Action) + " by a similar lesson",
			Task: e.TaskID, TaskPage: taught(e.TaskID)})
	}
	for _, f := range d.Feedback {
		text := "verdict: " + string(f.Verdict)
		if f.Note != "" {
			text += " — " + f.Note
		}
		e := lifeEvent{At: f.CreatedAt, What: "feedback", Text: text, Task: f.TaskID, Recall: f.RecallID}
		if f.TaskID != "" {
			e.TaskPage = link("/turns", "project", project, "task", f.TaskID)
		}
		ev = append(ev, e)
	}
	if h.LastValidatedAt != nil {
		ev = append(ev, lifeEvent{At: *h.LastValidatedAt, What: "validated", Text: "last validated"})
	}
	if h.LastRecalledAt != nil {
		ev = append(ev, lifeEvent{At: *h.LastRecalledAt, What: "recalled", Text: "last recalled"})
	}
	if h.Status != experience.StatusCandidate || h.StatusReason != "" {
		ev = append(ev, lifeEvent{At: h.UpdatedAt, What: "status", Text: "now " + string(h.Status) + reasonSuffix(h.StatusReason)})
	}
	slices.SortStableFunc(ev, func(a, b lifeEvent) int { return cmp.Compare(a.At.UnixNano(), b.At.UnixNano()) })
	return ev
}

func reasonSuffix(r string) string {
	if r == "" {
		return ""
	}
	return ": " + r
}

func (v *Viewer) heuristicPanel(ctx context.Context, project, id string) (*heuristicView, error) {
	d, err := v.e.GetHeuristic(ctx, project, id)
	if err != nil {
		return nil, err
	}
	h := d.Heuristic
	p := &heuristicView{Project: project, D: d, H: h, Timeline: lifecycleOf(project, d), Path: heuristicPath(h.ID),
		CanRetire:  h.Status != experience.StatusArchived,
		CanRestore: experience.Restorable(h.Status)}
	p.Self = link(p.Path, "project", project)
	return p, nil
}

// heuristicPage serves a heuristic's page, or its panel for htmx.
func (v *Viewer) heuristicPage(w http.ResponseWriter, r *http.Request) error {
	return serveDetail(v, w, r, v.heuristicPanel, v.renderHeuristic)
}

// serveDetail serves the detail page (or panel) of the project's item named
// in the path: load reads its panel, render renders it.
func serveDetail[P any](v *Viewer, w http.ResponseWriter, r *http.Request,
	load func(ctx context.Context, project, id string) (P, error), render func(http.ResponseWriter, *http.Request, int, P)) error {
	if _, err := queryOf(r); err != nil {
		return err
	}
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	p, err := load(ctx, v.project(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	render(w, r, http.StatusOK, p)
	return nil
}

func (v *Viewer) renderHeuristic(w http.ResponseWriter, r *http.Request, status int, p *heuristicView) {
	// The project switcher leaves the heuristic (ids are per project).
	v.renderDetail(w, r, status, "experience_heuristic", "heuristic-panel", "Heuristic "+p.H.ID, "heuristics", "/heuristics", p)
}

// renderDetail renders a detail page with its panel, or only the panel
// (panelID) for an htmx request aimed at it. list is where the project
// switcher goes from the page.
func (v *Viewer) renderDetail(w http.ResponseWriter, r *http.Request, status int, tmpl, panelID, title, nav, list string,
	panel any) {
	if target(r) == panelID {
		v.render(w, r, status, tmpl, panel, panelID)
		return
	}
	b := v.base(r, title, nav)
	b.Path = list
	v.render(w, r, status, tmpl, struct {
		base
		Panel any
	}{b, panel}, "layout")
}

// ---- actions ----

// heuristicFeedback records a verdict (helpful or misleading) with an
// optional note, recall and task.
func (v *Viewer) heuristicFeedback(w http.ResponseWriter, r *http.Request) error {
	if err := form(r); err != nil {
		return err
	}
	in := kaizen.HeuristicFeedbackInput{Project: v.project(r), HeuristicID: r.PathValue("id"),
		Verdict:  strings.TrimSpace(r.PostForm.Get("verdict")),
		RecallID: strings.TrimSpace(r.PostForm.Get("recall_id")),
		TaskID:   strings.TrimSpace(r.PostForm.Get("task")),
		Note:     strings.TrimSpace(r.PostForm.Get("note")),
		Source:   "viewer"}
	return v.heuristicChange(w, r, func(ctx context.Context) (*kaizen.HeuristicActionResult, string, error) {
		res, err := v.e.HeuristicFeedback(ctx, in)
		return res, "Verdict recorded: " + strings.ToLower(in.Verdict) + ".", err
	})
}

// heuristicAction archives, marks outdated, supersedes or restores a
// heuristic.
func (v *Viewer) heuristicAction(w http.ResponseWriter, r *http.Request) error {
	if err := form(r); err != nil {
		return err
	}
	in := kaizen.HeuristicActionInput{Project: v.project(r), HeuristicID: r.PathValue("id"),
		Action: strings.TrimSpace(r.PostForm.Get("action")),
		Reason: strings.TrimSpace(r.PostForm.Get("reason")),
		By:     strings.TrimSpace(r.PostForm.Get("by"))}
	return v.heuristicChange(w, r, func(ctx context.Context) (*kaizen.HeuristicActionResult, string, error) {
		res, err := v.e.HeuristicAction(ctx, in)
		return res, "Action done: " + strings.ToLower(in.Action) + ".", err
	})
}

// heuristicChange runs a change and answers like the pattern actions: a
// plain form post is redirected back (303); htmx gets the heuristic's
// panel with the result or the engine's refusal.
func (v *Viewer) heuristicChange(w http.ResponseWriter, r *http.Request,
	act func(context.Context) (*kaizen.HeuristicActionResult, string, error)) error {
	project, id := v.project(r), r.PathValue("id")
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	res, done, actErr := act(ctx)
	return answerAction(v, w, r, ctx, project, heuristicPath(id), actErr,
		func() *flash {
			f := &flash{Kind: "ok", Message: done}
			if tr := res.Transition; tr != nil {
				f.Notes = []string{string(tr.From) + " → " + string(tr.To) + reasonSuffix(tr.Reason)}
			}
			return f
		},
		func() (*heuristicView, error) { return v.heuristicPanel(ctx, project, id) },
		func(status int, p *heuristicView) { v.renderHeuristic(w, r, status, p) })
}
