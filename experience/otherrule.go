package experience

// OtherRule reports whether b is a's situation with another action: two
// lessons in one language whose triggers share most terms (the overlap
// coefficient of their lexicon concepts and content word stems is at least
// OtherRuleTrigger) while their rules share few (below OtherRuleRule), as
// in "when returning an error from a lower layer in Go: wrap it with %w"
// and "… : don't log the error and also return it". The heuristic writer
// keeps such a pair apart whatever the merge classifier says, as it does
// a contradiction (Contradicts): the classifier weighs a copied trigger
// as heavily as a reworded rule and folded five of 42 same-domain
// negatives of testdata/recall-eval/dedup-adv-dev.jsonl that way (dup18,
// docs/experience.md).
//
// Pairs across languages are left to the classifier: their rules meet
// only through the lexicon's concepts, so a translated rule often shares
// few terms with its original (three cross-language duplicates of the dev
// pairs would be kept apart).
func OtherRule(a, b MergeLesson) bool {
	at, ar := lifecycleOneLine(a.Trigger), lifecycleOneLine(a.Rule)
	bt, br := lifecycleOneLine(b.Trigger), lifecycleOneLine(b.Rule)
	if at == "" || ar == "" || bt == "" || br == "" {
		return false
	}
	if newPairText(at, ar).zh != newPairText(bt, br).zh {
		return false
	}
	ra, rb := partTerms(ar), partTerms(br)
	if len(ra) == 0 || len(rb) == 0 {
		return false
	}
	return overlapCoef(partTerms(at), partTerms(bt)) >= OtherRuleTrigger && overlapCoef(ra, rb) < OtherRuleRule
}

// The thresholds of OtherRule, chosen on the dev pairs the shipped merge
// classifier folds (dup18, 2026-11-26; docs/experience.md): at 0.75 and
// 0.45 it keeps apart the 5 same-language unrelated pairs of them and no
// duplicate.
const (
	OtherRuleTrigger = 0.75
	OtherRuleRule    = 0.45
)
