package experience

import (
	"strconv"

	"github.com/kaizenhq/kaizen/internal/tokenize"
)

// Overlap features (dup18, 2026-11-26): the share of the shorter side's
// terms found in the longer side, over lexicon concepts and content word
// stems together. A reworded duplicate that adds or drops a clause keeps
// most of the shorter side's terms, while Jaccard (concepts_*, words_whole)
// falls with the length difference.
//
// None of them is a feature of MergeFeatures: a classifier refitted with
// them gained little under cross-validation on the dev pairs and merged
// distinct lessons of the recall corpora (docs/experience.md, "Same
// situation, another action"). internal/recalleval's exploration tests
// measure them; OtherRule uses the same terms (partTerms, overlapCoef).

// MergeOverlapFeatureNames names the features of MergeOverlapFeatures.
var MergeOverlapFeatureNames = []string{
	"overlap_whole",          // overlap coefficient of terms, trigger and rule together
	"overlap_trigger",        // triggers only
	"overlap_rule",           // rules only
	"overlap_rule_concepts",  // rules, lexicon concepts only
	"overlap_trigger_x_rule", // overlap_trigger · overlap_rule
}

// MergeOverlapFeatures computes the overlap features of a pair
// (MergeOverlapFeatureNames).
func MergeOverlapFeatures(a, b MergeLesson) []float64 {
	at, ar := partTerms(lifecycleOneLine(a.Trigger)), partTerms(lifecycleOneLine(a.Rule))
	bt, br := partTerms(lifecycleOneLine(b.Trigger)), partTerms(lifecycleOneLine(b.Rule))
	return []float64{
		overlapCoef(union(at, ar), union(bt, br)),
		overlapCoef(at, bt),
		overlapCoef(ar, br),
		overlapCoef(conceptsOnly(ar), conceptsOnly(br)),
		overlapCoef(at, bt) * overlapCoef(ar, br),
	}
}

// partTerms returns the terms of one part: "c<n>" for each lexicon concept
// (English stems and Chinese runs) and "w<stem>" for each content word
// stem of two or more letters.
func partTerms(text string) map[string]bool {
	out := map[string]bool{}
	var w tokenize.Words
	w.Scan(text)
	for _, tk := range w.Tokens {
		if tk.Han {
			tokenize.HanConcepts(w.Runes[tk.From:tk.To], func(c int) { out["c"+strconv.Itoa(c)] = true })
			continue
		}
		if tk.Stop || tk.Part {
			continue
		}
		stem := w.Buf[tk.StemFrom:tk.StemTo]
		for _, c := range tokenize.WordConcepts(stem) {
			out["c"+strconv.Itoa(c)] = true
		}
		if len(stem) >= 2 {
			out["w"+string(stem)] = true
		}
	}
	return out
}

// overlapCoef is |a ∩ b| / min(|a|, |b|), 0 when either is empty.
func overlapCoef(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	inter := 0
	for k := range a {
		if b[k] {
			inter++
		}
	}
	return float64(inter) / float64(len(a))
}

func conceptsOnly(m map[string]bool) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		if k[0] == 'c' {
			out[k] = true
		}
	}
	return out
}
