package experiencesvc

import (
	"context"
	"errors"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/store"
)

// IndexImported puts the full-text document of an item an import inserted
// in tx, as the action that created the item would have: a heuristic that
// is not archived, a skill, a turn worth recalling as a memory. Its vector
// is computed after the commit by Reembed (the item's document has no
// vector yet, so it is stale).
func (s *Service) IndexImported(ctx context.Context, tx store.Tx, project string, kind experience.ItemKind, id string) error {
	switch kind {
	case experience.ItemHeuristic:
		h, err := tx.GetHeuristic(ctx, project, id)
		if err != nil || h.Status == experience.StatusArchived {
			return err
		}
	case experience.ItemMemory:
		t, err := tx.GetTurn(ctx, project, id)
		if err != nil || !memoryWorthy(t) {
			return err
		}
	}
	text, err := itemText(ctx, tx, project, kind, id)
	if err != nil {
		return err
	}
	return tx.PutSearchDoc(ctx, project, kind, id, experience.SearchText(text))
}

// AfterImport completes an import of experience records into a project
// once it committed: the vectors of the imported items (Reembed), the
// SKILL.md files of the imported skills, and no cached index left stale.
func (s *Service) AfterImport(ctx context.Context, project string, skillIDs []string) error {
	if _, err := s.Reembed(ctx, project); err != nil {
		return err
	}
	var skills []experience.Skill
	err := s.env.View(ctx, "import", func(tx store.Tx) error {
		for _, id := range skillIDs {
			sk, err := tx.GetSkill(ctx, project, id)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			skills = append(skills, sk)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, sk := range skills {
		if _, err := s.writeSkillFile(sk); err != nil {
			return err
		}
	}
	return nil
}

// SkillsDir is the directory of the SKILL.md files.
func (s *Service) SkillsDir() string { return s.skillsDir }
