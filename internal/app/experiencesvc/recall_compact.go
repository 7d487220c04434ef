package experiencesvc

import "github.com/kaizenhq/kaizen/experience"

// injectedItems keeps the items a recall injected: what a stored recall
// needs for feedback, explanations and RecallFilter.RefID. The caller of
// Recall still gets every considered item in its result; storing them all
// made recalls half of a busy database (issue 12).
func injectedItems(items []experience.RecallItem) []experience.RecallItem {
	out := make([]experience.RecallItem, 0, len(items))
	for _, it := range items {
		if it.Injected {
			out = append(out, it)
		}
	}
	return out
}
