package viewer

import (
	"net/http"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/experience"
)

// Task experiences (what a finished task teaches), the feedback signals of
// tasks, and their captured turns.

// ---- experiences ----

type experiencesData struct {
	base
	Items []experience.TaskExperience
	listView
}

func (v *Viewer) experienceList(w http.ResponseWriter, r *http.Request) error {
	q, err := queryOf(r)
	if err != nil {
		return err
	}
	offset, limit, err := q.page()
	if err != nil {
		return err
	}
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	d := experiencesData{base: v.base(r, "Experiences", "experiences")}
	list, err := v.e.ListExperiences(ctx, kaizen.ExperienceQuery{Project: d.Project, Limit: limit, Offset: offset})
	if err != nil {
		return err
	}
	d.Items = list.Items
	d.listView = paging("/experiences", []any{"project", d.Project}, offset, limit, list.Total, len(list.Items))
	return v.renderList(w, r, "experience_experiences", d)
}

type experienceData struct {
	base
	X *experience.TaskExperience
	// Links of the task's other records.
	Signals, Turns, Recalls string
}

func (v *Viewer) experiencePage(w http.ResponseWriter, r *http.Request) error {
	if _, err := queryOf(r); err != nil {
		return err
	}
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	project := v.project(r)
	x, err := v.e.GetExperience(ctx, project, r.PathValue("task"))
	if err != nil {
		return err
	}
	d := experienceData{base: v.base(r, "Experience of "+x.TaskID, "experiences"), X: x,
		Signals: link("/signals", "project", project, "task", x.TaskID),
		Turns:   link("/turns", "project", project, "task", x.TaskID),
		Recalls: link("/recalls", "project", project, "task", x.TaskID)}
	d.Path = "/experiences"
	v.render(w, r, http.StatusOK, "experience_experience", d, "layout")
	return nil
}

// ---- signals ----

type signalsData struct {
	base
	Task, Type string
	Types      []string
	Items      []experience.FeedbackSignal
	listView
}

func (v *Viewer) signalList(w http.ResponseWriter, r *http.Request) error {
	q, task, offset, limit, err := listParams(r, "task")
	if err != nil {
		return err
	}
	typ, err := q.oneOf("type", anyOf(experience.SignalTypes)...)
	if err != nil {
		return err
	}
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	d := signalsData{base: v.base(r, "Signals", "signals"), Task: task, Type: typ, Types: names(experience.SignalTypes)}
	list, err := v.e.ListSignals(ctx, kaizen.SignalQuery{Project: d.Project, TaskID: task, Type: typ, Limit: limit, Offset: offset})
	if err != nil {
		return err
	}
	d.Items = list.Items
	d.listView = paging("/signals", []any{"project", d.Project, "task", task, "type", typ}, offset, limit, list.Total, len(list.Items))
	return v.renderList(w, r, "experience_signals", d)
}

// ---- turns ----

type turnsData struct {
	base
	Task  string
	Items []experience.Turn
	listView
}

// turnList lists captured turns, oldest first, of one task (?task=) or of
// the project.
func (v *Viewer) turnList(w http.ResponseWriter, r *http.Request) error {
	_, task, offset, limit, err := listParams(r, "task")
	if err != nil {
		return err
	}
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	d := turnsData{base: v.base(r, "Turns", "experiences"), Task: task}
	list, err := v.e.ListTurns(ctx, kaizen.TurnQuery{Project: d.Project, TaskID: task, Limit: limit, Offset: offset})
	if err != nil {
		return err
	}
	d.Items = list.Items
	d.listView = paging("/turns", []any{"project", d.Project, "task", task}, offset, limit, list.Total, len(list.Items))
	return v.renderList(w, r, "experience_turns", d)
}
