package kaizen

import "context"

// WarmGuidance prepares plan guidance for every project with patterns
// (the pattern cache, from its snapshot file when an earlier process saved
// one, the guidance index, the choice set and the context index), so that
// no guidance request waits for them; a daemon runs it in the background
// after opening. It stops at the first error or when ctx ends, and reports
// the projects prepared.
func (e *Engine) WarmGuidance(ctx context.Context) (int, error) {
	return e.learning.WarmGuidance(ctx)
}
