package explore

import (
	"encoding/json"
	"fmt"
	"testing"
)

// A search that found nothing uses no search budget; one that found
// something does (reference defect: empty searches counted).
func TestOnlySearchesWithResultsUseTheBudget(t *testing.T) {
	t.Parallel()
	zero, two := 0, 2
	cases := []struct {
		name string
		call ToolCall
		want int
	}{
		{"hits 0", ToolCall{Name: "Grep", Args: map[string]any{"pattern": "a"}, Hits: &zero}, 0},
		{"hits 2", ToolCall{Name: "Grep", Args: map[string]any{"pattern": "b"}, Hits: &two}, 1},
		{"no matches reply", ToolCall{Name: "Grep", Args: map[string]any{"pattern": "c"}, Output: "No matches found"}, 0},
		{"blank reply", ToolCall{Name: "Grep", Args: map[string]any{"pattern": "d"}, Output: "  \n"}, 0},
		{"hit lines", ToolCall{Name: "Grep", Args: map[string]any{"pattern": "e"}, Output: "src/a.go:12:func a()"}, 1},
		{"files", ToolCall{Name: "Glob", Args: map[string]any{"pattern": "*.go"}, Files: []string{"a.go"}}, 1},
		{"nothing reported", ToolCall{Name: "Grep", Args: map[string]any{"pattern": "f"}}, 1},
	}
	for _, tc := range cases {
		tr := newTracker(t, "bootstrap", nil)
		round(t, tr, tc.call)
		if got := tr.s.Counters.SearchRoundsInPhase; got != tc.want {
			t.Errorf("%s: %d search rounds, want %d", tc.name, got, tc.want)
		}
	}
	// Claude Code's Grep and Glob responses through the hook
	for resp, want := range map[string]int{
		`{"mode":"files_with_matches","filenames":[],"numFiles":0}`:       0,
		`{"mode":"files_with_matches","filenames":["a.go"],"numFiles":1}`: 1,
		`{"filenames":[],"durationMs":3,"numFiles":0,"truncated":false}`:  0,
		`"No files found"`: 0,
	} {
		c, err := ToolCallFromHook("Grep", json.RawMessage(`{"pattern":"x"}`), json.RawMessage(resp))
		if err != nil {
			t.Fatal(err)
		}
		tr := newTracker(t, "bootstrap", nil)
		round(t, tr, c)
		if got := tr.s.Counters.SearchRoundsInPhase; got != want {
			t.Errorf("hook response %s: %d search rounds, want %d", resp, got, want)
		}
	}
}

// A bootstrap exploration that only reads leaves EXPLORE at the read
// budget (reference defect: it stayed "required" until the iteration cap),
// and its tool choice turns to auto one round before.
func TestReadOnlyBootstrapMovesOnAtTheReadBudget(t *testing.T) {
	t.Parallel()
	tr := newTracker(t, "bootstrap", nil)
	if tr.s.Budget.ReadBudget != DefaultReadBudget || DefaultReadBudget != 12 {
		t.Fatalf("read budget %d", tr.s.Budget.ReadBudget)
	}
	for i := 1; i <= DefaultReadBudget; i++ {
		tr.Tick(t0)
		tr.ShouldExit()
		wantMode := "required"
		if i == DefaultReadBudget { // the round that uses the budget's last read
			wantMode = "auto"
		}
		if mode := tr.ToolChoice().Mode; string(mode) != wantMode {
			t.Errorf("round %d: tool choice %q, want %s", i, mode, wantMode)
		}
		if _, err := tr.RecordToolCall(read(fmt.Sprintf("f%d.go", i))); err != nil {
			t.Fatal(err)
		}
		tr.EndRound()
		want := "EXPLORE"
		if i == DefaultReadBudget {
			want = "PRODUCE"
		}
		if tr.Phase() != want {
			t.Fatalf("after %d read rounds: phase %s, want %s", i, tr.Phase(), want)
		}
	}
	// read_budget = 0 turns it off: reading alone keeps exploring
	off := newTracker(t, "bootstrap", func(b *Budget) { b.ReadBudget = 0 })
	for i := range 15 {
		round(t, off, read(fmt.Sprintf("g%d.go", i)))
	}
	if off.Phase() != "EXPLORE" {
		t.Errorf("read budget 0: phase %s after 15 read rounds", off.Phase())
	}
}

// FuzzToolCallFromHook: any tool input and response either parse into a
// valid call whose hit count is never negative, or give an error; never a
// panic.
func FuzzToolCallFromHook(f *testing.F) {
	f.Add("Grep", []byte(`{"pattern":"x"}`), []byte(`{"filenames":[],"numFiles":0}`))
	f.Add("Bash", []byte(`{"command":"rg foo"}`), []byte(`"No matches found"`))
	f.Add("Read", []byte(`null`), []byte(``))
	f.Add("Glob", []byte(`{}`), []byte(`{"numFiles":-3,"filenames":["a.go"]}`))
	f.Fuzz(func(t *testing.T, name string, input, response []byte) {
		c, err := ToolCallFromHook(name, input, response)
		if err != nil {
			return
		}
		if c.Hits != nil && *c.Hits < 0 {
			t.Fatalf("negative hits %d", *c.Hits)
		}
		tr := newTracker(t, "bootstrap", nil)
		tr.Tick(t0)
		if _, err := tr.RecordToolCall(c); err != nil {
			t.Fatalf("a parsed call is not recordable: %v", err)
		}
	})
}
