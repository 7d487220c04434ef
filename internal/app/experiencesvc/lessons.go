package experiencesvc

import (
	"context"
	"strings"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/app"
)

// Lesson is one improvement action of a team's post-mortem (CP-10): a rule
// for next time, when it applies, and what it is backed by.
type Lesson struct {
	Rule     string   `json:"rule"`
	Trigger  string   `json:"trigger"`
	Why      string   `json:"why,omitempty"`
	Evidence []string `json:"evidence,omitempty"`
}

// LessonsInput records a post-mortem's improvement actions.
type LessonsInput struct {
	Project string `json:"project,omitempty"`
	// TaskID names the experience the lessons are stored under (one per
	// post-mortem run; a second call with the same id changes nothing).
	TaskID string   `json:"task_id"`
	Goal   string   `json:"goal"`
	Items  []Lesson `json:"items"`
}

// maxLessons bounds one post-mortem's heuristics.
const maxLessons = 50

// RecordLessons stores a post-mortem's improvement actions as an
// experience whose transferable heuristics are the actions (kind prefer):
// they are merged into the heuristic store like any extracted lesson
// (deduplicated against the existing heuristics, candidates until
// supported by other tasks) and recalled for similar work. The text is an
// agent's: it is redacted before it is stored.
func (s *Service) RecordLessons(ctx context.Context, in LessonsInput) (*ExperienceResult, error) {
	const op = "record post-mortem lessons"
	project, err := s.env.ResolveProject(op, in.Project)
	if err != nil {
		return nil, err
	}
	if err := app.ValidID(op, "task_id", in.TaskID); err != nil {
		return nil, err
	}
	if len(in.Items) == 0 || len(in.Items) > maxLessons {
		return nil, app.Invalid(op, "items", "1..%d lessons required", maxLessons)
	}
	exp := experience.TaskExperience{Project: project, TaskID: in.TaskID, Goal: clipText(in.Goal, 500),
		SuccessCriteria: []string{}, FailedAttempts: []experience.FailedAttempt{}, Signals: []experience.FeedbackSignal{},
		WorkingApproach: "", Mode: s.cfg.Mode, Extractor: experience.ExtractorPostMortem}
	for i, l := range in.Items {
		rule, trigger := strings.TrimSpace(l.Rule), strings.TrimSpace(l.Trigger)
		if rule == "" || trigger == "" {
			return nil, app.Invalid(op, "items", "lesson %d needs a rule and a trigger", i)
		}
		why := strings.TrimSpace(l.Why)
		if why == "" {
			why = "agreed in a team post-mortem"
		}
		exp.Heuristics = append(exp.Heuristics, experience.TransferableHeuristic{Kind: experience.KindPrefer,
			Trigger: clipText(trigger, 500), Rule: clipText(rule, 1000), Why: clipText(why, 1000),
			Evidence: clipText(strings.Join(l.Evidence, "; "), 2000)})
	}
	return s.storeExperience(ctx, op, exp, s.env.Now())
}

func clipText(s string, n int) string {
	r := []rune(strings.TrimSpace(s))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n-1]) + "…"
}
