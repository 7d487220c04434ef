package teamsvc

import (
	"context"
	"strings"
	"time"

	"github.com/kaizenhq/kaizen/internal/jobs"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/team"
)

// LessonsJobKind is the job that stores a post-mortem's improvement
// actions as heuristics of the experience system.
const LessonsJobKind = "team.lessons"

// LessonArgs is one improvement action.
type LessonArgs struct {
	Rule     string   `json:"rule"`
	Trigger  string   `json:"trigger"`
	Why      string   `json:"why,omitempty"`
	Evidence []string `json:"evidence,omitempty"`
}

// LessonsArgs are a post-mortem run's improvement actions, recorded by a
// job after the run's transaction committed (the experience system embeds
// them, which must not hold the team's transaction).
type LessonsArgs struct {
	Project string `json:"project"`
	// TaskID is the experience they are stored under: one per run.
	TaskID  string       `json:"task_id"`
	Goal    string       `json:"goal"`
	Lessons []LessonArgs `json:"lessons"`
}

// enqueueLessons turns the record_heuristic commands of one step (CP-10
// emits them together when it writes its report) into one job.
func (s *Service) enqueueLessons(ctx context.Context, tx store.Tx, project string, run team.Run, ls []team.Learning, now time.Time) error {
	if len(ls) == 0 {
		return nil
	}
	args := LessonsArgs{Project: project, TaskID: "teamrun-" + run.ID + "-lessons", Goal: clip(scrub(ls[0].Context), 500)}
	for _, l := range ls {
		rule := clip(strings.TrimSpace(scrub(l.Content)), 1000)
		if rule == "" {
			continue
		}
		la := LessonArgs{Rule: rule, Trigger: clip(strings.TrimSpace(scrub(l.Trigger)), 500)}
		if la.Trigger == "" {
			la.Trigger = clip(scrub(l.Context), 500)
		}
		for _, e := range l.Evidence {
			la.Evidence = append(la.Evidence, clip(scrub(e), 300))
		}
		if len(la.Evidence) > 0 {
			la.Why = "what was difficult: " + strings.Join(la.Evidence, "; ")
		}
		args.Lessons = append(args.Lessons, la)
	}
	if len(args.Lessons) == 0 {
		return nil
	}
	_, err := jobs.Enqueue(ctx, tx, now, jobs.Request{Kind: LessonsJobKind, Args: args, UniqueKey: "team-lessons/" + project + "/" + run.ID})
	return err
}

// LessonsJob stores post-mortem lessons through record (the experience
// system's RecordLessons).
func LessonsJob(record func(ctx context.Context, a LessonsArgs) error) jobs.Kind {
	return recordJob(LessonsJobKind, record)
}
