package sqlstore

import (
	"context"
	"slices"

	"github.com/kaizenhq/kaizen/experience"
)

// batchGet reads the rows of ids (deduplicated) with lists (seekIn) of bodyChunk
// ids padded with "" (ids are never empty), so the statement cache holds
// one query per table.
func batchGet[T any](ctx context.Context, t *Tx, what, cols, table, project string, ids []string,
	scan func(scanner) (T, error)) ([]T, error) {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	out := make([]T, 0, len(ids))
	// Lists of bodyChunk ids: a recall's candidates of a kind (up to twice
	// recallPool) in one query.
	for chunk := range slices.Chunk(ids, bodyChunk) {
		err := each(ctx, t, what, scan, func(v T) error { out = append(out, v); return nil },
			t.seekIn(cols, table, []string{"project"}, "id", bodyChunk), padArgsN([]any{project}, chunk, "", bodyChunk)...)
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// GetHeuristics implements store.ExperienceStorage.
func (t *Tx) GetHeuristics(ctx context.Context, project string, ids []string) ([]experience.Heuristic, error) {
	return batchGet(ctx, t, "heuristics", heuristicCols, "heuristics", project, ids, scanHeuristic)
}

// GetTurns implements store.ExperienceStorage.
func (t *Tx) GetTurns(ctx context.Context, project string, ids []string) ([]experience.Turn, error) {
	return batchGet(ctx, t, "turns", turnCols, "experience_turns", project, ids, scanTurn)
}

// GetSkills implements store.ExperienceStorage.
func (t *Tx) GetSkills(ctx context.Context, project string, ids []string) ([]experience.Skill, error) {
	return batchGet(ctx, t, "skills", skillCols, "skills", project, ids, scanSkill)
}
