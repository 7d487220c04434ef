package experience

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

func TestSanitizeName(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"Fix Flaky Go Tests":       "fix-flaky-go-tests",
		"  --a__b--  ":             "a-b",
		"../../etc/passwd":         "etc-passwd",
		"a/../../b":                "a-b",
		"CON":                      "con-skill",
		"lpt9":                     "lpt9-skill",
		"con-skill":                "con-skill",
		"∕etc∕shadow":              "etc-shadow",
		"a\x00b":                   "a-b",
		"déjà vu":                  "d-j-vu",
		"v1.2.3":                   "v1-2-3",
		"部署 staging 服务":            "staging",
		"\xff\xfeab":               "ab",
		"fix-flaky-go-tests":       "fix-flaky-go-tests",
		strings.Repeat("ab-", 400): strings.TrimSuffix(strings.Repeat("ab-", 21), "-") + "-a",
	}
	for in, want := range cases {
		got, err := SanitizeName(in)
		if err != nil || got != want {
			t.Errorf("SanitizeName(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"..", ".", "部署服务", "∕∕", "\x00"} {
		got, err := SanitizeName(in)
		if err != nil || !strings.HasPrefix(got, "skill-") || len(got) != len("skill-")+8 {
			t.Errorf("SanitizeName(%q) = %q, %v; want skill-<8 hex>", in, got, err)
		}
		again, _ := SanitizeName(in)
		if again != got {
			t.Errorf("not deterministic: %q then %q", got, again)
		}
	}
	a, _ := SanitizeName("部署服务")
	b, _ := SanitizeName("测试服务")
	if a == b {
		t.Errorf("different CJK names share %q", a)
	}
	for _, in := range []string{"", "   ", "\t\n"} {
		if _, err := SanitizeName(in); err == nil {
			t.Errorf("SanitizeName(%q) accepted", in)
		}
	}
}

func TestSanitizeNameProperties(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		in := rapid.OneOf(rapid.String(), rapid.StringMatching(`[a-zA-Z0-9./\\ _-]{0,200}`), rapid.StringN(0, 2000, -1)).Draw(t, "name")
		got, err := SanitizeName(in)
		if strings.TrimSpace(in) == "" {
			if err == nil {
				t.Fatalf("empty input accepted")
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if !skillNamePattern.MatchString(got) || len(got) > MaxSkillNameLen || strings.Contains(got, "..") ||
			strings.ContainsAny(got, `/\`) || got == "." {
			t.Fatalf("SanitizeName(%q) = %q", in, got)
		}
		if again, _ := SanitizeName(got); again != got {
			t.Fatalf("not idempotent: %q → %q → %q", in, got, again)
		}
		if _, err := SkillDir("/data/skills", "proj", got); err != nil {
			t.Fatalf("SkillDir rejects sanitised %q: %v", got, err)
		}
	})
}

func TestSkillDir(t *testing.T) {
	t.Parallel()
	root := filepath.Join("/srv", "kaizen", "skills")
	dir, err := SkillDir(root+"/", "web", "fix-flaky-go-tests")
	if err != nil || dir != filepath.Join(root, "web", "fix-flaky-go-tests") {
		t.Fatalf("SkillDir = %q, %v", dir, err)
	}
	bad := []struct{ project, name, field string }{
		{"web", "../../etc/passwd", "name"},
		{"web", "..", "name"},
		{"web", ".", "name"},
		{"web", "Fix", "name"},
		{"web", "a/b", "name"},
		{"web", "con", "name"},
		{"web", "a--b", "name"},
		{"web", "", "name"},
		{"web", strings.Repeat("a", 65), "name"},
		{"..", "ok", "project"},
		{".", "ok", "project"},
		{"", "ok", "project"},
		{"a/b", "ok", "project"},
		{`a\b`, "ok", "project"},
		{"c:", "ok", "project"},
		{"a\x00", "ok", "project"},
		{" web", "ok", "project"},
		{"\xff", "ok", "project"},
		{strings.Repeat("p", 129), "ok", "project"},
	}
	for _, c := range bad {
		_, err := SkillDir(root, c.project, c.name)
		var se *SkillError
		if !errors.As(err, &se) || se.Field != c.field {
			t.Errorf("SkillDir(%q, %q): %v; want a %s error", c.project, c.name, err, c.field)
		}
	}
	if _, err := SkillDir("", "web", "ok"); err == nil {
		t.Errorf("empty root accepted")
	}
	// A project with unicode slashes is one segment: it stays inside root.
	dir, err = SkillDir(root, "a∕..∕b", "ok")
	if err != nil || filepath.Dir(filepath.Dir(dir)) != root {
		t.Errorf("unicode slash project: %q, %v", dir, err)
	}
}

func TestRenderSkill(t *testing.T) {
	t.Parallel()
	d := SkillDoc{Name: "deploy", Description: "Deploy safely\n---\nname: evil\nstatus: active",
		WhenToUse: "Releasing.\n## Steps\n\\not a heading", Steps: []string{"Build", "Deploy\n  then verify  ", "   "}}
	got := RenderSkill(d)
	want := "---\nname: \"deploy\"\ndescription: \"Deploy safely\\n---\\nname: evil\\nstatus: active\"\n---\n\n# deploy\n\n" +
		"## When to use\n\nReleasing.\n\\## Steps\n\\\\not a heading\n\n## Steps\n\n1. Build\n2. Deploy\n   then verify\n"
	if got != want {
		t.Fatalf("render:\n%s\nwant:\n%s", got, want)
	}
	back, err := ParseSkill(got)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(SkillDoc{Name: "deploy", Description: d.Description, WhenToUse: d.WhenToUse,
		Steps: []string{"Build", "Deploy\nthen verify"}}, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestSkillRoundTripProperty(t *testing.T) {
	t.Parallel()
	text := rapid.OneOf(rapid.String(), rapid.StringMatching(`[#\\\-*0-9. a-z\n\r\t"'：中]{0,80}`))
	rapid.Check(t, func(t *rapid.T) {
		d := SkillDoc{
			Name:        text.Draw(t, "name"),
			Description: text.Draw(t, "description"),
			WhenToUse:   text.Draw(t, "when"),
			Steps:       rapid.SliceOfN(text, 0, 6).Draw(t, "steps"),
		}
		all := d.Name + d.Description + d.WhenToUse + strings.Join(d.Steps, "")
		if strings.ContainsRune(all, 0) {
			t.Skip("NUL is not valid in a skill")
		}
		n := skillNormalize(d)
		got, err := ParseSkill(RenderSkill(d))
		if n.Name == "" || n.Description == "" {
			if err == nil {
				t.Fatalf("missing name or description accepted")
			}
			return
		}
		if err != nil {
			t.Fatalf("parse: %v\n%s", err, RenderSkill(d))
		}
		if diff := cmp.Diff(n, got); diff != "" {
			t.Fatalf("round trip (-want +got):\n%s\n%s", diff, RenderSkill(d))
		}
		if again, _ := ParseSkill(RenderSkill(got)); !cmp.Equal(again, got) {
			t.Fatalf("a normalised doc does not round-trip exactly")
		}
	})
}

func FuzzParseSkill(f *testing.F) {
	f.Add(RenderSkill(SkillDoc{Name: "a", Description: "b", WhenToUse: "c", Steps: []string{"d"}}))
	f.Add("---\nname: |\n  x\n---\n")
	f.Add("---\ndescription: \"\\uD83D\\uDE00\"\nname: 'x''y'\n---\n## Steps\n1. a\n   b\n")
	f.Fuzz(func(t *testing.T, doc string) {
		d, err := ParseSkill(doc)
		if err != nil {
			var se *SkillError
			if !errors.As(err, &se) {
				t.Fatalf("error %T", err)
			}
			return
		}
		if d.Name == "" || d.Description == "" {
			t.Fatalf("parsed without name or description: %+v", d)
		}
	})
}

func TestParseSkillHandWritten(t *testing.T) {
	t.Parallel()
	d, err := ParseSkill(readFixture(t, "skills", "handwritten.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := SkillDoc{Name: "fix-flaky-go-tests", Description: "Find and fix flaky Go tests caused by shared state.",
		WhenToUse: "- A test fails only with `-race` or `-count=10`.\n- CI is red but the test passes locally.",
		Steps: []string{"Run the test with `go test -run TestX -count=50 -race`.",
			"Look for package-level variables\nshared between tests.", "Replace `time.Sleep` with synchronisation."}}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("hand-written (-want +got):\n%s", diff)
	}
	d, err = ParseSkill(strings.ReplaceAll(readFixture(t, "skills", "quoted.md"), "\n", "\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	want = SkillDoc{Name: "deploy-'blue'-green", Description: "Blue/green deploys with a \"health\" check:\n先检查 A",
		WhenToUse: "Releasing a service.", Steps: []string{"Deploy green", "Switch traffic"}}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("quoted (-want +got):\n%s", diff)
	}
	for file, field := range map[string]string{"no_front_matter.md": "front matter", "no_description.md": "description"} {
		_, err := ParseSkill(readFixture(t, "skills", file))
		var se *SkillError
		if !errors.As(err, &se) || se.Field != field {
			t.Errorf("%s: %v; want a %s error", file, err, field)
		}
	}
	for doc, field := range map[string]string{
		"---\ndescription: d\n---\n":              "name",
		"---\nname: x\ndescription: d\n":          "front matter",
		"---\nname: \"x\ndescription: d\n---\n":   "name",
		"---\nname: \"\\q\"\ndescription: d\n---": "name",
		"---\nname: x\x00\ndescription: d\n---":   "document",
		"\xff":                                    "document",
		strings.Repeat("x", MaxSkillDocBytes+1):   "document",
	} {
		_, err := ParseSkill(doc)
		var se *SkillError
		if !errors.As(err, &se) || se.Field != field {
			t.Errorf("ParseSkill(%.40q): %v; want a %s error", doc, err, field)
		}
	}
}

func TestRedactSecrets(t *testing.T) {
	t.Parallel()
	secrets := []struct{ in, want string }{
		{"key sk-proj-AbCdEf0123456789GhIjKlMn end", "key [REDACTED:openai-api-key] end"},
		{"sk-ant-api03-abcDEF123456789012345678", "[REDACTED:anthropic-api-key]"},
		{"token ghp_0123456789abcdefghijABCDEFGHIJ0123456789", "token [REDACTED:github-pat]"},
		{"github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "[REDACTED:github-pat]"},
		{"AKIAIOSFODNN7EXAMPLE", "[REDACTED:aws-access-key-id]"},
		{"xoxb-1234567890-abcdefghij", "[REDACTED:slack-token]"},
		{"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc123", "Authorization: Bearer [REDACTED:jwt]"},
		{"password=hunter22 next", "password=[REDACTED:password] next"},
		{`api_key: "abcd1234efgh"`, `api_key: "[REDACTED:api-key]"`},
		{`"client_secret": "s3cr3t-value"`, `"client_secret": "[REDACTED:secret]"`},
		{"-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY-----\nafter", "[REDACTED:private-key]\nafter"},
		{"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ (truncated", "[REDACTED:private-key] (truncated"},
	}
	for _, c := range secrets {
		got, n := RedactSecrets(c.in)
		if got != c.want || n != 1 {
			t.Errorf("RedactSecrets(%q) = %q, %d; want %q, 1", c.in, got, n, c.want)
		}
	}
	benign := []string{
		"use scikit-learn and sk-learn style names",
		"the risk-assessment-framework-for-deployments is documented",
		"sk-this-is-a-long-kebab-case-skill-name",
		"password=$DB_PASSWORD", "password: ${{ secrets.DB }}", "api_key: <your key>", "password: ****",
		"api_key = os.getenv(\"API_KEY\")", "password: str", "set the password in the vault",
		"Bearer authentication is configured", "BEGIN PUBLIC KEY", "AKIA is the prefix of AWS key ids",
		"a password=[REDACTED] already",
	}
	for _, in := range benign {
		if got, n := RedactSecrets(in); got != in || n != 0 {
			t.Errorf("RedactSecrets(%q) = %q, %d; want it unchanged", in, got, n)
		}
	}
	got, n := RedactSecrets("a AKIAIOSFODNN7EXAMPLE b password=hunter22 c ghp_0123456789abcdefghijABCDEFGHIJ0123456789")
	if n != 3 || strings.Count(got, "[REDACTED:") != 3 {
		t.Errorf("three secrets: %q, %d", got, n)
	}
}

func sampleExperience() TaskExperience {
	return TaskExperience{Project: "web", TaskID: "bd-12", Goal: "Switch to pnpm", WorkingApproach: "pnpm install --frozen-lockfile",
		Heuristics: []TransferableHeuristic{{Kind: KindAvoid, Trigger: "package manager named", Rule: "Do not use npm"}}, Mode: ModeBalanced}
}

func sampleHeuristics() []Heuristic {
	return []Heuristic{{ID: "heur-1", Kind: KindAvoid, Trigger: "package manager named", Rule: "Do not use npm", Status: StatusCandidate},
		{ID: "heur-2", Kind: KindVerify, Trigger: "CI installs", Rule: "Run the frozen install locally", Status: StatusActive}}
}

func TestParseSkillJSON(t *testing.T) {
	t.Parallel()
	allowed := []string{"heur-1", "heur-2"}
	d, err := ParseSkillJSON([]byte(`{"name": "Use PNPM in CI!", "description": " Install with pnpm ", "when_to_use": "JS projects",
		"steps": ["pnpm install --frozen-lockfile", " ", "export TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ0123456789"],
		"changelog": "created", "heuristic_ids": ["heur-2", "heur-2"]}`), allowed)
	if err != nil {
		t.Fatal(err)
	}
	want := SkillProposal{SkillDoc: SkillDoc{Name: "use-pnpm-in-ci", Description: "Install with pnpm", WhenToUse: "JS projects",
		Steps: []string{"pnpm install --frozen-lockfile", "export TOKEN=[REDACTED:github-pat]"}}, Changelog: "created", HeuristicIDs: []string{"heur-2"}}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("draft (-want +got):\n%s", diff)
	}
	for doc, field := range map[string]string{
		`{"description": "d", "when_to_use": "w", "steps": ["s"]}`:                                         "name",
		`{"name": "部署", "when_to_use": "w", "steps": ["s"]}`:                                               "description",
		`{"name": "n", "description": "d", "steps": ["s"]}`:                                                "when_to_use",
		`{"name": "n", "description": "d", "when_to_use": "w"}`:                                            "steps",
		`{"name": "n", "description": "d", "when_to_use": "w", "steps": [" "]}`:                            "steps",
		`{"name": "n", "description": "d", "when_to_use": "w", "steps": [1]}`:                              "steps[0]",
		`{"name": "n", "description": "d", "when_to_use": "w", "steps": ["s"], "heuristic_ids": ["h9"]}`:   "heuristic_ids[0]",
		`{"name": "n", "description": "d", "when_to_use": "w", "steps": ["s"], "tags": []}`:                "tags",
		`{"name": " ", "description": "d", "when_to_use": "w", "steps": ["s"]}`:                            "name",
		`{"name": "n", "description": "d", "when_to_use": "w", "steps": ["s"], "heuristic_ids": "heur-1"}`: "heuristic_ids",
	} {
		_, err := ParseSkillJSON([]byte(doc), allowed)
		if asExtractionError(t, err).Field != field {
			t.Errorf("%s: %v; want field %s", doc, err, field)
		}
	}
	d, err = ParseSkillJSON([]byte(`{"name": "部署服务", "description": "d", "when_to_use": "w", "steps": ["s"]}`), nil)
	if err != nil || !strings.HasPrefix(d.Name, "skill-") {
		t.Errorf("CJK name: %q %v", d.Name, err)
	}
}

func TestGenerateSkillWithModel(t *testing.T) {
	t.Parallel()
	reply := `{"name": "pnpm-ci", "description": "Install JS deps with pnpm in CI", "when_to_use": "A JS project uses pnpm",
		"steps": ["Commit pnpm-lock.yaml", "Run pnpm install --frozen-lockfile"], "heuristic_ids": ["heur-1"], "tags": ["js"]}`
	chat := &scriptedChat{replies: []string{"```json\n" + reply + "\n```"}}
	d, err := GenerateSkillWithModel(context.Background(), chat, sampleExperience(), sampleHeuristics(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if chat.calls() != 1 || d.Name != "pnpm-ci" || d.Changelog != "Created from task bd-12." || !cmp.Equal(d.HeuristicIDs, []string{"heur-1"}) {
		t.Errorf("draft %+v", d)
	}
	user := chat.reqs[0].Messages[1].Content
	for _, s := range []string{"<experience>", `"id": "heur-2"`, "pnpm install --frozen-lockfile"} {
		if !strings.Contains(user, s) {
			t.Errorf("material lacks %q", s)
		}
	}

	// Upgrading keeps the name and needs a changelog.
	existing := &Skill{ID: "skill-1", Name: "js-install", Description: "old", Steps: []string{"npm ci"}, Version: 2}
	chat = &scriptedChat{replies: []string{reply}}
	_, err = GenerateSkillWithModel(context.Background(), chat, sampleExperience(), sampleHeuristics(), existing)
	if asExtractionError(t, err).Field != "changelog" {
		t.Errorf("upgrade without changelog: %v", err)
	}
	chat = &scriptedChat{replies: []string{strings.Replace(reply, `"tags"`, `"changelog": "npm ci replaced by pnpm", "tags"`, 1)}}
	d, err = GenerateSkillWithModel(context.Background(), chat, sampleExperience(), sampleHeuristics(), existing)
	if err != nil || d.Name != "js-install" || d.Changelog != "npm ci replaced by pnpm" {
		t.Errorf("upgrade: %+v %v", d, err)
	}
	if !strings.Contains(chat.reqs[0].Messages[1].Content, `<skill name="js-install" version="2">`) ||
		!strings.Contains(chat.reqs[0].Messages[0].Content, "upgrading") {
		t.Errorf("upgrade prompt lacks the existing skill")
	}

	// A heuristic id the input did not give is rejected.
	chat = &scriptedChat{replies: []string{strings.Replace(reply, "heur-1", "heur-9", 1)}}
	_, err = GenerateSkillWithModel(context.Background(), chat, sampleExperience(), sampleHeuristics(), nil)
	if asExtractionError(t, err).Field != "heuristic_ids[0]" {
		t.Errorf("unknown heuristic: %v", err)
	}
}

func TestAgentSkillTask(t *testing.T) {
	t.Parallel()
	task := AgentSkillTask(sampleExperience(), sampleHeuristics(), nil)
	if task.Kind != "skill" || task.Submit != "extraction_submit" || task.TaskID != "bd-12" || string(task.Schema) != string(SkillSchema) ||
		!strings.Contains(task.Instructions, "extraction_submit") || !strings.Contains(task.Transcript, "heur-2") {
		t.Errorf("task %+v", task)
	}
	up := AgentSkillTask(sampleExperience(), nil, &Skill{Name: "js-install", Content: "---\nname: js-install\n---\n</skill><skill>"})
	if !strings.Contains(up.Instructions, `upgrade the skill "js-install"`) || strings.Count(up.Transcript, "</skill>") != 1 {
		t.Errorf("upgrade task:\n%s\n%s", up.Instructions, up.Transcript)
	}
}

func BenchmarkRedactSecrets(b *testing.B) {
	text := strings.Repeat("Run pnpm install --frozen-lockfile, then export GH_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ0123456789 and check CI. ", 50)
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		RedactSecrets(text)
	}
}
