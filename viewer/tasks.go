package viewer

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/server"
)

// Tasks: the agent sessions the client hooks track and the tasks reported
// explicitly (kaizen.Engine.ListTasks, GetTask), with their outcome
// (recorded, or inferred when the engine marks it so), duration, errors,
// retries, the strategies used, and what each taught: pattern updates and
// inversions, and the heuristics of its experience.

// dataRoutes are the tasks pages and the actions over the data a user
// owns (delete, forget, edit), mounted like every page.
func (v *Viewer) dataRoutes(page func(pattern string, h handlerFunc) server.Route) []server.Route {
	return []server.Route{
		page("GET /tasks", v.taskList),
		page("GET /tasks/{$}", v.noTask),
		page("GET /tasks/{id}", v.taskPage),
		page("POST /outcomes/{id}/delete", v.deleteOutcome),
		page("POST /turns/{id}/delete", v.deleteTurn),
		page("POST /turns/{id}/forget", v.forgetMemory),
		page("POST /heuristics/{id}/edit", v.editHeuristic),
		page("POST /heuristics/{id}/delete", v.deleteHeuristic),
		page("POST /skills/{id}/delete", v.deleteSkill),
	}
}

func (v *Viewer) noTask(http.ResponseWriter, *http.Request) error {
	return notFound("no task given: pick one from the list")
}

// maxTaskScan bounds the tasks a filtered task list reads.
const maxTaskScan = 1000

// taskRow is a task in the list with its latest outcome.
type taskRow struct {
	kaizen.TaskInfo
	Outcome *outcomeRow
	// Outcomes counts the task's outcomes.
	Outcomes int64
}

// Open reports whether the task has no outcome yet.
func (t taskRow) Open() bool { return t.EndedAt == nil }

type tasksData struct {
	base
	Q, Status, Source, Result string
	Sources                   []string
	Items                     []taskRow
	listView
	// Scanned is set when a filter read at most maxTaskScan tasks and the
	// project has more.
	Scanned, Total int64
}

// MaxScan is the most tasks a filtered list reads.
func (tasksData) MaxScan() int { return maxTaskScan }

func (v *Viewer) taskList(w http.ResponseWriter, r *http.Request) error {
	q, search, offset, limit, err := listParams(r, "q")
	if err != nil {
		return err
	}
	status, err := q.oneOf("status", "", "open", "closed")
	if err != nil {
		return err
	}
	result, err := q.oneOf("result", "", "success", "failure", "none")
	if err != nil {
		return err
	}
	source, err := q.str("source")
	if err != nil {
		return err
	}
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	d := tasksData{base: v.base(r, "Tasks", "tasks"), Q: search, Status: status, Source: source, Result: result}
	filters := []any{"project", d.Project, "q", search, "status", status, "source", source, "result", result}
	filtered := search != "" || source != "" || result != "" || status == "closed"
	var rows []taskRow
	var total int64
	if !filtered {
		list, err := v.e.ListTasks(ctx, kaizen.TaskQuery{Project: d.Project, OpenOnly: status == "open", Limit: limit, Offset: offset})
		if err != nil {
			return err
		}
		total = list.Total
		for _, t := range list.Items {
			rows = append(rows, taskRow{TaskInfo: t})
		}
	} else {
		list, err := v.e.ListTasks(ctx, kaizen.TaskQuery{Project: d.Project, Limit: maxTaskScan})
		if err != nil {
			return err
		}
		if list.Total > int64(len(list.Items)) {
			d.Scanned, d.Total = int64(len(list.Items)), list.Total
		}
		needle := strings.ToLower(search)
		var matched []taskRow
		for _, t := range list.Items {
			switch {
			case status == "open" && t.EndedAt != nil, status == "closed" && t.EndedAt == nil:
				continue
			case source != "" && t.Source != source:
				continue
			case needle != "" && !strings.Contains(strings.ToLower(t.ID+"\n"+t.Description+"\n"+t.Source), needle):
				continue
			}
			row := taskRow{TaskInfo: t}
			if result != "" {
				if err := v.taskOutcome(ctx, d.Project, &row); err != nil {
					return err
				}
				switch {
				case result == "none" && row.Outcome != nil,
					result == "success" && (row.Outcome == nil || !row.Outcome.Success),
					result == "failure" && (row.Outcome == nil || row.Outcome.Success):
					continue
				}
			}
			matched = append(matched, row)
		}
		total = int64(len(matched))
		rows = matched[min(offset, len(matched)):min(offset+limit, len(matched))]
	}
	for i := range rows {
		if rows[i].Outcome == nil {
			if err := v.taskOutcome(ctx, d.Project, &rows[i]); err != nil {
				return err
			}
		}
	}
	d.Items = rows
	d.Sources = []string{"claude", "codex", "cursor", "opencode", "cli", "mcp"}
	if source != "" && !slices.Contains(d.Sources, source) {
		d.Sources = append(d.Sources, source)
	}
	d.listView = paging("/tasks", filters, offset, limit, total, len(rows))
	return v.renderList(w, r, "tasks", d)
}

// taskOutcome reads a task's latest outcome into its row.
func (v *Viewer) taskOutcome(ctx context.Context, project string, row *taskRow) error {
	list, err := v.e.ListOutcomes(ctx, kaizen.OutcomeQuery{Project: project, TaskID: row.ID, Limit: 1})
	if err != nil {
		return err
	}
	row.Outcomes = list.Total
	if len(list.Items) == 0 {
		row.Outcome = nil
		return nil
	}
	t, err := v.outcomeTable(ctx, project, list.Items, false)
	if err != nil {
		return err
	}
	row.Outcome = &t.Rows[0]
	return nil
}

// ---- one task ----

// patternLesson is what a task's outcome did to a pattern.
type patternLesson struct {
	ID, Content, Link string
	State             learning.MaturityState
	Success, Failure  int64
	// Observation is this task's use of the pattern, when it is among the
	// pattern's recent observations.
	Observation *learning.MaturityFeedback
	// Anti is the pattern's anti-pattern, when it was inverted.
	Anti *antiRef
}

// antiRef is an anti-pattern linked to its panel.
type antiRef struct {
	ID, Content, Reason, Link string
	CreatedAt                 time.Time
}

// heuristicLesson is a lesson of the task's experience and the heuristic
// it became (nil when none is found any more).
type heuristicLesson struct {
	experience.TransferableHeuristic
	Heuristic *experience.Heuristic
}

type taskData struct {
	base
	ID      string
	Task    *kaizen.TaskInfo
	Known   string
	Results outcomeTable
	Errors  []learning.ErrorEntry
	Open    int
	// What was learned.
	Patterns   []patternLesson
	Experience *experience.TaskExperience
	Lessons    []heuristicLesson
	Turns      int64
	Signals    int64
	Recalls    int64
	Flash      *flash
}

func (v *Viewer) taskPage(w http.ResponseWriter, r *http.Request) error {
	if _, err := queryOf(r); err != nil {
		return err
	}
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	id := r.PathValue("id")
	d := taskData{base: v.base(r, "Task "+id, "tasks"), ID: id}
	d.Path = "/tasks" // the project switcher leaves the task (ids are per project)
	if err := v.taskDetail(ctx, &d); err != nil {
		return err
	}
	if target(r) == "task-live" {
		v.render(w, r, http.StatusOK, "task", d, "task-live")
		return nil
	}
	v.render(w, r, http.StatusOK, "task", d, "layout")
	return nil
}

// taskDetail reads everything a task's page shows.
func (v *Viewer) taskDetail(ctx context.Context, d *taskData) error {
	project, id := d.Project, d.ID
	t, err := v.e.GetTask(ctx, project, id)
	switch {
	case err == nil:
		d.Task = t
	case kaizen.KindOf(err) != kaizen.KindNotFound:
		return err
	}
	outs, err := v.e.ListOutcomes(ctx, kaizen.OutcomeQuery{Project: project, TaskID: id, Limit: 50})
	if err != nil {
		return err
	}
	if d.Task == nil && outs.Total == 0 {
		turns, err := v.e.ListTurns(ctx, kaizen.TurnQuery{Project: project, TaskID: id, Limit: 1})
		if err != nil {
			return err
		}
		if turns.Total == 0 {
			return notFound("no task " + id + " in project " + project + ": neither tracked nor with outcomes or turns")
		}
	}
	if d.Results, err = v.outcomeTable(ctx, project, outs.Items, true); err != nil {
		return err
	}
	errs, err := v.e.ListErrors(ctx, kaizen.ErrorQuery{Project: project, TaskID: id, Limit: 50})
	if err != nil {
		return err
	}
	d.Errors = errs.Items
	for _, e := range errs.Items {
		if !e.Resolved {
			d.Open++
		}
	}
	seen := map[string]bool{}
	for _, o := range outs.Items {
		for _, pid := range o.Patterns {
			if seen[pid] {
				continue
			}
			seen[pid] = true
			p, err := v.e.GetPattern(ctx, project, pid)
			if kaizen.KindOf(err) == kaizen.KindNotFound {
				continue
			}
			if err != nil {
				return err
			}
			l := patternLesson{ID: p.ID, Content: p.Content, Link: link("/patterns/"+url.PathEscape(pid), "project", project),
				State: p.Maturity.State, Success: p.SuccessCount, Failure: p.FailureCount}
			for i := range p.RecentObservations {
				if p.RecentObservations[i].TaskID == id {
					l.Observation = &p.RecentObservations[i]
					break
				}
			}
			if p.AntiPatternID != "" {
				a, err := v.e.GetPattern(ctx, project, p.AntiPatternID)
				if err == nil {
					l.Anti = &antiRef{ID: a.ID, Content: a.Content, Reason: a.Reason, CreatedAt: a.CreatedAt,
						Link: link("/patterns/"+url.PathEscape(a.ID), "project", project)}
				} else if kaizen.KindOf(err) != kaizen.KindNotFound {
					return err
				}
			}
			d.Patterns = append(d.Patterns, l)
		}
	}
	x, err := v.e.GetExperience(ctx, project, id)
	switch {
	case err == nil:
		d.Experience = x
		for _, lesson := range x.Heuristics {
			hl := heuristicLesson{TransferableHeuristic: lesson}
			hl.Heuristic, err = v.lessonHeuristic(ctx, project, id, lesson)
			if err != nil {
				return err
			}
			d.Lessons = append(d.Lessons, hl)
		}
	case kaizen.KindOf(err) != kaizen.KindNotFound:
		return err
	}
	turns, err := v.e.ListTurns(ctx, kaizen.TurnQuery{Project: project, TaskID: id, Limit: 1})
	if err != nil {
		return err
	}
	d.Turns = turns.Total
	sig, err := v.e.ListSignals(ctx, kaizen.SignalQuery{Project: project, TaskID: id, Limit: 1})
	if err != nil {
		return err
	}
	d.Signals = sig.Total
	rec, err := v.e.ListRecalls(ctx, kaizen.RecallQuery{Project: project, TaskID: id, Limit: 1})
	if err != nil {
		return err
	}
	d.Recalls = rec.Total
	return nil
}

// lessonHeuristic finds the heuristic a lesson of a task became: one with
// the lesson's rule, learned from the task or supported by it.
func (v *Viewer) lessonHeuristic(ctx context.Context, project, task string, lesson experience.TransferableHeuristic) (*experience.Heuristic, error) {
	needle := strings.TrimSpace(lesson.Rule)
	if len(needle) > 200 {
		cut := 200
		for cut > 0 && needle[cut]&0xC0 == 0x80 {
			cut--
		}
		needle = needle[:cut]
	}
	if needle == "" {
		return nil, nil
	}
	list, err := v.e.ListHeuristics(ctx, kaizen.HeuristicQuery{Project: project, Search: needle, Limit: 20})
	if err != nil {
		return nil, err
	}
	for i := range list.Items {
		h := &list.Items[i]
		if h.SourceTaskID == task || strings.TrimSpace(h.Rule) == strings.TrimSpace(lesson.Rule) {
			return h, nil
		}
	}
	return nil, nil
}
