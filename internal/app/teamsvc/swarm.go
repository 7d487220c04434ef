package teamsvc

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/team"
)

// swarmInput completes a CP-7 input with what the coordinator decides when
// a swarm starts (the seed's step 1), for the fields the caller left out:
//
//   - pause: every in-progress task of the team except the affected ones
//     (the seed pauses the non-critical tasks; they resume when the swarm
//     ends);
//   - participants: every member but the coordinators ("all available
//     agents"), whose diagnoses end a round early.
func (s *Service) swarmInput(ctx context.Context, tx store.Tx, project, teamName string, raw json.RawMessage) (json.RawMessage, error) {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(raw, &in); err != nil || in == nil {
		return raw, nil // Start reports the bad input
	}
	_, hasPause := in["pause"]
	_, hasPart := in["participants"]
	if hasPause && hasPart {
		return raw, nil
	}
	if !hasPart {
		_, d, err := s.loadTeam(ctx, tx, "swarm", project, teamName)
		if err != nil {
			return nil, err
		}
		var names []string
		for _, m := range d.Members {
			if m.Role != team.RoleCoordinator {
				names = append(names, m.Name)
			}
		}
		in["participants"] = mustJSON(names)
	}
	if !hasPause {
		var affected []string
		if a, ok := in["affected_tasks"]; ok {
			_ = json.Unmarshal(a, &affected)
		}
		tasks, err := tx.ListTeamTasks(ctx, project, teamName, store.TeamTaskFilter{Statuses: []team.TaskStatus{team.StatusInProgress}})
		if err != nil {
			return nil, err
		}
		pause := []string{}
		for _, t := range tasks {
			if t.Status == team.StatusInProgress && !t.Paused && !slices.Contains(affected, t.ID) {
				pause = append(pause, t.ID)
			}
		}
		in["pause"] = mustJSON(pause)
	}
	return mustJSON(in), nil
}
