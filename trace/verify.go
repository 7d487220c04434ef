package trace

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Expectation is what an attempt is expected to produce. Empty fields are
// not checked; an empty expectation expects exit status 0.
type Expectation struct {
	// ExitCode expected (nil: not checked, unless nothing else is).
	ExitCode *int `json:"exit_code,omitempty"`
	// OutputContains: substrings the output must contain.
	OutputContains []string `json:"output_contains,omitempty"`
	// OutputNotContains: substrings the output must not contain.
	OutputNotContains []string `json:"output_not_contains,omitempty"`
	// OutputMatches: regular expressions (RE2) the output must match.
	OutputMatches []string `json:"output_matches,omitempty"`
	// TestsPass: the output's test summary must report no failure.
	TestsPass bool `json:"tests_pass,omitempty"`
}

// Bounds of an expectation.
const (
	MaxExpectationItems = 16
	MaxPatternLen       = 1024
)

// Observation is what an attempt produced.
type Observation struct {
	ExitCode int    `json:"exit_code"`
	Output   string `json:"output"`
	// Command that ran (helps recognise the error's ecosystem).
	Command string `json:"command,omitempty"`
}

// VerifyConfig configures immediate self-verification.
type VerifyConfig struct {
	// MaxCorrections after the first attempt (seed: 最多3次; default 3).
	MaxCorrections int `toml:"max_corrections" json:"max_corrections"`
}

// DefaultVerifyConfig returns the seed's defaults.
func DefaultVerifyConfig() VerifyConfig { return VerifyConfig{MaxCorrections: 3} }

// Validate checks the range.
func (c VerifyConfig) Validate() error {
	if c.MaxCorrections < 0 || c.MaxCorrections > MaxAttempts {
		return invalid(ErrInvalidConfig, "verify", "max_corrections", "is %d, want 0..%d", c.MaxCorrections, MaxAttempts)
	}
	return nil
}

// Verification actions.
const (
	// ActionAccept: the result matches; record the success.
	ActionAccept = "accept"
	// ActionCorrect: the result does not match; correct and retry.
	ActionCorrect = "correct"
	// ActionGiveUp: corrections are used up; record the failure and ask
	// a person.
	ActionGiveUp = "give_up"
)

// Mismatch is one failed expectation.
type Mismatch struct {
	Criterion string `json:"criterion"`
	Expected  string `json:"expected"`
	Actual    string `json:"actual"`
}

// KnownFix is a fix from a failure pattern that matches the error.
type KnownFix struct {
	PatternID string  `json:"pattern_id"`
	Fix       string  `json:"fix"`
	Frequency int     `json:"frequency"`
	Weight    float64 `json:"weight"`
}

// Verdict is the outcome of self-verification.
type Verdict struct {
	Match      bool         `json:"match"`
	Mismatches []Mismatch   `json:"mismatches,omitempty"`
	Tests      *TestSummary `json:"tests,omitempty"`
	// Action is accept, correct or give_up.
	Action string `json:"action"`
	// Correction is the number of the correction to make next (1-based)
	// when Action is correct.
	Correction      int `json:"correction,omitempty"`
	CorrectionsLeft int `json:"corrections_left"`
	// Fixes from known failure patterns matching the error (best first).
	Fixes []KnownFix `json:"fixes,omitempty"`
	// Signature of the error when the result does not match.
	Signature *Signature `json:"signature,omitempty"`
	// Reason is a one-line summary (the failure reason to record).
	Reason string `json:"reason"`
}

// Verify checks an attempt's result against its expectation (seed: 即时复盘
// Self-Verification): a match is accepted; a mismatch yields the next
// correction with the fixes of matching failure patterns while fewer than
// MaxCorrections corrections were made (correctionsSoFar), and give_up
// afterwards. patterns may be nil.
func Verify(exp Expectation, obs Observation, correctionsSoFar int, patterns *PatternIndex, cfg VerifyConfig) (Verdict, error) {
	if err := cfg.Validate(); err != nil {
		return Verdict{}, err
	}
	if correctionsSoFar < 0 {
		return Verdict{}, invalid(ErrInvalidExpectation, "verify", "corrections_so_far", "is negative (%d)", correctionsSoFar)
	}
	res, err := compileExpectation(exp)
	if err != nil {
		return Verdict{}, err
	}
	output := obs.Output
	var v Verdict
	if exp.ExitCode != nil && obs.ExitCode != *exp.ExitCode {
		v.Mismatches = append(v.Mismatches, Mismatch{Criterion: "exit_code", Expected: strconv.Itoa(*exp.ExitCode), Actual: strconv.Itoa(obs.ExitCode)})
	}
	if exp.ExitCode == nil && len(exp.OutputContains)+len(exp.OutputNotContains)+len(exp.OutputMatches) == 0 && !exp.TestsPass && obs.ExitCode != 0 {
		v.Mismatches = append(v.Mismatches, Mismatch{Criterion: "exit_code", Expected: "0", Actual: strconv.Itoa(obs.ExitCode)})
	}
	for _, s := range exp.OutputContains {
		if !strings.Contains(output, s) {
			v.Mismatches = append(v.Mismatches, Mismatch{Criterion: "output_contains", Expected: s, Actual: "absent"})
		}
	}
	for _, s := range exp.OutputNotContains {
		if strings.Contains(output, s) {
			v.Mismatches = append(v.Mismatches, Mismatch{Criterion: "output_not_contains", Expected: s, Actual: "present"})
		}
	}
	for i, re := range res {
		if !re.MatchString(output) {
			v.Mismatches = append(v.Mismatches, Mismatch{Criterion: "output_matches", Expected: exp.OutputMatches[i], Actual: "no match"})
		}
	}
	if exp.TestsPass {
		ts, ok := ParseTestSummary(output)
		if ok {
			v.Tests = &ts
			if ts.Failed > 0 || ts.Errors > 0 {
				v.Mismatches = append(v.Mismatches, Mismatch{Criterion: "tests_pass", Expected: "0 failed",
					Actual: fmt.Sprintf("%d failed, %d errors, %d passed (%s)", ts.Failed, ts.Errors, ts.Passed, ts.Framework)})
			} else if ts.Passed == 0 && obs.ExitCode != 0 {
				v.Mismatches = append(v.Mismatches, Mismatch{Criterion: "tests_pass", Expected: "tests passing", Actual: fmt.Sprintf("no test passed, exit %d", obs.ExitCode)})
			}
		} else if obs.ExitCode != 0 {
			v.Mismatches = append(v.Mismatches, Mismatch{Criterion: "tests_pass", Expected: "tests passing", Actual: fmt.Sprintf("no test summary, exit %d", obs.ExitCode)})
		}
	}
	v.Match = len(v.Mismatches) == 0
	if v.Match {
		v.Action = ActionAccept
		v.CorrectionsLeft = max(cfg.MaxCorrections-correctionsSoFar, 0)
		v.Reason = "result matches the expectation"
		return v, nil
	}
	sig := Fingerprint(output, obs.Command)
	v.Signature = &sig
	v.Reason = describeMismatch(v.Mismatches[0])
	if sig.Type != "generic:empty" && sig.Excerpt != "" {
		v.Reason += "; error " + sig.Type + ": " + firstLine(sig.Excerpt, 200)
	}
	if patterns != nil {
		for _, p := range patterns.BySignature(sig.Hashes()) {
			if p.SuggestedFix == "" {
				continue
			}
			v.Fixes = append(v.Fixes, KnownFix{PatternID: p.ID, Fix: p.SuggestedFix, Frequency: p.Frequency, Weight: p.Weight})
		}
		sortFixes(v.Fixes)
	}
	if correctionsSoFar < cfg.MaxCorrections {
		v.Action = ActionCorrect
		v.Correction = correctionsSoFar + 1
		v.CorrectionsLeft = cfg.MaxCorrections - correctionsSoFar - 1
		return v, nil
	}
	v.Action = ActionGiveUp
	v.CorrectionsLeft = 0
	return v, nil
}

func sortFixes(f []KnownFix) {
	for i := 1; i < len(f); i++ {
		for j := i; j > 0; j-- {
			a, b := f[j-1], f[j]
			if a.Weight*float64(a.Frequency) > b.Weight*float64(b.Frequency) ||
				a.Weight*float64(a.Frequency) == b.Weight*float64(b.Frequency) && a.PatternID <= b.PatternID {
				break
			}
			f[j-1], f[j] = b, a
		}
	}
}

func describeMismatch(m Mismatch) string {
	return fmt.Sprintf("%s: expected %s, got %s", m.Criterion, Truncate(m.Expected, 120), Truncate(m.Actual, 120))
}

func compileExpectation(exp Expectation) ([]*regexp.Regexp, error) {
	const obj = "expectation"
	for field, list := range map[string][]string{"output_contains": exp.OutputContains, "output_not_contains": exp.OutputNotContains, "output_matches": exp.OutputMatches} {
		if len(list) > MaxExpectationItems {
			return nil, tooLarge(ErrInvalidExpectation, obj, field, len(list), MaxExpectationItems)
		}
		for _, s := range list {
			if len(s) > MaxPatternLen {
				return nil, tooLarge(ErrInvalidExpectation, obj, field, len(s), MaxPatternLen)
			}
			if s == "" {
				return nil, invalid(ErrInvalidExpectation, obj, field, "holds an empty string")
			}
		}
	}
	res := make([]*regexp.Regexp, len(exp.OutputMatches))
	for i, s := range exp.OutputMatches {
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, invalid(ErrInvalidExpectation, obj, fmt.Sprintf("output_matches[%d]", i), "%v", err)
		}
		res[i] = re
	}
	return res, nil
}

// TestSummary is a test run's counts as its framework printed them.
type TestSummary struct {
	Framework string `json:"framework"`
	Passed    int    `json:"passed"`
	Failed    int    `json:"failed"`
	Errors    int    `json:"errors"`
	Skipped   int    `json:"skipped"`
}

var (
	pytestSummaryRe = regexp.MustCompile(`(?m)^=*\s*((?:\d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|deselected|warnings?)(?:, )?)+) in [\d.]+s`)
	pytestCountRe   = regexp.MustCompile(`(\d+) (failed|passed|errors?|skipped)`)
	jestSummaryRe   = regexp.MustCompile(`(?m)^Tests:\s+(.*?)(\d+) total`)
	jestCountRe     = regexp.MustCompile(`(\d+) (failed|passed|skipped|todo)`)
	vitestRe2       = regexp.MustCompile(`(?m)^\s*Tests\s+(?:(\d+) failed \| )?(?:(\d+) passed)?`)
	cargoSummaryRe  = regexp.MustCompile(`test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored`)
	mavenSummaryRe  = regexp.MustCompile(`Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)`)
	gradleSummaryRe = regexp.MustCompile(`(\d+) tests? completed, (\d+) failed(?:, (\d+) skipped)?`)
	rspecSummaryRe  = regexp.MustCompile(`(\d+) examples?, (\d+) failures?(?:, (\d+) pending)?`)
	unittestRanRe   = regexp.MustCompile(`(?m)^Ran (\d+) tests? in`)
	unittestFailRe  = regexp.MustCompile(`(?m)^FAILED \((?:failures=(\d+))?(?:, )?(?:errors=(\d+))?`)
	goPassRe        = regexp.MustCompile(`(?m)^\s*--- PASS: `)
	goFailTestRe    = regexp.MustCompile(`(?m)^\s*--- FAIL: `)
	goOkPkgRe       = regexp.MustCompile(`(?m)^ok\s+\S+`)
	goFailPkgRe     = regexp.MustCompile(`(?m)^FAIL\s+\S+\s`)
)

// ParseTestSummary reads the summary a test runner printed: go test,
// pytest, unittest, Jest, Vitest, cargo test, Maven Surefire, Gradle,
// RSpec. ok is false when no summary is found.
func ParseTestSummary(output string) (TestSummary, bool) {
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	if ms := cargoSummaryRe.FindAllStringSubmatch(output, -1); ms != nil {
		s := TestSummary{Framework: "cargo"}
		for _, m := range ms {
			s.Passed += atoi(m[1])
			s.Failed += atoi(m[2])
			s.Skipped += atoi(m[3])
		}
		return s, true
	}
	if ms := mavenSummaryRe.FindAllStringSubmatch(output, -1); ms != nil {
		m := ms[len(ms)-1] // the aggregate comes last
		run, f, e := atoi(m[1]), atoi(m[2]), atoi(m[3])
		return TestSummary{Framework: "surefire", Passed: max(run-f-e-atoi(m[4]), 0), Failed: f, Errors: e, Skipped: atoi(m[4])}, true
	}
	if m := gradleSummaryRe.FindStringSubmatch(output); m != nil {
		return TestSummary{Framework: "gradle", Passed: max(atoi(m[1])-atoi(m[2])-atoi(m[3]), 0), Failed: atoi(m[2]), Skipped: atoi(m[3])}, true
	}
	if m := jestSummaryRe.FindStringSubmatch(output); m != nil {
		s := TestSummary{Framework: "jest"}
		for _, c := range jestCountRe.FindAllStringSubmatch(m[1], -1) {
			switch c[2] {
			case "failed":
				s.Failed = atoi(c[1])
			case "passed":
				s.Passed = atoi(c[1])
			default:
				s.Skipped += atoi(c[1])
			}
		}
		return s, true
	}
	if m := vitestRe2.FindStringSubmatch(output); m != nil && (m[1] != "" || m[2] != "") {
		return TestSummary{Framework: "vitest", Failed: atoi(m[1]), Passed: atoi(m[2])}, true
	}
	if ms := pytestSummaryRe.FindAllStringSubmatch(output, -1); ms != nil {
		s := TestSummary{Framework: "pytest"}
		for _, c := range pytestCountRe.FindAllStringSubmatch(ms[len(ms)-1][1], -1) {
			switch {
			case c[2] == "failed":
				s.Failed = atoi(c[1])
			case c[2] == "passed":
				s.Passed = atoi(c[1])
			case strings.HasPrefix(c[2], "error"):
				s.Errors = atoi(c[1])
			case c[2] == "skipped":
				s.Skipped = atoi(c[1])
			}
		}
		return s, true
	}
	if m := unittestRanRe.FindStringSubmatch(output); m != nil {
		s := TestSummary{Framework: "unittest"}
		run := atoi(m[1])
		if f := unittestFailRe.FindStringSubmatch(output); f != nil {
			s.Failed, s.Errors = atoi(f[1]), atoi(f[2])
		}
		s.Passed = max(run-s.Failed-s.Errors, 0)
		return s, true
	}
	if m := rspecSummaryRe.FindStringSubmatch(output); m != nil {
		return TestSummary{Framework: "rspec", Passed: max(atoi(m[1])-atoi(m[2])-atoi(m[3]), 0), Failed: atoi(m[2]), Skipped: atoi(m[3])}, true
	}
	pass, fail := len(goPassRe.FindAllStringIndex(output, -1)), len(goFailTestRe.FindAllStringIndex(output, -1))
	okPkg, failPkg := len(goOkPkgRe.FindAllStringIndex(output, -1)), len(goFailPkgRe.FindAllStringIndex(output, -1))
	if pass+fail+okPkg+failPkg > 0 {
		s := TestSummary{Framework: "go", Passed: pass, Failed: fail}
		if pass == 0 {
			s.Passed = okPkg
		}
		if fail == 0 && failPkg > 0 {
			s.Errors = failPkg // a package failed without a failing test: build or setup failure
		}
		return s, true
	}
	return TestSummary{}, false
}
