package experiencesvc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/internal/veccache"
	"github.com/kaizenhq/kaizen/store"
)

// The data a user owns: turns, memories, heuristics and skills can be
// forgotten, and a heuristic's text edited. Each action is one
// transaction that also removes what would otherwise still carry the
// forgotten text or point at the forgotten record: search documents,
// vectors (the store's and the cached indexes), recall histories, signals
// quoting a turn, skills adopting a heuristic.

// ForgetResult reports what forgetting a record removed.
type ForgetResult struct {
	Project string `json:"project"`
	// Kind is turn, memory, heuristic or skill.
	Kind string `json:"kind"`
	ID   string `json:"id"`
	// Unindexed is true when the record was in the recall indexes (full
	// text and vectors) and left them.
	Unindexed bool `json:"unindexed"`
	// Signals counts the feedback signals removed with a turn (those
	// quoting it).
	Signals int `json:"signals_removed"`
	// Recalls counts the stored recalls the record was removed from.
	Recalls int64 `json:"recalls_changed"`
	// Skills counts the skills that no longer adopt a deleted heuristic;
	// Heuristics the heuristics no longer superseded by it.
	Skills     int `json:"skills_changed"`
	Heuristics int `json:"heuristics_changed"`
	// Lessons counts the lessons removed from task experiences with a
	// heuristic: the transferable heuristics that created it or were
	// merged into it.
	Lessons int `json:"lessons_removed"`
}

// DeleteTurn forgets a captured turn: the turn, its memory in the recall
// indexes (full text and vector), the feedback signals of its task that
// quote it (or, without a quote, cite its exchange), and its place in
// stored recalls. It leaves later exports. The task's extracted experience,
// if any, is kept: it is a summary, not the turn.
func (s *Service) DeleteTurn(ctx context.Context, in app.ForgetInput) (*ForgetResult, error) {
	const op = "delete turn"
	s.SettleRecalls()
	project, err := s.forgetInput(op, "id", in)
	if err != nil {
		return nil, err
	}
	res := &ForgetResult{Project: project, Kind: "turn", ID: in.ID}
	after, err := s.forget(ctx, op, project, func(tx store.Tx, w *vecWriter) error {
		t, err := tx.GetTurn(ctx, project, in.ID)
		if errors.Is(err, store.ErrNotFound) {
			return notFound(op, "turn", in.ID, project, "list_turns")
		}
		if err != nil {
			return err
		}
		if err := tx.DeleteTurn(ctx, project, t.ID); err != nil {
			return err
		}
		if res.Unindexed, err = w.removeIndexed(ctx, tx, experience.ItemMemory, t.ID); err != nil {
			return err
		}
		signals, err := tx.ListSignals(ctx, project, store.SignalFilter{TaskID: t.TaskID})
		if err != nil {
			return err
		}
		for _, g := range signals {
			quoted := strings.TrimSpace(g.Evidence) != "" && strings.Contains(t.Content, strings.TrimSpace(g.Evidence))
			cited := strings.TrimSpace(g.Evidence) == "" && t.TurnID != "" && g.TurnID == t.TurnID
			if quoted || cited {
				if err := tx.DeleteSignal(ctx, project, g.ID); err != nil {
					return err
				}
				res.Signals++
			}
		}
		res.Recalls, err = tx.ForgetRecallItem(ctx, project, t.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	after()
	return res, nil
}

// ForgetMemory takes a captured turn out of recall (its full-text document
// and vector, and its place in stored recalls) and keeps the turn itself
// for the task's record and extraction. Forgetting a turn that is not a
// memory changes nothing and reports Unindexed false.
func (s *Service) ForgetMemory(ctx context.Context, in app.ForgetInput) (*ForgetResult, error) {
	const op = "forget memory"
	s.SettleRecalls()
	project, err := s.forgetInput(op, "id", in)
	if err != nil {
		return nil, err
	}
	res := &ForgetResult{Project: project, Kind: "memory", ID: in.ID}
	after, err := s.forget(ctx, op, project, func(tx store.Tx, w *vecWriter) error {
		if _, err := tx.GetTurn(ctx, project, in.ID); errors.Is(err, store.ErrNotFound) {
			return notFound(op, "turn", in.ID, project, "list_turns")
		} else if err != nil {
			return err
		}
		var err error
		if res.Unindexed, err = w.removeIndexed(ctx, tx, experience.ItemMemory, in.ID); err != nil {
			return err
		}
		res.Recalls, err = tx.ForgetRecallItem(ctx, project, in.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	after()
	return res, nil
}

// DeleteHeuristic forgets a heuristic: the heuristic with its evidence,
// supporting tasks and verdicts, its search document and vector (so it is
// neither recalled nor merged into again), its place in stored recalls,
// its adoption by skills, and the pointer of heuristics it superseded. It
// leaves later exports.
func (s *Service) DeleteHeuristic(ctx context.Context, in app.ForgetInput) (*ForgetResult, error) {
	const op = "delete heuristic"
	s.SettleRecalls()
	project, err := s.forgetInput(op, "heuristic_id", in)
	if err != nil {
		return nil, err
	}
	now := s.env.Now()
	res := &ForgetResult{Project: project, Kind: "heuristic", ID: in.ID}
	after, err := s.forget(ctx, op, project, func(tx store.Tx, w *vecWriter) error {
		h, err := s.heuristic(ctx, tx, op, project, in.ID, true)
		if err != nil {
			return err
		}
		evidence, err := tx.ListEvidence(ctx, project, h.ID)
		if err != nil {
			return err
		}
		if err := tx.DeleteHeuristic(ctx, project, h.ID); err != nil {
			return err
		}
		if res.Lessons, err = forgetLessons(ctx, tx, project, h, evidence); err != nil {
			return err
		}
		if res.Unindexed, err = w.removeIndexed(ctx, tx, experience.ItemHeuristic, h.ID); err != nil {
			return err
		}
		if res.Recalls, err = tx.ForgetRecallItem(ctx, project, h.ID); err != nil {
			return err
		}
		var superseded []experience.Heuristic
		if err := tx.EachHeuristic(ctx, project, nil, func(x experience.Heuristic) error {
			if x.SupersededBy == h.ID {
				superseded = append(superseded, x)
			}
			return nil
		}); err != nil {
			return err
		}
		for _, x := range superseded {
			x.SupersededBy, x.UpdatedAt = "", now
			if err := tx.UpdateHeuristic(ctx, x); err != nil {
				return err
			}
			res.Heuristics++
		}
		var adopting []experience.Skill
		for offset := 0; ; offset += 500 {
			page, err := tx.ListSkills(ctx, project, store.SkillFilter{Limit: 500, Offset: offset})
			if err != nil {
				return err
			}
			for _, sk := range page {
				if slices.Contains(sk.HeuristicIDs, h.ID) {
					adopting = append(adopting, sk)
				}
			}
			if len(page) < 500 {
				break
			}
		}
		for _, sk := range adopting {
			sk.HeuristicIDs = slices.DeleteFunc(slices.Clone(sk.HeuristicIDs), func(id string) bool { return id == h.ID })
			sk.UpdatedAt = now
			if err := tx.UpdateSkill(ctx, sk); err != nil {
				return err
			}
			res.Skills++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	after()
	return res, nil
}

// forgetLessons removes, from the task experiences that fed a heuristic,
// the lessons it was made of: each evidence record names its task and
// ends with the lesson's rule ("rule: …", see evidenceText).
func forgetLessons(ctx context.Context, tx store.Tx, project string, h experience.Heuristic, evidence []experience.HeuristicEvidence) (int, error) {
	rules := map[string][]string{} // task → rules
	add := func(task, rule string) {
		if task != "" && rule != "" && !slices.Contains(rules[task], rule) {
			rules[task] = append(rules[task], rule)
		}
	}
	add(h.SourceTaskID, h.Rule)
	for _, ev := range evidence {
		if i := strings.LastIndex(ev.Text, "rule: "); i >= 0 && (i == 0 || ev.Text[i-1] == '\n') {
			add(ev.TaskID, strings.TrimSpace(ev.Text[i+len("rule: "):]))
		}
	}
	removed := 0
	tasks := make([]string, 0, len(rules))
	for task := range rules {
		tasks = append(tasks, task)
	}
	slices.Sort(tasks)
	for _, task := range tasks {
		x, err := tx.GetExperience(ctx, project, task)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return removed, err
		}
		kept := slices.DeleteFunc(slices.Clone(x.Heuristics), func(l experience.TransferableHeuristic) bool {
			return slices.Contains(rules[task], strings.TrimSpace(l.Rule))
		})
		if len(kept) == len(x.Heuristics) {
			continue
		}
		removed += len(x.Heuristics) - len(kept)
		if err := tx.SetExperienceLessons(ctx, project, task, kept); err != nil {
			return removed, err
		}
	}
	return removed, nil
}

// DeleteSkill forgets a skill (by id or name): the skill with its
// versions, its search document and vector, its place in stored recalls,
// and its SKILL.md file. It leaves later exports and skill bundles.
func (s *Service) DeleteSkill(ctx context.Context, in app.ForgetInput) (*ForgetResult, error) {
	const op = "delete skill"
	s.SettleRecalls()
	project, err := s.forgetInput(op, "skill", in)
	if err != nil {
		return nil, err
	}
	res := &ForgetResult{Project: project, Kind: "skill"}
	var name string
	after, err := s.forget(ctx, op, project, func(tx store.Tx, w *vecWriter) error {
		sk, err := s.skill(ctx, tx, op, project, in.ID)
		if err != nil {
			return err
		}
		res.ID, name = sk.ID, sk.Name
		if err := tx.DeleteSkill(ctx, project, sk.ID); err != nil {
			return err
		}
		if res.Unindexed, err = w.removeIndexed(ctx, tx, experience.ItemSkill, sk.ID); err != nil {
			return err
		}
		res.Recalls, err = tx.ForgetRecallItem(ctx, project, sk.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	after()
	if dir, err := experience.SkillDir(s.skillsDir, project, name); err == nil {
		if err := os.Remove(filepath.Join(dir, "SKILL.md")); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.env.Logger.Warn("delete skill: the SKILL.md file stays", "skill", name, "err", err)
		}
		_ = os.Remove(dir) // only when empty
	}
	return res, nil
}

// HeuristicEditInput changes the text of a heuristic. Empty fields keep
// their value.
type HeuristicEditInput struct {
	Project     string `json:"project,omitempty"`
	HeuristicID string `json:"heuristic_id"`
	Trigger     string `json:"trigger,omitempty"`
	Rule        string `json:"rule,omitempty"`
	Why         string `json:"why,omitempty"`
}

// EditHeuristic rewrites a heuristic's trigger, rule or why (a user's
// correction). Its recall index follows the new text (unless it is
// archived and so not indexed), and an evidence record of action "manual"
// keeps the previous text in its history. Its state and counters stay.
func (s *Service) EditHeuristic(ctx context.Context, in HeuristicEditInput) (*HeuristicActionResult, error) {
	const op = "edit heuristic"
	s.SettleRecalls()
	app.ScrubFields(&in.Trigger, &in.Rule, &in.Why)
	now := s.env.Now()
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "heuristic_id", in.HeuristicID); err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.Trigger+in.Rule+in.Why) == "" {
		return nil, app.Invalid(op, "rule", "give at least one of trigger, rule or why")
	}
	for _, f := range []struct{ name, v string }{{"trigger", in.Trigger}, {"rule", in.Rule}, {"why", in.Why}} {
		if err := app.ValidText(op, f.name, f.v, app.MaxTextLen, false); err != nil {
			return nil, err
		}
	}
	// The new text is embedded before the transaction (the model call must
	// not hold the writer); a concurrent edit of the kind is not possible,
	// as the kind does not change.
	var cur experience.Heuristic
	if err := s.env.View(ctx, op, func(tx store.Tx) error {
		var err error
		cur, err = s.heuristic(ctx, tx, op, project, in.HeuristicID, false)
		return err
	}); err != nil {
		return nil, err
	}
	next := edited(cur, in)
	text := experience.HeuristicText(next.Kind, next.Trigger, next.Rule)
	vecs, err := s.embed(ctx, op, text)
	if err != nil {
		return nil, err
	}
	res := &HeuristicActionResult{}
	after, err := s.forget(ctx, op, project, func(tx store.Tx, w *vecWriter) error {
		h, err := s.heuristic(ctx, tx, op, project, in.HeuristicID, true)
		if err != nil {
			return err
		}
		next := edited(h, in)
		next.UpdatedAt = now
		if err := tx.UpdateHeuristic(ctx, next); err != nil {
			return err
		}
		ev := experience.HeuristicEvidence{ID: app.NewID("hev-"), Project: project, HeuristicID: h.ID,
			Action: experience.EvidenceManual, Similarity: 1, CreatedAt: now,
			Text: "edited by the user; before: trigger: " + h.Trigger + "\nrule: " + h.Rule}
		if _, err := tx.InsertEvidence(ctx, ev); err != nil {
			return err
		}
		if next.Status != experience.StatusArchived {
			newText := experience.HeuristicText(next.Kind, next.Trigger, next.Rule)
			vec := vecs[0]
			if newText != text { // edited meanwhile: embed what is stored
				v, err := s.embed(ctx, op, newText)
				if err != nil {
					return err
				}
				vec = v[0]
			}
			if err := w.put(ctx, tx, experience.ItemHeuristic, h.ID, newText, vec, now); err != nil {
				return err
			}
		}
		res.Heuristic = next
		return nil
	})
	if err != nil {
		return nil, err
	}
	after()
	return res, nil
}

// edited applies an edit's non-empty fields.
func edited(h experience.Heuristic, in HeuristicEditInput) experience.Heuristic {
	if t := strings.TrimSpace(in.Trigger); t != "" {
		h.Trigger = t
	}
	if r := strings.TrimSpace(in.Rule); r != "" {
		h.Rule = r
	}
	if w := strings.TrimSpace(in.Why); w != "" {
		h.Why = w
	}
	return h
}

// forgetInput validates a forget action's input and resolves its project.
func (s *Service) forgetInput(op, field string, in app.ForgetInput) (string, error) {
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return "", err
	}
	return project, app.ValidID(op, field, in.ID)
}

// forget runs fn in one write transaction with a vector writer, and
// returns what to run after the commit (the cached indexes' update).
func (s *Service) forget(ctx context.Context, op, project string, fn func(store.Tx, *vecWriter) error) (func(), error) {
	var after func()
	err := s.env.Update(ctx, op, func(tx store.Tx) error {
		w, err := s.vecWriter(ctx, tx, project)
		if err != nil {
			return err
		}
		if err := fn(tx, w); err != nil {
			return err
		}
		after, err = w.finish(ctx, tx)
		return err
	})
	return after, err
}

// removeIndexed drops an item from full text and vectors and reports
// whether it was indexed.
func (w *vecWriter) removeIndexed(ctx context.Context, tx store.Tx, kind experience.ItemKind, id string) (bool, error) {
	removed, err := tx.DeleteSearchDoc(ctx, w.project, kind, id)
	if err != nil || !removed {
		return false, err
	}
	w.changes = append(w.changes, veccache.Change{Kind: kind, ID: id, Remove: true})
	return true, nil
}

// notFound is the error of a forget action naming an unknown record.
func notFound(op, what, id, project, next string) error {
	return &app.Error{Op: op, Kind: app.KindNotFound, Field: "id", Message: "no " + what + " " + id + " in project " + project, Next: next}
}
