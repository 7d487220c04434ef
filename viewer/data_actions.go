package viewer

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/kaizenhq/kaizen"
)

// Actions over the data a user owns: delete an outcome (what it taught is
// recomputed), delete a captured turn or take it out of recall, edit or
// delete a heuristic, delete a skill. They post like every action (same
// origin, urlencoded). htmx gets a message swapped into the page's
// #action-flash region and an HX-Trigger that refreshes the live regions
// (the deleted row leaves its list); a deleted heuristic or skill sends the
// browser to its list (HX-Redirect). Without JavaScript the form is
// redirected (303) to the page named by its "back" field (a path on this
// site), else the list.

// answerForget answers a delete or forget action.
func (v *Viewer) answerForget(w http.ResponseWriter, r *http.Request, ctx context.Context, project, list string,
	actErr error, msg string, notes []string, redirect bool) error {
	if actErr != nil && !isHTMX(r) {
		return actErr
	}
	back := list
	if b := r.PostForm.Get("back"); b != "" {
		back = safeNext(b)
	}
	if !isHTMX(r) {
		http.Redirect(w, r, back, http.StatusSeeOther)
		return nil
	}
	v.stamp(ctx, w, project)
	f := flash{Kind: "ok", Message: msg, Notes: notes, ID: "action-flash"}
	status := http.StatusOK
	if actErr != nil {
		status, f.Message = v.statusOf(w, r, actErr)
		f.Kind, f.Notes = "error", nil
	} else if redirect {
		w.Header().Set("HX-Redirect", list)
	} else {
		w.Header().Set("HX-Trigger", refreshEvent)
	}
	// A refusal swaps too (the htmx config swaps 4xx answers).
	w.Header().Set("HX-Retarget", "#action-flash")
	w.Header().Set("HX-Reswap", "outerHTML")
	v.render(w, r, status, "fail", f, "flash")
	return nil
}

func (v *Viewer) deleteOutcome(w http.ResponseWriter, r *http.Request) error {
	if err := form(r); err != nil {
		return err
	}
	project := v.project(r)
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	res, err := v.e.DeleteOutcome(ctx, kaizen.ForgetInput{Project: project, ID: r.PathValue("id")})
	var msg string
	var notes []string
	if err == nil {
		msg = fmt.Sprintf("Outcome %s of task %s deleted; %d pattern observation(s) removed and the aggregates recomputed.",
			res.Outcome.ID, res.Outcome.TaskID, res.Observations)
		for _, p := range res.Patterns {
			notes = append(notes, fmt.Sprintf("%s: %d succeeded, %d failed, now %s", p.Content, p.SuccessCount, p.FailureCount, p.Maturity.State))
		}
		for _, id := range res.AntiPatternsRemoved {
			notes = append(notes, "anti-pattern "+id+" removed: the inversion no longer holds")
		}
		for _, id := range res.PatternsRemoved {
			notes = append(notes, "pattern "+id+" removed: only this outcome had used it")
		}
		if res.TaskReopened {
			notes = append(notes, "task "+res.Outcome.TaskID+" is open again")
		}
	}
	return v.answerForget(w, r, ctx, project, link("/outcomes", "project", project), err, msg, notes, false)
}

func (v *Viewer) deleteTurn(w http.ResponseWriter, r *http.Request) error {
	return v.forgetAction(w, r, v.e.DeleteTurn, link("/turns", "project", v.project(r)), false)
}

func (v *Viewer) forgetMemory(w http.ResponseWriter, r *http.Request) error {
	return v.forgetAction(w, r, v.e.ForgetMemory, link("/turns", "project", v.project(r)), false)
}

func (v *Viewer) deleteHeuristic(w http.ResponseWriter, r *http.Request) error {
	return v.forgetAction(w, r, v.e.DeleteHeuristic, link("/heuristics", "project", v.project(r)), true)
}

func (v *Viewer) deleteSkill(w http.ResponseWriter, r *http.Request) error {
	return v.forgetAction(w, r, v.e.DeleteSkill, link("/skills", "project", v.project(r)), true)
}

// forgetAction runs an experience forget action on the record in the path.
func (v *Viewer) forgetAction(w http.ResponseWriter, r *http.Request,
	act func(context.Context, kaizen.ForgetInput) (*kaizen.ForgetResult, error), list string, redirect bool) error {
	if err := form(r); err != nil {
		return err
	}
	project := v.project(r)
	ctx, cancel := withTimeout(r.Context())
	defer cancel()
	res, err := act(ctx, kaizen.ForgetInput{Project: project, ID: r.PathValue("id")})
	var msg string
	if err == nil {
		what := map[string]string{"turn": "Turn deleted", "memory": "Memory forgotten (the turn is kept)",
			"heuristic": "Heuristic deleted", "skill": "Skill deleted"}[res.Kind]
		msg = fmt.Sprintf("%s: %s. %s", what, res.ID, forgetDetails(res))
	}
	return v.answerForget(w, r, ctx, project, list, err, msg, nil, redirect)
}

// forgetDetails says what a forget action removed besides the record.
func forgetDetails(res *kaizen.ForgetResult) string {
	var parts []string
	if res.Unindexed {
		parts = append(parts, "out of recall (full text and vectors)")
	}
	if res.Signals > 0 {
		parts = append(parts, fmt.Sprintf("%d signal(s) quoting it removed", res.Signals))
	}
	if res.Recalls > 0 {
		parts = append(parts, fmt.Sprintf("removed from %d stored recall(s)", res.Recalls))
	}
	if res.Skills > 0 {
		parts = append(parts, fmt.Sprintf("%d skill(s) no longer adopt it", res.Skills))
	}
	if res.Lessons > 0 {
		parts = append(parts, fmt.Sprintf("%d lesson(s) removed from task experiences", res.Lessons))
	}
	if len(parts) == 0 {
		return ""
	}
	s := strings.Join(parts, "; ")
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

// editHeuristic corrects a heuristic's trigger, rule or why.
func (v *Viewer) editHeuristic(w http.ResponseWriter, r *http.Request) error {
	if err := form(r); err != nil {
		return err
	}
	in := kaizen.HeuristicEditInput{Project: v.project(r), HeuristicID: r.PathValue("id"),
		Trigger: strings.TrimSpace(r.PostForm.Get("trigger")),
		Rule:    strings.TrimSpace(r.PostForm.Get("rule")),
		Why:     strings.TrimSpace(r.PostForm.Get("why"))}
	return v.heuristicChange(w, r, func(ctx context.Context) (*kaizen.HeuristicActionResult, string, error) {
		res, err := v.e.EditHeuristic(ctx, in)
		return res, "Heuristic edited: recall follows the new text.", err
	})
}
