package explore

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// restoreJSON round-trips a tracker through its JSON snapshot.
func restoreJSON(t testing.TB, tr *Tracker) *Tracker {
	t.Helper()
	data, err := json.Marshal(tr.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	out, err := Restore(st)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(out.Snapshot())
	if string(again) != string(data) {
		t.Fatalf("snapshot JSON changed in a round trip:\n%s", cmp.Diff(string(data), string(again)))
	}
	return out
}

func TestSnapshotIsDeepCopy(t *testing.T) {
	t.Parallel()
	tr := newTracker(t, "bootstrap", nil)
	tr.Tick(t0)
	tr.Nudge() // planning
	tr.RecordThought("Plan:\n1. Read the `Tracker` type\n2. Search for transitions")
	tr.RecordToolCall(read("a.go"))
	snap := tr.Snapshot()
	snap.Files["b.go"] = struct{}{}
	snap.Plan.Steps[0].Done = true
	snap.Plan.Steps[0].Keywords[0] = "zzz"
	snap.Strategy.Phases[0].Name = "CHANGED"
	snap.Nudges.Given[NudgeReflection] = 9
	if _, ok := tr.s.Files["b.go"]; ok || tr.s.Plan.Steps[0].Keywords[0] == "zzz" ||
		tr.s.Strategy.Phases[0].Name != "EXPLORE" || tr.s.Nudges.Given[NudgeReflection] != 0 {
		t.Fatal("mutating a snapshot changed the tracker")
	}
}

func TestRestoreRejectsBadState(t *testing.T) {
	t.Parallel()
	good := newTracker(t, "analyst", nil).Snapshot()
	cases := []struct {
		name   string
		mutate func(*State)
		want   error
	}{
		{"version", func(s *State) { s.Version = 99 }, ErrInvalidState},
		{"unknown phase", func(s *State) { s.Phase = "NOPE" }, ErrUnknownPhase},
		{"negative counter", func(s *State) { s.Counters.Iteration = -1 }, ErrInvalidState},
		{"bad exit", func(s *State) { s.Exit = "tired" }, ErrInvalidState},
		{"bad budget", func(s *State) { s.Budget.MaxIterations = 0 }, ErrInvalidBudget},
		{"bad strategy", func(s *State) { s.Strategy.Phases = s.Strategy.Phases[:1] }, ErrMissingTerminal},
		{"bad history", func(s *State) { s.History = []PhaseChange{{From: "SCAN", To: "X"}} }, ErrUnknownPhase},
	}
	for _, c := range cases {
		st := cloneState(good)
		c.mutate(&st)
		if _, err := Restore(st); !errors.Is(err, c.want) {
			t.Errorf("%s: Restore error %v, want %v", c.name, err, c.want)
		}
	}
	// Corrupt JSON conditions are rejected when decoding.
	data, _ := json.Marshal(good)
	var st State
	bad := []byte(string(data[:len(data)-1]) + `,"strategy":{"name":"x","phases":[],"transitions":[{"from":"a","to":"b","on_metrics":"iteration >>= 2","on_text":"false"}]}}`)
	if err := json.Unmarshal(bad, &st); !errors.Is(err, ErrBadCondition) {
		t.Errorf("decoding a bad condition: %v, want ErrBadCondition", err)
	}
}
