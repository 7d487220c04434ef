package experience

import (
	"math"
	"strconv"

	"github.com/kaizenhq/kaizen/model"
)

// HeuristicText is the text embedded for a heuristic: for deduplication
// of new candidates and for the topic similarity of recall. It is
// "<trigger>\n<rule>", each trimmed with its whitespace collapsed; blank
// parts are left out.
//
// The kind is not included: the four kind words would add the same
// features to every heuristic of a kind, pulling unrelated lessons of one
// kind together and pushing a reworded duplicate of another kind apart
// (an "avoid X" and a "prefer not-X" are the same lesson); the
// calibration set (testdata/pairs) measured it (docs/experience.md). The
// why and the evidence are not included either: they differ from task to
// task for the same lesson and would make duplicates look unrelated.
func HeuristicText(kind HeuristicKind, trigger, rule string) string {
	_ = kind // see the doc comment: the kind is deliberately not embedded
	t, r := lifecycleOneLine(trigger), lifecycleOneLine(rule)
	switch {
	case t == "":
		return r
	case r == "":
		return t
	}
	return t + "\n" + r
}

// MergeDecision is what a new heuristic candidate does, given its nearest
// existing heuristic.
type MergeDecision struct {
	// Action is EvidenceCreated (a new candidate), EvidenceUpdated (a near
	// duplicate: add evidence and support to TargetID) or EvidenceAppend
	// (related: add evidence to TargetID).
	Action EvidenceAction
	// TargetID is the existing heuristic updated or appended to; "" when
	// the candidate creates a new heuristic.
	TargetID string
	// Similarity is the cosine similarity to the nearest heuristic (0 when
	// there is none or it is not a number).
	Similarity float64
}

// DecideMerge applies the merge thresholds t to best, the highest cosine
// similarity of a new candidate to an existing heuristic bestID:
//
//   - best ≥ t.Update → EvidenceUpdated (best == t.Update updates);
//   - t.Append ≤ best < t.Update → EvidenceAppend (best == t.Append appends);
//   - otherwise, or when there is no neighbour (bestID == "") or best is
//     NaN or infinite → EvidenceCreated.
//
// The update test comes first, so thresholds with Append > Update (which
// Config.Validate rejects) never append.
func DecideMerge(best float64, bestID string, t MergeCalibration) MergeDecision {
	if bestID == "" || math.IsNaN(best) || math.IsInf(best, 0) {
		return MergeDecision{Action: EvidenceCreated}
	}
	switch {
	case best >= t.Update:
		return MergeDecision{Action: EvidenceUpdated, TargetID: bestID, Similarity: best}
	case best >= t.Append:
		return MergeDecision{Action: EvidenceAppend, TargetID: bestID, Similarity: best}
	}
	return MergeDecision{Action: EvidenceCreated, Similarity: best}
}

// OfflineMergeCalibration returns the merge thresholds calibrated for the
// offline embedder at its default dimension (model.OfflineEmbedderName +
// "@512"), measured on testdata/pairs/pairs.jsonl by TestMergeCalibration
// (the numbers are in docs/experience.md). The offline embedder measures
// shared vocabulary, so a reworded duplicate scores far lower than the
// seed's 0.85, which assumes a neural embedder.
func OfflineMergeCalibration() map[string]MergeCalibration {
	return map[string]MergeCalibration{
		model.OfflineEmbedderName + "@" + strconv.Itoa(model.DefaultOfflineDimension): {Update: 0.48, Append: 0.43},
	}
}
