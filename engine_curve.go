package kaizen

import (
	"context"

	"github.com/kaizenhq/kaizen/internal/app/learningsvc"
)

// The learning curve of a project (the viewer's "Learning curve", the
// learning loop's picture of itself).
type (
	CurveQuery    = learningsvc.CurveQuery
	CurvePoint    = learningsvc.CurvePoint
	CurveChange   = learningsvc.CurveChange
	LearningCurve = learningsvc.LearningCurve
)

// Bounds and defaults of a CurveQuery.
const (
	DefaultCurveWindow = learningsvc.DefaultCurveWindow
	MaxCurveWindow     = learningsvc.MaxCurveWindow
)

// Kinds of CurveChange.
const (
	CurveProven      = learningsvc.CurveProven
	CurveDeprecated  = learningsvc.CurveDeprecated
	CurveAntiPattern = learningsvc.CurveAntiPattern
	CurveRecovered   = learningsvc.CurveRecovered
)

// LearningCurve reports how a project's success rate evolved as outcomes
// accumulated (a rolling rate over the outcome number with its 95 %
// Wilson interval, and the cumulative rate) and when the guidance changed:
// patterns becoming proven or deprecated, inverted into anti-patterns, and
// recovered.
func (e *Engine) LearningCurve(ctx context.Context, q CurveQuery) (*LearningCurve, error) {
	return e.learning.LearningCurve(ctx, q)
}
