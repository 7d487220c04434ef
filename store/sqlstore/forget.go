package sqlstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/kaizenhq/kaizen/experience"
)

// The records a user asks kaizen to forget (store.ForgetStorage).

// DeleteOutcome implements store.ForgetStorage.
func (t *Tx) DeleteOutcome(ctx context.Context, project, id string) error {
	return t.change(ctx, "delete outcome "+id, `DELETE FROM outcomes WHERE project = ? AND id = ?`, project, id)
}

// DeleteMaturityFeedback implements store.ForgetStorage.
func (t *Tx) DeleteMaturityFeedback(ctx context.Context, project, id string) error {
	if err := t.flushAppends(ctx); err != nil {
		return err
	}
	return t.change(ctx, "delete maturity feedback "+id, `DELETE FROM maturity_feedback WHERE project = ? AND id = ?`, project, id)
}

// DeleteTurn implements store.ForgetStorage.
func (t *Tx) DeleteTurn(ctx context.Context, project, id string) error {
	return t.change(ctx, "delete turn "+id, `DELETE FROM experience_turns WHERE project = ? AND id = ?`, project, id)
}

// DeleteSignal implements store.ForgetStorage.
func (t *Tx) DeleteSignal(ctx context.Context, project, id string) error {
	return t.change(ctx, "delete signal "+id, `DELETE FROM feedback_signals WHERE project = ? AND id = ?`, project, id)
}

// DeleteHeuristic implements store.ForgetStorage: the heuristic, then
// its evidence, support and verdicts.
func (t *Tx) DeleteHeuristic(ctx context.Context, project, id string) error {
	if err := t.change(ctx, "delete heuristic "+id, `DELETE FROM heuristics WHERE project = ? AND id = ?`, project, id); err != nil {
		return err
	}
	for _, table := range []string{"heuristic_evidence", "heuristic_support", "heuristic_feedback"} {
		if _, err := t.exec(ctx, `DELETE FROM `+table+` WHERE project = ? AND heuristic_id = ?`, project, id); err != nil {
			return fmt.Errorf("delete heuristic %s: %s: %w", id, table, err)
		}
	}
	return nil
}

// SetExperienceLessons implements store.ForgetStorage.
func (t *Tx) SetExperienceLessons(ctx context.Context, project, taskID string, lessons []experience.TransferableHeuristic) error {
	v, err := jsonSlice("heuristics", lessons)
	if err != nil {
		return err
	}
	return t.change(ctx, "set lessons of "+taskID, `UPDATE task_experiences SET heuristics = ? WHERE project = ? AND task_id = ?`,
		v, project, taskID)
}

// DeleteSkill implements store.ForgetStorage: the skill and its versions.
func (t *Tx) DeleteSkill(ctx context.Context, project, id string) error {
	if err := t.change(ctx, "delete skill "+id, `DELETE FROM skills WHERE project = ? AND id = ?`, project, id); err != nil {
		return err
	}
	if _, err := t.exec(ctx, `DELETE FROM skill_versions WHERE project = ? AND skill_id = ?`, project, id); err != nil {
		return fmt.Errorf("delete skill %s: versions: %w", id, err)
	}
	return nil
}

// ForgetRecallItem implements store.ForgetStorage: each recall that
// considered the item is rewritten without it.
func (t *Tx) ForgetRecallItem(ctx context.Context, project, refID string) (int64, error) {
	ids, err := many(ctx, t, "recall items", func(s scanner) (string, error) {
		var id string
		return id, s.Scan(&id)
	}, `SELECT recall_id FROM recall_items WHERE project = ? AND ref_id = ? ORDER BY recall_id`, project, refID)
	if err != nil {
		return 0, err
	}
	for _, id := range ids {
		r, err := t.GetRecall(ctx, project, id)
		if err != nil {
			return 0, fmt.Errorf("forget recall item %s: %w", refID, err)
		}
		r.Items = slices.DeleteFunc(r.Items, func(it experience.RecallItem) bool { return it.RefID == refID })
		items, err := jsonSlice("recall items", r.Items)
		if err != nil {
			return 0, err
		}
		if err := t.change(ctx, "forget recall item "+refID, `UPDATE recalls SET items = ? WHERE project = ? AND id = ?`,
			items, project, id); err != nil {
			return 0, err
		}
	}
	if _, err := t.exec(ctx, `DELETE FROM recall_items WHERE project = ? AND ref_id = ?`, project, refID); err != nil {
		return 0, fmt.Errorf("forget recall item %s: %w", refID, err)
	}
	return int64(len(ids)), nil
}
