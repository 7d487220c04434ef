package mcp_test

import (
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/team"
)

func init() {
	wantRequired["team_create"] = []string{"name", "members"}
	wantRequired["team_show"] = []string{"team"}
	wantRequired["team_list"] = nil
	wantRequired["team_dissolve"] = []string{"team"}
	wantRequired["team_task_create"] = []string{"team", "subject"}
	wantRequired["team_task_update"] = []string{"team", "task"}
	wantRequired["team_task_list"] = []string{"team"}
	wantRequired["team_task_get"] = []string{"team", "task"}
	wantRequired["team_claim"] = []string{"team", "member"}
	wantRequired["team_heartbeat"] = []string{"team", "task", "member", "epoch"}
	wantRequired["team_report"] = []string{"team", "task", "member", "epoch", "status"}
	wantRequired["team_send"] = []string{"team", "from", "to", "type"}
	wantRequired["team_inbox"] = []string{"team", "member"}
	wantRequired["team_ack"] = []string{"team", "member", "seqs"}
	wantRequired["team_start_pattern"] = []string{"team", "pattern"}
	wantRequired["team_run_state"] = []string{"run"}
	wantRequired["team_run_list"] = nil
	wantRequired["team_run_cancel"] = []string{"run"}
	wantRequired["team_select_pattern"] = []string{"task_type", "complexity", "risk_level"}
}

// teamWriters are the team tools that change stored state.
var teamWriters = []string{"team_create", "team_dissolve", "team_task_create", "team_task_update",
	"team_claim", "team_heartbeat", "team_report", "team_send", "team_inbox", "team_ack", "team_start_pattern", "team_run_cancel"}

// exerciseTeamTools runs a small team through the tools: create, task,
// claim, heartbeat, report, message, inbox, ack, dissolve.
func exerciseTeamTools(t *testing.T, b *testBundle) {
	t.Helper()
	agent := map[string]any{"kind": "agent"}
	b.ok("team_create", map[string]any{"name": "crew", "members": []any{
		map[string]any{"name": "lead", "role": "coordinator", "worker": agent},
		map[string]any{"name": "ann", "role": "executor", "worker": agent}}}, nil)
	b.ok("team_show", map[string]any{"team": "crew"}, nil)
	var teams kaizen.TeamList
	b.ok("team_list", map[string]any{}, &teams)
	if len(teams.Items) != 1 || teams.Total != 1 || teams.Project == "" {
		t.Fatalf("team_list %+v", teams)
	}
	var task team.Task
	b.ok("team_task_create", map[string]any{"team": "crew", "id": "t1", "subject": "implement"}, &task)
	b.ok("team_task_create", map[string]any{"team": "crew", "id": "t2", "subject": "later", "blocked_by": []string{"t1"}}, nil)
	var claim kaizen.ClaimResult
	b.ok("team_claim", map[string]any{"team": "crew", "member": "ann"}, &claim)
	if claim.Task == nil || claim.Task.ID != "t1" || claim.Epoch != 1 {
		t.Fatalf("claim %+v", claim)
	}
	b.ok("team_heartbeat", map[string]any{"team": "crew", "member": "ann", "task": "t1", "epoch": 1, "progress": map[string]any{"percent": 50}}, nil)
	b.ok("team_report", map[string]any{"team": "crew", "member": "ann", "task": "t1", "epoch": 1, "status": "completed"}, nil)
	b.ok("team_task_get", map[string]any{"team": "crew", "task": "t1"}, nil)
	b.ok("team_task_update", map[string]any{"team": "crew", "task": "t2", "status": "cancelled", "cause": "not needed"}, nil)
	var tasks kaizen.TeamTaskList
	b.ok("team_task_list", map[string]any{"team": "crew"}, &tasks)
	if len(tasks.Items) != 2 || tasks.Total != 2 || tasks.Items[0].ID != "t1" {
		t.Fatalf("team_task_list %+v", tasks)
	}
	b.ok("team_send", map[string]any{"team": "crew", "from": "lead", "to": "ann", "type": "fix_required", "data": map[string]any{"suggestion": "rename"}}, nil)
	var inbox kaizen.InboxResult
	b.ok("team_inbox", map[string]any{"team": "crew", "member": "ann"}, &inbox)
	if len(inbox.Items) != 1 {
		t.Fatalf("inbox %+v", inbox)
	}
	b.ok("team_ack", map[string]any{"team": "crew", "member": "ann", "seqs": []int64{inbox.Items[0].Message.Seq}}, nil)
	var run kaizen.RunInfo
	b.ok("team_start_pattern", map[string]any{"team": "crew", "pattern": "CP-2", "input": map[string]any{"artifact": "login.go", "reviewer": "executor"}}, &run)
	b.ok("team_run_state", map[string]any{"run": run.Run.ID}, nil)
	var runs kaizen.RunList
	b.ok("team_run_list", map[string]any{"team": "crew"}, &runs)
	if len(runs.Items) != 1 || runs.Total != 1 || runs.Items[0].ID != run.Run.ID {
		t.Fatalf("team_run_list %+v", runs)
	}
	b.ok("team_run_cancel", map[string]any{"run": run.Run.ID, "reason": "test"}, nil)
	b.ok("team_select_pattern", map[string]any{"task_type": "feature", "complexity": "high", "risk_level": "low"}, nil)
	b.ok("team_dissolve", map[string]any{"team": "crew"}, nil)
}
