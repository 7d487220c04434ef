package explore

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A service persists a session between hook calls: snapshotting and
// restoring it through JSON before every event must give exactly the
// timeline of an uninterrupted replay.
func TestSessionSurvivesPersistenceBetweenEvents(t *testing.T) {
	t.Parallel()
	logs, _ := filepath.Glob("testdata/*.jsonl")
	if len(logs) == 0 {
		t.Fatal("no scripted logs")
	}
	for _, log := range logs {
		base := strings.TrimSuffix(log, ".jsonl")
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
		f, err := os.Open(log)
		if err != nil {
			t.Fatal(err)
		}
		events, err := ParseEvents(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		want, err := Replay(strategy, budget, events)
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewSession(strategy, budget)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range events {
			data, err := json.Marshal(s.Snapshot())
			if err != nil {
				t.Fatal(err)
			}
			var st SessionState
			if err := json.Unmarshal(data, &st); err != nil {
				t.Fatal(err)
			}
			if s, err = RestoreSession(st); err != nil {
				t.Fatalf("%s: restore: %v", name, err)
			}
			if _, err := s.Apply(ev); err != nil {
				t.Fatalf("%s: apply: %v", name, err)
			}
		}
		if diff := cmp.Diff(want, s.Timeline()); diff != "" {
			t.Errorf("%s: timeline after persistence differs (-replay +persisted):\n%s", name, diff)
		}
	}
}
