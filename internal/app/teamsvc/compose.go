package teamsvc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/team"
)

// ComposeInput starts a composition of collaboration patterns (one of the
// seed's five named compositions or explicit steps; see
// team.CompositionSpec and `kaizen team run --file`).
type ComposeInput struct {
	Project string               `json:"project,omitempty"`
	Team    string               `json:"team,omitempty"` // default the spec's
	Spec    team.CompositionSpec `json:"spec"`
}

// StartComposition checks every step of a composition (the pattern
// inputs, the step conditions, CP-10 last) and starts its first step.
// The runs carry the composition: when one finishes, the next step whose
// condition holds starts in the same transaction (see nextStep).
func (s *Service) StartComposition(ctx context.Context, in ComposeInput) (*RunInfo, error) {
	const op = "start composition"
	teamName := cmp.Or(in.Team, in.Spec.Team)
	if teamName == "" {
		return nil, app.Invalid(op, "team", "required (--team or team in the file)")
	}
	if err := app.ValidText(op, "subject", in.Spec.Subject, 1000, false); err != nil {
		return nil, err
	}
	comp, cfg, err := in.Spec.Expand()
	if err != nil {
		return nil, teamErr(op, err)
	}
	for i := range comp.Steps {
		comp.Steps[i].Input = scrubJSON(comp.Steps[i].Input)
	}
	comp.Subject = scrub(comp.Subject)
	first := comp.Steps[0]
	return s.StartRun(ctx, StartRunInput{Project: in.Project, Team: teamName, Pattern: first.Pattern, Input: first.Input,
		Config: &cfg, Subject: scrub(in.Spec.Subject), compose: &comp})
}

// nextStep starts the step of a composition that follows a finished
// top-level run, when one's condition holds; a cancelled run cancels the
// composition. A step refused by the
// composition rules (CP-10 while tasks are open, a second swarm) ends the
// composition; both are recorded as team events.
func (s *Service) nextStep(ctx context.Context, tx store.Tx, project string, run team.Run, now time.Time) error {
	c := run.Compose
	if c == nil || run.ParentID != "" || run.Outcome == nil {
		return nil
	}
	if n := len(run.Decisions); n > 0 && run.Decisions[n-1].Event == "cancel" {
		return s.event(ctx, tx, project, run.Team, now, "composition", run.ID, "", "", fmt.Sprintf("composition %s cancelled at step %d (%s)", c.Name, c.Step+1, run.Pattern), nil)
	}
	i, ok := c.Next(run.Outcome.Status)
	if !ok {
		return s.event(ctx, tx, project, run.Team, now, "composition", run.ID, "", "", fmt.Sprintf("composition %s ended after step %d (%s %s)", c.Name, c.Step+1, run.Pattern, run.Outcome.Status), nil)
	}
	next := *c
	next.Step = i
	st := c.Steps[i]
	cfg := run.Config
	nr, err := s.startRun(ctx, tx, project, StartRunInput{Team: run.Team, Pattern: st.Pattern, Input: st.Input, Config: &cfg, Subject: c.Subject, compose: &next}, "", "", "", now)
	if err != nil {
		var ae *app.Error
		if !errors.As(err, &ae) || ae.Kind == app.KindInternal {
			return err
		}
		return s.event(ctx, tx, project, run.Team, now, "composition", run.ID, "", "", fmt.Sprintf("composition %s stopped: step %d (%s) refused: %s", c.Name, i+1, st.Pattern, ae.Message), nil)
	}
	return s.event(ctx, tx, project, run.Team, now, "composition", nr.ID, "", nr.State, fmt.Sprintf("composition %s: step %d (%s) after %s %s", c.Name, i+1, st.Pattern, run.Pattern, run.Outcome.Status), nil)
}
