package trace

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestFingerprintTypesAndKeys(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, cmd, out  string
		typ, msg, frame string
	}{
		{"go panic with own frame", "go run .", "panic: runtime error: index out of range [5] with length 3\n\ngoroutine 1 [running]:\nruntime.gopanic()\n\t/usr/local/go/src/runtime/panic.go:914 +0x21f\ngithub.com/acme/tok.(*Lexer).next(0xc000012345)\n\t/src/acme/tok/lexer.go:88 +0x1a5",
			"go:panic", "runtime error: index out of range [<num>] with length <num>", "lexer.go"},
		{"go test failure keyed on the test", "go test ./x", "--- FAIL: TestParse (0.00s)\n    parse_test.go:25: Parse(\"a b\") = 3, want 4\nFAIL",
			"go:test_fail", "testparse: parse(<str>) = <num>, want <num>", ""},
		{"python: last exception, innermost own frame", "python app.py", "Traceback (most recent call last):\n  File \"/srv/app.py\", line 3, in <module>\n    main()\n  File \"/srv/lib/views.py\", line 9, in get\n    x = d['k']\n  File \"/usr/lib/python3.11/json/__init__.py\", line 1, in loads\nKeyError: 'user_id'",
			"python:KeyError", "'user_id'", "views.py"},
		{"ts code", "npx tsc", "src/a.ts(3,9): error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'.",
			"ts:TS2345", "argument of type 'string' is not assignable to parameter of type 'number'.", ""},
		{"rust code with its label", "cargo build", "error[E0308]: mismatched types\n --> src/main.rs:4:18\n  |\n4 |     let x: i32 = \"5\";\n  |                  ^^^ expected `i32`, found `&str`",
			"rust:E0308", "mismatched types | expected `i32`, found `&str`", ""},
		{"java root cause", "java -jar a.jar", "Exception in thread \"main\" java.lang.RuntimeException: wrap\n\tat com.acme.A.run(A.java:3)\nCaused by: java.lang.IllegalStateException: Queue full\n\tat com.acme.Q.offer(Q.java:33)\n\t... 4 more",
			"java:IllegalStateException", "queue full", "Q.java"},
		{"environment failures have no frame", "python x.py", "Traceback (most recent call last):\n  File \"/srv/x.py\", line 1, in <module>\n    import yaml\nModuleNotFoundError: No module named 'yaml'",
			"python:ModuleNotFoundError", "no module named 'yaml'", ""},
		{"postgres SQLSTATE across clients", "go test ./repo", "--- FAIL: TestRepo (0.01s)\n    repo_test.go:9: ERROR: relation \"users\" does not exist (SQLSTATE 42P01)",
			"postgres:42P01", `relation "users" does not exist`, ""},
		{"mysql", "mysql", "ERROR 1146 (42S02) at line 3: Table 'shop.orders' doesn't exist", "mysql:1146", "table 'shop.orders' doesn't exist", ""},
		{"sqlite", "sqlite3 a.db", "Error: stepping, database is locked (5)", "sqlite:busy", "database is locked", ""},
		{"shell", "foo --x", "zsh: command not found: foo", "shell:command_not_found", "`foo`: command not found", ""},
		{"exit code only", "./run.sh", "exit status 3", "shell:exit_3", "exit status <num>", ""},
		{"empty", "", "", "generic:empty", "<empty>", ""},
	}
	for _, c := range cases {
		s := Fingerprint(c.out, c.cmd)
		if s.Type != c.typ || s.Message != c.msg || s.Frame.File != c.frame {
			t.Errorf("%s: got %s %q @%q, want %s %q @%q", c.name, s.Type, s.Message, s.Frame.File, c.typ, c.msg, c.frame)
		}
		if !strings.HasPrefix(s.Strict, "s:") || !strings.HasPrefix(s.Loose, "l:") || s.Version != GroupingVersion {
			t.Errorf("%s: hashes %q %q version %d", c.name, s.Strict, s.Loose, s.Version)
		}
	}
}

func TestMask(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in     string
		values bool
		want   string
	}{
		{"open /home/dev/x/config.yaml: no such file", false, "open <path>: no such file"},
		{"dial tcp 127.0.0.1:5432: connect: connection refused", false, "dial tcp <ip>: connect: connection refused"},
		{"listen EADDRINUSE: address already in use :::3000", false, "listen eaddrinuse: address already in use <ip>"},
		{"request 3f2a1c9e-8b7d-4e6f-a1b2-c3d4e5f60718 failed after 1.532s at 2024-03-02T10:11:12Z", false, "request <uuid> failed after <dur> at <ts>"},
		{"object at 0x7f3a2c1b5d50 and Foo@6d06d69c", false, "object at <hex> and foo@<hex>"},
		{"Can't locate revision identified by 'a1b2c3d4e5f6'", false, "can't locate revision identified by <hash>"},
		{"No module named 'requests'", false, "no module named 'requests'"},
		{"invalid literal for int() with base 10: 'abc'", false, "invalid literal for int() with base <num>: <str>"},
		{"For input string: \"12a\"", false, "for input string: <str>"},
		{"duplicate key value violates unique constraint \"users_email_key\"", false, "duplicate key value violates unique constraint \"users_email_key\""},
		{"expected 'a' to be 'b'", false, "expected <str> to be <str>"},
		{"peer react@\"^16.8.0 || ^17.0.0\" from x@13.1.1", false, "peer react@<str> from x@<ver>"},
		{"`os` imported but unused", true, "<str> imported but unused"},
		{"Couldn't connect to server", false, "couldn't connect to server"},
		{"E0308 utf8 case_3 TS2345 x86", false, "e0308 utf8 case_3 ts2345 x86"},
		{"no required module provides package github.com/google/uuid", false, "no required module provides package github.com/google/uuid"},
		{"Access denied for user 'root'@'localhost'", false, "access denied for user 'root'@<ip>"},
		{"name 'x' is not defined. Did you mean: 'y'?", false, "name 'x' is not defined"},
	}
	for _, c := range cases {
		if got := Mask(c.in, c.values); got != c.want {
			t.Errorf("Mask(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestIsKeyToken(t *testing.T) {
	t.Parallel()
	for tok, want := range map[string]bool{
		"'yaml'": true, "\"users\"": true, "`config`": true, "store.get": true, "github.com/x/y;": true, "a::b": true,
		"can't": false, "<str>": false, "(reading": false, "error": false, "''": false, "<path>:<num>": false,
	} {
		if got := isKeyToken(tok); got != want {
			t.Errorf("isKeyToken(%q) = %v", tok, got)
		}
	}
}

// A grouper restored from its JSON state makes the same decisions as the
// original.
func TestGrouperStateRoundTrip(t *testing.T) {
	t.Parallel()
	items := readLabelled(t, "testdata/errors_dev.jsonl")
	half := len(items) / 2
	g, _ := NewGrouper(DefaultGroupConfig())
	for i, it := range items[:half] {
		g.Assign(it.Error, it.Command, at(i))
	}
	raw, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	r, err := RestoreGrouper(raw, DefaultGroupConfig())
	if err != nil {
		t.Fatal(err)
	}
	raw2, _ := json.Marshal(r)
	if string(raw) != string(raw2) {
		t.Error("restore then save changed the state")
	}
	for i, it := range items[half:] {
		a, b := g.Assign(it.Error, it.Command, at(half+i)), r.Assign(it.Error, it.Command, at(half+i))
		if a.GroupID != b.GroupID || a.MatchedBy != b.MatchedBy {
			t.Fatalf("%s: original %s/%s, restored %s/%s", it.ID, a.GroupID, a.MatchedBy, b.GroupID, b.MatchedBy)
		}
	}
}

// A change of normalisation does not split existing groups: a grouper
// whose masks were older (durations, hashes, quoted values unmasked) saves
// its state, a grouper with the current masks restores it and finds the
// same groups for the same failures through the template, loose and
// similarity lookups.
func TestGroupingVersionChangeKeepsGroups(t *testing.T) {
	t.Parallel()
	old := DefaultGroupConfig()
	old.Masks.Disabled = []string{MaskDuration, MaskHash, MaskString, MaskVersion}
	g, _ := NewGrouper(old)
	first := map[string]string{}
	items := readLabelled(t, "testdata/errors_dev.jsonl")
	for i, it := range items {
		a := g.Assign(it.Error, it.Command, at(i))
		if _, ok := first[it.Group]; !ok {
			first[it.Group] = a.GroupID
		}
	}
	raw, _ := json.Marshal(g)
	cur := DefaultGroupConfig()
	cur.Version = GroupingVersion + 1
	r, err := RestoreGrouper(raw, cur)
	if err != nil {
		t.Fatal(err)
	}
	before := r.Len()
	moved, matched := 0, map[string]int{}
	for i, it := range items {
		a := r.Assign(it.Error, it.Command, at(1000+i))
		matched[a.MatchedBy]++
		if a.GroupID != first[it.Group] {
			moved++
		}
	}
	if r.Len() != before {
		t.Errorf("the new normalisation created %d new groups", r.Len()-before)
	}
	if moved > 0 {
		t.Errorf("%d errors left the group their failure had under the old normalisation", moved)
	}
	t.Logf("lookups after the version change: %v", matched)
	for _, gr := range r.Groups() {
		if gr.Version != GroupingVersion {
			t.Errorf("group %s lost its version", gr.ID)
		}
	}
}

func TestGrouperLookupDoesNotLearn(t *testing.T) {
	t.Parallel()
	g, _ := NewGrouper(DefaultGroupConfig())
	if _, ok := g.Lookup("bash: jq: command not found", "jq ."); ok {
		t.Error("found a group in an empty grouper")
	}
	a := g.Assign("bash: jq: command not found", "jq .", t0)
	b, ok := g.Lookup("zsh: command not found: jq", "jq .")
	if !ok || b.GroupID != a.GroupID || g.Len() != 1 {
		t.Errorf("lookup = %+v, %v", b, ok)
	}
	gr, _ := g.Group(a.GroupID)
	if gr.Count != 1 {
		t.Errorf("lookup counted: %d", gr.Count)
	}
}

func TestGrouperEviction(t *testing.T) {
	t.Parallel()
	cfg := DefaultGroupConfig()
	cfg.MaxGroups = 2
	g, _ := NewGrouper(cfg)
	a := g.Assign("bash: aa: command not found", "", at(1))
	b := g.Assign("bash: bb: command not found", "", at(2))
	g.Assign("bash: aa: command not found", "", at(3)) // aa is used again
	c := g.Assign("bash: cc: command not found", "", at(4))
	if g.Len() != 2 {
		t.Fatalf("groups = %d", g.Len())
	}
	if _, ok := g.Group(b.GroupID); ok {
		t.Error("the least recently seen group was kept")
	}
	for _, id := range []string{a.GroupID, c.GroupID} {
		if _, ok := g.Group(id); !ok {
			t.Errorf("group %s evicted", id)
		}
	}
	if again := g.Assign("bash: bb: command not found", "", at(5)); !again.New {
		t.Error("an evicted group's hashes still matched")
	}
}

func TestRestoreGrouperRejectsBadState(t *testing.T) {
	t.Parallel()
	for _, s := range []string{`{`, `{"version":0}`, `{"version":1,"groups":[{"id":""}]}`,
		`{"version":1,"groups":[{"id":"a","seq":1},{"id":"a","seq":2}]}`, `{"version":1,"clusters":[{"id":0,"tokens":["x"]}]}`,
		`{"version":1,"clusters":[null]}`} {
		if _, err := RestoreGrouper([]byte(s), DefaultGroupConfig()); !errors.Is(err, ErrInvalidState) {
			t.Errorf("RestoreGrouper(%s) error = %v, want ErrInvalidState", s, err)
		}
	}
	bad := DefaultGroupConfig()
	bad.Masks.Disabled = []string{"nope"}
	if _, err := NewGrouper(bad); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("unknown mask: %v", err)
	}
}

func TestPairwiseAndBCubed(t *testing.T) {
	t.Parallel()
	gold := []string{"a", "a", "b", "b", "c"}
	p, r := PairwiseScores(gold, []string{"1", "1", "2", "2", "3"})
	if p != 1 || r != 1 {
		t.Errorf("perfect: %v %v", p, r)
	}
	p, r = PairwiseScores(gold, []string{"1", "1", "1", "1", "1"})
	if p != 0.2 || r != 1 {
		t.Errorf("one group: precision %v (2 of 10 pairs), recall %v", p, r)
	}
	bp, br := BCubedScores(gold, []string{"1", "2", "3", "4", "5"})
	if bp != 1 || br != 0.6 {
		t.Errorf("singletons: B-cubed %v %v, want 1 and (0.5·4+1)/5", bp, br)
	}
}

func TestFingerprintMoreFormats(t *testing.T) {
	t.Parallel()
	gradle := Fingerprint("CalcTest > testDivide() FAILED\n    org.opentest4j.AssertionFailedError: expected: <2.5> but was: <2.0>\n        at app//org.junit.jupiter.api.AssertEquals.failNotEqual(AssertEquals.java:197)\n        at app//com.acme.CalcTest.testDivide(CalcTest.java:31)", "./gradlew test")
	maven := Fingerprint("[ERROR] com.acme.CalcTest.testDivide  Time elapsed: 0.005 s  <<< FAILURE!\norg.opentest4j.AssertionFailedError: expected: <3.5> but was: <3.0>\n\tat com.acme.CalcTest.testDivide(CalcTest.java:33)", "mvn test")
	if gradle.Type != "java:AssertionFailedError" || gradle.Strict != maven.Strict {
		t.Errorf("gradle %s %q / maven %s %q: the same assertion failure", gradle.Type, gradle.Message, maven.Type, maven.Message)
	}
	vite := Fingerprint("ERROR in ./src/a.ts 3:9-15\nTS2345: Argument of type 'string' is not assignable to parameter of type 'number'.", "npm run build")
	tsc := Fingerprint("src/a.ts(3,9): error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'.", "npx tsc")
	if vite.Type != "ts:TS2345" || vite.Strict != tsc.Strict {
		t.Errorf("vite %s %q, tsc %s %q", vite.Type, vite.Message, tsc.Type, tsc.Message)
	}
}
