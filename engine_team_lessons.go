package kaizen

import (
	"context"

	"github.com/kaizenhq/kaizen/internal/app/experiencesvc"
	"github.com/kaizenhq/kaizen/internal/app/teamsvc"
)

// recordRunLessons stores a post-mortem's improvement actions as
// heuristics of the experience system (issue 16: "suggestions become
// heuristics"); its reusable patterns go to the learning system through
// recordRunOutcome.
func (e *Engine) recordRunLessons(ctx context.Context, a teamsvc.LessonsArgs) error {
	in := experiencesvc.LessonsInput{Project: a.Project, TaskID: a.TaskID, Goal: a.Goal}
	for _, l := range a.Lessons {
		in.Items = append(in.Items, experiencesvc.Lesson{Rule: l.Rule, Trigger: l.Trigger, Why: l.Why, Evidence: l.Evidence})
	}
	_, err := e.experience.RecordLessons(ctx, in)
	return err
}
