package viewer

import (
	"context"
	"net/http"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/experience"
)

// Recalls: what was asked, in which live situation, and every item
// considered with its scores and whether it was injected.

// ---- the list ----

type recallsData struct {
	base
	Task, Ref string
	Items     []recallRow
	listView
}

// recallRow is one recall with its counts.
type recallRow struct {
	experience.RecallEvent
	Injected int
}

func injectedCount(items []experience.RecallItem) int {
	n := 0
	for _, it := range items {
		if it.Injected {
			n++
		}
	}
	return n
}

func (v *Viewer) recallList(w http.ResponseWriter, r *http.Request) error {
	q, task, offset, limit, err := listParams(r, "task")
	if err != nil {
		return err
	}
	ref, err := q.str("ref")
	if err != nil {
		return err
	}
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	d := recallsData{base: v.base(r, "Recalls", "recalls"), Task: task, Ref: ref}
	list, err := v.e.ListRecalls(ctx, kaizen.RecallQuery{Project: d.Project, TaskID: task, RefID: ref, Limit: limit, Offset: offset})
	if err != nil {
		return err
	}
	for _, rc := range list.Items {
		d.Items = append(d.Items, recallRow{rc, injectedCount(rc.Items)})
	}
	d.listView = paging("/recalls", []any{"project", d.Project, "task", task, "ref", ref}, offset, limit, list.Total, len(list.Items))
	return v.renderList(w, r, "experience_recalls", d)
}

// ---- a recall ----

// maxItemLookups bounds the heuristics and skills a recall page looks up
// for their titles; further items show their ids only.
const maxItemLookups = 60

// recallItemRow is one considered item with what it is.
type recallItemRow struct {
	experience.RecallItem
	Title  string // the heuristic's rule or the skill's name, "" if unknown
	Status string
	Link   string // its page, "" for a memory (a captured turn)
}

type recallData struct {
	base
	R        *experience.RecallEvent
	Items    []recallItemRow
	Injected int
	// Task links to the turns of the recall's task ("" without a task).
	Task string
}

func (v *Viewer) findRecall(ctx context.Context, project, id string) (*experience.RecallEvent, error) {
	return v.e.GetRecall(ctx, project, id)
}

func (v *Viewer) recallPage(w http.ResponseWriter, r *http.Request) error {
	if _, err := queryOf(r); err != nil {
		return err
	}
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	project := v.project(r)
	rc, err := v.findRecall(ctx, project, r.PathValue("id"))
	if err != nil {
		return err
	}
	d := recallData{R: rc, Injected: injectedCount(rc.Items)}
	lookups := 0
	for _, it := range rc.Items {
		row := recallItemRow{RecallItem: it}
		switch it.Kind {
		case experience.ItemHeuristic:
			row.Link = link(heuristicPath(it.RefID), "project", project)
			if lookups < maxItemLookups {
				lookups++
				if h, err := v.e.GetHeuristic(ctx, project, it.RefID); err == nil {
					row.Title, row.Status = h.Heuristic.Rule, string(h.Heuristic.Status)
				} else if kaizen.KindOf(err) != kaizen.KindNotFound {
					return err
				}
			}
		case experience.ItemSkill:
			row.Link = link(skillPath(it.RefID), "project", project)
			if lookups < maxItemLookups {
				lookups++
				if s, err := v.e.GetSkill(ctx, project, it.RefID); err == nil {
					row.Title, row.Status = s.Skill.Name, string(s.Skill.Status)
				} else if kaizen.KindOf(err) != kaizen.KindNotFound {
					return err
				}
			}
		}
		d.Items = append(d.Items, row)
	}
	if rc.TaskID != "" {
		d.Task = link("/turns", "project", project, "task", rc.TaskID)
	}
	d.base = v.base(r, "Recall "+rc.ID, "recalls")
	d.Path = "/recalls"
	v.render(w, r, http.StatusOK, "experience_recall", d, "layout")
	return nil
}
