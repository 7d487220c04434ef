package kaizen_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/team"
)

// teamLines returns the export's team records, one JSON line each.
func teamLines(t *testing.T, export string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(export), "\n") {
		var rec struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(rec.Type, "team") {
			out = append(out, l)
		}
	}
	return out
}

// TestTeamExportImport: a team with its task graph, a held lease, an
// acknowledged message, its events and a pattern run with its event log
// come back whole in a fresh home; the team records of the second home's
// export are the first's line for line; a second import adds nothing.
func TestTeamExportImport(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		agent := team.Worker{Kind: team.WorkerAgent}
		must := func(what string, err error) {
			t.Helper()
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		}
		_, err := b.e.CreateTeam(ctx, kaizen.TeamInput{Name: "alpha", Members: []team.Member{
			{Name: "lead", Role: team.RoleCoordinator, Worker: agent}, {Name: "ann", Role: team.RoleExecutor, Worker: agent},
			{Name: "rev", Role: team.RoleReviewer, Worker: agent}}})
		must("team", err)
		_, err = b.e.AddTeamTasks(ctx, kaizen.AddTeamTasksInput{Team: "alpha", Tasks: []kaizen.TeamTaskInput{
			{ID: "t1", Subject: "parse the config"}, {ID: "t2", Subject: "wire the config", BlockedBy: []string{"t1"}}}})
		must("tasks", err)
		claim, err := b.e.ClaimTask(ctx, kaizen.ClaimInput{Team: "alpha", Member: "ann", Task: "t1"})
		must("claim", err)
		if claim.Task == nil {
			t.Fatal("no task claimed")
		}
		m, err := b.e.SendMessage(ctx, kaizen.SendInput{Team: "alpha", From: "lead", To: "ann", Type: "note", Summary: "start with t1"})
		must("message", err)
		_, err = b.e.AckMessages(ctx, kaizen.AckInput{Team: "alpha", Member: "ann", Seqs: []int64{m.Seq}})
		must("ack", err)
		ri, err := b.e.StartRun(ctx, kaizen.StartRunInput{Team: "alpha", Pattern: team.CP2, Input: json.RawMessage(`{"artifact":"login.go"}`)})
		must("run", err)
		_, err = b.e.CreateTeam(ctx, kaizen.TeamInput{Name: "beta", Members: []team.Member{{Name: "lead", Role: team.RoleCoordinator, Worker: agent}}})
		must("team beta", err)
		_, err = b.e.DissolveTeam(ctx, "", "beta")
		must("dissolve", err)

		var buf bytes.Buffer
		exp, err := b.e.Export(ctx, &buf, kaizen.ExportOptions{All: true})
		must("export", err)
		for _, typ := range []string{"team", "team_task", "team_message", "team_event", "team_run", "team_run_event"} {
			if exp.Records[typ] == 0 {
				t.Errorf("the export has no %s record: %v", typ, exp.Records)
			}
		}

		fresh := setup(t, backend)
		fresh.clock.Set(b.clock.Now())
		res, err := fresh.e.Import(ctx, bytes.NewReader(buf.Bytes()), kaizen.ImportOptions{})
		must("import", err)
		for typ, n := range exp.Records {
			if strings.HasPrefix(typ, "team") && res.Records[typ].Inserted != n {
				t.Errorf("%s: inserted %d of %d", typ, res.Records[typ].Inserted, n)
			}
		}

		teams, err := fresh.e.ListTeams(ctx, "", true)
		must("list teams", err)
		if len(teams) != 2 || teams[0].Name != "alpha" || len(teams[0].Members) != 3 || !teams[1].Dissolved {
			t.Fatalf("teams: %+v", teams)
		}
		t2, err := fresh.e.GetTeamTask(ctx, "", "alpha", "t2")
		must("t2", err)
		if len(t2.BlockedBy) != 1 || t2.BlockedBy[0] != "t1" {
			t.Errorf("t2's edges: %v", t2.BlockedBy)
		}
		t1, err := fresh.e.GetTeamTask(ctx, "", "alpha", "t1")
		must("t1", err)
		if t1.Status != team.StatusInProgress || t1.Lease.Holder != "ann" || t1.Lease.Epoch != claim.Epoch ||
			!t1.Lease.ExpiresAt.Equal(claim.ExpiresAt) {
			t.Errorf("t1's lease: %+v (claimed %+v)", t1, claim)
		}
		ds, err := fresh.e.MessageDeliveries(ctx, "", "alpha", m.Seq)
		must("deliveries", err)
		if len(ds) != 1 || ds[0].Recipient != "ann" || ds[0].State != team.DeliveryAcknowledged {
			t.Errorf("deliveries: %+v", ds)
		}
		run, err := fresh.e.GetRun(ctx, "", ri.Run.ID)
		must("run", err)
		if run.Run.State != ri.Run.State {
			t.Errorf("run state %s, want %s", run.Run.State, ri.Run.State)
		}
		// The message bus continues after the imported seqs.
		next, err := fresh.e.SendMessage(ctx, kaizen.SendInput{Team: "alpha", From: "ann", To: "lead", Type: "note", Summary: "on it"})
		must("next message", err)
		if want := teams[0].LastSeq + 1; next.Seq != want {
			t.Errorf("next seq %d, want %d", next.Seq, want)
		}

		// Line for line (before the new message): export the first home again after the same message.
		_, err = b.e.SendMessage(ctx, kaizen.SendInput{Team: "alpha", From: "ann", To: "lead", Type: "note", Summary: "on it"})
		must("same message", err)
		var a, c bytes.Buffer
		_, err = b.e.Export(ctx, &a, kaizen.ExportOptions{All: true})
		must("export a", err)
		_, err = fresh.e.Export(ctx, &c, kaizen.ExportOptions{All: true})
		must("export c", err)
		la, lc := teamLines(t, a.String()), teamLines(t, c.String())
		if len(la) != len(lc) {
			t.Fatalf("%d team records, then %d", len(la), len(lc))
		}
		for i := range la {
			if la[i] != lc[i] {
				t.Errorf("record %d differs:\n%s\n%s", i, la[i], lc[i])
			}
		}

		again, err := fresh.e.Import(ctx, bytes.NewReader(buf.Bytes()), kaizen.ImportOptions{})
		must("import again", err)
		for typ, c := range again.Records {
			if c.Inserted != 0 {
				t.Errorf("the second import inserted %d %s", c.Inserted, typ)
			}
		}
		var d bytes.Buffer
		_, err = fresh.e.Export(ctx, &d, kaizen.ExportOptions{All: true})
		must("export d", err)
		if got := teamLines(t, d.String()); strings.Join(got, "\n") != strings.Join(lc, "\n") {
			t.Error("the second import changed the team records")
		}
	})
}

// TestTeamImportRefusesBrokenRecords: a message whose seq skips one, a task
// of a team not in the file, a run that is not JSON are refused whole.
func TestTeamImportRefusesBrokenRecords(t *testing.T) {
	b := setup(t, "sqlite")
	now := b.clock.Now().UTC().Format(time.RFC3339)
	head := `{"type":"header","record":{"format":"kaizen-export","version":2,"exported_at":"` + now + `","projects":["proj"]}}` + "\n"
	teamRec := `{"type":"team","record":{"project":"proj","name":"alpha","doc":{},"last_seq":0,"dissolved":false,"created_at":"` + now + `","updated_at":"` + now + `"}}` + "\n"
	for name, body := range map[string]string{
		"seq gap": teamRec + `{"type":"team_message","record":{"project":"proj","message":{"team":"alpha","seq":2,"from":"lead","to":"ann","type":"note","created_at":"` + now + `"},"deliveries":[]}}`,
		"no team": `{"type":"team_task","record":{"project":"proj","task":{"id":"t1","team":"ghost","subject":"x","status":"pending","attempts":0,"lease":{"epoch":0}}}}`,
		"bad run": `{"type":"team_run","record":{"project":"proj","id":"r1","team":"alpha","pattern":"CP-2","state":"REVIEW","finished":false,"run":"nope","created_at":"` + now + `","updated_at":"` + now + `"}}`,
	} {
		var ke *kaizen.Error
		_, err := b.e.Import(ctx, strings.NewReader(head+body+"\n"), kaizen.ImportOptions{})
		if !asError(err, &ke) || ke.Kind != kaizen.KindInvalid {
			t.Errorf("%s: %v", name, err)
		}
		if teams, _ := b.e.ListTeams(ctx, "", true); len(teams) != 0 {
			t.Errorf("%s: half an import stored: %+v", name, teams)
		}
	}
}
