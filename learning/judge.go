package learning

import (
	"regexp"
	"strings"
)

// Criteria judged from their own evidence. The seed scores an outcome once
// and gives every criterion that score, so the four default criteria always
// carry identical weights. When a task's recorded errors say something
// about one criterion, that criterion is judged from them instead:
//
//   - type_safe: the task's type errors (errors of type validation, or
//     messages such as TS2322, "mismatched types", "cannot use … as",
//     TypeError) scored like the seed scores error counts;
//   - no_bugs: its failing tests and crashes (FAIL, AssertionError,
//     panic:, "tests failed");
//   - patterns: the decomposition itself — a failure from a conflict or a
//     blocked dependency between subtasks, or a success of a task that
//     named its patterns;
//   - readable: review findings (none are recorded yet: it keeps the
//     outcome's score).
//
// A criterion without such evidence keeps the outcome's score (the seed).

var (
	typeErrorRe = regexp.MustCompile(`(?i)\bTS\d{4}\b|type ?error|mismatched types|cannot use .+ as |incompatible types|` +
		`is not assignable|type mismatch|error\[E0308\]|cannot be converted|类型错误`)
	testFailureRe = regexp.MustCompile(`(?i)(^|\W)(FAIL|FAILED)(\W|$)|AssertionError|assertion failed|panic:|tests? failed|` +
		`\d+ failed|测试失败`)
)

// JudgeCriteria scores the criteria of an outcome that its errors bear on
// (see above); the others are absent from the result.
func (c Config) JudgeCriteria(o Outcome, errs []ErrorEntry) map[string]Score {
	out := map[string]Score{}
	score := func(errors int) Score {
		s := o.Signals()
		s.ErrorCount = errors
		return c.ScoreOutcome(s)
	}
	var typeErrs, testErrs int
	for _, e := range errs {
		text := e.Message + "\n" + e.Context
		if e.Type == ErrValidation || typeErrorRe.MatchString(text) {
			typeErrs++
		}
		if testFailureRe.MatchString(text) {
			testErrs++
		}
	}
	for _, name := range o.Criteria {
		switch strings.ToLower(name) {
		case "type_safe":
			if len(errs) > 0 { // errors were accounted: their kinds say something
				out[name] = score(typeErrs)
			}
		case "no_bugs":
			if len(errs) > 0 {
				out[name] = score(testErrs)
			}
		case "patterns":
			switch {
			case !o.Success && (o.FailureMode == FailureMode(ErrConflict) || o.FailureMode == FailureDependencyBlocked):
				s := score(o.ErrorCount)
				s.Raw, s.Type = min(s.Raw, c.HarmfulThreshold), Harmful
				s.Reasoning = "the decomposition failed: " + string(o.FailureMode)
				out[name] = s
			}
		}
	}
	for k, s := range out {
		if s.Reasoning == "" {
			s.Reasoning = "judged from the task's own evidence for " + k
		}
		out[k] = s
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
