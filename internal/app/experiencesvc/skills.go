package experiencesvc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/store"
)

// maxSkillHeuristics is the number of relevant heuristics a skill
// generation considers.
const maxSkillHeuristics = 8

// SkillResult reports a created, upgraded or changed skill.
type SkillResult struct {
	Skill experience.Skill `json:"skill"`
	// Created is true for a new skill, false for an upgrade or a change.
	Created bool `json:"created"`
	// Path is the SKILL.md file.
	Path string `json:"path"`
	// Adopted lists the heuristics the skill adopted, with their
	// promotions.
	Adopted []HeuristicChange `json:"adopted"`
	// Redacted counts secrets removed from the document.
	Redacted int `json:"redacted"`
}

// SkillGenerateInput asks the chat model for a skill from a task's
// experience (a new skill, or an upgrade of Skill).
type SkillGenerateInput struct {
	Project string `json:"project,omitempty"`
	TaskID  string `json:"bead_id"`
	// Skill is the name or id of a skill to upgrade; empty creates one.
	Skill string `json:"skill,omitempty"`
}

// GenerateSkill writes (or upgrades) a skill from a task's experience with
// the chat model. Without one, the agent can do it: ExtractionRequest with
// kind "skill".
func (s *Service) GenerateSkill(ctx context.Context, in SkillGenerateInput) (*SkillResult, error) {
	const op = "generate skill"
	now := s.env.Now()
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "bead_id", in.TaskID); err != nil {
		return nil, err
	}
	if s.chat == nil {
		return nil, &app.Error{Op: op, Kind: app.KindConflict, Message: "no chat model is configured",
			Hint: "configure [[model.chat]], or let the agent write the skill (extraction_request with kind skill)",
			Next: "extraction_request"}
	}
	exp, hs, existing, err := s.skillMaterial(ctx, op, project, in.TaskID, in.Skill)
	if err != nil {
		return nil, err
	}
	draft, err := experience.GenerateSkillWithModel(ctx, s.chat, exp, hs, existing)
	if err != nil {
		return nil, modelError(op, err)
	}
	return s.saveSkill(ctx, op, project, in.TaskID, draft, existing, now)
}

func (s *Service) skillRequest(ctx context.Context, op, project, taskID, skill string) (*experience.AgentTask, error) {
	exp, hs, existing, err := s.skillMaterial(ctx, op, project, taskID, skill)
	if err != nil {
		return nil, err
	}
	t := experience.AgentSkillTask(exp, hs, existing)
	return &t, nil
}

func (s *Service) submitSkill(ctx context.Context, op, project, taskID, skill string, raw json.RawMessage, now time.Time) (*SkillResult, error) {
	_, hs, existing, err := s.skillMaterial(ctx, op, project, taskID, skill)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(hs))
	for i, h := range hs {
		ids[i] = h.ID
	}
	draft, err := experience.ParseSkillJSON(raw, ids)
	if err != nil {
		var ee *experience.ExtractionError
		if errors.As(err, &ee) {
			return nil, &app.Error{Op: op, Kind: app.KindInvalid, Field: "result." + ee.Field, Message: ee.Message, Err: err}
		}
		return nil, app.Invalid(op, "result", "%s", err.Error())
	}
	return s.saveSkill(ctx, op, project, taskID, draft, existing, now)
}

// skillMaterial gathers what a skill is written from: the task's
// experience, the recallable heuristics most relevant to it, and the skill
// to upgrade.
func (s *Service) skillMaterial(ctx context.Context, op, project, taskID, skill string) (experience.TaskExperience,
	[]experience.Heuristic, *experience.Skill, error) {
	exp, err := s.GetExperience(ctx, project, taskID)
	if err != nil {
		return experience.TaskExperience{}, nil, nil, err
	}
	if err := app.ValidOptionalIDs(op, "skill", skill); err != nil {
		return *exp, nil, nil, err
	}
	var ids []string
	if query := strings.TrimSpace(exp.Goal + "\n" + exp.WorkingApproach); query != "" {
		r, err := s.recall(ctx, op, RecallInput{Project: project, Query: query, DryRun: true},
			map[experience.ItemKind]bool{experience.ItemHeuristic: true})
		if err != nil {
			return *exp, nil, nil, err
		}
		for _, it := range r.Items {
			ids = append(ids, it.RefID)
		}
	}
	var existing *experience.Skill
	hs := []experience.Heuristic{}
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		if skill != "" {
			sk, err := s.skill(ctx, tx, op, project, skill)
			if err != nil {
				return err
			}
			existing = &sk
		}
		for _, id := range ids {
			if len(hs) == maxSkillHeuristics {
				break
			}
			h, err := tx.GetHeuristic(ctx, project, id)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			hs = append(hs, h)
		}
		return nil
	})
	return *exp, hs, existing, err
}

// saveSkill stores a new skill (draft, version 1) or a new version of an
// existing one, adopts its heuristics (a candidate adopted by a skill
// becomes active), indexes it for recall, and writes its SKILL.md.
func (s *Service) saveSkill(ctx context.Context, op, project, taskID string, draft experience.SkillProposal,
	existing *experience.Skill, now time.Time) (*SkillResult, error) {
	name := ""
	if existing != nil {
		name = existing.Name
	} else {
		var err error
		if name, err = experience.SanitizeName(draft.Name); err != nil {
			return nil, app.Invalid(op, "result.name", "%s", err.Error())
		}
	}
	doc := draft.SkillDoc
	doc.Name = name
	content, redacted := experience.RedactSecrets(experience.RenderSkill(doc))
	parsed, err := experience.ParseSkill(content)
	if err != nil {
		return nil, app.Invalid(op, "result", "the skill does not make a valid SKILL.md: %s", err.Error())
	}
	text := skillText(parsed)
	vecs, err := s.embed(ctx, op, text)
	if err != nil {
		return nil, err
	}
	res := &SkillResult{Redacted: redacted, Adopted: []HeuristicChange{}}
	defer s.writers.lock("heuristics\x00" + project)()
	var after func()
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		res.Adopted = []HeuristicChange{}
		w, err := s.vecWriter(ctx, tx, project)
		if err != nil {
			return err
		}
		sk, err := tx.GetSkillByName(ctx, project, name)
		switch {
		case errors.Is(err, store.ErrNotFound):
			sk = experience.Skill{ID: app.NewID("skill-"), Project: project, Name: name, Status: experience.SkillDraft,
				SourceTaskID: taskID, CreatedAt: now, HeuristicIDs: []string{}}
			res.Created = true
		case err != nil:
			return err
		default:
			if sk, err = tx.LockSkill(ctx, project, sk.ID); err != nil {
				return err
			}
		}
		sk.Description, sk.WhenToUse, sk.Steps = parsed.Description, parsed.WhenToUse, parsed.Steps
		sk.Content, sk.Version, sk.UpdatedAt = content, sk.Version+1, now
		for _, id := range draft.HeuristicIDs {
			if !slices.Contains(sk.HeuristicIDs, id) {
				sk.HeuristicIDs = append(sk.HeuristicIDs, id)
			}
		}
		if res.Created {
			if ok, err := tx.InsertSkill(ctx, sk); err != nil {
				return err
			} else if !ok {
				return &app.Error{Op: op, Kind: app.KindConflict, Message: "a skill named " + name + " was created meanwhile; retry"}
			}
		} else if err := tx.UpdateSkill(ctx, sk); err != nil {
			return err
		}
		changelog := draft.Changelog
		if changelog == "" && res.Created {
			changelog = "created from task " + taskID
		}
		if _, err := tx.InsertSkillVersion(ctx, experience.SkillVersion{Project: project, SkillID: sk.ID, Version: sk.Version,
			Content: content, Changelog: changelog, SourceTaskID: taskID, CreatedAt: now}); err != nil {
			return err
		}
		for _, id := range draft.HeuristicIDs {
			h, err := tx.LockHeuristic(ctx, project, id)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			next, tr := s.cfg.Lifecycle.AdoptedBySkill(h, name, now)
			if tr != nil {
				next.UpdatedAt = now
				if err := tx.UpdateHeuristic(ctx, next); err != nil {
					return err
				}
			}
			res.Adopted = append(res.Adopted, HeuristicChange{HeuristicID: id, Status: next.Status, Rule: next.Rule,
				Transition: tr, Action: experience.EvidenceManual, Similarity: 1})
		}
		if err := w.put(ctx, tx, experience.ItemSkill, sk.ID, text, vecs[0], now); err != nil {
			return err
		}
		res.Skill = sk
		after, err = w.finish(ctx, tx)
		return err
	})
	if err != nil {
		return nil, err
	}
	after()
	if res.Path, err = s.writeSkillFile(res.Skill); err != nil {
		return nil, &app.Error{Op: op, Kind: app.KindInternal, Message: "the skill is stored but its SKILL.md could not be written: " + err.Error(), Err: err}
	}
	return res, nil
}

// skillText is what recall indexes of a skill.
func skillText(d experience.SkillDoc) string {
	return d.Name + "\n" + d.Description + "\n" + d.WhenToUse + "\n" + strings.Join(d.Steps, "\n")
}

// skillTextOf is skillText of a stored skill.
func skillTextOf(sk experience.Skill) string {
	return skillText(experience.SkillDoc{Name: sk.Name, Description: sk.Description, WhenToUse: sk.WhenToUse, Steps: sk.Steps})
}

// writeSkillFile writes a skill's SKILL.md under the skills directory
// (atomically: a temporary file renamed into place).
func (s *Service) writeSkillFile(sk experience.Skill) (string, error) {
	dir, err := experience.SkillDir(s.skillsDir, sk.Project, sk.Name)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "SKILL.md")
	tmp, err := os.CreateTemp(dir, ".SKILL.md-*")
	if err != nil {
		return "", err
	}
	_, werr := tmp.WriteString(sk.Content)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return path, nil
}

// SkillStatusInput changes a skill's lifecycle state.
type SkillStatusInput struct {
	Project string `json:"project,omitempty"`
	// Skill is the skill's name or id.
	Skill string `json:"skill"`
	// Status is active or archived (or draft, from archived).
	Status string `json:"status"`
}

// skillMoves lists the allowed skill transitions.
var skillMoves = map[experience.SkillStatus][]experience.SkillStatus{
	experience.SkillDraft:    {experience.SkillActive, experience.SkillArchived},
	experience.SkillActive:   {experience.SkillArchived},
	experience.SkillArchived: {experience.SkillActive, experience.SkillDraft},
}

// SetSkillStatus moves a skill through draft → active → archived (an
// archived skill may be reactivated). Only active skills are recalled.
func (s *Service) SetSkillStatus(ctx context.Context, in SkillStatusInput) (*SkillResult, error) {
	const op = "set skill status"
	now := s.env.Now()
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "skill", in.Skill); err != nil {
		return nil, err
	}
	to := experience.SkillStatus(strings.ToLower(strings.TrimSpace(in.Status)))
	if !slices.Contains(experience.SkillStatuses, to) {
		return nil, app.Invalid(op, "status", "unknown status %q (want draft, active or archived)", in.Status)
	}
	res := &SkillResult{Adopted: []HeuristicChange{}}
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		sk, err := s.skill(ctx, tx, op, project, in.Skill)
		if err != nil {
			return err
		}
		if sk, err = tx.LockSkill(ctx, project, sk.ID); err != nil {
			return err
		}
		if !slices.Contains(skillMoves[sk.Status], to) {
			return &app.Error{Op: op, Kind: app.KindConflict, Field: "status",
				Message: fmt.Sprintf("skill %s is %s and cannot become %s", sk.Name, sk.Status, to)}
		}
		sk.Status, sk.UpdatedAt = to, now
		if err := tx.UpdateSkill(ctx, sk); err != nil {
			return err
		}
		res.Skill = sk
		return nil
	})
	if err != nil {
		return nil, err
	}
	dir, err := experience.SkillDir(s.skillsDir, res.Skill.Project, res.Skill.Name)
	if err == nil {
		res.Path = filepath.Join(dir, "SKILL.md")
	}
	return res, nil
}

// skill finds a skill by id or name.
func (s *Service) skill(ctx context.Context, tx store.Tx, op, project, ref string) (experience.Skill, error) {
	sk, err := tx.GetSkill(ctx, project, ref)
	if errors.Is(err, store.ErrNotFound) {
		sk, err = tx.GetSkillByName(ctx, project, ref)
	}
	if errors.Is(err, store.ErrNotFound) {
		return sk, &app.Error{Op: op, Kind: app.KindNotFound, Field: "skill", Message: "no skill " + ref + " in project " + project,
			Next: "list_skills"}
	}
	return sk, err
}

// SkillQuery lists skills.
type SkillQuery struct {
	Project string `json:"project,omitempty"`
	Status  string `json:"status,omitempty"`
	Search  string `json:"search,omitempty"`
	Limit   int    `json:"limit,omitempty"`
	Offset  int    `json:"offset,omitempty"`
}

// SkillList is a page of skills by name.
type SkillList = app.Page[experience.Skill]

// ListSkills lists skills by name.
func (s *Service) ListSkills(ctx context.Context, q SkillQuery) (*SkillList, error) {
	const op = "list skills"
	project, limit, err := s.env.PageQuery(op, q.Project, q.Limit, q.Offset)
	if err != nil {
		return nil, err
	}
	f := store.SkillFilter{Search: q.Search, Limit: limit, Offset: q.Offset}
	if q.Status != "" {
		f.Status = experience.SkillStatus(strings.ToLower(q.Status))
		if !slices.Contains(experience.SkillStatuses, f.Status) {
			return nil, app.Invalid(op, "status", "unknown status %q (want draft, active or archived)", q.Status)
		}
	}
	if err := app.ValidText(op, "search", q.Search, app.MaxIDLen, false); err != nil {
		return nil, err
	}
	return app.ListPage(ctx, s.env, op, project, limit, q.Offset,
		func(tx store.Tx) (int64, error) { return tx.CountSkills(ctx, project, f) },
		func(tx store.Tx) ([]experience.Skill, error) { return tx.ListSkills(ctx, project, f) })
}

// SkillDetail is a skill with its versions and adopted heuristics.
type SkillDetail struct {
	Skill      experience.Skill          `json:"skill"`
	Versions   []experience.SkillVersion `json:"versions"`
	Heuristics []experience.Heuristic    `json:"heuristics"`
	Path       string                    `json:"path"`
}

// GetSkill returns a skill (by id or name) with its versions and the
// heuristics it adopted.
func (s *Service) GetSkill(ctx context.Context, project, ref string) (*SkillDetail, error) {
	const op = "get skill"
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "skill", ref); err != nil {
		return nil, err
	}
	d := &SkillDetail{Heuristics: []experience.Heuristic{}}
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		sk, err := s.skill(ctx, tx, op, project, ref)
		if err != nil {
			return err
		}
		d.Skill = sk
		if d.Versions, err = tx.ListSkillVersions(ctx, project, sk.ID); err != nil {
			return err
		}
		for _, id := range sk.HeuristicIDs {
			h, err := tx.GetHeuristic(ctx, project, id)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			d.Heuristics = append(d.Heuristics, h)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if dir, err := experience.SkillDir(s.skillsDir, project, d.Skill.Name); err == nil {
		d.Path = filepath.Join(dir, "SKILL.md")
	}
	return d, nil
}

// SkillExportInput selects skills to export.
type SkillExportInput struct {
	Project string `json:"project,omitempty"`
	// Names are skill names or ids; empty exports every skill.
	Names []string `json:"names,omitempty"`
}

// SkillExportResult reports an export.
type SkillExportResult struct {
	Project    string   `json:"project"`
	Skills     []string `json:"skills"`
	Heuristics int      `json:"heuristics"`
}

// ExportSkills writes a skill bundle (kaizen-skill-bundle v1): the skills
// with their versions and adopted heuristics.
func (s *Service) ExportSkills(ctx context.Context, w io.Writer, in SkillExportInput) (*SkillExportResult, error) {
	const op = "export skills"
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	b := experience.Bundle{Format: experience.BundleFormat, Version: experience.BundleVersion, ExportedAt: s.env.Now(),
		Project: project, Skills: []experience.BundledSkill{}}
	res := &SkillExportResult{Project: project, Skills: []string{}}
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		var skills []experience.Skill
		if len(in.Names) == 0 {
			all, err := tx.ListSkills(ctx, project, store.SkillFilter{})
			if err != nil {
				return err
			}
			skills = all
		}
		for _, n := range in.Names {
			sk, err := s.skill(ctx, tx, op, project, n)
			if err != nil {
				return err
			}
			skills = append(skills, sk)
		}
		for _, sk := range skills {
			vs, err := tx.ListSkillVersions(ctx, project, sk.ID)
			if err != nil {
				return err
			}
			bs := experience.BundledSkill{Skill: sk, Versions: vs, Heuristics: []experience.Heuristic{}}
			for _, id := range sk.HeuristicIDs {
				h, err := tx.GetHeuristic(ctx, project, id)
				if errors.Is(err, store.ErrNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				bs.Heuristics = append(bs.Heuristics, h)
			}
			res.Heuristics += len(bs.Heuristics)
			res.Skills = append(res.Skills, sk.Name)
			b.Skills = append(b.Skills, bs)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := experience.WriteBundle(w, b); err != nil {
		return nil, &app.Error{Op: op, Kind: app.KindInternal, Message: err.Error(), Err: err}
	}
	return res, nil
}

// SkillImportInput imports a bundle into a project.
type SkillImportInput struct {
	Project string `json:"project,omitempty"`
}

// SkillImportResult reports an import.
type SkillImportResult struct {
	Project    string   `json:"project"`
	Imported   []string `json:"imported"`
	Skipped    []string `json:"skipped"`
	Heuristics int      `json:"heuristics"`
}

// maxBundleBytes bounds an imported bundle.
const maxBundleBytes = 32 << 20

// ImportSkills imports a skill bundle: skills whose name the project
// already has are skipped (import is idempotent), heuristics are added
// when their id is new, and every imported item is indexed for recall.
func (s *Service) ImportSkills(ctx context.Context, r io.Reader, in SkillImportInput) (*SkillImportResult, error) {
	const op = "import skills"
	now := s.env.Now()
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	b, err := experience.ReadBundle(r, maxBundleBytes)
	if err != nil {
		return nil, &app.Error{Op: op, Kind: app.KindInvalid, Field: "bundle", Message: err.Error(), Err: err}
	}
	app.ScrubStruct(&b) // an imported bundle is untrusted text

	// Embed everything before the transaction.
	var texts []string
	for _, bs := range b.Skills {
		texts = append(texts, skillTextOf(bs.Skill))
		for _, h := range bs.Heuristics {
			texts = append(texts, experience.HeuristicText(h.Kind, h.Trigger, h.Rule))
		}
	}
	var vecs [][]float32
	if len(texts) > 0 {
		if vecs, err = s.embed(ctx, op, texts...); err != nil {
			return nil, err
		}
	}
	res := &SkillImportResult{Project: project, Imported: []string{}, Skipped: []string{}}
	var imported []experience.Skill
	defer s.writers.lock("heuristics\x00" + project)()
	var after func()
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		res.Imported, res.Skipped, res.Heuristics, imported = []string{}, []string{}, 0, nil
		w, err := s.vecWriter(ctx, tx, project)
		if err != nil {
			return err
		}
		next := 0
		for _, bs := range b.Skills {
			stext, svec := texts[next], vecs[next]
			next++
			htexts, hvecs := texts[next:next+len(bs.Heuristics)], vecs[next:next+len(bs.Heuristics)]
			next += len(bs.Heuristics)
			for i, h := range bs.Heuristics {
				h.Project = project
				ok, err := tx.InsertHeuristic(ctx, h)
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
				res.Heuristics++
				if _, err := tx.InsertEvidence(ctx, experience.HeuristicEvidence{ID: app.NewID("hev-"), Project: project,
					HeuristicID: h.ID, Action: experience.EvidenceManual, Text: "imported with skill " + bs.Skill.Name,
					Similarity: 1, CreatedAt: now}); err != nil {
					return err
				}
				if h.Status != experience.StatusArchived {
					if err := w.put(ctx, tx, experience.ItemHeuristic, h.ID, htexts[i], hvecs[i], now); err != nil {
						return err
					}
				}
			}
			sk := bs.Skill
			sk.Project = project
			ok, err := tx.InsertSkill(ctx, sk)
			if err != nil {
				return err
			}
			if !ok {
				res.Skipped = append(res.Skipped, sk.Name)
				continue
			}
			for _, v := range bs.Versions {
				v.Project, v.SkillID = project, sk.ID
				if _, err := tx.InsertSkillVersion(ctx, v); err != nil {
					return err
				}
			}
			if err := w.put(ctx, tx, experience.ItemSkill, sk.ID, stext, svec, now); err != nil {
				return err
			}
			res.Imported = append(res.Imported, sk.Name)
			imported = append(imported, sk)
		}
		after, err = w.finish(ctx, tx)
		return err
	})
	if err != nil {
		return nil, err
	}
	after()
	for _, sk := range imported {
		if _, err := s.writeSkillFile(sk); err != nil {
			return nil, &app.Error{Op: op, Kind: app.KindInternal, Message: "skills are stored but a SKILL.md could not be written: " + err.Error(), Err: err}
		}
	}
	return res, nil
}
