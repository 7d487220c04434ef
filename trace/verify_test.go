package trace

import (
	"errors"
	"testing"
)

func TestVerifyBoundedCorrections(t *testing.T) {
	t.Parallel()
	cfg := DefaultVerifyConfig()
	exp := Expectation{ExitCode: code(0), OutputContains: []string{"notes loaded"}}
	fail := Observation{ExitCode: 1, Output: pyEncodingError, Command: "python load_notes.py"}
	sig := Fingerprint(fail.Output, fail.Command)
	p := pattern("enc", 3, nil, "Open the file with encoding='utf-8'")
	p.SkillID, p.Family, p.Signatures = "cmd:python load_notes.py", "python load_notes.py", []string{sig.Loose}
	ix := NewPatternIndex([]FailurePattern{p})

	for n := 0; n < 3; n++ {
		v, err := Verify(exp, fail, n, ix, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if v.Match || v.Action != ActionCorrect || v.Correction != n+1 || v.CorrectionsLeft != 2-n {
			t.Errorf("after %d corrections: %+v", n, v)
		}
		if len(v.Fixes) != 1 || v.Fixes[0].Fix != p.SuggestedFix {
			t.Errorf("fixes = %+v, want the pattern's fix", v.Fixes)
		}
		if len(v.Mismatches) != 2 {
			t.Errorf("mismatches = %+v, want exit code and output", v.Mismatches)
		}
	}
	v, _ := Verify(exp, fail, 3, ix, cfg)
	if v.Action != ActionGiveUp || v.CorrectionsLeft != 0 {
		t.Errorf("after 3 corrections: %+v, want give_up", v)
	}
	ok, _ := Verify(exp, Observation{ExitCode: 0, Output: "12 notes loaded"}, 2, ix, cfg)
	if !ok.Match || ok.Action != ActionAccept || ok.CorrectionsLeft != 1 {
		t.Errorf("a match: %+v", ok)
	}
}

func TestVerifyExpectations(t *testing.T) {
	t.Parallel()
	cfg := DefaultVerifyConfig()
	cases := []struct {
		name  string
		exp   Expectation
		obs   Observation
		match bool
	}{
		{"empty expects exit 0", Expectation{}, Observation{ExitCode: 0}, true},
		{"empty, exit 1", Expectation{}, Observation{ExitCode: 1}, false},
		{"regex", Expectation{OutputMatches: []string{`(?m)^ok\s+\S+`}}, Observation{Output: "ok  \tgithub.com/x\t0.1s"}, true},
		{"not contains", Expectation{OutputNotContains: []string{"WARN"}}, Observation{Output: "WARN: x"}, false},
		{"go tests pass", Expectation{TestsPass: true}, Observation{Output: "--- PASS: TestA (0.00s)\nok  \tx\t0.1s"}, true},
		{"go test fails", Expectation{TestsPass: true}, Observation{ExitCode: 1, Output: "--- FAIL: TestA (0.00s)\nFAIL\tx\t0.1s"}, false},
		{"go build failure", Expectation{TestsPass: true}, Observation{ExitCode: 1, Output: "FAIL\tgithub.com/x [build failed]\n"}, false},
		{"pytest", Expectation{TestsPass: true}, Observation{Output: "==== 12 passed, 1 skipped in 0.40s ===="}, true},
		{"pytest failed", Expectation{TestsPass: true}, Observation{ExitCode: 1, Output: "=== 1 failed, 11 passed in 0.40s ==="}, false},
		{"jest", Expectation{TestsPass: true}, Observation{Output: "Tests:       1 failed, 5 passed, 6 total"}, false},
		{"cargo", Expectation{TestsPass: true}, Observation{Output: "test result: ok. 12 passed; 0 failed; 0 ignored; 0 measured"}, true},
		{"maven", Expectation{TestsPass: true}, Observation{ExitCode: 1, Output: "Tests run: 4, Failures: 1, Errors: 0, Skipped: 0"}, false},
		{"no summary, exit 0", Expectation{TestsPass: true}, Observation{Output: "done"}, true},
		{"no summary, exit 2", Expectation{TestsPass: true}, Observation{ExitCode: 2, Output: "boom"}, false},
	}
	for _, c := range cases {
		v, err := Verify(c.exp, c.obs, 0, nil, cfg)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if v.Match != c.match {
			t.Errorf("%s: match = %v (%+v)", c.name, v.Match, v.Mismatches)
		}
	}
}

func TestVerifyRejectsBadInput(t *testing.T) {
	t.Parallel()
	cfg := DefaultVerifyConfig()
	for _, exp := range []Expectation{
		{OutputMatches: []string{"("}},
		{OutputContains: []string{""}},
		{OutputContains: make([]string, MaxExpectationItems+1)},
	} {
		if _, err := Verify(exp, Observation{}, 0, nil, cfg); !errors.Is(err, ErrInvalidExpectation) {
			t.Errorf("Verify(%+v) error = %v", exp, err)
		}
	}
	if _, err := Verify(Expectation{}, Observation{}, -1, nil, cfg); !errors.Is(err, ErrInvalidExpectation) {
		t.Error("negative corrections accepted")
	}
	if _, err := Verify(Expectation{}, Observation{}, 0, nil, VerifyConfig{MaxCorrections: -1}); !errors.Is(err, ErrInvalidConfig) {
		t.Error("negative max corrections accepted")
	}
}

func TestParseTestSummary(t *testing.T) {
	t.Parallel()
	cases := []struct {
		out  string
		want TestSummary
	}{
		{"Ran 5 tests in 0.003s\n\nFAILED (failures=1, errors=1)", TestSummary{Framework: "unittest", Passed: 3, Failed: 1, Errors: 1}},
		{"Ran 5 tests in 0.003s\n\nOK", TestSummary{Framework: "unittest", Passed: 5}},
		{"BUILD FAILED\n10 tests completed, 2 failed, 1 skipped", TestSummary{Framework: "gradle", Passed: 7, Failed: 2, Skipped: 1}},
		{"12 examples, 1 failure, 2 pending", TestSummary{Framework: "rspec", Passed: 9, Failed: 1, Skipped: 2}},
		{"      Tests  1 failed | 4 passed (5)", TestSummary{Framework: "vitest", Passed: 4, Failed: 1}},
		{"=========== 2 failed, 10 passed, 1 error in 1.02s ============", TestSummary{Framework: "pytest", Passed: 10, Failed: 2, Errors: 1}},
	}
	for _, c := range cases {
		got, ok := ParseTestSummary(c.out)
		if !ok || got != c.want {
			t.Errorf("ParseTestSummary(%q) = %+v, %v; want %+v", c.out, got, ok, c.want)
		}
	}
	if _, ok := ParseTestSummary("hello"); ok {
		t.Error("found a summary in plain text")
	}
}
