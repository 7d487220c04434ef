package viewer_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/team"
)

// TestRunPage renders a collaboration pattern run: the state diagram with
// the current state highlighted, the iteration against its maximum, the
// deadline, the tasks, the messages it received and sent, and its
// decisions; agents' text in every one of them (a worker's angle, a
// message summary, the reasons quoting them) is escaped.
func TestRunPage(t *testing.T) {
	b := setup(t, withClock)
	ctx := context.Background()
	agent := team.Worker{Kind: team.WorkerAgent}
	if _, err := b.engine.CreateTeam(ctx, kaizen.TeamInput{Project: "proj", Name: "alpha", Members: []team.Member{
		{Name: "lead", Role: team.RoleCoordinator, Worker: agent}, {Name: "ann", Role: team.RoleWorker, Worker: agent}}}); err != nil {
		t.Fatal(err)
	}
	evil := scriptPayload + " " + imgPayload + " " + svgPayload
	in, _ := json.Marshal(team.FanOutInput{Requirement: evil, Workers: []team.FanOutWorker{{Angle: "security " + scriptPayload, Member: "ann"}, {Angle: "perf " + imgPayload}}})
	ri, err := b.engine.StartRun(ctx, kaizen.StartRunInput{Project: "proj", Team: "alpha", Pattern: team.CP3, Input: in})
	if err != nil {
		t.Fatal(err)
	}
	id := ri.Run.ID
	if _, err := b.engine.SendMessage(ctx, kaizen.SendInput{Project: "proj", Team: "alpha", From: "ann", To: "lead", Type: team.MsgProgress,
		Summary: "halfway " + svgPayload, Data: json.RawMessage(`{"progress_pct":50}`)}); err != nil {
		t.Fatal(err)
	}

	page := b.must(b.get("/runs/"+id+"?project=proj"), http.StatusOK).body
	contains(t, "run page", page, `<svg class="run-diagram"`, `class="node current visited" data-state="FAN_OUT"`, "1 of 1",
		"<code>deadline</code>", "(in 5m0s)", "ANALYZE-1: security &lt;script&gt;", "received #1", "progress", "halfway &#39;&gt;&lt;svg onload=alert(1)&gt;",
		"fan out to 2 workers", "Parallel Fan-out/Fan-in")
	if rawMarkup.MatchString(page) || jsURL.MatchString(page) {
		t.Fatalf("unescaped markup on the run page:\n%s", rawMarkup.FindString(page))
	}

	// the deadline fires: the run aggregates what arrived, marks the
	// missing angles (agent text in the reasons) and ends
	b.clock.Advance(5*time.Minute + time.Second)
	if _, err := b.engine.RunDueJobs(ctx); err != nil {
		t.Fatal(err)
	}
	page = b.must(b.get("/runs/"+id+"?project=proj"), http.StatusOK).body
	contains(t, "finished run page", page, `class="node current visited terminal" data-state="FAILED"`, "missing angle: security &lt;script&gt;",
		"No timer is set.", "<strong>failed</strong>", `class="edge taken"`)
	if rawMarkup.MatchString(page) || jsURL.MatchString(page) {
		t.Fatalf("unescaped markup on the finished run page:\n%s", rawMarkup.FindString(page))
	}

	// a run that sends: CP-4 broadcasts its proposal (agent text in the title)
	in, _ = json.Marshal(team.ConsensusInput{Proposal: team.Proposal{ID: "p1", Title: "adopt " + scriptPayload}, Voters: []string{"lead"}})
	ri4, err := b.engine.StartRun(ctx, kaizen.StartRunInput{Project: "proj", Team: "alpha", Pattern: team.CP4, Input: in})
	if err != nil {
		t.Fatal(err)
	}
	page = b.must(b.get("/runs/"+ri4.Run.ID+"?project=proj"), http.StatusOK).body
	contains(t, "CP-4 page", page, "<td>sent</td><td>this run</td><td>lead</td><td><code>proposal</code></td>", "Vote requested: adopt &lt;script&gt;", "1 of 2")
	if rawMarkup.MatchString(page) {
		t.Fatalf("unescaped markup on the CP-4 page:\n%s", rawMarkup.FindString(page))
	}

	list := b.must(b.get("/runs?project=proj"), http.StatusOK).body
	contains(t, "run list", list, `href="/runs/`+id+`?project=proj"`, "CP-3 Parallel Fan-out/Fan-in", "FAILED")
	b.must(b.get("/runs/nope?project=proj"), http.StatusNotFound)
	b.must(b.get("/runs/?project=proj"), http.StatusNotFound)
	if !strings.Contains(b.get("/?project=proj").body, `href="/runs?project=proj"`) {
		t.Error("no Runs link in the navigation")
	}
}
