package experiencesvc

import (
	"context"
	"errors"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/store"
)

// reembedBatch is the number of items embedded per transaction.
const reembedBatch = 256

// ReembedResult reports a re-embedding.
type ReembedResult struct {
	Embedder string `json:"embedder"`
	// Items counts the vectors (re)computed, by kind.
	Items    map[experience.ItemKind]int `json:"items"`
	Projects []string                    `json:"projects"`
}

// CheckEmbedder re-embeds on open when the configured embedder differs
// from the one the stored vectors were made with, so that vectors of two
// embedders are never compared.
func (s *Service) CheckEmbedder(ctx context.Context) error {
	want := s.embedder.ID()
	var got string
	err := s.env.View(ctx, "open", func(tx store.Tx) error {
		v, err := tx.GetMeta(ctx, embedderMetaKey)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		got = v
		return err
	})
	if err != nil || got == want {
		return err
	}
	if got != "" {
		s.env.Logger.Info("embedder changed: re-embedding", "from", got, "to", want)
	}
	_, err = s.Reembed(ctx, "")
	return err
}

// ReembedOptions configure a re-embedding.
type ReembedOptions struct {
	// Project to re-embed; empty: every project.
	Project string `json:"project,omitempty"`
	// Progress, when set, is called after each batch with the items
	// embedded so far and the number that needed it when the run started.
	Progress func(done, total int) `json:"-"`
}

// Reembed computes the vectors every recallable item lacks for the current
// embedder (all of them after a change of embedder), in every project or
// in one. It is resumable: an interrupted run continues where it stopped.
func (s *Service) Reembed(ctx context.Context, project string) (*ReembedResult, error) {
	return s.ReembedWith(ctx, ReembedOptions{Project: project})
}

// ReembedWith is Reembed with options (a progress callback).
func (s *Service) ReembedWith(ctx context.Context, opts ReembedOptions) (*ReembedResult, error) {
	const op = "reembed"
	project := opts.Project
	res := &ReembedResult{Embedder: s.embedder.ID(), Items: map[experience.ItemKind]int{}, Projects: []string{}}
	if project != "" {
		p, err := s.env.ResolveProject(op, project)
		if err != nil {
			return nil, err
		}
		res.Projects = []string{p}
	} else {
		err := s.env.View(ctx, op, func(tx store.Tx) error {
			ps, err := tx.Projects(ctx)
			res.Projects = append(res.Projects, ps...)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	total, done := 0, 0
	if opts.Progress != nil {
		id, dim := s.embedder.ID(), s.embedder.Dimension()
		err := s.env.View(ctx, op, func(tx store.Tx) error {
			total = 0
			for _, p := range res.Projects {
				for _, kind := range experience.ItemKinds {
					stale, err := tx.StaleEmbeddings(ctx, p, kind, id, dim, 0)
					if err != nil {
						return err
					}
					total += len(stale)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		opts.Progress(0, total)
	}
	for _, p := range res.Projects {
		for _, kind := range experience.ItemKinds {
			n, err := s.reembedKind(ctx, op, p, kind, func(n int) {
				if opts.Progress != nil {
					opts.Progress(done+n, max(total, done+n))
				}
			})
			done += n
			res.Items[kind] += n
			if err != nil {
				return nil, err
			}
		}
	}
	if project == "" {
		if err := s.env.Update(ctx, op, func(tx store.Tx) error {
			return tx.SetMeta(ctx, embedderMetaKey, s.embedder.ID())
		}); err != nil {
			return nil, err
		}
	}
	s.vecs.Forget()
	return res, nil
}

func (s *Service) reembedKind(ctx context.Context, op, project string, kind experience.ItemKind, progress func(done int)) (int, error) {
	id, dim := s.embedder.ID(), s.embedder.Dimension()
	done := 0
	for {
		var ids, texts []string
		err := s.env.View(ctx, op, func(tx store.Tx) error {
			stale, err := tx.StaleEmbeddings(ctx, project, kind, id, dim, reembedBatch)
			if err != nil {
				return err
			}
			for _, ref := range stale {
				text, err := itemText(ctx, tx, project, kind, ref)
				if errors.Is(err, store.ErrNotFound) {
					text = "" // an orphan document: embed to the zero vector, never recalled
				} else if err != nil {
					return err
				}
				ids, texts = append(ids, ref), append(texts, text)
			}
			return nil
		})
		if err != nil || len(ids) == 0 {
			return done, err
		}
		vecs, err := s.embed(ctx, op, texts...)
		if err != nil {
			return done, err
		}
		now := s.env.Now()
		err = s.env.Update(ctx, op, func(tx store.Tx) error {
			for i, ref := range ids {
				if err := tx.PutEmbedding(ctx, store.Embedding{Project: project, Kind: kind, RefID: ref, Embedder: id,
					Dim: len(vecs[i]), Vector: vecs[i], UpdatedAt: now}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return done, err
		}
		done += len(ids)
		progress(done)
		if len(ids) < reembedBatch {
			return done, nil
		}
	}
}

// itemText is the text an item is embedded from.
func itemText(ctx context.Context, tx store.Tx, project string, kind experience.ItemKind, id string) (string, error) {
	switch kind {
	case experience.ItemHeuristic:
		h, err := tx.GetHeuristic(ctx, project, id)
		return experience.HeuristicText(h.Kind, h.Trigger, h.Rule), err
	case experience.ItemSkill:
		sk, err := tx.GetSkill(ctx, project, id)
		return skillTextOf(sk), err
	default:
		t, err := tx.GetTurn(ctx, project, id)
		return t.Content, err
	}
}

// RecallQuery lists stored recalls.
type RecallQuery struct {
	Project string `json:"project,omitempty"`
	TaskID  string `json:"bead_id,omitempty"`
	// RefID keeps recalls that considered this heuristic, skill or turn.
	RefID  string `json:"ref_id,omitempty"`
	Limit  int    `json:"limit,omitempty"`
	Offset int    `json:"offset,omitempty"`
}

// RecallList is a page of recalls, newest first.
type RecallList = app.Page[experience.RecallEvent]

// ListRecalls lists stored recalls, newest first.
func (s *Service) ListRecalls(ctx context.Context, q RecallQuery) (*RecallList, error) {
	const op = "list recalls"
	s.SettleRecalls()
	project, limit, err := s.env.PageQuery(op, q.Project, q.Limit, q.Offset, "bead_id", q.TaskID, "ref_id", q.RefID)
	if err != nil {
		return nil, err
	}
	f := store.RecallFilter{TaskID: q.TaskID, RefID: q.RefID, Limit: limit, Offset: q.Offset}
	return app.ListPage(ctx, s.env, op, project, limit, q.Offset,
		func(tx store.Tx) (int64, error) { return tx.CountRecalls(ctx, project, f) },
		func(tx store.Tx) ([]experience.RecallEvent, error) { return tx.ListRecalls(ctx, project, f) })
}

// GetRecall returns a stored recall.
func (s *Service) GetRecall(ctx context.Context, project, id string) (*experience.RecallEvent, error) {
	const op = "get recall"
	s.SettleRecalls()
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "recall_id", id); err != nil {
		return nil, err
	}
	var r experience.RecallEvent
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		var err error
		r, err = tx.GetRecall(ctx, project, id)
		if errors.Is(err, store.ErrNotFound) {
			return &app.Error{Op: op, Kind: app.KindNotFound, Field: "recall_id", Message: "no recall " + id + " in project " + project,
				Next: "list_recalls"}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &r, nil
}
