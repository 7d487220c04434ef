package app

import (
	"context"
	"fmt"
	"time"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/store"
)

// Projects lists the projects holding data, sorted.
func (e *Env) Projects(ctx context.Context) ([]string, error) {
	var out []string
	err := e.View(ctx, "list projects", func(tx store.Tx) error {
		var err error
		out, err = tx.Projects(ctx)
		return err
	})
	if out == nil {
		out = []string{}
	}
	return out, err
}

// ProjectSignature is a short string that changes whenever the project's
// learned state changes: patterns and maturity (the pattern version),
// outcomes (the newest one), errors (recorded, resolved), tasks,
// exploration sessions and the experience system (turns, signals, task
// experiences, heuristics, recalls, skills). It is cheap, for pollers such
// as the viewer's live updates.
func (e *Env) Signature(ctx context.Context, project string) (string, error) {
	const op = "project signature"
	project, err := e.ResolveProject(op, project)
	if err != nil {
		return "", err
	}
	var sig string
	err = e.View(ctx, op, func(tx store.Tx) error {
		pv, err := tx.PatternVersion(ctx, project)
		if err != nil {
			return err
		}
		newest, err := tx.ListOutcomes(ctx, project, store.OutcomeFilter{Limit: 1})
		if err != nil {
			return err
		}
		errs, err := tx.CountErrors(ctx, project, store.ErrorFilter{})
		if err != nil {
			return err
		}
		open, err := tx.CountErrors(ctx, project, store.ErrorFilter{UnresolvedOnly: true})
		if err != nil {
			return err
		}
		tasks, err := tx.ListTasks(ctx, project, store.TaskFilter{Limit: 1})
		if err != nil {
			return err
		}
		sessions, err := tx.ListExploreSessions(ctx, project, store.ExploreFilter{Limit: 1})
		if err != nil {
			return err
		}
		expSig, err := experienceSignature(ctx, tx, project)
		if err != nil {
			return err
		}
		last, task, session := "-", "-", "-"
		if len(newest) > 0 {
			last = newest[0].ID
		}
		if len(tasks) > 0 {
			task = tasks[0].ID + "@" + tasks[0].UpdatedAt.Format(time.RFC3339Nano)
		}
		if len(sessions) > 0 {
			session = sessions[0].ID + "@" + sessions[0].UpdatedAt.Format(time.RFC3339Nano)
		}
		sig = fmt.Sprintf("%d.%d.%s.%d.%d.%s.%s.%s", pv.Version, pv.ResetVersion, last, errs, open, task, session, expSig)
		return nil
	})
	return sig, err
}

// experienceSignature is the experience system's part of ProjectSignature.
// The experience version only counts changes to the search index
// (embeddings and full-text documents): a verdict that keeps a heuristic's
// status, a recall, a tool turn, re-extracted signals or a skill's status
// change index nothing. Those show in the most recently updated heuristic
// (its time, status and counters), the newest turn and recall (turns and
// recalls grow without bound: an index lookup, not a count; a turn
// captured with a time older than the newest one shows with the next
// change) and a few counts of small tables.
func experienceSignature(ctx context.Context, tx store.Tx, project string) (string, error) {
	xv, err := tx.ExperienceVersion(ctx, project)
	if err != nil {
		return "", err
	}
	heur, err := tx.ListHeuristics(ctx, project, store.HeuristicFilter{Limit: 1})
	if err != nil {
		return "", err
	}
	turns, err := tx.ListTurns(ctx, project, store.TurnFilter{NewestFirst: true, Limit: 1})
	if err != nil {
		return "", err
	}
	recalls, err := tx.ListRecalls(ctx, project, store.RecallFilter{Limit: 1})
	if err != nil {
		return "", err
	}
	lesson, turn, recall := "-", "-", "-"
	if len(heur) > 0 {
		h := heur[0]
		lesson = fmt.Sprintf("%s@%s/%s/%d/%d/%d", h.ID, h.UpdatedAt.Format(time.RFC3339Nano), h.Status,
			h.HelpfulCount, h.MisleadingCount, h.RecallCount)
	}
	if len(turns) > 0 {
		turn = turns[0].ID + "@" + turns[0].Time.Format(time.RFC3339Nano)
	}
	if len(recalls) > 0 {
		recall = recalls[0].ID
	}
	var n [4]int64
	counts := []func() (int64, error){
		func() (int64, error) { return tx.CountSignals(ctx, project, store.SignalFilter{}) },
		func() (int64, error) { return tx.CountExperiences(ctx, project) },
		func() (int64, error) {
			return tx.CountSkills(ctx, project, store.SkillFilter{Status: experience.SkillActive})
		},
		func() (int64, error) {
			return tx.CountSkills(ctx, project, store.SkillFilter{Status: experience.SkillArchived})
		},
	}
	for i, count := range counts {
		if n[i], err = count(); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("%d.%s.%s.%s.%d.%d.%d.%d", xv, lesson, turn, recall, n[0], n[1], n[2], n[3]), nil
}
