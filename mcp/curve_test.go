package mcp_test

import (
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
)

func init() { wantRequired["learning_curve"] = nil }

// TestLearningCurveTool reads the curve through the tool: the inversion
// at the third failure, the rates; a bad window is refused.
func TestLearningCurveTool(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i := range 3 {
		b.ok("record_outcome", outcome("f"+string(rune('0'+i)), false, "Split by file type"), nil)
	}
	var c kaizen.LearningCurve
	text := b.ok("learning_curve", map[string]any{"window": 2}, &c)
	if c.Outcomes != 3 || c.Window != 2 || len(c.Changes) != 1 || c.Changes[0].Outcome != 3 ||
		!strings.Contains(text, `outcome #3: "Split by file type" anti_pattern`) {
		t.Errorf("learning_curve: %+v\n%s", c, text)
	}
}
