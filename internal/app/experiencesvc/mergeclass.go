package experiencesvc

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/store"
)

// mergeNeighbours is how many of the nearest heuristics (by the cosine of
// the whole texts) the merge classifier compares a candidate with.
const mergeNeighbours = 3

// mergeNeighbour is an existing heuristic near a candidate.
type mergeNeighbour struct {
	id  string
	cos float64
}

// sortNearest orders neighbours nearest first, ties by id.
func sortNearest(near []mergeNeighbour) {
	slices.SortStableFunc(near, func(a, b mergeNeighbour) int {
		switch {
		case a.cos > b.cos:
			return -1
		case a.cos < b.cos:
			return 1
		}
		return strings.Compare(a.id, b.id)
	})
}

// classifyMerge decides what candidate c does with the merge classifier
// clf, given its nearest heuristics (best first, at most mergeNeighbours
// are read): it updates the neighbour the classifier calls a duplicate
// with the highest probability, else appends to the one it calls related
// with the highest probability, else creates a new heuristic. Kinds may
// differ ("avoid --force" and "prefer --force-with-lease" are one lesson);
// the kind is one of the classifier's features. A neighbour whose rule
// contradicts the candidate's (experience.Contradicts) is never updated or
// appended to.
func (s *Service) classifyMerge(ctx context.Context, tx store.Tx, project string, c experience.TransferableHeuristic,
	clf *experience.MergeClassifier, near []mergeNeighbour) (experience.MergeDecision, error) {
	const op = "merge heuristic"
	sortNearest(near)
	if len(near) > mergeNeighbours {
		near = near[:mergeNeighbours]
	}
	// The candidate's texts are the same in every comparison: each
	// distinct text is embedded once per decision.
	memo := map[string][]float32{}
	embed := func(texts []string) ([][]float32, error) {
		var missing []string
		for _, t := range texts {
			if _, ok := memo[t]; !ok && !slices.Contains(missing, t) {
				missing = append(missing, t)
			}
		}
		if len(missing) > 0 {
			vecs, err := s.embed(ctx, op, missing...)
			if err != nil {
				return nil, err
			}
			for i, t := range missing {
				memo[t] = vecs[i]
			}
		}
		out := make([][]float32, len(texts))
		for i, t := range texts {
			out[i] = memo[t]
		}
		return out, nil
	}
	cand := experience.MergeLesson{Kind: c.Kind, Trigger: c.Trigger, Rule: c.Rule}
	out := experience.MergeDecision{Action: experience.EvidenceCreated}
	if len(near) > 0 {
		out.Similarity = near[0].cos
	}
	var bestP float64
	for _, n := range near {
		h, err := tx.GetHeuristic(ctx, project, n.id)
		if errors.Is(err, store.ErrNotFound) {
			continue // removed since the index was read
		}
		if err != nil {
			return out, err
		}
		x, err := experience.MergeFeatures(experience.MergeLesson{Kind: h.Kind, Trigger: h.Trigger, Rule: h.Rule}, cand, embed)
		if errors.Is(err, experience.ErrMergeInput) {
			continue // nothing to compare (a heuristic without trigger and rule): keep apart
		}
		if err != nil {
			return out, err
		}
		act, p, err := clf.Decide(x)
		if err != nil {
			return out, &app.Error{Op: op, Kind: app.KindInternal, Message: "merge classifier: " + err.Error(), Err: err}
		}
		if act != experience.EvidenceCreated && experience.Contradicts(experience.MergeLesson{Kind: h.Kind, Trigger: h.Trigger, Rule: h.Rule}, cand) {
			continue // opposite rules are never one lesson, whatever the classifier says
		}
		if act != experience.EvidenceCreated && experience.OtherRule(experience.MergeLesson{Kind: h.Kind, Trigger: h.Trigger, Rule: h.Rule}, cand) {
			continue // the same situation with another action is another lesson
		}
		switch {
		case act == experience.EvidenceUpdated && (out.Action != experience.EvidenceUpdated || p[experience.MergeDuplicate] > bestP):
			out, bestP = experience.MergeDecision{Action: act, TargetID: h.ID, Similarity: n.cos}, p[experience.MergeDuplicate]
		case act == experience.EvidenceAppend && out.Action != experience.EvidenceUpdated &&
			(out.Action != experience.EvidenceAppend || p[experience.MergeRelated] > bestP):
			out, bestP = experience.MergeDecision{Action: act, TargetID: h.ID, Similarity: n.cos}, p[experience.MergeRelated]
		}
	}
	return out, nil
}
