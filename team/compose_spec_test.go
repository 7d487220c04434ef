package team

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// Each of the seed's five named compositions is a template that expands
// into runnable steps: "with" steps nested where the predecessor supports
// it, every input accepted by its pattern.
func TestCompositionTemplatesExpand(t *testing.T) {
	t.Parallel()
	inputs := map[string]map[string]any{
		"CP-3": {"requirement": "why is login slow", "workers": []any{map[string]any{"angle": "db", "member": "ann"}}},
		"CP-4": {"proposal": map[string]any{"id": "p1", "title": "design"}, "voters": []any{"a", "b", "c"}},
		"CP-6": {"plan": []any{map[string]any{"id": "a"}}},
		"CP-8": {"requester": "ann", "request": map[string]any{"topic": "security", "question": "hash?"}, "members": []any{}},
		"CP-9": {"sync_points": []any{map[string]any{"id": "S1", "track_a_deliverable": "api", "track_b_deliverable": "ui"}}},
	}
	want := map[string]string{
		"standard":      "CP-1{review_cycle} → CP-10[always]",
		"high-risk":     "CP-4 → CP-6{review_each}",
		"investigation": "CP-3 → CP-4 → CP-7[not_success]",
		"parallel":      "CP-9 → CP-2 → CP-10[always]",
		"expert":        "CP-8 → CP-1{review_cycle}",
	}
	for _, c := range Compositions() {
		mine := map[string]map[string]any{}
		for _, st := range c.Steps {
			if in, ok := inputs[string(st.Pattern)]; ok {
				mine[string(st.Pattern)] = in
			}
		}
		got, _, err := CompositionSpec{Template: c.Name, Subject: "login", Inputs: mine}.Expand()
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		var parts []string
		for _, s := range got.Steps {
			p := string(s.Pattern)
			var in map[string]any
			_ = json.Unmarshal(s.Input, &in)
			for _, k := range []string{"review_cycle", "review_each"} {
				if in[k] == true {
					p += "{" + k + "}"
				}
			}
			if s.When != WhenOK {
				p += "[" + s.When + "]"
			}
			parts = append(parts, p)
		}
		if g := strings.Join(parts, " → "); g != want[c.Name] || got.Name != c.Name {
			t.Errorf("%s: %s, want %s", c.Name, g, want[c.Name])
		}
	}
}

func TestCompositionFileTOML(t *testing.T) {
	t.Parallel()
	spec, err := ParseCompositionFile([]byte(`
template = "standard"
subject = "add GET /health"

[input.CP-1]
requirement = "add GET /health returning 200"
test_gate = "go test ./..."

[config.review_fix]
max_rounds = 3
`))
	if err != nil {
		t.Fatal(err)
	}
	c, cfg, err := spec.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Steps) != 2 || !strings.Contains(string(c.Steps[0].Input), `"requirement":"add GET /health returning 200"`) || cfg.ReviewFix.MaxRounds != 3 || cfg.Swarm.MaxRounds != 2 {
		t.Fatalf("%+v %+v", c, cfg.ReviewFix)
	}
	// explicit steps with conditions
	spec, err = ParseCompositionFile([]byte(`
[[steps]]
pattern = "cp-5"
input = { issue = "flaky build" }
[[steps]]
pattern = "CP-7"
when = "not_success"
input = { issue = "flaky build" }
`))
	if err != nil {
		t.Fatal(err)
	}
	c, _, err = spec.Expand()
	if err != nil || len(c.Steps) != 2 || c.Steps[1].When != WhenNotSuccess {
		t.Fatalf("%+v %v", c, err)
	}
	if i, ok := c.Next(OutcomeSuccess); ok {
		t.Fatalf("CP-7 runs after a success: %d", i)
	}
	if i, ok := (Composed{Steps: c.Steps, Step: 0}).Next(OutcomeEscalated); !ok || i != 1 {
		t.Fatal("CP-7 does not run after an escalation")
	}
	for _, bad := range []string{
		`template = "nope"`,
		`template = "standard"` + "\nbogus = 1",
		`[[steps]]` + "\n" + `pattern = "CP-11"`,
		`[[steps]]` + "\n" + `pattern = "CP-10"` + "\n[[steps]]\n" + `pattern = "CP-1"` + "\n" + `input = { requirement = "x" }`,
		`[[steps]]` + "\n" + `pattern = "CP-4"` + "\n" + `input = { voters = ["a"] }`,
		`template = "standard"` + "\n[config.swarm]\nmax_rounds = 0",
		`template = "standard"` + "\n[input.CP-7]\nissue = \"x\"",
	} {
		spec, err := ParseCompositionFile([]byte(bad))
		if err == nil {
			_, _, err = spec.Expand()
		}
		if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrComposition) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
