package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestTeamListsJSONArePages: with --json the team listings print the page
// shape of the REST listings; their text output stays one line per item.
func TestTeamListsJSONArePages(t *testing.T) {
	home := t.TempDir()
	kz := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := run(append([]string{"--home", home, "--project", "web"}, args...), strings.NewReader(""), &out, &errOut); code != 0 {
			t.Fatalf("kaizen %v: %d %s %s", args, code, out.String(), errOut.String())
		}
		return out.String()
	}
	kz("team", "create", "crew", "--member", "lead:coordinator", "--member", "ann:executor")
	kz("team", "task", "add", "--team", "crew", "--id", "t1", "Implement")
	for _, args := range [][]string{{"team", "list"}, {"team", "task", "list", "--team", "crew"}, {"run", "list"}} {
		var page struct {
			Project string            `json:"project"`
			Items   []json.RawMessage `json:"items"`
			Total   int               `json:"total"`
			Limit   *int              `json:"limit"`
			Offset  *int              `json:"offset"`
		}
		out := kz(append([]string{"--json"}, args...)...)
		if err := json.Unmarshal([]byte(out), &page); err != nil || page.Project != "web" || page.Limit == nil || page.Offset == nil ||
			len(page.Items) != page.Total {
			t.Errorf("%v --json: %v %s", args, err, out)
		}
	}
	if out := kz("team", "list"); !strings.HasPrefix(out, "crew\t2 members") {
		t.Errorf("team list text: %q", out)
	}
	if out := kz("team", "task", "list", "--team", "crew"); !strings.Contains(out, "t1") || strings.Contains(out, "items") {
		t.Errorf("task list text: %q", out)
	}
}
