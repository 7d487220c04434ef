package experiencesvc

import (
	"context"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/veccache"
	"github.com/kaizenhq/kaizen/store"
)

// The model as merge judge (experience.JudgeMerge): the verdicts on an
// experience's lessons are asked before the writer's transaction opens,
// under the project's writer lock, so that no model call holds the
// store's write transaction; the writer then applies them with the
// contradiction veto and the other-rule guard.

// judged is the model's verdict on one existing heuristic (or on an
// earlier lesson of the same experience: id "batch:<index>").
type judged struct {
	mergeNeighbour
	class experience.MergeClass
}

// batchKey names the i-th lesson of the experience being written.
func batchKey(i int) string { return "batch:" + strconv.Itoa(i) }

// MergeJudgeStats counts the merge judge's work since the service started.
type MergeJudgeStats struct {
	// Calls is the number of model calls made.
	Calls int64 `json:"calls"`
	// Fallbacks is the number of calls that failed (transport, timeout,
	// invalid reply), after which the writer decided without the model.
	Fallbacks int64 `json:"fallbacks"`
	// Vetoed is the number of verdicts duplicate or related that the
	// contradiction veto or the other-rule guard overruled.
	Vetoed int64 `json:"vetoed"`
}

// MergeJudgeStats returns the merge judge's counters.
func (s *Service) MergeJudgeStats() MergeJudgeStats {
	return MergeJudgeStats{Calls: s.judgeCalls.Load(), Fallbacks: s.judgeFallbacks.Load(), Vetoed: s.judgeVetoed.Load()}
}

// judgeLessons asks the model about each lesson of cands (vecs their
// vectors): what it is to the heuristics nearest to it
// (experience.MergeJudgeCandidates at most, cosine at least
// experience.MergeJudgeFloor), the earlier lessons of the same experience
// included. It returns nil when the model is not used; otherwise one
// entry per lesson: nil when the call failed (the writer then decides
// without the model), empty when nothing was near enough to ask about.
func (s *Service) judgeLessons(ctx context.Context, op, project string, cands []experience.TransferableHeuristic,
	vecs [][]float32) ([][]judged, error) {
	if !s.cfg.Merge.UseModel(s.chat != nil) || len(cands) == 0 {
		return nil, nil
	}
	type ask struct {
		near  []judged
		texts []experience.JudgeLesson
	}
	asks := make([]ask, len(cands))
	err := s.env.View(ctx, op, func(tx store.Tx) error {
		ix, err := s.vecs.Index(ctx, tx, project, experience.ItemHeuristic)
		if err != nil {
			return err
		}
		for i, vec := range vecs {
			asks[i] = ask{}
			if veccache.ZeroVector(vec) {
				continue
			}
			hits, err := ix.Search(vec, experience.MergeJudgeCandidates)
			if err != nil {
				return err
			}
			var near []mergeNeighbour
			for _, h := range hits {
				near = append(near, mergeNeighbour{h.ID, float64(h.Score)})
			}
			for j := range i {
				if !veccache.ZeroVector(vecs[j]) {
					near = append(near, mergeNeighbour{batchKey(j), dot(vec, vecs[j])})
				}
			}
			near = slices.DeleteFunc(near, func(n mergeNeighbour) bool {
				return math.IsNaN(n.cos) || n.cos < experience.MergeJudgeFloor
			})
			sortNearest(near)
			for _, n := range near {
				if len(asks[i].near) == experience.MergeJudgeCandidates {
					break
				}
				var l experience.JudgeLesson
				if j, ok := strings.CutPrefix(n.id, "batch:"); ok {
					k, _ := strconv.Atoi(j)
					c := cands[k]
					l = experience.JudgeLesson{Kind: c.Kind, Trigger: c.Trigger, Rule: c.Rule, Why: c.Why}
				} else {
					h, err := tx.GetHeuristic(ctx, project, n.id)
					if errors.Is(err, store.ErrNotFound) {
						continue
					}
					if err != nil {
						return err
					}
					l = experience.JudgeLesson{Kind: h.Kind, Trigger: h.Trigger, Rule: h.Rule, Why: h.Why}
				}
				asks[i].near = append(asks[i].near, judged{mergeNeighbour: n})
				asks[i].texts = append(asks[i].texts, l)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([][]judged, len(cands))
	for i, c := range cands {
		a := asks[i]
		if len(a.near) == 0 {
			out[i] = []judged{}
			continue
		}
		s.judgeCalls.Add(1)
		classes, err := experience.JudgeMerge(ctx, s.chat, experience.JudgeLesson{Kind: c.Kind, Trigger: c.Trigger, Rule: c.Rule, Why: c.Why}, a.texts)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			s.judgeFallbacks.Add(1)
			s.env.Logger.Warn("heuristic writer: the merge judge failed; the classifier decides", "project", project, "err", err)
			continue // out[i] stays nil: the writer decides without the model
		}
		for k := range a.near {
			a.near[k].class = classes[k]
		}
		out[i] = a.near
	}
	return out, nil
}

// applyVerdicts turns the model's verdicts on candidate c into the
// writer's decision: it updates the nearest heuristic judged a duplicate,
// else appends to the nearest judged related, else creates a new
// heuristic; a heuristic whose rule contradicts c's (experience.Contradicts)
// or that is c's situation with another action (experience.OtherRule) is
// never updated or appended to, whatever the model said. made maps the
// index of an earlier lesson of the same experience to the heuristic it
// created ("" when it was folded into another). best is the cosine of the
// nearest heuristic, reported on a creation.
func (s *Service) applyVerdicts(ctx context.Context, tx store.Tx, project string, c experience.TransferableHeuristic,
	verdicts []judged, made map[int]string, best float64) (experience.MergeDecision, error) {
	out := experience.MergeDecision{Action: experience.EvidenceCreated, Similarity: best}
	cand := experience.MergeLesson{Kind: c.Kind, Trigger: c.Trigger, Rule: c.Rule}
	for _, want := range []experience.MergeClass{experience.MergeDuplicate, experience.MergeRelated} {
		for _, v := range verdicts { // nearest first
			if v.class != want {
				continue
			}
			id := v.id
			if j, ok := strings.CutPrefix(v.id, "batch:"); ok {
				k, _ := strconv.Atoi(j)
				if id = made[k]; id == "" {
					continue
				}
			}
			h, err := tx.GetHeuristic(ctx, project, id)
			if errors.Is(err, store.ErrNotFound) {
				continue // removed since the model was asked
			}
			if err != nil {
				return out, err
			}
			other := experience.MergeLesson{Kind: h.Kind, Trigger: h.Trigger, Rule: h.Rule}
			if experience.Contradicts(other, cand) || experience.OtherRule(other, cand) {
				s.judgeVetoed.Add(1)
				continue // never one lesson, whatever the model says
			}
			act := experience.EvidenceUpdated
			if want == experience.MergeRelated {
				act = experience.EvidenceAppend
			}
			return experience.MergeDecision{Action: act, TargetID: h.ID, Similarity: v.cos}, nil
		}
	}
	return out, nil
}
