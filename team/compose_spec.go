package team

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// A composition runs patterns one after another on a team (the seed's
// "→"); a pattern the seed combines with its predecessor ("+", "each
// increment") is nested in it where the predecessor supports it: CP-2
// with CP-1 is CP-1's review stage (review_cycle), CP-2 with CP-6 reviews
// each increment (review_each). CP-2 with CP-9 (review-fix per track) has
// no nesting: it reviews the integrated result after CP-9.
//
// The service keeps a composition in its runs (Run.Compose): when a
// top-level run of a composition finishes, the next step whose condition
// holds starts in the same transaction, so a crash between two steps
// loses nothing.

// Step conditions: when a composition step runs, given how the previous
// step ended.
const (
	// WhenOK: the previous step succeeded or finished by a fallback
	// (degraded); the default of every step but CP-10.
	WhenOK = "ok"
	// WhenNotSuccess: the previous step did not succeed ("CP-7 if needed").
	WhenNotSuccess = "not_success"
	// WhenAlways: whatever happened; the default of CP-10 (a post-mortem
	// is most useful after trouble).
	WhenAlways = "always"
)

// ComposeStep is one run of a composition.
type ComposeStep struct {
	Pattern PatternID       `json:"pattern"`
	Input   json.RawMessage `json:"input,omitempty"`
	When    string          `json:"when,omitempty"`
	Purpose string          `json:"purpose,omitempty"`
}

// Composed is a composition's state carried by each of its runs: the
// steps and the index of the run's own step.
type Composed struct {
	Name string `json:"name"`
	// Subject is what the composition works on (each run's subject).
	Subject string        `json:"subject,omitempty"`
	Step    int           `json:"step"`
	Steps   []ComposeStep `json:"steps"`
}

// Next returns the index of the step to start after step Step ended with
// status, and false when the composition is over. Steps whose condition
// does not hold are skipped.
func (c Composed) Next(status OutcomeStatus) (int, bool) {
	for i := c.Step + 1; i < len(c.Steps); i++ {
		if stepRuns(c.Steps[i].When, status) {
			return i, true
		}
	}
	return 0, false
}

func stepRuns(when string, prev OutcomeStatus) bool {
	switch when {
	case WhenAlways:
		return true
	case WhenNotSuccess:
		return prev != OutcomeSuccess
	}
	return prev == OutcomeSuccess || prev == OutcomeDegraded
}

// CompositionSpec is a composition to run: a named template of the seed
// or explicit steps, with the inputs of its patterns. It is what
// `kaizen team run --file` reads (TOML, see ParseCompositionFile).
type CompositionSpec struct {
	// Template names one of the seed's five compositions (standard,
	// high-risk, investigation, parallel, expert).
	Template string `json:"template,omitempty" toml:"template"`
	// Name labels the composition (default the template's).
	Name    string `json:"name,omitempty" toml:"name"`
	Team    string `json:"team,omitempty" toml:"team"`
	Subject string `json:"subject,omitempty" toml:"subject"`
	// Inputs by pattern id, for the template's steps.
	Inputs map[string]map[string]any `json:"inputs,omitempty" toml:"input"`
	// Steps replace the template: each with its pattern, input and
	// condition.
	Steps []SpecStep `json:"steps,omitempty" toml:"steps"`
	// Config overrides the seed's numbers for every run (JSON shape of
	// Config).
	Config map[string]any `json:"config,omitempty" toml:"config"`
}

// SpecStep is one explicit step of a CompositionSpec.
type SpecStep struct {
	Pattern string         `json:"pattern" toml:"pattern"`
	When    string         `json:"when,omitempty" toml:"when"`
	Input   map[string]any `json:"input,omitempty" toml:"input"`
}

// maxComposeSteps bounds a composition.
const maxComposeSteps = 20

// ParseCompositionFile reads a composition in TOML:
//
//	template = "standard"
//	subject  = "add GET /health"
//	[input.CP-1]
//	requirement = "add GET /health returning 200"
//
// or with explicit steps:
//
//	[[steps]]
//	pattern = "CP-3"
//	input = { requirement = "why is login slow", workers = [{ angle = "db", member = "ann" }] }
//	[[steps]]
//	pattern = "CP-7"
//	when = "not_success"
//
// Unknown keys are refused.
func ParseCompositionFile(data []byte) (CompositionSpec, error) {
	const op = "parse composition file"
	var spec CompositionSpec
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&spec)
	if err != nil {
		return spec, invalid(op, "file", "%v", err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		var keys []string
		for _, k := range und {
			// free-form tables (inputs, config) are checked by Expand
			if k[0] == "config" || k[0] == "input" || len(k) > 1 && k[0] == "steps" && k[1] == "input" {
				continue
			}
			keys = append(keys, k.String())
		}
		if len(keys) > 0 {
			return spec, invalid(op, "file", "unknown key(s): %s", strings.Join(keys, ", "))
		}
	}
	return spec, nil
}

// Expand turns a spec into the steps to run: the template's steps (or the
// explicit ones) with their inputs, "with" steps nested into their
// predecessors, defaults filled from the subject (CP-1 requirement, CP-2
// artifact, CP-5 and CP-7 issue), and each input checked by starting the
// pattern's machine on it (nothing is stored). It also returns the config
// the runs use.
func (spec CompositionSpec) Expand() (Composed, Config, error) {
	const op = "expand composition"
	cfg := DefaultConfig()
	if len(spec.Config) > 0 {
		raw, err := json.Marshal(spec.Config)
		if err != nil {
			return Composed{}, cfg, invalid(op, "config", "%v", err)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil {
			return Composed{}, cfg, invalid(op, "config", "%v", err)
		}
		if err := cfg.Validate(); err != nil {
			return Composed{}, cfg, err
		}
	}
	out := Composed{Name: spec.Name, Subject: strings.TrimSpace(spec.Subject)}
	input := func(p PatternID, m map[string]any) map[string]any {
		in := map[string]any{}
		for k, v := range spec.Inputs[string(p)] {
			in[k] = v
		}
		for k, v := range m {
			in[k] = v
		}
		return in
	}
	type step struct {
		p    PatternID
		mode StepMode
		when string
		in   map[string]any
		purp string
	}
	var steps []step
	switch {
	case len(spec.Steps) > 0:
		if spec.Template != "" {
			return out, cfg, invalid(op, "steps", "give a template or steps, not both")
		}
		for i, s := range spec.Steps {
			p := PatternID(strings.ToUpper(strings.TrimSpace(s.Pattern)))
			if !p.Valid() {
				return out, cfg, invalid(op, fmt.Sprintf("steps[%d].pattern", i), "%q is not CP-1 … CP-10", s.Pattern)
			}
			steps = append(steps, step{p: p, mode: ModeThen, when: s.When, in: input(p, s.Input)})
		}
		out.Name = cmpOr(out.Name, "custom")
	case spec.Template != "":
		c, ok := CompositionByName(spec.Template)
		if !ok {
			var names []string
			for _, c := range Compositions() {
				names = append(names, c.Name)
			}
			return out, cfg, invalid(op, "template", "%q is not one of %s", spec.Template, strings.Join(names, ", "))
		}
		for _, s := range c.Steps {
			st := step{p: s.Pattern, mode: s.Mode, in: input(s.Pattern, nil), purp: s.Purpose}
			if c.Name == "investigation" && s.Pattern == CP7 {
				st.when = WhenNotSuccess // "swarm if needed"
			}
			steps = append(steps, st)
		}
		out.Name = cmpOr(out.Name, c.Name)
	default:
		return out, cfg, invalid(op, "template", "a template or steps required")
	}
	for k := range spec.Inputs {
		if !PatternID(k).Valid() {
			return out, cfg, invalid(op, "input", "%q is not a pattern id", k)
		}
		used := false
		for _, s := range steps {
			used = used || s.p == PatternID(k)
		}
		if !used {
			return out, cfg, invalid(op, "input", "an input for %s, which is not a step of the composition", k)
		}
	}
	if len(steps) > maxComposeSteps {
		return out, cfg, invalid(op, "steps", "%d steps, at most %d", len(steps), maxComposeSteps)
	}
	for i, s := range steps {
		// Nest a "with" CP-2 into its predecessor when it supports it.
		if s.mode == ModeWith && s.p == CP2 && len(out.Steps) > 0 {
			prev := &out.Steps[len(out.Steps)-1]
			key := map[PatternID]string{CP1: "review_cycle", CP6: "review_each"}[prev.Pattern]
			if key != "" {
				var m map[string]any
				_ = json.Unmarshal(prev.Input, &m)
				m[key] = true
				prev.Input, _ = json.Marshal(m)
				prev.Purpose += " + " + s.purp
				continue
			}
		}
		in := s.in
		subject := strings.TrimSpace(spec.Subject)
		if subject != "" {
			def := map[PatternID]string{CP1: "requirement", CP2: "artifact", CP5: "issue", CP7: "issue", CP9: "requirement"}[s.p]
			if _, ok := in[def]; def != "" && !ok {
				in[def] = subject
			}
		}
		when := s.when
		switch when {
		case "":
			when = WhenOK
			if s.p == CP10 {
				when = WhenAlways
			}
		case WhenOK, WhenNotSuccess, WhenAlways:
		default:
			return out, cfg, invalid(op, fmt.Sprintf("steps[%d].when", i), "%q is not ok, not_success or always", s.when)
		}
		raw, err := json.Marshal(in)
		if err != nil {
			return out, cfg, invalid(op, fmt.Sprintf("input of %s", s.p), "%v", err)
		}
		out.Steps = append(out.Steps, ComposeStep{Pattern: s.p, Input: raw, When: when, Purpose: s.purp})
	}
	for i, s := range out.Steps {
		if s.Pattern == CP10 {
			if i != len(out.Steps)-1 {
				return out, cfg, fmt.Errorf("%w: CP-10 is always last (step %d of %d)", ErrComposition, i+1, len(out.Steps))
			}
			continue // its input is completed by the service when it starts
		}
		if _, _, err := Start(RunSpec{ID: "check", Pattern: s.Pattern, Team: "check", Config: cfg, Input: s.Input}, time.Unix(0, 0)); err != nil {
			return out, cfg, fmt.Errorf("step %d (%s): %w", i+1, s.Pattern, err)
		}
	}
	return out, cfg, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
