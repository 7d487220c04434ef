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
	KindRanking   = learningsvc.KindRanking
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

// KindRankings returns what plan guidance recommends for a task of each
// kind the project has outcomes of (at most limit strategies each, default
// 5); none under the seed ranking.
func (e *Engine) KindRankings(ctx context.Context, project string, limit int) ([]KindRanking, error) {
	return e.learning.KindRankings(ctx, project, limit)
}
