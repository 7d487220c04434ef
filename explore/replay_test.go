package explore

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// TestReplayGolden replays every testdata/<strategy>.<scenario>.jsonl log with
// the built-in strategy named before the first dot and the pipeline's budget
// (or <log>.budget.toml when present), and compares the rendered timeline
// with <log>.golden. Run with -update to rewrite the golden files.
func TestReplayGolden(t *testing.T) {
	t.Parallel()
	logs, err := filepath.Glob("testdata/*.jsonl")
	if err != nil || len(logs) == 0 {
		t.Fatalf("no replay logs: %v", err)
	}
	for _, log := range logs {
		base := strings.TrimSuffix(log, ".jsonl")
		t.Run(filepath.Base(base), func(t *testing.T) {
			t.Parallel()
			got := replayFile(t, base)
			golden := base + ".golden"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./explore -run TestReplayGolden -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("timeline differs from %s (rerun with -update if intended)\n--- got ---\n%s\n--- want ---\n%s", golden, got, want)
			}
		})
	}
}

func replayFile(t *testing.T, base string) []byte {
	t.Helper()
	name := filepath.Base(base)
	strategy, err := BuiltinStrategy(name[:strings.IndexByte(name, '.')])
	if err != nil {
		t.Fatal(err)
	}
	budget := BudgetFor(strategy.Pipeline)
	if data, err := os.ReadFile(base + ".budget.toml"); err == nil {
		if budget, err = LoadBudgetTOML(data); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(base + ".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	events, err := ParseEvents(f)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := Replay(strategy, budget, events)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := RenderTimeline(&buf, tl); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestParseEventsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		input string
		line  int
		want  error
	}{
		{"unknown type", `{"type":"tick"}` + "\n" + `{"type":"jump"}`, 2, ErrUnknownEventType},
		{"missing type", "# comment\n\n{}", 3, ErrUnknownEventType},
		{"malformed json", `{"type":"tick"`, 1, ErrInvalidEvent},
		{"unknown field", `{"type":"tick","when":1}`, 1, ErrInvalidEvent},
		{"two values", `{"type":"tick"} {"type":"tick"}`, 1, ErrInvalidEvent},
		{"tool call without name", `{"type":"tool_call","args":{}}`, 1, ErrInvalidToolCall},
		{"bad status", `{"type":"tool_call","name":"Read","status":"maybe"}`, 1, ErrInvalidToolCall},
		{"tool fields on tick", `{"type":"tick","name":"Read"}`, 1, ErrBadValue},
		{"bad time", `{"type":"tick","time":"yesterday"}`, 1, ErrInvalidEvent},
		{"args not an object", `{"type":"tool_call","name":"Read","args":[1]}`, 1, ErrInvalidEvent},
		{"line too long", `{"type":"text","text":"` + strings.Repeat("x", maxEventLine) + `"}`, 1, ErrInvalidEvent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseEvents(strings.NewReader(tt.input))
			var ee *EventError
			if !errors.As(err, &ee) {
				t.Fatalf("got %v, want *EventError", err)
			}
			if ee.Line != tt.line {
				t.Errorf("line = %d, want %d (%v)", ee.Line, tt.line, err)
			}
			if !errors.Is(err, tt.want) || !errors.Is(err, ErrInvalidEvent) {
				t.Errorf("error %v does not wrap %v and ErrInvalidEvent", err, tt.want)
			}
		})
	}
}

func TestParseEventsSkipsBlankAndComments(t *testing.T) {
	t.Parallel()
	in := "# header\n\n  {\"type\":\"tick\",\"time\":\"2025-05-01T10:00:00Z\"}\n# note\n{\"type\":\"tool_call\",\"name\":\"Read\",\"args\":{\"file_path\":\"a.go\"}}\n"
	events, err := ParseEvents(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 || events[0].Line != 3 || events[1].Line != 5 || events[1].Name != "Read" || events[0].Time.IsZero() {
		t.Fatalf("events = %+v", events)
	}
}

func TestReplayRejectsInvalidEvent(t *testing.T) {
	t.Parallel()
	s, _ := BuiltinStrategy("bootstrap")
	_, err := Replay(s, DefaultBudget(), []Event{{Type: EventTick}, {Type: "bogus"}})
	var ee *EventError
	if !errors.As(err, &ee) || ee.Line != 2 {
		t.Fatalf("got %v, want *EventError at line 2", err)
	}
	_, err = Replay(Strategy{}, DefaultBudget(), nil)
	if !errors.Is(err, ErrInvalidStrategy) {
		t.Fatalf("got %v, want ErrInvalidStrategy", err)
	}
}

// FuzzParseEvents: the parser never panics, every error is an *EventError
// with a positive line, and whatever parses also replays without panicking.
func FuzzParseEvents(f *testing.F) {
	logs, _ := filepath.Glob("testdata/*.jsonl")
	for _, l := range logs {
		if data, err := os.ReadFile(l); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"type":"tool_call","name":"Bash","args":{"command":"rg -n foo"},"status":"error"}`))
	f.Add([]byte("{\"type\":\"text\",\"text\":\"Plan:\\n1. read `Foo`\\n2. search BarBaz\"}\n{\"type\":\"force_terminal\"}"))
	strategies := BuiltinStrategies()
	f.Fuzz(func(t *testing.T, data []byte) {
		events, err := ParseEvents(bytes.NewReader(data))
		if err != nil {
			var ee *EventError
			if !errors.As(err, &ee) || ee.Line < 1 {
				t.Fatalf("error %v is not an *EventError with a line", err)
			}
			return
		}
		s, _ := BuiltinStrategy(strategies[len(data)%len(strategies)])
		b := DefaultBudget()
		b.MaxIterations = 1 + len(data)%30
		tl, err := Replay(s, b, events)
		if err != nil {
			t.Fatalf("replay of parsed events: %v", err)
		}
		if tl.Metrics.Iteration > b.MaxIterations+b.HardExitRounds {
			t.Fatalf("iteration %d beyond the hard limit", tl.Metrics.Iteration)
		}
		if err := RenderTimeline(&bytes.Buffer{}, tl); err != nil {
			t.Fatal(err)
		}
	})
}
