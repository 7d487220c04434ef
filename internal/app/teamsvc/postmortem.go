package teamsvc

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/team"
)

// Bounds of the execution data a post-mortem collects.
const (
	pmMaxMessages = 20000 // bus messages scanned
	pmHistory     = 20    // history items kept per member
)

// postMortemInput completes a CP-10 input with what the coordinator
// collects before a post-mortem (the seed's step 1), for every field the
// caller left out:
//
//   - team and subject: the run's;
//   - execution: the team's tasks by status and its bus messages
//     (escalations, fix cycles, errors) since its previous post-mortem;
//   - participants: every member but the coordinators (the seed asks all
//     agents);
//   - history: each participant's notable bus messages, the report's
//     source for a member that does not answer (or is gone);
//   - work_succeeded: no task failed and no finished run of the team
//     ended failed or escalated — the outcome its reusable patterns are
//     recorded with.
func (s *Service) postMortemInput(ctx context.Context, tx store.Tx, project, teamName, subject string, raw json.RawMessage, tasks []team.Task) (json.RawMessage, error) {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(raw, &in); err != nil || in == nil {
		return raw, nil // Start reports the bad input
	}
	if _, ok := in["team"]; !ok {
		in["team"] = mustJSON(teamName)
	}
	if _, ok := in["subject"]; !ok && subject != "" {
		in["subject"] = mustJSON(clip(subject, 900))
	}
	_, d, err := s.loadTeam(ctx, tx, "post-mortem", project, teamName)
	if err != nil {
		return nil, err
	}
	var participants []string
	if p, ok := in["participants"]; ok {
		_ = json.Unmarshal(p, &participants)
	} else {
		for _, m := range d.Members {
			if m.Role != team.RoleCoordinator {
				participants = append(participants, m.Name)
			}
		}
		in["participants"] = mustJSON(participants)
	}
	_, hasExec := in["execution"]
	_, hasHist := in["history"]
	_, hasOK := in["work_succeeded"]
	if hasExec && hasHist && hasOK {
		return mustJSON(in), nil
	}
	// The work under review is what happened since the team's previous
	// post-mortem (a team that runs several cycles reviews each once).
	runs, err := tx.ListTeamRuns(ctx, project, store.TeamRunFilter{Team: teamName})
	if err != nil {
		return nil, err
	}
	var since time.Time
	for _, r := range runs {
		if r.Pattern == string(team.CP10) && r.CreatedAt.After(since) {
			since = r.CreatedAt
		}
	}
	var exec team.ExecutionData
	for _, t := range tasks {
		if !t.CreatedAt.IsZero() && !t.CreatedAt.After(since) {
			continue
		}
		exec.TotalTasks++
		switch t.Status {
		case team.StatusCompleted:
			exec.Completed++
		case team.StatusFailed:
			exec.Failed++
		case team.StatusCancelled:
			exec.Cancelled++
		}
	}
	history := map[string][]team.HistoryItem{}
	var after int64
	for exec.TotalMessages < pmMaxMessages {
		ms, err := tx.ListTeamMessages(ctx, project, teamName, after, 1000)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			after = m.Seq
			if !m.CreatedAt.After(since) {
				continue
			}
			exec.TotalMessages++
			switch m.Type {
			case team.MsgEscalate:
				exec.Escalations++
			case team.MsgFixRequired:
				exec.FixCycles++
			case team.MsgError:
				exec.Errors++
			}
			if !slices.Contains(participants, m.From) {
				continue
			}
			switch m.Type {
			case team.MsgError, team.MsgBlocker, team.MsgEscalate, team.MsgFixRequired, team.MsgImplComplete, team.MsgTaskComplete, team.MsgPlanApproved:
				h := append(history[m.From], team.HistoryItem{Type: m.Type, Summary: clip(m.Summary, team.MaxSummaryLen)})
				if len(h) > pmHistory {
					h = h[len(h)-pmHistory:]
				}
				history[m.From] = h
			}
		}
		if len(ms) < 1000 {
			break
		}
	}
	if !hasExec {
		in["execution"] = mustJSON(exec)
	}
	if !hasHist && len(history) > 0 {
		in["history"] = mustJSON(history)
	}
	if !hasOK {
		ok := exec.Failed == 0
		for _, r := range runs {
			if !r.Finished || r.ParentID != "" || r.Pattern == string(team.CP10) || !r.CreatedAt.After(since) {
				continue
			}
			run, err := decodeRun(r)
			if err == nil && run.Outcome != nil && (run.Outcome.Status == team.OutcomeFailed || run.Outcome.Status == team.OutcomeEscalated) {
				ok = false
			}
		}
		in["work_succeeded"] = mustJSON(ok)
	}
	return mustJSON(in), nil
}
