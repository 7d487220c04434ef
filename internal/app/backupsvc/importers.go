package backupsvc

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// importer inserts one record of a type added in export version 2.
type importer func(ctx context.Context, st *importState, raw json.RawMessage) error

// importers insert the record types after "error". Each decodes the record
// strictly, moves it to the import's project, checks its ids and inserts
// it idempotently (an existing id is skipped).
var importers = map[string]importer{
	recTask: func(ctx context.Context, st *importState, raw json.RawMessage) error {
		return insert(ctx, st, raw, recTask, func(t *learning.Task) (*string, string) { return &t.Project, t.ID },
			func(t learning.Task) (bool, error) { return st.tx.InsertTask(ctx, t) })
	},
	recExploreSettings: func(ctx context.Context, st *importState, raw json.RawMessage) error {
		r, err := decodeRecord[exploreSettingsRecord](st, raw)
		if err != nil {
			return err
		}
		if r.Project, err = st.project(r.Project); err != nil {
			return err
		}
		if !json.Valid(r.Settings) {
			return app.Invalid("import", "settings", "is not a JSON object")
		}
		key := exploreSettingsKey(r.Project)
		_, err = st.tx.GetMeta(ctx, key)
		switch {
		case err == nil: // the project's own settings win
			st.count(recExploreSettings, false)
			return nil
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
		st.count(recExploreSettings, true)
		return st.tx.SetMeta(ctx, key, string(r.Settings))
	},
	recExploreSession: func(ctx context.Context, st *importState, raw json.RawMessage) error {
		return insert(ctx, st, raw, recExploreSession, func(s *store.ExploreSession) (*string, string) { return &s.Project, s.ID },
			func(s store.ExploreSession) (bool, error) {
				if !json.Valid(s.State) {
					return false, app.Invalid("import", "state", "is not valid JSON")
				}
				return st.tx.InsertExploreSession(ctx, s)
			})
	},
	recTurn: func(ctx context.Context, st *importState, raw json.RawMessage) error {
		return insertIndexed(ctx, st, raw, recTurn, experience.ItemMemory, func(t *experience.Turn) (*string, string) { return &t.Project, t.ID },
			func(t experience.Turn) (bool, error) { return st.tx.InsertTurn(ctx, t) })
	},
	recSignal: func(ctx context.Context, st *importState, raw json.RawMessage) error {
		return insert(ctx, st, raw, recSignal, func(s *experience.FeedbackSignal) (*string, string) { return &s.Project, s.ID },
			func(s experience.FeedbackSignal) (bool, error) { return st.tx.InsertSignal(ctx, s) })
	},
	recExperience: func(ctx context.Context, st *importState, raw json.RawMessage) error {
		return insert(ctx, st, raw, recExperience, func(e *experience.TaskExperience) (*string, string) { return &e.Project, e.TaskID },
			func(e experience.TaskExperience) (bool, error) { return st.tx.InsertExperience(ctx, e) })
	},
	recHeuristic: func(ctx context.Context, st *importState, raw json.RawMessage) error {
		return insertIndexed(ctx, st, raw, recHeuristic, experience.ItemHeuristic, func(h *experience.Heuristic) (*string, string) { return &h.Project, h.ID },
			func(h experience.Heuristic) (bool, error) {
				if !slices.Contains(experience.HeuristicStatuses, h.Status) {
					return false, app.Invalid("import", "status", "unknown heuristic status %q", h.Status)
				}
				return st.tx.InsertHeuristic(ctx, h)
			})
	},
	recHeuristicEvidence: func(ctx context.Context, st *importState, raw json.RawMessage) error {
		return insert(ctx, st, raw, recHeuristicEvidence, func(e *experience.HeuristicEvidence) (*string, string) { return &e.Project, e.ID },
			func(e experience.HeuristicEvidence) (bool, error) { return st.tx.InsertEvidence(ctx, e) })
	},
	recHeuristicSupport: func(ctx context.Context, st *importState, raw json.RawMessage) error {
		return insert(ctx, st, raw, recHeuristicSupport, func(s *supportRecord) (*string, string) { return &s.Project, s.TaskID },
			func(s supportRecord) (bool, error) {
				if err := app.ValidID("import", "heuristic_id", s.HeuristicID); err != nil {
					return false, err
				}
				return st.tx.AddSupport(ctx, s.Project, s.HeuristicID, s.TaskID, s.At)
			})
	},
	recHeuristicFeedback: func(ctx context.Context, st *importState, raw json.RawMessage) error {
		return insert(ctx, st, raw, recHeuristicFeedback, func(f *experience.HeuristicFeedback) (*string, string) { return &f.Project, f.ID },
			func(f experience.HeuristicFeedback) (bool, error) { return st.tx.InsertHeuristicFeedback(ctx, f) })
	},
	recRecall: func(ctx context.Context, st *importState, raw json.RawMessage) error {
		return insert(ctx, st, raw, recRecall, func(r *experience.RecallEvent) (*string, string) { return &r.Project, r.ID },
			func(r experience.RecallEvent) (bool, error) { return st.tx.InsertRecall(ctx, r) })
	},
	recSkill: func(ctx context.Context, st *importState, raw json.RawMessage) error {
		return insertIndexed(ctx, st, raw, recSkill, experience.ItemSkill, func(s *experience.Skill) (*string, string) { return &s.Project, s.ID },
			func(s experience.Skill) (bool, error) {
				if _, err := experience.SkillDir(st.s.experience.SkillsDir(), s.Project, s.Name); err != nil {
					return false, app.Invalid("import", "name", "%v", err)
				}
				ok, err := st.tx.InsertSkill(ctx, s)
				if ok {
					st.skills[s.Project] = append(st.skills[s.Project], s.ID)
				}
				return ok, err
			})
	},
	recSkillVersion: func(ctx context.Context, st *importState, raw json.RawMessage) error {
		return insert(ctx, st, raw, recSkillVersion, func(v *experience.SkillVersion) (*string, string) { return &v.Project, v.SkillID },
			func(v experience.SkillVersion) (bool, error) { return st.tx.InsertSkillVersion(ctx, v) })
	},
}

// insert decodes a record, moves it to the import's project, checks its
// id and inserts it, counting it as inserted or skipped.
func insert[T any](ctx context.Context, st *importState, raw json.RawMessage, typ string,
	key func(*T) (*string, string), put func(T) (bool, error)) error {
	_, err := insertRecord(ctx, st, raw, typ, key, put)
	return err
}

// insertIndexed is insert for a recallable item: an inserted one gets its
// full-text document in the same transaction and its vector after it.
func insertIndexed[T any](ctx context.Context, st *importState, raw json.RawMessage, typ string, kind experience.ItemKind,
	key func(*T) (*string, string), put func(T) (bool, error)) error {
	v, err := insertRecord(ctx, st, raw, typ, key, put)
	if err != nil || v == nil {
		return err
	}
	project, id := key(v)
	st.indexed[*project] = true
	return st.s.experience.IndexImported(ctx, st.tx, *project, kind, id)
}

// insertRecord is insert, returning the record when it was inserted.
func insertRecord[T any](_ context.Context, st *importState, raw json.RawMessage, typ string,
	key func(*T) (*string, string), put func(T) (bool, error)) (*T, error) {
	v, err := decodeRecord[T](st, raw)
	if err != nil {
		return nil, err
	}
	project, id := key(&v)
	if *project, err = st.project(*project); err != nil {
		return nil, err
	}
	if err := app.ValidID("import", "id", id); err != nil {
		return nil, err
	}
	ok, err := put(v)
	if err != nil {
		return nil, err
	}
	st.count(typ, ok)
	if !ok {
		return nil, nil
	}
	return &v, nil
}
