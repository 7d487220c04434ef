package mcp_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/model"
	_ "github.com/kaizenhq/kaizen/store/all" // the tests open SQLite and PostgreSQL stores
)

// experienceWriters are the experience tools that change stored state
// (TestToolSchemas checks that they are not marked read-only).
var experienceWriters = []string{"capture", "extract_signals", "extract_experience", "extraction_submit",
	"heuristic_feedback", "heuristic_action", "recall", "generate_skill", "set_skill_status"}

// The conversation of a task in which the user stops the agent from
// editing generated code.
var generatedCodeTurns = []any{
	map[string]any{"role": "user", "content": "Add an email field to the User message.", "turn_id": "t1"},
	map[string]any{"role": "assistant", "content": "I added the field by editing gen/user.pb.go directly.", "turn_id": "t1"},
	map[string]any{"role": "user", "content": "不对,不要改生成的文件。Don't edit generated files: change proto/user.proto and run make generate.", "turn_id": "t2"},
	map[string]any{"role": "assistant", "content": "Changed proto/user.proto and ran make generate; the tests pass now.", "turn_id": "t2"},
	map[string]any{"role": "user", "content": "Works now, thanks.", "turn_id": "t3"},
}

// agentExperience is what an agent extracts from generatedCodeTurns.
var agentExperience = map[string]any{
	"goal":             "Add an email field to the User message",
	"success_criteria": []string{"the generated code has the field", "the tests pass"},
	"failed_attempts": []any{map[string]any{"attempt_label": "edit generated code",
		"approach_summary": "edited gen/user.pb.go by hand", "failure_reason": "generated files are overwritten; the user rejected it",
		"replaced_by": "change the .proto file and run make generate"}},
	"working_approach": "change proto/user.proto, then run make generate",
	"transferable_heuristics": []any{map[string]any{"kind": "avoid",
		"trigger":  "changing protobuf generated code under gen/",
		"rule":     "never edit generated files under gen/; change the .proto file and run make generate",
		"why":      "generated files are overwritten by the generator and the user rejected hand edits",
		"evidence": "不要改生成的文件"}},
}

// agentSkill is the skill an agent writes from that experience.
func agentSkill(heuristicIDs ...string) map[string]any {
	return map[string]any{
		"name":          "regenerate-protobuf-code",
		"description":   "Change protobuf messages through their .proto files and regenerate the code.",
		"when_to_use":   "When a change touches generated protobuf code under gen/.",
		"steps":         []string{"Edit the message in proto/*.proto", "Run make generate", "Run the tests"},
		"changelog":     "created from task bd-proto",
		"heuristic_ids": heuristicIDs,
	}
}

// exerciseExperienceTools runs every experience tool successfully on b's
// server (whose engine has no chat model: the agent extracts), checking
// what each returns; generate_skill, which needs a chat model, runs on a
// second server whose calls are added to b's call log.
func exerciseExperienceTools(t *testing.T, b *testBundle) {
	t.Helper()
	const task = "bd-proto"

	// Capture the task's turns; capturing them again stores nothing new.
	var captured kaizen.CaptureResult
	text := b.ok("capture", map[string]any{"bead_id": task, "source": "mcp", "turns": generatedCodeTurns}, &captured)
	if captured.Stored != 5 || captured.Duplicates != 0 || captured.TaskID != task || len(captured.Turns) != 5 {
		t.Fatalf("capture %+v", captured)
	}
	if !strings.HasPrefix(text, "Captured 5 new turns of task bd-proto") {
		t.Errorf("capture text %q", text)
	}
	text = b.ok("capture", map[string]any{"bead_id": task, "turns": generatedCodeTurns[:2]}, &captured)
	if captured.Stored != 0 || captured.Duplicates != 2 || !strings.Contains(text, "2 turns were already captured") {
		t.Errorf("recapture %+v: %s", captured, text)
	}

	// Rule-based signals.
	var sigs kaizen.SignalsResult
	b.ok("extract_signals", map[string]any{"bead_id": task, "extractor": "rules"}, &sigs)
	if sigs.Extractor != experience.ExtractorRules || len(sigs.Signals) == 0 {
		t.Fatalf("signals %+v", sigs)
	}
	var sigList kaizen.SignalList
	b.ok("list_signals", map[string]any{"bead_id": task}, &sigList)
	if sigList.Total != int64(len(sigs.Signals)) {
		t.Errorf("list_signals total %d, extracted %d", sigList.Total, len(sigs.Signals))
	}

	// Without a chat model, extract_experience finds signals by rules and
	// points to the agent-as-extractor flow.
	var xr kaizen.ExperienceResult
	text = b.ok("extract_experience", map[string]any{"bead_id": task}, &xr)
	if xr.Experience != nil || xr.Cached || xr.Calls != 0 || !strings.Contains(text, "extraction_request") {
		t.Errorf("extract_experience without a model: %+v\n%s", xr, text)
	}

	// The agent extracts the experience itself.
	var req experience.AgentTask
	text = b.ok("extraction_request", map[string]any{"bead_id": task}, &req)
	var schema map[string]any
	if err := json.Unmarshal(req.Schema, &schema); err != nil || schema["type"] != "object" {
		t.Fatalf("schema %s: %v", req.Schema, err)
	}
	if req.Kind != "experience" || !strings.Contains(req.Transcript, "不要改生成的文件") {
		t.Errorf("request %+v", req)
	}
	if !strings.Contains(text, "## JSON schema of your result") ||
		!strings.Contains(text, `Call extraction_submit with bead_id "bd-proto", kind "experience"`) {
		t.Errorf("request text:\n%s", text)
	}
	var sub kaizen.ExtractionSubmitResult
	text = b.ok("extraction_submit", map[string]any{"bead_id": task, "kind": "experience", "result": agentExperience}, &sub)
	if sub.Kind != "experience" || sub.Experience == nil || sub.Experience.Experience == nil ||
		len(sub.Experience.Heuristics) != 1 || sub.Experience.Heuristics[0].Action != experience.EvidenceCreated {
		t.Fatalf("submit %+v", sub)
	}
	hid := sub.Experience.Heuristics[0].HeuristicID
	if !strings.Contains(text, "created "+hid) {
		t.Errorf("submit text:\n%s", text)
	}
	var got experience.TaskExperience
	text = b.ok("get_experience", map[string]any{"bead_id": task}, &got)
	if got.Goal != agentExperience["goal"] || got.Extractor != experience.ExtractorAgent || len(got.Heuristics) != 1 {
		t.Errorf("experience %+v", got)
	}
	if !strings.Contains(text, "Working approach: change proto/user.proto, then run make generate") {
		t.Errorf("experience text:\n%s", text)
	}
	var exps kaizen.ExperienceList
	b.ok("list_experiences", map[string]any{}, &exps)
	if exps.Total != 1 || exps.Items[0].TaskID != task {
		t.Errorf("experiences %+v", exps)
	}

	// The heuristic is stored, a candidate.
	var hl kaizen.HeuristicList
	text = b.ok("list_heuristics", map[string]any{"status": []string{"candidate", "active"}, "kind": "avoid"}, &hl)
	if hl.Total != 1 || hl.Items[0].ID != hid || hl.Items[0].Status != experience.StatusCandidate {
		t.Fatalf("heuristics %+v", hl)
	}
	if !strings.Contains(text, hid+" [avoid, candidate;") {
		t.Errorf("heuristics text:\n%s", text)
	}
	var hd kaizen.HeuristicDetail
	b.ok("get_heuristic", map[string]any{"heuristic_id": hid}, &hd)
	if hd.Heuristic.ID != hid || !hd.Recallable || len(hd.Evidence) != 1 || hd.Evidence[0].TaskID != task {
		t.Errorf("heuristic detail %+v", hd)
	}

	// A later task about generated code recalls it, rendered first.
	var rec kaizen.RecallResult
	text = b.ok("recall", map[string]any{"query": "edit the generated protobuf files under gen/", "bead_id": "bd-next"}, &rec)
	if rec.ID == "" || len(rec.Heuristics) != 1 || rec.Heuristics[0].ID != hid || rec.Text == "" {
		t.Fatalf("recall %+v", rec)
	}
	if !strings.HasPrefix(text, strings.TrimRight(rec.Text, "\n")) ||
		!strings.Contains(text, "Recall "+rec.ID+"; heuristics shown, in order: "+hid) ||
		!strings.Contains(text, "heuristic_feedback with its heuristic_id, recall_id "+rec.ID) {
		t.Errorf("recall text:\n%s", text)
	}
	var dry kaizen.RecallResult
	b.ok("recall", map[string]any{"query": "edit the generated protobuf files under gen/", "dry_run": true, "kinds": []string{"heuristic"}}, &dry)
	if dry.ID != "" || len(dry.Heuristics) != 1 {
		t.Errorf("dry run %+v", dry)
	}
	var fb kaizen.HeuristicActionResult
	text = b.ok("heuristic_feedback", map[string]any{"heuristic_id": hid, "verdict": "helpful", "recall_id": rec.ID,
		"bead_id": "bd-next", "note": "saved a wasted edit"}, &fb)
	if fb.Heuristic.HelpfulCount != 1 || fb.FeedbackID == "" || !strings.HasPrefix(text, "Heuristic "+hid+" feedback recorded") {
		t.Errorf("feedback %+v\n%s", fb, text)
	}
	var recalls kaizen.RecallList
	b.ok("list_recalls", map[string]any{"ref_id": hid}, &recalls)
	if recalls.Total != 1 || recalls.Items[0].ID != rec.ID {
		t.Errorf("recalls %+v", recalls)
	}

	// A skill written by the agent, then activated.
	var skillReq experience.AgentTask
	b.ok("extraction_request", map[string]any{"bead_id": task, "kind": "skill"}, &skillReq)
	if skillReq.Kind != "skill" || len(skillReq.Schema) == 0 {
		t.Errorf("skill request %+v", skillReq)
	}
	// an agent may send the object as a JSON string: it is the object
	raw, _ := json.Marshal(agentSkill(hid))
	b.ok("extraction_submit", map[string]any{"bead_id": task, "kind": "skill", "result": string(raw)}, &sub)
	if sub.Skill == nil || !sub.Skill.Created || sub.Skill.Skill.Status != experience.SkillDraft {
		t.Fatalf("skill submit %+v", sub)
	}
	name := sub.Skill.Skill.Name
	var skills kaizen.SkillList
	b.ok("list_skills", map[string]any{"status": "draft"}, &skills)
	if skills.Total != 1 || skills.Items[0].Name != name {
		t.Errorf("skills %+v", skills)
	}
	var sr kaizen.SkillResult
	b.ok("set_skill_status", map[string]any{"skill": name, "status": "active"}, &sr)
	if sr.Skill.Status != experience.SkillActive {
		t.Errorf("status %+v", sr.Skill)
	}
	var sd kaizen.SkillDetail
	text = b.ok("get_skill", map[string]any{"skill": name}, &sd)
	if sd.Skill.ID != sr.Skill.ID || !strings.Contains(text, "Run make generate") {
		t.Errorf("skill detail %+v\n%s", sd, text)
	}

	// Lifecycle by hand: archived heuristics are not recalled.
	var act kaizen.HeuristicActionResult
	b.ok("heuristic_action", map[string]any{"heuristic_id": hid, "action": "archive", "reason": "we moved to buf"}, &act)
	if act.Heuristic.Status != experience.StatusArchived || act.Transition == nil {
		t.Errorf("archive %+v", act)
	}
	b.ok("recall", map[string]any{"query": "edit the generated protobuf files under gen/", "kinds": []string{"heuristic"}}, &rec)
	if len(rec.Heuristics) != 0 || rec.Text != "" {
		t.Errorf("an archived heuristic was recalled: %+v", rec)
	}

	// generate_skill needs a chat model: a second server, on an engine
	// with a scripted model.
	b2 := setupOn(t, chatEngine(t, mustJSON(t, agentSkill())))
	ctx := context.Background()
	if _, err := b2.engine.Capture(ctx, kaizen.CaptureInput{TaskID: task, Turns: []kaizen.TurnInput{
		{Role: "user", Content: "Add an email field to the User message."}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := b2.engine.SubmitExtraction(ctx, kaizen.ExtractionSubmitInput{TaskID: task, Kind: "experience",
		Result: mustJSON(t, agentExperience)}); err != nil {
		t.Fatal(err)
	}
	text = b2.ok("generate_skill", map[string]any{"bead_id": task}, &sr)
	if !sr.Created || sr.Skill.Name != "regenerate-protobuf-code" || sr.Skill.Status != experience.SkillDraft ||
		!strings.Contains(text, "It is a draft: set_skill_status") {
		t.Errorf("generated %+v\n%s", sr, text)
	}
	for _, c := range b2.calls.snapshot() {
		b.calls.record(c.tool, c.d, c.err)
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// scriptedChat answers every request with the same reply, checked the way
// a provider chain checks it.
type scriptedChat struct {
	reply string
	calls atomic.Int64
}

func (c *scriptedChat) Complete(_ context.Context, req model.ChatRequest) (model.ChatResponse, error) {
	c.calls.Add(1)
	if req.Accept != nil {
		if err := req.Accept(c.reply); err != nil {
			return model.ChatResponse{}, err
		}
	}
	return model.ChatResponse{Content: c.reply, Provider: "scripted", Model: "scripted", FinishReason: "stop"}, nil
}

// chatEngine opens an engine on a SQLite file whose chat model always
// replies reply.
func chatEngine(t *testing.T, reply []byte) *kaizen.Engine {
	t.Helper()
	cfg := kaizen.DefaultConfig()
	cfg.Home = t.TempDir()
	cfg.DB = filepath.Join(cfg.Home, "kaizen.db")
	cfg.Project = "test"
	cfg.Chat = &scriptedChat{reply: string(reply)}
	e, err := kaizen.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// The experience tools on their own: the agent-as-extractor flow from
// capture to feedback on a recalled heuristic.
func TestExperienceTools(t *testing.T) {
	t.Parallel()
	b := setup(t, func(so *setupOpts) { so.sqlite = true })
	exerciseExperienceTools(t, b)
	for _, name := range append(slices.Clone(experienceWriters), "list_heuristics", "get_skill") {
		ok := false
		for _, c := range b.calls.snapshot() {
			ok = ok || (c.tool == name && c.err == nil)
		}
		if !ok {
			t.Errorf("%s was not called successfully", name)
		}
	}
}

// The schemas say what the engine accepts: item enums, the submitted
// result as an object, the required properties of a turn.
func TestExperienceToolSchemas(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tools := listTools(t, b.session)
	enumOf := func(v []any) []string {
		var out []string
		for _, x := range v {
			out = append(out, x.(string))
		}
		return out
	}
	lh := inputSchema(t, tools["list_heuristics"]).Properties["status"]
	if lh.Type != "array" || !slices.Equal(enumOf(lh.Items.Enum), []string{"candidate", "active", "refined", "stale", "archived"}) {
		t.Errorf("list_heuristics.status %+v", lh)
	}
	kinds := inputSchema(t, tools["recall"]).Properties["kinds"]
	if !slices.Equal(enumOf(kinds.Items.Enum), []string{"heuristic", "skill", "memory"}) {
		t.Errorf("recall.kinds %+v", kinds.Items)
	}
	if r := inputSchema(t, tools["extraction_submit"]).Properties["result"]; r.Type != "object" || !strings.Contains(r.Description, "extraction_request") {
		t.Errorf("extraction_submit.result %+v", r)
	}
	turns := inputSchema(t, tools["capture"]).Properties["turns"]
	if !slices.Equal(turns.Items.Required, []string{"role", "content"}) ||
		!slices.Equal(enumOf(turns.Items.Properties["role"].Enum), []string{"user", "assistant", "tool", "system"}) {
		t.Errorf("capture.turns items %+v", turns.Items)
	}
	if v := inputSchema(t, tools["heuristic_feedback"]).Properties["verdict"]; !slices.Equal(enumOf(v.Enum), []string{"helpful", "misleading"}) {
		t.Errorf("verdict %+v", v)
	}
	for name, want := range map[string]bool{"recall": false, "list_recalls": true, "extraction_request": true, "capture": false} {
		if got := tools[name].Annotations.ReadOnlyHint; got != want {
			t.Errorf("%s readOnlyHint %v", name, got)
		}
	}
	var out map[string]any
	remarshal(t, tools["extraction_request"].OutputSchema, &out)
	if s := out["properties"].(map[string]any)["schema"].(map[string]any); s["type"] != "object" {
		t.Errorf("extraction_request output schema.schema %v", s)
	}
}

// Bad input is an isError result naming the field, with a hint; the
// engine's Next becomes "call the … tool".
func TestExperienceToolErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.ok("capture", map[string]any{"bead_id": "bd-1", "turns": generatedCodeTurns}, nil)
	tests := []struct {
		name  string
		tool  string
		args  map[string]any
		wants []string
	}{
		{"capture without task", "capture", map[string]any{"turns": generatedCodeTurns}, []string{`field "bead_id"`}},
		{"capture without turns", "capture", map[string]any{"bead_id": "bd-2", "turns": []any{}}, []string{`field "turns"`}},
		{"unknown role", "capture", map[string]any{"bead_id": "bd-2", "turns": []any{map[string]any{"role": "robot", "content": "hi"}}},
			[]string{`field "turns[0].role"`, "robot"}},
		{"blank content", "capture", map[string]any{"bead_id": "bd-2", "turns": []any{map[string]any{"role": "user", "content": " "}}},
			[]string{`field "turns[0].content"`}},
		{"turn property typo", "capture", map[string]any{"bead_id": "bd-2", "turns": []any{map[string]any{"role": "user", "text": "hi"}}},
			[]string{"text"}},
		{"unknown extractor", "extract_signals", map[string]any{"bead_id": "bd-1", "extractor": "magic"}, []string{`field "extractor"`}},
		{"unknown signal type", "list_signals", map[string]any{"type": "anger"}, []string{`field "type"`}},
		{"unknown mode", "extract_experience", map[string]any{"bead_id": "bd-1", "mode": "max"}, []string{`field "mode"`}},
		{"no experience yet", "get_experience", map[string]any{"bead_id": "bd-1"}, []string{"(not_found)"}},
		{"unknown extraction kind", "extraction_request", map[string]any{"bead_id": "bd-1", "kind": "poem"}, []string{`field "kind"`}},
		{"submit without result", "extraction_submit", map[string]any{"bead_id": "bd-1"}, []string{`field "result"`}},
		{"submit not matching the schema", "extraction_submit", map[string]any{"bead_id": "bd-1", "result": map[string]any{"goal": ""}},
			[]string{`field "result.goal"`}},
		{"unknown heuristic status", "list_heuristics", map[string]any{"status": []string{"legendary"}}, []string{`field "status"`}},
		{"unknown heuristic", "get_heuristic", map[string]any{"heuristic_id": "heur-nope"}, []string{"(not_found)", "no heuristic heur-nope", "call the list_heuristics tool"}},
		{"bad verdict", "heuristic_feedback", map[string]any{"heuristic_id": "heur-nope", "verdict": "meh"}, []string{`field "verdict"`}},
		{"unknown action", "heuristic_action", map[string]any{"heuristic_id": "heur-nope", "action": "delete"}, []string{`field "action"`}},
		{"empty query", "recall", map[string]any{"query": ""}, []string{`field "query"`}},
		{"unknown recall kind", "recall", map[string]any{"query": "x", "kinds": []string{"rumour"}}, []string{`field "kinds"`}},
		{"recall limit", "list_recalls", map[string]any{"limit": 5000}, []string{`field "limit"`}},
		{"unknown skill", "get_skill", map[string]any{"skill": "no-such-skill"}, []string{"(not_found)"}},
		{"bad skill status", "set_skill_status", map[string]any{"skill": "x", "status": "famous"}, []string{`field "status"`}},
		{"generate without a model", "generate_skill", map[string]any{"bead_id": "bd-1"},
			[]string{"(conflict)", "no chat model", "call the extraction_request tool"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := b.fail(tt.tool, tt.args)
			for _, w := range tt.wants {
				if !strings.Contains(text, w) {
					t.Errorf("%s: error text lacks %q:\n%s", tt.tool, w, text)
				}
			}
			if !strings.Contains(text, "Hint:") {
				t.Errorf("no hint:\n%s", text)
			}
		})
	}
	// The rejected calls stored nothing.
	var hl kaizen.HeuristicList
	b.ok("list_heuristics", map[string]any{}, &hl)
	var exps kaizen.ExperienceList
	b.ok("list_experiences", map[string]any{}, &exps)
	if hl.Total != 0 || exps.Total != 0 {
		t.Errorf("rejected calls stored %d heuristics, %d experiences", hl.Total, exps.Total)
	}
}
