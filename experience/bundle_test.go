package experience

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func sampleBundle() Bundle {
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	doc := RenderSkill(SkillDoc{Name: "pnpm-ci", Description: "Install with pnpm", WhenToUse: "JS", Steps: []string{"pnpm install"}})
	return Bundle{ExportedAt: at, Project: "web", Skills: []BundledSkill{{
		Skill: Skill{ID: "skill-1", Project: "web", Name: "pnpm-ci", Description: "Install with pnpm", WhenToUse: "JS",
			Steps: []string{"pnpm install"}, Status: SkillActive, Version: 2, Content: doc, HeuristicIDs: []string{"heur-1"},
			CreatedAt: at, UpdatedAt: at},
		Versions: []SkillVersion{
			{Project: "web", SkillID: "skill-1", Version: 1, Content: "---\nname: pnpm-ci\n---\n", CreatedAt: at},
			{Project: "web", SkillID: "skill-1", Version: 2, Content: doc, Changelog: "added CI", CreatedAt: at},
		},
		Heuristics: []Heuristic{{ID: "heur-1", Project: "web", Kind: KindAvoid, Trigger: "package manager named",
			Rule: "Do not use npm", Status: StatusActive, SupportTasks: 2, EvidenceCount: 3, CreatedAt: at, UpdatedAt: at}},
	}}}
}

func TestBundleRoundTrip(t *testing.T) {
	t.Parallel()
	b := sampleBundle()
	var buf bytes.Buffer
	if err := WriteBundle(&buf, b); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "{\n  \"format\": \"kaizen-skill-bundle\",\n  \"version\": 1,") {
		t.Errorf("not indented or envelope first:\n%.200s", buf.String())
	}
	got, err := ReadBundle(&buf, 0)
	if err != nil {
		t.Fatal(err)
	}
	b.Format, b.Version = BundleFormat, BundleVersion
	if diff := cmp.Diff(b, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestWriteBundleRedactsSecrets(t *testing.T) {
	t.Parallel()
	b := sampleBundle()
	secret := "ghp_0123456789abcdefghijABCDEFGHIJ0123456789"
	b.Skills[0].Skill.Steps = []string{"export GH_TOKEN=" + secret}
	b.Skills[0].Versions[0].Changelog = "token " + secret
	b.Skills[0].Heuristics[0].Why = "password=hunter22"
	var buf bytes.Buffer
	if err := WriteBundle(&buf, b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), secret) || strings.Contains(buf.String(), "hunter22") || strings.Count(buf.String(), "[REDACTED:") != 3 {
		t.Errorf("secrets in bundle:\n%s", buf.String())
	}
	if b.Skills[0].Skill.Steps[0] != "export GH_TOKEN="+secret {
		t.Errorf("WriteBundle modified its input")
	}
}

func TestReadBundleRejects(t *testing.T) {
	t.Parallel()
	valid := func() map[string]any {
		var buf bytes.Buffer
		if err := WriteBundle(&buf, sampleBundle()); err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	skill := func(m map[string]any) map[string]any { return m["skills"].([]any)[0].(map[string]any) }
	inner := func(m map[string]any) map[string]any { return skill(m)["skill"].(map[string]any) }
	version := func(m map[string]any, i int) map[string]any { return skill(m)["versions"].([]any)[i].(map[string]any) }
	heur := func(m map[string]any) map[string]any { return skill(m)["heuristics"].([]any)[0].(map[string]any) }
	cases := []struct {
		name   string
		edit   func(m map[string]any)
		field  string
		substr string
	}{
		{"wrong format", func(m map[string]any) { m["format"] = "other-bundle" }, "format", `"other-bundle" is not "kaizen-skill-bundle"`},
		{"missing format", func(m map[string]any) { delete(m, "format") }, "format", "missing"},
		{"wrong version", func(m map[string]any) { m["version"] = 2 }, "version", "kaizen-skill-bundle version 2 is not supported"},
		{"unknown field", func(m map[string]any) { m["extra"] = 1 }, "", "unknown field"},
		{"unsanitised name", func(m map[string]any) { inner(m)["name"] = "../evil" }, "skills[0].skill.name", "not a sanitised"},
		{"reserved name", func(m map[string]any) { inner(m)["name"] = "con" }, "skills[0].skill.name", "not a sanitised"},
		{"bad status", func(m map[string]any) { inner(m)["status"] = "live" }, "skills[0].skill.status", ""},
		{"empty id", func(m map[string]any) { inner(m)["id"] = "" }, "skills[0].skill.id", ""},
		{"no versions", func(m map[string]any) { skill(m)["versions"] = []any{} }, "skills[0].versions", ""},
		{"version gap", func(m map[string]any) { version(m, 1)["version"] = 3 }, "skills[0].versions[1].version", "want 2"},
		{"current not last", func(m map[string]any) { inner(m)["version"] = 1 }, "skills[0].skill.version", ""},
		{"content not last", func(m map[string]any) { inner(m)["content"] = "x" }, "skills[0].skill.content", ""},
		{"foreign version", func(m map[string]any) { version(m, 0)["skill_id"] = "skill-2" }, "skills[0].versions[0].skill_id", ""},
		{"missing heuristic", func(m map[string]any) { inner(m)["heuristic_ids"] = []any{"heur-1", "heur-9"} }, "skills[0].skill.heuristic_ids[1]", "heur-9"},
		{"bad kind", func(m map[string]any) { heur(m)["kind"] = "maybe" }, "skills[0].heuristics[0].kind", ""},
		{"bad heuristic status", func(m map[string]any) { heur(m)["status"] = "zombie" }, "skills[0].heuristics[0].status", ""},
		{"empty rule", func(m map[string]any) { heur(m)["rule"] = " " }, "skills[0].heuristics[0].rule", ""},
		{"negative count", func(m map[string]any) { heur(m)["evidence_count"] = -1 }, "skills[0].heuristics[0].evidence_count", ""},
		{"NUL", func(m map[string]any) { inner(m)["when_to_use"] = "a\x00b" }, "skills[0].skill.when_to_use", "NUL"},
		{"wrong type", func(m map[string]any) { inner(m)["version"] = "2" }, "", "skills.skill.version"},
		{"duplicate name", func(m map[string]any) {
			s := skill(m)
			b, _ := json.Marshal(s)
			var dup map[string]any
			_ = json.Unmarshal(b, &dup)
			dup["skill"].(map[string]any)["id"] = "skill-2"
			for _, v := range dup["versions"].([]any) {
				v.(map[string]any)["skill_id"] = "skill-2"
			}
			m["skills"] = append(m["skills"].([]any), dup)
		}, "skills[1].skill.name", "also the name of skills[0]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m := valid()
			c.edit(m)
			data, _ := json.Marshal(m)
			_, err := ReadBundle(bytes.NewReader(data), 0)
			var be *BundleError
			if !errors.As(err, &be) {
				t.Fatalf("error %v (%T), want *BundleError", err, err)
			}
			if be.Field != c.field || !strings.Contains(be.Message, c.substr) {
				t.Errorf("error %v; want field %q with %q", err, c.field, c.substr)
			}
		})
	}
	var buf bytes.Buffer
	if err := WriteBundle(&buf, sampleBundle()); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	for name, in := range map[string][]byte{
		"too large":     data,
		"trailing data": append(append([]byte{}, data...), []byte("{}")...),
		"invalid UTF-8": append(append([]byte{}, data[:len(data)-2]...), 0xff, '}'),
		"not JSON":      []byte("kaizen"),
	} {
		limit := int64(0)
		if name == "too large" {
			limit = int64(len(data) - 1)
		}
		var be *BundleError
		if _, err := ReadBundle(bytes.NewReader(in), limit); !errors.As(err, &be) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := ReadBundle(bytes.NewReader(data), int64(len(data))); err != nil {
		t.Errorf("a bundle of exactly the limit: %v", err)
	}
	// WriteBundle refuses what ReadBundle would refuse.
	b := sampleBundle()
	b.Skills[0].Skill.Name = "Not Sanitised"
	var be *BundleError
	if err := WriteBundle(&bytes.Buffer{}, b); !errors.As(err, &be) || be.Field != "skills[0].skill.name" {
		t.Errorf("WriteBundle: %v", err)
	}
}

func TestReadBundleFixture(t *testing.T) {
	t.Parallel()
	b, err := ReadBundle(strings.NewReader(readFixture(t, "skills", "bundle.json")), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Skills) != 1 || b.Skills[0].Skill.Name != "fix-flaky-go-tests" || len(b.Skills[0].Versions) != 1 {
		t.Errorf("bundle %+v", b)
	}
	doc, err := ParseSkill(b.Skills[0].Skill.Content)
	if err != nil || doc.Name != "fix-flaky-go-tests" {
		t.Errorf("bundled SKILL.md: %+v %v", doc, err)
	}
}

func FuzzReadBundle(f *testing.F) {
	var buf bytes.Buffer
	if err := WriteBundle(&buf, sampleBundle()); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"format": "kaizen-skill-bundle", "version": 1, "skills": [{"skill": {"name": "a"}, "versions": null}]}`))
	f.Add([]byte(`{"format": "kaizen-skill-bundle", "version": 1, "skills": null}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ReadBundle(bytes.NewReader(data), 1<<20)
		if err != nil {
			return
		}
		// What was read can be written and read again.
		var out bytes.Buffer
		if err := WriteBundle(&out, b); err != nil {
			t.Fatalf("re-write of a valid bundle: %v", err)
		}
	})
}
