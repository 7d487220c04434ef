package learningsvc

import (
	"strings"

	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/store"
)

// outcomeHint tells the store what recording o will read (store.WriteHint):
// the task's state, and the contents resolvePattern will look up for the
// outcome's patterns, so that a group-commit writer can read them for a
// whole group at once. It only has to be close: a content it misses is
// read as before, one it adds in vain costs nothing.
func (s *Service) outcomeHint(o learning.Outcome, in OutcomeInput) store.WriteHint {
	h := store.WriteHint{Project: o.Project, TaskID: o.TaskID}
	add := func(ref string) {
		ref = strings.TrimSpace(ref)
		if ref == "" || isPatternID(ref) {
			return
		}
		if st, ok := learning.StrategyByLabel(ref); ok {
			h.Patterns = append(h.Patterns, st.Label, st.LabelZH, st.LabelFor(s.lc.Locale))
			return
		}
		h.Patterns = append(h.Patterns, ref)
	}
	for _, p := range in.Patterns {
		add(p)
	}
	add(o.Strategy)
	for _, x := range learning.ExtractPatterns(in.Description) {
		add(x.LabelFor(s.lc.Locale))
	}
	return h
}
