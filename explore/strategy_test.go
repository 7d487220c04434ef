package explore

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBuiltinStrategies(t *testing.T) {
	t.Parallel()
	for _, name := range BuiltinStrategies() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, err := BuiltinStrategy(name)
			if err != nil {
				t.Fatal(err)
			}
			if s.Name != name {
				t.Fatalf("name %q", s.Name)
			}
			src, err := BuiltinStrategyTOML(name)
			if err != nil {
				t.Fatal(err)
			}
			fromSrc, err := LoadStrategyTOML(src)
			if err != nil || !cmp.Equal(fromSrc, s) {
				t.Fatalf("TOML source does not load to the built-in: %v %s", err, cmp.Diff(s, fromSrc))
			}
			data, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			var back Strategy
			if err := json.Unmarshal(data, &back); err != nil {
				t.Fatal(err)
			}
			if again, _ := json.Marshal(back); string(again) != string(data) {
				t.Fatalf("JSON round trip changed the strategy:\n%s", cmp.Diff(string(data), string(again)))
			}
			if err := back.Validate(); err != nil {
				t.Fatal(err)
			}
			// Copies are independent.
			s.Phases[0].Name = "X"
			if again, _ := BuiltinStrategy(name); again.Phases[0].Name == "X" {
				t.Fatal("BuiltinStrategy returned shared phases")
			}
		})
	}
	if _, err := BuiltinStrategy("nope"); !errors.Is(err, ErrUnknownStrategy) {
		t.Fatalf("unknown strategy: %v", err)
	}
	if _, err := BuiltinStrategyTOML("nope"); !errors.Is(err, ErrUnknownStrategy) {
		t.Fatalf("unknown strategy TOML: %v", err)
	}
}

func TestResolveStrategy(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		skillOnly bool
		want      string
	}{
		{"analyst", false, "analyst"}, {"analyst", true, "analyst"}, {"producer", false, "producer"},
		{"", false, "bootstrap"}, {"bootstrap", true, "bootstrap-skill"}, {"whatever", false, "bootstrap"},
	}
	for _, c := range cases {
		if got := ResolveStrategy(c.name, c.skillOnly).Name; got != c.want {
			t.Errorf("ResolveStrategy(%q, %v) = %s, want %s", c.name, c.skillOnly, got, c.want)
		}
	}
}

const triageTOML = `
name = "triage"
pipeline = "triage"
reflection = false
planning = false
summary = "Reply with the root cause and the failing test ({unique_files} files read)."

[nudges]
budget_warning_fraction = 0.5

[texts]
budget_warning = "Half of the {max_iterations} rounds are gone."
footer = ""

[tools]
run_tests = "exec"
file_bug = "submit"

[[phase]]
name = "REPRODUCE"
tool_choice = "required"
  [[phase.choice]]
  when = "tool_rounds_in_phase >= 2"
  mode = "auto"

[[phase]]
name = "LOCATE"
enter = "Reproduced. Now find the code responsible."
  [[phase.on_text]]
  when = "read_rounds_in_phase < 2"
  text = "Read at least two files before concluding."

[[phase]]
name = "REPORT"
tool_choice = "none"

[[transition]]
from = "REPRODUCE"
to = "LOCATE"
on_metrics = "unique_queries >= 1 and tool_rounds_in_phase >= 2"

[[transition]]
from = "REPRODUCE"
to = "REPORT"
on_metrics = "submit_count >= 1"

[[transition]]
from = "LOCATE"
to = "REPORT"
on_metrics = "read_rounds_in_phase >= 2 and rounds_since_new_info >= 1"
on_text = "read_rounds_in_phase >= 2"
`

// TestCustomStrategyEndToEnd: a user strategy from TOML drives a session with
// its own phases, rule order, tool kinds, texts and summary.
func TestCustomStrategyEndToEnd(t *testing.T) {
	t.Parallel()
	s, err := LoadStrategyTOML([]byte(triageTOML))
	if err != nil {
		t.Fatal(err)
	}
	if s.SubmitTool != DefaultSubmitTool || s.Phases[1].ToolChoice != ChoiceAuto || s.Phases[1].Label != "locate" {
		t.Fatalf("defaults not applied: %+v", s)
	}
	b := DefaultBudget()
	b.MaxIterations = 10
	tr, err := New(s, b)
	if err != nil {
		t.Fatal(err)
	}
	run := ToolCall{Name: "run_tests", Args: map[string]any{"pkg": "./store"}}
	if got := tr.ToolChoice().Mode; got != ChoiceRequired {
		t.Fatalf("REPRODUCE tool choice %s", got)
	}
	round(t, tr, run)
	if res, _ := tr.RecordToolCall(run); res.Kind != KindExec {
		t.Fatalf("run_tests classified %s", res.Kind)
	}
	_, tn := round(t, tr, run)
	if tr.Phase() != "LOCATE" || kindOf(tn) != NudgePhaseTransition || !strings.HasPrefix(tn.Text, "Reproduced.") {
		t.Fatalf("phase %s, transition nudge %+v", tr.Phase(), tn)
	}
	if tn.Text != "Reproduced. Now find the code responsible." {
		t.Fatalf("empty footer override not applied: %q", tn.Text)
	}
	tr.Tick(t0)
	d := tr.OnTextResponse("It is the cache.")
	if kindOf(d.Nudge) != NudgeContinue || d.Nudge.Text != "Read at least two files before concluding." {
		t.Fatalf("text in LOCATE: %+v", d)
	}
	tr.Tick(t0)
	if n := tr.Nudge(); n != nil {
		t.Fatalf("nudge right after a text nudge: %+v", n)
	}
	tr.RecordToolCall(read("store/cache.go"))
	tr.EndRound()
	tr.Tick(t0)
	if n := tr.Nudge(); kindOf(n) != NudgeBudgetWarning || n.Text != "Half of the 10 rounds are gone." {
		t.Fatalf("round 5 nudge %+v", n)
	}
	tr.RecordToolCall(read("store/cache.go"))
	_ = tr.EndRound()
	if tr.Phase() != "REPORT" {
		t.Fatalf("phase %s, want REPORT", tr.Phase())
	}
	tr.Tick(t0)
	if d := tr.OnTextResponse("root cause: …"); !d.Final() {
		t.Fatalf("report: %+v", d)
	}
	// The rule order matters: a submit in REPRODUCE skips straight to REPORT.
	tr2, _ := New(s, b)
	_, tn = round(t, tr2, ToolCall{Name: "file_bug", Args: map[string]any{"title": "x"}})
	if tr2.Phase() != "REPORT" || !strings.Contains(tn.Text, "root cause") {
		t.Fatalf("file_bug: phase %s, nudge %+v", tr2.Phase(), tn)
	}
}

func TestStrategyTOMLErrors(t *testing.T) {
	t.Parallel()
	const phases = `
name = "x"
[[phase]]
name = "A"
[[phase]]
name = "B"
[[transition]]
from = "A"
to = "B"
on_metrics = "iteration >= 2"
`
	cases := []struct {
		name  string
		toml  string
		want  error
		field string
	}{
		{"syntax", `name = "x`, ErrInvalidTOML, ""},
		{"wrong type", phases + "\n[nudges]\nmax_replans = \"many\"", ErrInvalidTOML, ""},
		{"unknown key", strings.Replace(phases, "on_metrics", "on_metric", 1), ErrUnknownKey, "transition.on_metric"},
		{"no name", strings.Replace(phases, `name = "x"`, "", 1), ErrBadValue, "name"},
		{"no phases", `name = "x"`, ErrMissingTerminal, "phase"},
		{"one phase", "name = \"x\"\n[[phase]]\nname = \"A\"", ErrMissingTerminal, "phase"},
		{"duplicate phase", strings.Replace(phases, `name = "B"`, `name = "A"`, 1), ErrDuplicatePhase, "phase[1].name"},
		{"unknown phase", strings.Replace(phases, `to = "B"`, `to = "C"`, 1), ErrUnknownPhase, "transition[0].to"},
		{"backward", phases + "[[transition]]\nfrom = \"A\"\nto = \"A\"", ErrBackwardTransition, "transition[1]"},
		{"from terminal", phases + "[[transition]]\nfrom = \"B\"\nto = \"A\"", ErrTerminalTransition, "transition[1]"},
		{"duplicate transition", phases + "[[transition]]\nfrom = \"A\"\nto = \"B\"", ErrDuplicateTransition, "transition[1]"},
		{"dead end", strings.Replace(phases, `name = "B"`, "name = \"B\"\n[[phase]]\nname = \"C\"", 1), ErrDeadEndPhase, "phase[B]"},
		{"unreachable", strings.Replace(phases, `name = "B"`, "name = \"M\"\n[[phase]]\nname = \"B\"", 1) + "[[transition]]\nfrom = \"M\"\nto = \"B\"", ErrUnreachablePhase, "phase[M]"},
		{"bad condition", strings.Replace(phases, "iteration >= 2", "iteration >== 2", 1), ErrBadCondition, "transition[0].on_metrics"},
		{"unknown metric", strings.Replace(phases, "iteration >= 2", "iterations >= 2", 1), ErrUnknownName, "transition[0].on_metrics"},
		{"unknown placeholder", strings.Replace(phases, `name = "x"`, "name = \"x\"\nsummary = \"{sumbit_count} submitted\"", 1), ErrUnknownName, "summary"},
		{"bad tool choice", strings.Replace(phases, `name = "A"`, "name = \"A\"\ntool_choice = \"always\"", 1), ErrBadToolChoice, "phase[A].tool_choice"},
		{"bad choice rule", strings.Replace(phases, `name = "A"`, "name = \"A\"\n[[phase.choice]]\nwhen = \"true\"\nmode = \"maybe\"", 1), ErrBadToolChoice, "phase[A].choice[0].mode"},
		{"bad rule condition", strings.Replace(phases, `name = "A"`, "name = \"A\"\n[[phase.context]]\nwhen = \"x >\"\ntext = \"t\"", 1), ErrBadCondition, "phase[A].context[0].when"},
		{"empty rule text", strings.Replace(phases, `name = "A"`, "name = \"A\"\n[[phase.on_text]]\ntext = \"  \"", 1), ErrBadValue, "phase[A].on_text[0].text"},
		{"bad mute", strings.Replace(phases, `name = "A"`, "name = \"A\"\nmute = [\"force_exit\"]", 1), ErrBadNudgeKind, "phase[A].mute"},
		{"bad tool kind", phases + "\n[tools]\nfoo = \"explode\"", ErrBadToolKind, "tools.foo"},
		{"bad text key", phases + "\n[texts]\nhello = \"hi\"", ErrBadNudgeKind, "texts.hello"},
		{"negative threshold", phases + "\n[nudges]\nmax_replans = -1", ErrBadValue, "nudges.max_replans"},
		{"fraction above 1", phases + "\n[nudges]\nbudget_warning_fraction = 1.5", ErrBadValue, "nudges.budget_warning_fraction"},
		{"zero window", phases + "\n[nudges]\ndeviation_window = 0", ErrBadValue, "nudges.deviation_window"},
		{"bad phase name", strings.Replace(phases, `name = "B"`, `name = "B C"`, 1), ErrBadValue, "phase[1].name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := LoadStrategyTOML([]byte(c.toml))
			var se *StrategyError
			if !errors.As(err, &se) || !errors.Is(err, c.want) || !errors.Is(err, ErrInvalidStrategy) {
				t.Fatalf("error %v, want a *StrategyError wrapping %v", err, c.want)
			}
			if c.field != "" && se.Field != c.field {
				t.Errorf("field %q, want %q (%v)", se.Field, c.field, err)
			}
		})
	}
	if _, err := ReadStrategyTOML(strings.NewReader(triageTOML)); err != nil {
		t.Fatalf("ReadStrategyTOML: %v", err)
	}
	if _, err := LoadStrategyTOML(make([]byte, maxTOMLSize+1)); !errors.Is(err, ErrInvalidTOML) {
		t.Fatalf("oversized TOML: %v", err)
	}
}

func TestGoBuiltStrategyValidation(t *testing.T) {
	t.Parallel()
	s := Strategy{
		Name:   "go",
		Phases: []Phase{{Name: "A"}, {Name: "B", ToolChoice: ChoiceNone}},
		Transitions: []Transition{
			{From: "A", To: "B", OnMetrics: Condition{Kind: CondCompare, Compare: Comparison{Left: Term{Name: "iteration"}, Op: "=~", Right: Term{Offset: 1}}}},
		},
		Nudges: DefaultNudgePolicy(),
	}
	if _, err := New(s, DefaultBudget()); !errors.Is(err, ErrBadCondition) {
		t.Fatalf("bad operator: %v", err)
	}
	s.Transitions[0].OnMetrics = Cmp("iteration", ">=", 2)
	tr, err := New(s, DefaultBudget())
	if err != nil {
		t.Fatal(err)
	}
	round(t, tr)
	round(t, tr)
	if tr.Phase() != "B" {
		t.Fatalf("phase %s", tr.Phase())
	}
}

// TestDocsTOMLExample keeps the strategy example in docs/explore.md valid.
func TestDocsTOMLExample(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/explore.md")
	if err != nil {
		t.Skip("docs/explore.md not found")
	}
	_, rest, ok := strings.Cut(string(doc), "## Custom strategies (TOML)")
	_, block, ok2 := strings.Cut(rest, "```toml\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("no TOML example in docs/explore.md")
	}
	if _, err := LoadStrategyTOML([]byte(block)); err != nil {
		t.Fatalf("docs example: %v", err)
	}
}
