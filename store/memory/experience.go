package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/store"
)

// experienceData is one project's experience records, keyed by id (task
// experiences by task id, skill versions by skill id and version, search
// documents and embeddings by kind and ref id), with the indexes the keyed
// listings use. Every change goes through the undo log.
type experienceData struct {
	turns       map[string]*experience.Turn
	turnsByTask index

	signals       map[string]*experience.FeedbackSignal
	signalsByTask index

	experiences map[string]*experience.TaskExperience

	heuristics          map[string]*experience.Heuristic
	evidence            map[string]*experience.HeuristicEvidence
	evidenceByHeuristic index
	support             map[string]*support // heuristic id + "\x00" + task id
	supportByHeuristic  index
	feedback            map[string]*experience.HeuristicFeedback
	feedbackByHeuristic index

	recalls      map[string]*experience.RecallEvent
	recallsByRef index

	skills          map[string]*experience.Skill
	skillByName     map[string]string
	skillVersions   map[string]*experience.SkillVersion // skill id + "\x00" + version
	versionsBySkill index

	embeddings map[string]*store.Embedding // kind + "\x00" + ref id
	docs       map[string]*searchDoc       // kind + "\x00" + ref id
	// postings maps kind + "\x00" + term to the ref ids of the documents
	// holding the term; docTerms counts the terms of a kind's documents.
	postings index
	docTerms map[experience.ItemKind]int64
	docCount map[experience.ItemKind]int64

	version int64 // store.ExperienceStorage.ExperienceVersion
	// embVersions and removals: the version of each vector's last write
	// and of each vector's removal (store.ExperienceStorage.EmbeddingChanges),
	// by kind + "\x00" + ref id.
	embVersions map[string]int64
	removals    map[string]int64
}

// support is one task supporting a heuristic.
type support struct {
	TaskID string
	At     time.Time
}

func newExperienceData() *experienceData {
	return &experienceData{
		turns: map[string]*experience.Turn{}, turnsByTask: index{},
		signals: map[string]*experience.FeedbackSignal{}, signalsByTask: index{},
		experiences: map[string]*experience.TaskExperience{},
		heuristics:  map[string]*experience.Heuristic{},
		evidence:    map[string]*experience.HeuristicEvidence{}, evidenceByHeuristic: index{},
		support: map[string]*support{}, supportByHeuristic: index{},
		feedback: map[string]*experience.HeuristicFeedback{}, feedbackByHeuristic: index{},
		recalls: map[string]*experience.RecallEvent{}, recallsByRef: index{},
		skills: map[string]*experience.Skill{}, skillByName: map[string]string{},
		skillVersions: map[string]*experience.SkillVersion{}, versionsBySkill: index{},
		embeddings: map[string]*store.Embedding{}, embVersions: map[string]int64{}, removals: map[string]int64{},
		docs: map[string]*searchDoc{}, postings: index{},
		docTerms: map[experience.ItemKind]int64{}, docCount: map[experience.ItemKind]int64{},
	}
}

// listed reports whether the project holds experience data.
func (x *experienceData) listed() bool {
	return len(x.turns)+len(x.signals)+len(x.experiences)+len(x.heuristics)+len(x.evidence)+len(x.support)+
		len(x.feedback)+len(x.recalls)+len(x.skills)+len(x.skillVersions)+len(x.embeddings)+len(x.docs) > 0
}

// exp returns the project's experience records for reading, nil when the
// project holds nothing.
func (t *tx) exp(ctx context.Context, project string) (*experienceData, error) {
	p, err := t.read(ctx, project)
	if err != nil || p == nil {
		return nil, err
	}
	return p.exp, nil
}

// expWrite returns the project's experience records for writing.
func (t *tx) expWrite(ctx context.Context, project string) (*experienceData, error) {
	p, err := t.write(ctx, project)
	if err != nil {
		return nil, err
	}
	return p.exp, nil
}

// expExisting returns the records of a project for an update of an
// existing record, without creating the project.
func (t *tx) expExisting(ctx context.Context, project string) (*experienceData, error) {
	if err := t.writable(ctx); err != nil {
		return nil, err
	}
	if p := t.s.projects[project]; p != nil {
		return p.exp, nil
	}
	return nil, nil
}

// Copies: every slice is copied and never nil, times lose their monotonic
// reading.

func list[T any](s []T) []T {
	out := make([]T, len(s))
	copy(out, s)
	return out
}

func cloneTurn(v experience.Turn) experience.Turn {
	v.Time = wall(v.Time)
	return v
}

func cloneSignal(v experience.FeedbackSignal) experience.FeedbackSignal {
	v.CreatedAt = wall(v.CreatedAt)
	return v
}

func cloneExperience(v experience.TaskExperience) experience.TaskExperience {
	v.SuccessCriteria, v.FailedAttempts, v.Heuristics = strs(v.SuccessCriteria), list(v.FailedAttempts), list(v.Heuristics)
	v.Signals = list(v.Signals)
	for i := range v.Signals {
		v.Signals[i] = cloneSignal(v.Signals[i])
	}
	v.CreatedAt = wall(v.CreatedAt)
	return v
}

func cloneHeuristic(v experience.Heuristic) experience.Heuristic {
	v.LastRecalledAt, v.LastValidatedAt = timePtr(v.LastRecalledAt), timePtr(v.LastValidatedAt)
	v.CreatedAt, v.UpdatedAt = wall(v.CreatedAt), wall(v.UpdatedAt)
	return v
}

func cloneEvidence(v experience.HeuristicEvidence) experience.HeuristicEvidence {
	v.CreatedAt = wall(v.CreatedAt)
	return v
}

func cloneHeuristicFeedback(v experience.HeuristicFeedback) experience.HeuristicFeedback {
	v.CreatedAt = wall(v.CreatedAt)
	return v
}

func cloneRecall(v experience.RecallEvent) experience.RecallEvent {
	v.LiveSignals, v.Items = list(v.LiveSignals), list(v.Items)
	v.CreatedAt = wall(v.CreatedAt)
	return v
}

func cloneSkill(v experience.Skill) experience.Skill {
	v.Steps, v.HeuristicIDs = strs(v.Steps), strs(v.HeuristicIDs)
	v.CreatedAt, v.UpdatedAt = wall(v.CreatedAt), wall(v.UpdatedAt)
	return v
}

func cloneSkillVersion(v experience.SkillVersion) experience.SkillVersion {
	v.CreatedAt = wall(v.CreatedAt)
	return v
}

// Turns.

// InsertTurn implements store.ExperienceStorage.
func (t *tx) InsertTurn(ctx context.Context, v experience.Turn) (bool, error) {
	x, err := t.expWrite(ctx, v.Project)
	if err != nil {
		return false, err
	}
	if _, ok := x.turns[v.ID]; ok {
		return false, nil
	}
	put(t.undo, x.turns, v.ID, stored(v, cloneTurn))
	x.turnsByTask.add(t.undo, v.TaskID, v.ID)
	return true, nil
}

// GetTurn implements store.ExperienceStorage.
func (t *tx) GetTurn(ctx context.Context, project, id string) (experience.Turn, error) {
	x, err := t.exp(ctx, project)
	if err != nil {
		return experience.Turn{}, err
	}
	if x != nil {
		if v, ok := x.turns[id]; ok {
			return cloneTurn(*v), nil
		}
	}
	return experience.Turn{}, notFound("turn", project, id)
}

func (x *experienceData) selectTurns(f store.TurnFilter) []*experience.Turn {
	keep := func(v *experience.Turn) bool {
		return (len(f.Roles) == 0 || slices.Contains(f.Roles, v.Role)) && (f.Since.IsZero() || !v.Time.Before(f.Since))
	}
	if f.TaskID != "" {
		return selectIndexed(x.turnsByTask, f.TaskID, x.turns, keep)
	}
	return selectAll(x.turns, keep)
}

// ListTurns implements store.ExperienceStorage.
func (t *tx) ListTurns(ctx context.Context, project string, f store.TurnFilter) ([]experience.Turn, error) {
	x, err := t.exp(ctx, project)
	if err != nil || x == nil {
		return []experience.Turn{}, err
	}
	found := sorted(x.selectTurns(f), func(a, b *experience.Turn) int {
		if f.NewestFirst {
			return newestFirst(a.Time, a.ID, b.Time, b.ID)
		}
		return oldestFirst(a.Time, a.ID, b.Time, b.ID)
	})
	return copies(page(found, f.Limit, f.Offset), cloneTurn), nil
}

// CountTurns implements store.ExperienceStorage.
func (t *tx) CountTurns(ctx context.Context, project string, f store.TurnFilter) (int64, error) {
	x, err := t.exp(ctx, project)
	if err != nil || x == nil {
		return 0, err
	}
	return int64(len(x.selectTurns(f))), nil
}

// Feedback signals.

// InsertSignal implements store.ExperienceStorage.
func (t *tx) InsertSignal(ctx context.Context, v experience.FeedbackSignal) (bool, error) {
	x, err := t.expWrite(ctx, v.Project)
	if err != nil {
		return false, err
	}
	if _, ok := x.signals[v.ID]; ok {
		return false, nil
	}
	put(t.undo, x.signals, v.ID, stored(v, cloneSignal))
	x.signalsByTask.add(t.undo, v.TaskID, v.ID)
	return true, nil
}

func (x *experienceData) selectSignals(f store.SignalFilter) []*experience.FeedbackSignal {
	keep := func(v *experience.FeedbackSignal) bool { return f.Type == "" || v.Type == f.Type }
	if f.TaskID != "" {
		return selectIndexed(x.signalsByTask, f.TaskID, x.signals, keep)
	}
	return selectAll(x.signals, keep)
}

// ListSignals implements store.ExperienceStorage.
func (t *tx) ListSignals(ctx context.Context, project string, f store.SignalFilter) ([]experience.FeedbackSignal, error) {
	x, err := t.exp(ctx, project)
	if err != nil || x == nil {
		return []experience.FeedbackSignal{}, err
	}
	found := sorted(x.selectSignals(f), func(a, b *experience.FeedbackSignal) int {
		return oldestFirst(a.CreatedAt, a.ID, b.CreatedAt, b.ID)
	})
	return copies(page(found, f.Limit, f.Offset), cloneSignal), nil
}

// CountSignals implements store.ExperienceStorage.
func (t *tx) CountSignals(ctx context.Context, project string, f store.SignalFilter) (int64, error) {
	x, err := t.exp(ctx, project)
	if err != nil || x == nil {
		return 0, err
	}
	return int64(len(x.selectSignals(f))), nil
}

// DeleteSignals implements store.ExperienceStorage.
func (t *tx) DeleteSignals(ctx context.Context, project, taskID string, by experience.Extractor) (int64, error) {
	x, err := t.expExisting(ctx, project)
	if err != nil || x == nil {
		return 0, err
	}
	var n int64
	for _, v := range selectIndexed(x.signalsByTask, taskID, x.signals, nil) {
		if v.Extractor == by {
			remove(t.undo, x.signals, v.ID)
			x.signalsByTask.remove(t.undo, taskID, v.ID)
			n++
		}
	}
	return n, nil
}

// Task experiences.

// InsertExperience implements store.ExperienceStorage.
func (t *tx) InsertExperience(ctx context.Context, v experience.TaskExperience) (bool, error) {
	x, err := t.expWrite(ctx, v.Project)
	if err != nil {
		return false, err
	}
	if _, ok := x.experiences[v.TaskID]; ok {
		return false, nil
	}
	put(t.undo, x.experiences, v.TaskID, stored(v, cloneExperience))
	return true, nil
}

// GetExperience implements store.ExperienceStorage.
func (t *tx) GetExperience(ctx context.Context, project, taskID string) (experience.TaskExperience, error) {
	x, err := t.exp(ctx, project)
	if err != nil {
		return experience.TaskExperience{}, err
	}
	if x != nil {
		if v, ok := x.experiences[taskID]; ok {
			return cloneExperience(*v), nil
		}
	}
	return experience.TaskExperience{}, notFound("experience of task", project, taskID)
}

// ListExperiences implements store.ExperienceStorage.
func (t *tx) ListExperiences(ctx context.Context, project string, f store.PageFilter) ([]experience.TaskExperience, error) {
	x, err := t.exp(ctx, project)
	if err != nil || x == nil {
		return []experience.TaskExperience{}, err
	}
	found := sorted(selectAll(x.experiences, nil), func(a, b *experience.TaskExperience) int {
		return newestFirst(a.CreatedAt, a.TaskID, b.CreatedAt, b.TaskID)
	})
	return copies(page(found, f.Limit, f.Offset), cloneExperience), nil
}

// CountExperiences implements store.ExperienceStorage.
func (t *tx) CountExperiences(ctx context.Context, project string) (int64, error) {
	x, err := t.exp(ctx, project)
	if err != nil || x == nil {
		return 0, err
	}
	return int64(len(x.experiences)), nil
}

// Heuristics.

// InsertHeuristic implements store.ExperienceStorage.
func (t *tx) InsertHeuristic(ctx context.Context, v experience.Heuristic) (bool, error) {
	x, err := t.expWrite(ctx, v.Project)
	if err != nil {
		return false, err
	}
	if _, ok := x.heuristics[v.ID]; ok {
		return false, nil
	}
	put(t.undo, x.heuristics, v.ID, stored(v, cloneHeuristic))
	return true, nil
}

// GetHeuristic implements store.ExperienceStorage.
func (t *tx) GetHeuristic(ctx context.Context, project, id string) (experience.Heuristic, error) {
	x, err := t.exp(ctx, project)
	if err != nil {
		return experience.Heuristic{}, err
	}
	if x != nil {
		if v, ok := x.heuristics[id]; ok {
			return cloneHeuristic(*v), nil
		}
	}
	return experience.Heuristic{}, notFound("heuristic", project, id)
}

// LockHeuristic implements store.ExperienceStorage; Update is exclusive.
func (t *tx) LockHeuristic(ctx context.Context, project, id string) (experience.Heuristic, error) {
	if err := t.writable(ctx); err != nil {
		return experience.Heuristic{}, err
	}
	return t.GetHeuristic(ctx, project, id)
}

// UpdateHeuristic implements store.ExperienceStorage.
func (t *tx) UpdateHeuristic(ctx context.Context, v experience.Heuristic) error {
	x, err := t.expExisting(ctx, v.Project)
	if err != nil {
		return err
	}
	if x == nil || x.heuristics[v.ID] == nil {
		return notFound("heuristic", v.Project, v.ID)
	}
	put(t.undo, x.heuristics, v.ID, stored(v, cloneHeuristic))
	return nil
}

// heuristicMatches is the HeuristicFilter; Search looks in the same text
// as the SQL backends' search key.
func heuristicMatches(f store.HeuristicFilter) func(*experience.Heuristic) bool {
	return func(v *experience.Heuristic) bool {
		return (len(f.Statuses) == 0 || slices.Contains(f.Statuses, v.Status)) &&
			(f.Kind == "" || v.Kind == f.Kind) &&
			(f.Search == "" || containsFold(v.Trigger+"\n"+v.Rule+"\n"+v.Why, f.Search))
	}
}

// ListHeuristics implements store.ExperienceStorage.
func (t *tx) ListHeuristics(ctx context.Context, project string, f store.HeuristicFilter) ([]experience.Heuristic, error) {
	x, err := t.exp(ctx, project)
	if err != nil || x == nil {
		return []experience.Heuristic{}, err
	}
	found := sorted(selectAll(x.heuristics, heuristicMatches(f)), func(a, b *experience.Heuristic) int {
		return newestFirst(a.UpdatedAt, a.ID, b.UpdatedAt, b.ID)
	})
	return copies(page(found, f.Limit, f.Offset), cloneHeuristic), nil
}

// CountHeuristics implements store.ExperienceStorage.
func (t *tx) CountHeuristics(ctx context.Context, project string, f store.HeuristicFilter) (int64, error) {
	x, err := t.exp(ctx, project)
	if err != nil || x == nil {
		return 0, err
	}
	return count(x.heuristics, heuristicMatches(f)), nil
}

// EachHeuristic implements store.ExperienceStorage.
func (t *tx) EachHeuristic(ctx context.Context, project string, statuses []experience.HeuristicStatus, fn func(experience.Heuristic) error) error {
	x, err := t.exp(ctx, project)
	if err != nil || x == nil {
		return err
	}
	found := sorted(selectAll(x.heuristics, heuristicMatches(store.HeuristicFilter{Statuses: statuses})),
		func(a, b *experience.Heuristic) int { return strings.Compare(a.ID, b.ID) })
	return each(ctx, found, cloneHeuristic, fn)
}

// InsertEvidence implements store.ExperienceStorage.
func (t *tx) InsertEvidence(ctx context.Context, v experience.HeuristicEvidence) (bool, error) {
	x, err := t.expWrite(ctx, v.Project)
	if err != nil {
		return false, err
	}
	if _, ok := x.evidence[v.ID]; ok {
		return false, nil
	}
	put(t.undo, x.evidence, v.ID, stored(v, cloneEvidence))
	x.evidenceByHeuristic.add(t.undo, v.HeuristicID, v.ID)
	return true, nil
}

// ListEvidence implements store.ExperienceStorage.
func (t *tx) ListEvidence(ctx context.Context, project, heuristicID string) ([]experience.HeuristicEvidence, error) {
	x, err := t.exp(ctx, project)
	if err != nil || x == nil {
		return []experience.HeuristicEvidence{}, err
	}
	found := sorted(selectIndexed(x.evidenceByHeuristic, heuristicID, x.evidence, nil), func(a, b *experience.HeuristicEvidence) int {
		return oldestFirst(a.CreatedAt, a.ID, b.CreatedAt, b.ID)
	})
	return copies(found, cloneEvidence), nil
}

// AddSupport implements store.ExperienceStorage.
func (t *tx) AddSupport(ctx context.Context, project, heuristicID, taskID string, when time.Time) (bool, error) {
	x, err := t.expWrite(ctx, project)
	if err != nil {
		return false, err
	}
	key := heuristicID + "\x00" + taskID
	if _, ok := x.support[key]; ok {
		return false, nil
	}
	put(t.undo, x.support, key, &support{TaskID: taskID, At: wall(when)})
	x.supportByHeuristic.add(t.undo, heuristicID, key)
	return true, nil
}

// SupportTasks implements store.ExperienceStorage.
func (t *tx) SupportTasks(ctx context.Context, project, heuristicID string) ([]string, error) {
	x, err := t.exp(ctx, project)
	if err != nil || x == nil {
		return []string{}, err
	}
	found := sorted(selectIndexed(x.supportByHeuristic, heuristicID, x.support, nil), func(a, b *support) int {
		return oldestFirst(a.At, a.TaskID, b.At, b.TaskID)
	})
	out := make([]string, len(found))
	for i, s := range found {
		out[i] = s.TaskID
	}
	return out, nil
}

// InsertHeuristicFeedback implements store.ExperienceStorage.
func (t *tx) InsertHeuristicFeedback(ctx context.Context, v experience.HeuristicFeedback) (bool, error) {
	x, err := t.expWrite(ctx, v.Project)
	if err != nil {
		return false, err
	}
	if _, ok := x.feedback[v.ID]; ok {
		return false, nil
	}
	put(t.undo, x.feedback, v.ID, stored(v, cloneHeuristicFeedback))
	x.feedbackByHeuristic.add(t.undo, v.HeuristicID, v.ID)
	return true, nil
}

// ListHeuristicFeedback implements store.ExperienceStorage.
func (t *tx) ListHeuristicFeedback(ctx context.Context, project, heuristicID string) ([]experience.HeuristicFeedback, error) {
	x, err := t.exp(ctx, project)
	if err != nil || x == nil {
		return []experience.HeuristicFeedback{}, err
	}
	found := sorted(selectIndexed(x.feedbackByHeuristic, heuristicID, x.feedback, nil), func(a, b *experience.HeuristicFeedback) int {
		return oldestFirst(a.CreatedAt, a.ID, b.CreatedAt, b.ID)
	})
	return copies(found, cloneHeuristicFeedback), nil
}

// Recall events.

// InsertRecall implements store.ExperienceStorage.
func (t *tx) InsertRecall(ctx context.Context, v experience.RecallEvent) (bool, error) {
	x, err := t.expWrite(ctx, v.Project)
	if err != nil {
		return false, err
	}
	if _, ok := x.recalls[v.ID]; ok {
		return false, nil
	}
	put(t.undo, x.recalls, v.ID, stored(v, cloneRecall))
	for _, it := range v.Items {
		x.recallsByRef.add(t.undo, it.RefID, v.ID)
	}
	return true, nil
}

// GetRecall implements store.ExperienceStorage.
func (t *tx) GetRecall(ctx context.Context, project, id string) (experience.RecallEvent, error) {
	x, err := t.exp(ctx, project)
	if err != nil {
		return experience.RecallEvent{}, err
	}
	if x != nil {
		if v, ok := x.recalls[id]; ok {
			return cloneRecall(*v), nil
		}
	}
	return experience.RecallEvent{}, notFound("recall", project, id)
}

func (x *experienceData) selectRecalls(f store.RecallFilter) []*experience.RecallEvent {
	keep := func(v *experience.RecallEvent) bool { return f.TaskID == "" || v.TaskID == f.TaskID }
	if f.RefID != "" {
		return selectIndexed(x.recallsByRef, f.RefID, x.recalls, keep)
	}
	return selectAll(x.recalls, keep)
}

// ListRecalls implements store.ExperienceStorage.
func (t *tx) ListRecalls(ctx context.Context, project string, f store.RecallFilter) ([]experience.RecallEvent, error) {
	x, err := t.exp(ctx, project)
	if err != nil || x == nil {
		return []experience.RecallEvent{}, err
	}
	found := sorted(x.selectRecalls(f), func(a, b *experience.RecallEvent) int {
		return newestFirst(a.CreatedAt, a.ID, b.CreatedAt, b.ID)
	})
	return copies(page(found, f.Limit, f.Offset), cloneRecall), nil
}

// CountRecalls implements store.ExperienceStorage.
func (t *tx) CountRecalls(ctx context.Context, project string, f store.RecallFilter) (int64, error) {
	x, err := t.exp(ctx, project)
	if err != nil || x == nil {
		return 0, err
	}
	return int64(len(x.selectRecalls(f))), nil
}

// Skills.

// InsertSkill implements store.ExperienceStorage.
func (t *tx) InsertSkill(ctx context.Context, v experience.Skill) (bool, error) {
	x, err := t.expWrite(ctx, v.Project)
	if err != nil {
		return false, err
	}
	if _, ok := x.skills[v.ID]; ok {
		return false, nil
	}
	if _, ok := x.skillByName[v.Name]; ok {
		return false, nil
	}
	put(t.undo, x.skills, v.ID, stored(v, cloneSkill))
	put(t.undo, x.skillByName, v.Name, v.ID)
	return true, nil
}

// GetSkill implements store.ExperienceStorage.
func (t *tx) GetSkill(ctx context.Context, project, id string) (experience.Skill, error) {
	x, err := t.exp(ctx, project)
	if err != nil {
		return experience.Skill{}, err
	}
	if x != nil {
		if v, ok := x.skills[id]; ok {
			return cloneSkill(*v), nil
		}
	}
	return experience.Skill{}, notFound("skill", project, id)
}

// GetSkillByName implements store.ExperienceStorage.
func (t *tx) GetSkillByName(ctx context.Context, project, name string) (experience.Skill, error) {
	x, err := t.exp(ctx, project)
	if err != nil {
		return experience.Skill{}, err
	}
	if x != nil {
		if id, ok := x.skillByName[name]; ok {
			return cloneSkill(*x.skills[id]), nil
		}
	}
	return experience.Skill{}, notFound("skill named", project, name)
}

// LockSkill implements store.ExperienceStorage; Update is exclusive.
func (t *tx) LockSkill(ctx context.Context, project, id string) (experience.Skill, error) {
	if err := t.writable(ctx); err != nil {
		return experience.Skill{}, err
	}
	return t.GetSkill(ctx, project, id)
}

// UpdateSkill implements store.ExperienceStorage.
func (t *tx) UpdateSkill(ctx context.Context, v experience.Skill) error {
	x, err := t.expExisting(ctx, v.Project)
	if err != nil {
		return err
	}
	if x == nil || x.skills[v.ID] == nil {
		return notFound("skill", v.Project, v.ID)
	}
	if id, ok := x.skillByName[v.Name]; ok && id != v.ID {
		return fmt.Errorf("update skill %s: name %q belongs to skill %s: %w", v.ID, v.Name, id, store.ErrNameTaken)
	}
	old := x.skills[v.ID]
	if old.Name != v.Name {
		remove(t.undo, x.skillByName, old.Name)
		put(t.undo, x.skillByName, v.Name, v.ID)
	}
	put(t.undo, x.skills, v.ID, stored(v, cloneSkill))
	return nil
}

func skillMatches(f store.SkillFilter) func(*experience.Skill) bool {
	return func(v *experience.Skill) bool {
		return (f.Status == "" || v.Status == f.Status) &&
			(f.Search == "" || containsFold(v.Name+"\n"+v.Description, f.Search))
	}
}

// ListSkills implements store.ExperienceStorage.
func (t *tx) ListSkills(ctx context.Context, project string, f store.SkillFilter) ([]experience.Skill, error) {
	x, err := t.exp(ctx, project)
	if err != nil || x == nil {
		return []experience.Skill{}, err
	}
	found := sorted(selectAll(x.skills, skillMatches(f)), func(a, b *experience.Skill) int {
		return strings.Compare(a.Name, b.Name)
	})
	return copies(page(found, f.Limit, f.Offset), cloneSkill), nil
}

// CountSkills implements store.ExperienceStorage.
func (t *tx) CountSkills(ctx context.Context, project string, f store.SkillFilter) (int64, error) {
	x, err := t.exp(ctx, project)
	if err != nil || x == nil {
		return 0, err
	}
	return count(x.skills, skillMatches(f)), nil
}

// InsertSkillVersion implements store.ExperienceStorage.
func (t *tx) InsertSkillVersion(ctx context.Context, v experience.SkillVersion) (bool, error) {
	x, err := t.expWrite(ctx, v.Project)
	if err != nil {
		return false, err
	}
	key := v.SkillID + "\x00" + strconv.Itoa(v.Version)
	if _, ok := x.skillVersions[key]; ok {
		return false, nil
	}
	put(t.undo, x.skillVersions, key, stored(v, cloneSkillVersion))
	x.versionsBySkill.add(t.undo, v.SkillID, key)
	return true, nil
}

// ListSkillVersions implements store.ExperienceStorage.
func (t *tx) ListSkillVersions(ctx context.Context, project, skillID string) ([]experience.SkillVersion, error) {
	x, err := t.exp(ctx, project)
	if err != nil || x == nil {
		return []experience.SkillVersion{}, err
	}
	found := sorted(selectIndexed(x.versionsBySkill, skillID, x.skillVersions, nil), func(a, b *experience.SkillVersion) int {
		return cmp.Compare(a.Version, b.Version)
	})
	return copies(found, cloneSkillVersion), nil
}
