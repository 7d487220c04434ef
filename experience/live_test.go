package experience

import (
	"slices"
	"testing"
)

func TestDetectLiveSignals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		turns []string
		want  []LiveSignal
	}{
		{"none", []string{"u:Add a health endpoint.", "a:Added GET /healthz.", "u:Great, thanks."}, []LiveSignal{}},
		{"empty", nil, []LiveSignal{}},
		{"dissatisfaction", []string{"u:Sort newest first.", "a:Sorted ascending.", "u:不对"},
			[]LiveSignal{LiveUserDissatisfaction}},
		{"dissatisfaction too old", []string{"u:Sort.", "a:Done.", "u:That's wrong.", "a:Fixed.", "u:ok", "a:.", "u:ok", "a:.", "u:ok"},
			[]LiveSignal{}},
		{"constraint restated", []string{"u:Don't touch the database schema.", "a:Changed the schema.", "u:I said: don't touch the database schema!"},
			[]LiveSignal{LiveUserDissatisfaction, LiveConstraintRestatement}},
		{"two different constraints", []string{"u:Don't touch the database schema.", "a:ok", "u:Never commit to main."},
			[]LiveSignal{}},
		{"repeated failure", []string{"u:Fix it.", "t:--- FAIL: TestA (0.01s)", "a:Retrying.", "t:panic: boom"},
			[]LiveSignal{LiveRepeatedFailure}},
		{"one failure", []string{"u:Fix it.", "t:--- FAIL: TestA (0.01s)", "a:Fixed."}, []LiveSignal{}},
		{"acceptance asked", []string{"u:Improve the search.", "a:I tuned the ranking.", "u:怎么验收？"},
			[]LiveSignal{LiveAcceptanceUnclear}},
		{"assistant asks expected result", []string{"u:Make the report better.", "a:What is the expected output of the report?"},
			[]LiveSignal{LiveAcceptanceUnclear}},
		{"same error, other line and dir", []string{
			"u:Start it.",
			"t:Error: ENOENT: no such file or directory, open '/home/a/app/config.json' at line 12",
			"a:I set the working directory.",
			"t:Error: ENOENT: no such file or directory, open '/srv/b/config.json' at line 40",
		}, []LiveSignal{LiveRepeatedFailure, LiveSameErrorRepeated}},
		{"different errors differing only in a path", []string{
			"u:Start it.",
			"t:Error: ENOENT: no such file or directory, open '/app/config.json'",
			"a:I added the config.",
			"t:Error: ENOENT: no such file or directory, open '/app/secrets.json'",
		}, []LiveSignal{LiveRepeatedFailure}},
		{"same error hex and numbers", []string{
			"t:panic: runtime error: invalid memory address or nil pointer dereference [signal SIGSEGV addr=0x0 pc=0x4a1b2c]",
			"a:Added a nil check.",
			"u:还是报错：panic: runtime error: invalid memory address or nil pointer dereference [signal SIGSEGV addr=0x0 pc=0x77ff10]",
		}, []LiveSignal{LiveUserDissatisfaction, LiveRepeatedFailure, LiveSameErrorRepeated}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var turns []Turn
			if c.turns != nil {
				turns = ruleConv(c.turns...)
			}
			got := DetectLiveSignals(turns)
			if got == nil || !slices.Equal(got, c.want) {
				t.Fatalf("DetectLiveSignals = %#v, want %v", got, c.want)
			}
		})
	}
}

func TestLiveNormalizeError(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"./internal/x/main.go:12:2: undefined: foobar":  "main.go: undefined: foobar",
		"panic: boom [addr=0xc000012345]":               "panic: boom [addr=#]",
		"commit deadbeef1234 failed after 3.5s":         "commit # failed after #s",
		"open c:\\users\\a\\config.json: access denied": "open config.json: access denied",
	}
	for in, want := range cases {
		if got := liveNormalizeError(in); got != want {
			t.Errorf("liveNormalizeError(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTriggerSimilarity(t *testing.T) {
	t.Parallel()
	all := LiveSignals
	cases := []struct {
		name    string
		live    []LiveSignal
		trigger string
		want    float64
	}{
		{"no live signals", nil, "the same error appears again", 0},
		{"blank trigger", all, "  ", 0},
		{"one of one", []LiveSignal{LiveSameErrorRepeated}, "When the same error appears again after a fix", 1},
		{"chinese", []LiveSignal{LiveSameErrorRepeated, LiveRepeatedFailure}, "测试多次失败并且重复报错时", 1},
		{"one of two", []LiveSignal{LiveSameErrorRepeated, LiveUserDissatisfaction}, "the build fails with the same error", 0.5},
		{"prefix stem", []LiveSignal{LiveRepeatedFailure}, "after several failures of the migration", 1},
		{"no word-inside match", []LiveSignal{LiveRepeatedFailure}, "a nonfailing path", 0},
		{"duplicates and unknown ignored", []LiveSignal{LiveAcceptanceUnclear, LiveAcceptanceUnclear, "bogus"}, "验收标准不明确", 1},
		{"two of five", all, "When the user rejects the output and the constraint is repeated", 0.4},
		{"unrelated", all, "Use table-driven tests for parsers", 0},
	}
	for _, c := range cases {
		if got := TriggerSimilarity(c.live, c.trigger); got != c.want {
			t.Errorf("%s: TriggerSimilarity = %v, want %v", c.name, got, c.want)
		}
	}
}
