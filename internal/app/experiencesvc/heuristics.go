package experiencesvc

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/internal/veccache"
	"github.com/kaizenhq/kaizen/store"
)

// mergeHeuristics merges an experience's lessons into the heuristic store:
// each candidate is compared (cosine) with the existing heuristics and
// the candidates merged before it; by the merge classifier (its nearest
// heuristics, classifyMerge) or, without one, the calibrated thresholds
// (its nearest heuristic) it updates a near duplicate (evidence and
// support), appends evidence to a related heuristic, or becomes a new
// candidate. When the chat model judged a candidate (verdicts[i] not nil,
// judgeLessons), its verdicts decide instead (applyVerdicts). The caller
// holds the project's writer lock.
func (s *Service) mergeHeuristics(ctx context.Context, tx store.Tx, w *vecWriter, taskID string,
	cands []experience.TransferableHeuristic, vecs [][]float32, verdicts [][]judged, now time.Time) ([]HeuristicChange, error) {
	project := w.project
	// The cached index as committed before this transaction; heuristics
	// created by this transaction are compared from the batch.
	ix, err := s.vecs.Index(ctx, tx, project, experience.ItemHeuristic)
	if err != nil {
		return nil, err
	}
	type made struct {
		id  string
		vec []float32
	}
	var batch []made
	// madeBy maps a lesson's index in cands to the heuristic it created.
	madeBy := map[int]string{}
	thresholds := s.cfg.Merge.For(s.embedder.ID())
	clf := s.cfg.Merge.Classifier(s.embedder.ID())
	changes := make([]HeuristicChange, 0, len(cands))
	for i, c := range cands {
		vec := vecs[i]
		best, bestID := math.Inf(-1), ""
		var near []mergeNeighbour
		if !veccache.ZeroVector(vec) {
			if hits, err := ix.Search(vec, mergeNeighbours); err != nil {
				return nil, err
			} else if len(hits) > 0 {
				best, bestID = float64(hits[0].Score), hits[0].ID
				for _, h := range hits {
					near = append(near, mergeNeighbour{h.ID, float64(h.Score)})
				}
			}
			for _, m := range batch {
				s := dot(vec, m.vec)
				if s > best {
					best, bestID = s, m.id
				}
				near = append(near, mergeNeighbour{m.id, s})
			}
		}
		d := experience.DecideMerge(best, bestID, thresholds)
		modelJudged := i < len(verdicts) && verdicts[i] != nil
		if modelJudged {
			sim := best
			if math.IsInf(sim, -1) {
				sim = 0
			}
			if d, err = s.applyVerdicts(ctx, tx, project, c, verdicts[i], madeBy, sim); err != nil {
				return nil, err
			}
		} else if clf != nil {
			if d, err = s.classifyMerge(ctx, tx, project, c, clf, near); err != nil {
				return nil, err
			}
		} else if d.Action == experience.EvidenceAppend {
			// Appending makes the lesson evidence of another: only within
			// the same kind (docs/experience.md).
			target, err := tx.GetHeuristic(ctx, project, d.TargetID)
			if err != nil {
				return nil, err
			}
			if target.Kind != c.Kind {
				d = experience.MergeDecision{Action: experience.EvidenceCreated, Similarity: d.Similarity}
			}
		}
		if clf == nil && !modelJudged && d.Action == experience.EvidenceUpdated {
			// Opposite rules are never one lesson (experience.Contradicts).
			target, err := tx.GetHeuristic(ctx, project, d.TargetID)
			if err != nil {
				return nil, err
			}
			if experience.Contradicts(experience.MergeLesson{Kind: target.Kind, Trigger: target.Trigger, Rule: target.Rule},
				experience.MergeLesson{Kind: c.Kind, Trigger: c.Trigger, Rule: c.Rule}) {
				d = experience.MergeDecision{Action: experience.EvidenceCreated, Similarity: d.Similarity}
			}
		}
		ch := HeuristicChange{Action: d.Action, Similarity: d.Similarity, Rule: c.Rule}
		evidence := experience.HeuristicEvidence{ID: app.NewID("hev-"), Project: project, TaskID: taskID,
			Action: d.Action, Text: evidenceText(c), Similarity: d.Similarity, CreatedAt: now}
		var h experience.Heuristic
		if d.Action == experience.EvidenceCreated {
			h = experience.Heuristic{ID: app.NewID("heur-"), Project: project, Kind: c.Kind, Trigger: c.Trigger,
				Rule: c.Rule, Why: c.Why, Status: experience.StatusCandidate, StatusReason: "extracted from task " + taskID,
				SupportTasks: 1, EvidenceCount: 1, SourceTaskID: taskID, CreatedAt: now, UpdatedAt: now}
			if _, err := tx.InsertHeuristic(ctx, h); err != nil {
				return nil, err
			}
			if _, err := tx.AddSupport(ctx, project, h.ID, taskID, now); err != nil {
				return nil, err
			}
			evidence.Similarity = 1
			if err := w.put(ctx, tx, experience.ItemHeuristic, h.ID, experience.HeuristicText(h.Kind, h.Trigger, h.Rule), vec, now); err != nil {
				return nil, err
			}
			batch = append(batch, made{h.ID, vec})
			madeBy[i] = h.ID
		} else {
			if h, err = tx.LockHeuristic(ctx, project, d.TargetID); err != nil {
				return nil, err
			}
			if d.Action == experience.EvidenceUpdated {
				added, err := tx.AddSupport(ctx, project, h.ID, taskID, now)
				if err != nil {
					return nil, err
				}
				if added {
					h.SupportTasks++
				}
			}
			h.EvidenceCount++
			h.UpdatedAt = now
		}
		evidence.HeuristicID = h.ID
		if _, err := tx.InsertEvidence(ctx, evidence); err != nil {
			return nil, err
		}
		next, tr := s.cfg.Lifecycle.Evaluate(h, now)
		if tr != nil || d.Action != experience.EvidenceCreated {
			next.UpdatedAt = now
			if err := tx.UpdateHeuristic(ctx, next); err != nil {
				return nil, err
			}
		}
		ch.HeuristicID, ch.Status, ch.Transition = next.ID, next.Status, tr
		changes = append(changes, ch)
	}
	return changes, nil
}

func evidenceText(c experience.TransferableHeuristic) string {
	text := strings.TrimSpace(c.Evidence)
	rule := "rule: " + c.Rule
	if text == "" {
		return rule
	}
	return text + "\n" + rule
}

// dot is the dot product of two vectors of equal length (a cosine for unit
// vectors).
func dot(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// HeuristicQuery lists heuristics.
type HeuristicQuery struct {
	Project string `json:"project,omitempty"`
	// Status keeps heuristics in these states (comma-separated in
	// surfaces); empty: all.
	Status []string `json:"status,omitempty"`
	Kind   string   `json:"kind,omitempty"`
	Search string   `json:"search,omitempty"`
	Limit  int      `json:"limit,omitempty"`
	Offset int      `json:"offset,omitempty"`
}

// HeuristicList is a page of heuristics, most recently updated first.
type HeuristicList = app.Page[experience.Heuristic]

// ListHeuristics lists heuristics.
func (s *Service) ListHeuristics(ctx context.Context, q HeuristicQuery) (*HeuristicList, error) {
	const op = "list heuristics"
	s.SettleRecalls()
	project, limit, err := s.env.PageQuery(op, q.Project, q.Limit, q.Offset)
	if err != nil {
		return nil, err
	}
	f := store.HeuristicFilter{Search: q.Search, Limit: limit, Offset: q.Offset}
	for _, s := range q.Status {
		st := experience.HeuristicStatus(strings.ToLower(strings.TrimSpace(s)))
		if !slices.Contains(experience.HeuristicStatuses, st) {
			return nil, app.Invalid(op, "status", "unknown status %q (want one of %s)", s, joinStrings(experience.HeuristicStatuses))
		}
		f.Statuses = append(f.Statuses, st)
	}
	if q.Kind != "" {
		f.Kind = experience.HeuristicKind(strings.ToLower(q.Kind))
		if !slices.Contains(experience.HeuristicKinds, f.Kind) {
			return nil, app.Invalid(op, "kind", "unknown kind %q (want one of %s)", q.Kind, joinStrings(experience.HeuristicKinds))
		}
	}
	if err := app.ValidText(op, "search", q.Search, app.MaxIDLen, false); err != nil {
		return nil, err
	}
	return app.ListPage(ctx, s.env, op, project, limit, q.Offset,
		func(tx store.Tx) (int64, error) { return tx.CountHeuristics(ctx, project, f) },
		func(tx store.Tx) ([]experience.Heuristic, error) { return tx.ListHeuristics(ctx, project, f) })
}

// HeuristicDetail is a heuristic with its history.
type HeuristicDetail struct {
	Heuristic experience.Heuristic `json:"heuristic"`
	// Quality is the quality weight recall gives it now (seed table).
	Quality      float64                        `json:"quality_weight"`
	Recallable   bool                           `json:"recallable"`
	Evidence     []experience.HeuristicEvidence `json:"evidence"`
	SupportTasks []string                       `json:"support_tasks"`
	Feedback     []experience.HeuristicFeedback `json:"feedback"`
	// Recalls are the latest recalls that considered it (at most 20).
	Recalls []experience.RecallEvent `json:"recalls"`
}

// GetHeuristic returns a heuristic with its evidence, supporting tasks,
// verdicts and recent recalls.
func (s *Service) GetHeuristic(ctx context.Context, project, id string) (*HeuristicDetail, error) {
	const op = "get heuristic"
	s.SettleRecalls()
	project, err := s.env.ResolveProject(op, project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "heuristic_id", id); err != nil {
		return nil, err
	}
	now := s.env.Now()
	d := &HeuristicDetail{}
	err = s.env.View(ctx, op, func(tx store.Tx) error {
		h, err := s.heuristic(ctx, tx, op, project, id, false)
		if err != nil {
			return err
		}
		d.Heuristic = h
		d.Quality = experience.QualityWeight(h, now, s.cfg.Lifecycle)
		d.Recallable = experience.Recallable(h.Status)
		if d.Evidence, err = tx.ListEvidence(ctx, project, id); err != nil {
			return err
		}
		support, err := tx.ListSupport(ctx, project, id)
		if err != nil {
			return err
		}
		d.SupportTasks = make([]string, len(support))
		for i, sp := range support {
			d.SupportTasks[i] = sp.TaskID
		}
		if d.Feedback, err = tx.ListHeuristicFeedback(ctx, project, id); err != nil {
			return err
		}
		d.Recalls, err = tx.ListRecalls(ctx, project, store.RecallFilter{RefID: id, Limit: 20})
		return err
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// heuristic reads (or locks) a heuristic, with a not-found error that
// points to the listing.
func (s *Service) heuristic(ctx context.Context, tx store.Tx, op, project, id string, lock bool) (experience.Heuristic, error) {
	var h experience.Heuristic
	var err error
	if lock {
		h, err = tx.LockHeuristic(ctx, project, id)
	} else {
		h, err = tx.GetHeuristic(ctx, project, id)
	}
	if errors.Is(err, store.ErrNotFound) {
		return h, &app.Error{Op: op, Kind: app.KindNotFound, Field: "heuristic_id", Message: "no heuristic " + id + " in project " + project,
			Next: "list_heuristics"}
	}
	return h, err
}

// HeuristicFeedbackInput judges a recalled heuristic.
type HeuristicFeedbackInput struct {
	Project     string `json:"project,omitempty"`
	HeuristicID string `json:"heuristic_id"`
	// Verdict is helpful or misleading.
	Verdict string `json:"verdict"`
	// RecallID is the recall that showed it (optional, recommended; when
	// empty, the latest stored recall that showed the heuristic).
	RecallID string `json:"recall_id,omitempty"`
	TaskID   string `json:"bead_id,omitempty"`
	Note     string `json:"note,omitempty"`
	Source   string `json:"source,omitempty"`
}

// HeuristicActionResult reports a change of a heuristic.
type HeuristicActionResult struct {
	Heuristic  experience.Heuristic   `json:"heuristic"`
	Transition *experience.Transition `json:"transition,omitempty"`
	FeedbackID string                 `json:"feedback_id,omitempty"`
}

// HeuristicFeedback records a verdict on a heuristic (usually on a recall
// that showed it). Verdicts drive the lifecycle: a run of misleading
// verdicts makes a heuristic stale; a helpful one revalidates it.
func (s *Service) HeuristicFeedback(ctx context.Context, in HeuristicFeedbackInput) (*HeuristicActionResult, error) {
	const op = "heuristic feedback"
	s.SettleRecalls() // the recall judged may still be being written
	app.ScrubFields(&in.Note, &in.Source)
	now := s.env.Now()
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "heuristic_id", in.HeuristicID); err != nil {
		return nil, err
	}
	v := experience.Verdict(strings.ToLower(strings.TrimSpace(in.Verdict)))
	if v != experience.VerdictHelpful && v != experience.VerdictMisleading {
		return nil, app.Invalid(op, "verdict", "must be helpful or misleading, got %q", in.Verdict)
	}
	if err := app.ValidOptionalIDs(op, "recall_id", in.RecallID, "bead_id", in.TaskID, "source", in.Source); err != nil {
		return nil, err
	}
	if err := app.ValidText(op, "note", in.Note, app.MaxTextLen, false); err != nil {
		return nil, err
	}
	res := &HeuristicActionResult{}
	var after func()
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		h, err := s.heuristic(ctx, tx, op, project, in.HeuristicID, true)
		if err != nil {
			return err
		}
		if in.RecallID != "" {
			r, err := tx.GetRecall(ctx, project, in.RecallID)
			if errors.Is(err, store.ErrNotFound) {
				return &app.Error{Op: op, Kind: app.KindNotFound, Field: "recall_id", Message: "no recall " + in.RecallID}
			}
			if err != nil {
				return err
			}
			if !slices.ContainsFunc(r.Items, func(it experience.RecallItem) bool { return it.RefID == h.ID }) {
				return app.Invalid(op, "recall_id", "recall %s did not consider heuristic %s", r.ID, h.ID)
			}
			if in.TaskID == "" {
				in.TaskID = r.TaskID
			}
		}
		if in.RecallID == "" {
			// A verdict given without its recall is about the latest
			// recall that showed the heuristic; with none, it is counted
			// but cannot advance the misleading streak (seed 001 demotes
			// after consecutive misleading recalls).
			rs, err := tx.ListRecalls(ctx, project, store.RecallFilter{RefID: h.ID, Limit: 1})
			if err != nil {
				return err
			}
			if len(rs) > 0 {
				in.RecallID = rs[0].ID
				if in.TaskID == "" {
					in.TaskID = rs[0].TaskID
				}
			}
		}
		earlier, err := tx.ListHeuristicFeedback(ctx, project, h.ID)
		if err != nil {
			return err
		}
		fb := experience.HeuristicFeedback{ID: app.NewID("hfb-"), Project: project, HeuristicID: h.ID, RecallID: in.RecallID,
			TaskID: in.TaskID, Verdict: v, Note: in.Note, Source: in.Source, CreatedAt: now}
		if _, err := tx.InsertHeuristicFeedback(ctx, fb); err != nil {
			return err
		}
		next, tr := s.cfg.Lifecycle.ApplyVerdict(h, fb, earlier, now)
		next.UpdatedAt = now
		if err := tx.UpdateHeuristic(ctx, next); err != nil {
			return err
		}
		res.Heuristic, res.Transition, res.FeedbackID = next, tr, fb.ID
		after, err = s.syncRecallIndex(ctx, tx, h, next, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	after()
	return res, nil
}

// HeuristicActionInput changes a heuristic's lifecycle by hand.
type HeuristicActionInput struct {
	Project     string `json:"project,omitempty"`
	HeuristicID string `json:"heuristic_id"`
	// Action is archive, outdated (its tools or environment changed),
	// supersede (By replaces it) or restore.
	Action string `json:"action"`
	Reason string `json:"reason,omitempty"`
	// By is the heuristic that supersedes this one.
	By string `json:"by,omitempty"`
}

// HeuristicActions lists the actions of HeuristicAction.
var HeuristicActions = []string{"archive", "outdated", "supersede", "restore"}

// HeuristicAction archives, marks outdated, supersedes or restores a
// heuristic.
func (s *Service) HeuristicAction(ctx context.Context, in HeuristicActionInput) (*HeuristicActionResult, error) {
	const op = "heuristic action"
	s.SettleRecalls()
	app.ScrubFields(&in.Reason, &in.By)
	now := s.env.Now()
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "heuristic_id", in.HeuristicID); err != nil {
		return nil, err
	}
	action := strings.ToLower(strings.TrimSpace(in.Action))
	if !slices.Contains(HeuristicActions, action) {
		return nil, app.Invalid(op, "action", "unknown action %q (want one of %s)", in.Action, strings.Join(HeuristicActions, ", "))
	}
	if err := app.ValidText(op, "reason", in.Reason, app.MaxTextLen, action == "archive" || action == "outdated"); err != nil {
		return nil, err
	}
	if action == "supersede" {
		if err := app.ValidID(op, "by", in.By); err != nil {
			return nil, err
		}
	}
	res := &HeuristicActionResult{}
	var after func()
	err = s.env.Update(ctx, op, func(tx store.Tx) error {
		h, err := s.heuristic(ctx, tx, op, project, in.HeuristicID, true)
		if err != nil {
			return err
		}
		var next experience.Heuristic
		var tr experience.Transition
		switch action {
		case "archive":
			next, tr, err = experience.Archive(h, in.Reason, now)
		case "outdated":
			next, tr, err = experience.MarkOutdated(h, in.Reason, now)
		case "supersede":
			if _, err := s.heuristic(ctx, tx, op, project, in.By, false); err != nil {
				var ee *app.Error
				if errors.As(err, &ee) {
					ee.Field = "by"
				}
				return err
			}
			next, tr, err = experience.Supersede(h, in.By, now)
		case "restore":
			next, tr, err = experience.Restore(h, now, s.cfg.Lifecycle)
		}
		if err != nil {
			var te *experience.TransitionError
			if errors.As(err, &te) {
				return &app.Error{Op: op, Kind: app.KindConflict, Field: "action", Message: te.Error(), Err: err}
			}
			return app.Invalid(op, "action", "%s", err.Error())
		}
		if in.Reason != "" && action != "archive" && action != "outdated" {
			next.StatusReason = tr.Reason + ": " + in.Reason
		}
		next.UpdatedAt = now
		if err := tx.UpdateHeuristic(ctx, next); err != nil {
			return err
		}
		res.Heuristic, res.Transition = next, &tr
		after, err = s.syncRecallIndex(ctx, tx, h, next, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	after()
	return res, nil
}

// syncRecallIndex keeps the search documents and vectors of heuristics to
// the non-archived ones: archiving removes a heuristic from full text and
// vectors (it is neither recalled nor merged into), restoring adds it back.
// Stale heuristics stay indexed so that a repeated lesson merges into them
// rather than starting over; recall skips them by status.
func (s *Service) syncRecallIndex(ctx context.Context, tx store.Tx, before, after experience.Heuristic, now time.Time) (func(), error) {
	wasIn := before.Status != experience.StatusArchived
	isIn := after.Status != experience.StatusArchived
	if wasIn == isIn {
		return func() {}, nil
	}
	w, err := s.vecWriter(ctx, tx, after.Project)
	if err != nil {
		return nil, err
	}
	if isIn {
		text := experience.HeuristicText(after.Kind, after.Trigger, after.Rule)
		vecs, err := s.embed(ctx, "restore heuristic", text)
		if err != nil {
			return nil, err
		}
		if err := w.put(ctx, tx, experience.ItemHeuristic, after.ID, text, vecs[0], now); err != nil {
			return nil, err
		}
	} else if err := w.remove(ctx, tx, experience.ItemHeuristic, after.ID); err != nil {
		return nil, err
	}
	return w.finish(ctx, tx)
}
