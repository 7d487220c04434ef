package mcp

import (
	"context"
	"fmt"
	"strings"

	"github.com/kaizenhq/kaizen"
)

// The learning curve over MCP: the tool learning_curve (the viewer's
// /learning page, GET /api/v1/learning-curve).

func init() { registerTools(curveTools) }

func curveTools() []*toolDef {
	return []*toolDef{
		define(toolDef{
			name:  "learning_curve",
			title: "The learning curve",
			description: "Show how the project's success rate moved as outcomes accumulated (the rolling rate of the last window " +
				"outcomes with its 95% interval, and the cumulative rate, at evenly spaced outcomes) and when the guidance changed: " +
				"patterns that became proven or deprecated, were inverted into anti-patterns, or recovered.",
			effect: readOnly,
			fields: map[string]field{
				"window": intField("How many outcomes each rolling rate covers (default 20).", 1, kaizen.MaxCurveWindow),
				"points": intField("How many evenly spaced points (default 240); the outcomes where the guidance changed are added.", 2, 2000),
			},
		}, func(ctx context.Context, e *kaizen.Engine, in kaizen.CurveQuery) (kaizen.LearningCurve, error) {
			return deref(e.LearningCurve(ctx, in))
		}, curveText),
	}
}

func curveText(c kaizen.LearningCurve) string {
	var b strings.Builder
	if c.Outcomes == 0 {
		fmt.Fprintf(&b, "Project %s has no outcomes yet.", c.Project)
		return b.String()
	}
	fmt.Fprintf(&b, "Learning curve of project %s over %d outcomes: success of the last %d went from %d/%d (%.0f%%) to %d/%d (%.0f%%, 95%% interval %.0f–%.0f%%).\n",
		c.Project, c.Outcomes+c.Skipped, c.Window, c.First.Succeeded, c.First.Total, c.First.Rate*100,
		c.Last.Succeeded, c.Last.Total, c.Last.Rate*100, c.Last.Low*100, c.Last.High*100)
	fmt.Fprintf(&b, "Guidance changes: %d.\n", c.ChangesTotal)
	for _, ch := range c.Changes {
		fmt.Fprintf(&b, "- outcome #%d: %q %s (%s)\n", ch.Outcome, ch.Content, ch.Kind, oneLine(ch.Detail))
	}
	return b.String()
}
