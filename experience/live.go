package experience

import (
	"strings"
	"unicode"
)

// liveWindow is how many of the last user turns DetectLiveSignals reads
// for dissatisfaction and unclear acceptance.
const liveWindow = 3

// DetectLiveSignals finds the seed's live interaction signals in the last
// turns of the current conversation (user, assistant and tool turns, in
// order), without a model:
//
//   - userDissatisfaction: one of the last three user turns is a reject or
//     a correction by ClassifyTurn;
//   - constraintRestatement: a user turn states a constraint that an
//     earlier user turn already stated (most of its content tokens again);
//   - repeatedFailure: at least two failures — failing tool results and
//     "still failing" corrections after assistant attempts;
//   - acceptanceUnclear: one of the last three user turns asks whether or
//     when the work is done or how it will be accepted ("is it done?",
//     "what counts as done", "做完了吗", "怎么验收"), or the assistant asks
//     for the expected result or the acceptance criteria;
//   - sameErrorRepeated: the same error line, normalised (numbers, hex
//     ids and directories stripped; file names kept, since a missing a.json
//     and a missing b.json are different errors), in at least two turns.
//
// The result follows the order of LiveSignals, without duplicates; it is
// empty (non-nil) when no signal is present.
func DetectLiveSignals(recent []Turn) []LiveSignal {
	found := map[LiveSignal]bool{}
	userSeen, failures := 0, 0
	var constraints []map[string]bool
	errorTurns := map[string]int{}
	for i := len(recent) - 1; i >= 0; i-- {
		t := recent[i]
		if t.Role == RoleUser {
			userSeen++
		}
		hits := ClassifyTurn(recent[:i], t)
		for _, h := range hits {
			switch {
			case t.Role == RoleUser && userSeen <= liveWindow && (h.Type == SignalReject || h.Type == SignalCorrection):
				found[LiveUserDissatisfaction] = true
			case t.Role == RoleTool && h.Type == SignalReject:
				failures++
			}
		}
		if t.Role == RoleUser && i > 0 && ruleStillFailingCue(ruleNormalize(t.Content)) != "" {
			failures++
		}
		if t.Role == RoleUser && userSeen <= liveWindow && liveAsksAcceptance(t.Content, liveUserAcceptance) {
			found[LiveAcceptanceUnclear] = true
		}
		if t.Role == RoleAssistant && liveAsksAcceptance(t.Content, liveAssistantAcceptance) {
			found[LiveAcceptanceUnclear] = true
		}
		if t.Role == RoleUser && (liveHasConstraint(hits) || liveConstraintCue(t.Content)) {
			constraints = append(constraints, ruleContentTokens(t.Content))
		}
		if t.Role == RoleTool || t.Role == RoleUser {
			for sig := range liveErrorSignatures(t.Content) {
				errorTurns[sig]++
			}
		}
	}
	if failures >= 2 {
		found[LiveRepeatedFailure] = true
	}
	// constraints are newest first: a later one restating an earlier one.
	for i := 0; i < len(constraints) && !found[LiveConstraintRestatement]; i++ {
		for j := i + 1; j < len(constraints); j++ {
			if len(constraints[i]) >= 2 && len(constraints[j]) >= 2 && ruleOverlap(constraints[i], constraints[j]) >= 0.6 {
				found[LiveConstraintRestatement] = true
				break
			}
		}
	}
	for _, n := range errorTurns {
		if n >= 2 {
			found[LiveSameErrorRepeated] = true
		}
	}
	out := []LiveSignal{}
	for _, s := range LiveSignals {
		if found[s] {
			out = append(out, s)
		}
	}
	return out
}

func liveHasConstraint(hits []RuleHit) bool {
	for _, h := range hits {
		if h.Type == SignalConstraint {
			return true
		}
	}
	return false
}

// liveConstraintCue reports an explicit constraint phrase ("must", "don't
// touch", "必须", "不要改") whatever else the turn is (a restated
// constraint is often also a reject).
func liveConstraintCue(content string) bool {
	x := ruleNormalize(content)
	for _, cues := range [][]string{ruleConstraintStrong, ruleConstraintMedium} {
		if c := x.first(cues); c != "" && !ruleConstraintTrap(x, c) {
			return true
		}
	}
	return false
}

var (
	liveUserAcceptance = []string{"is it done", "are we done", "is this done", "what counts as done",
		"definition of done", "how do we know", "how do i know if", "how will we verify", "how should we verify",
		"how do i verify", "acceptance criteria", "success criteria", "when is it done", "what does done mean",
		"做完了吗", "完成了吗", "好了吗", "弄好了吗", "算完成", "怎么验收", "验收标准", "怎么验证", "怎样算", "什么算完成", "完成的标准"}
	liveAssistantAcceptance = []string{"what is the expected", "what's the expected", "what should the expected",
		"expected output", "expected behavior", "expected behaviour", "acceptance criteria", "success criteria",
		"how should i verify", "how do you want me to verify", "what counts as done", "how will you test",
		"预期结果是什么", "期望的结果", "验收标准", "怎么验证", "怎样算完成", "什么算完成", "预期的行为"}
)

func liveAsksAcceptance(content string, cues []string) bool {
	x := ruleNormalize(content)
	for _, c := range cues {
		if x.has(c) {
			return true
		}
	}
	return false
}

// liveErrorSignatures returns the normalised error lines of a text.
func liveErrorSignatures(content string) map[string]bool {
	out := map[string]bool{}
	for _, line := range strings.Split(content, "\n") {
		l := strings.ToLower(strings.TrimSpace(line))
		if l == "" || !liveIsErrorLine(l) {
			continue
		}
		if !ruleIsDiagnostic(l) {
			// start at the error itself: "still getting: panic: x" and
			// "panic: x" are the same error.
			// Latin cues first: they start quoted tool output, while a
			// Chinese cue ("还是报错：panic: …") is usually the narration.
			start := len(l)
			for _, latin := range []bool{true, false} {
				for _, c := range liveErrorCues {
					if ruleHasCJK(c) == latin {
						continue
					}
					if i := strings.Index(l, c); i >= 0 && i < start {
						start = i
					}
				}
				if start < len(l) {
					break
				}
			}
			if start < len(l) {
				l = l[start:]
			}
		}
		if sig := liveNormalizeError(l); len(sig) >= 6 {
			out[sig] = true
		}
	}
	return out
}

var liveErrorCues = []string{"error", "panic:", "exception", "traceback", "undefined:", "cannot ", "no such file",
	"not found", "--- fail", "failed", "fatal", "segmentation fault", "错误", "报错", "失败", "异常", "找不到", "未定义"}

func liveIsErrorLine(l string) bool {
	if ruleIsDiagnostic(l) {
		return true
	}
	for _, c := range liveErrorCues {
		if i := strings.Index(l, c); i >= 0 && !ruleZeroCount(l, i) {
			return true
		}
	}
	return false
}

// liveNormalizeError strips what varies between two occurrences of the
// same error: numbers (line, column, counts, durations), hexadecimal ids
// (0x…, hashes) and directories of paths, keeping file base names.
func liveNormalizeError(l string) string {
	fields := strings.FieldsFunc(l, func(r rune) bool { return unicode.IsSpace(r) })
	for i, f := range fields {
		fields[i] = liveNormalizeField(f)
	}
	return strings.Join(fields, " ")
}

func liveNormalizeField(f string) string {
	trim := strings.Trim(f, "'\"`()[]{}<>,;")
	if strings.ContainsAny(trim, "/\\") {
		// a path: keep its base name, without line and column suffixes.
		base := trim[strings.LastIndexAny(trim, "/\\")+1:]
		if k := strings.IndexByte(base, ':'); k >= 0 {
			base = base[:k] + ":"
		}
		f = base
	}
	var b strings.Builder
	rs := []rune(f)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '0' && i+1 < len(rs) && (rs[i+1] == 'x' || rs[i+1] == 'X'):
			i++
			for i+1 < len(rs) && liveIsHex(rs[i+1]) {
				i++
			}
			b.WriteByte('#')
		case unicode.IsDigit(r):
			for i+1 < len(rs) && (unicode.IsDigit(rs[i+1]) || rs[i+1] == '.') {
				i++
			}
			b.WriteByte('#')
		default:
			b.WriteRune(r)
		}
	}
	s := b.String()
	if len(s) >= 7 && liveAllHexOrHash(s) {
		return "#"
	}
	return s
}

func liveIsHex(r rune) bool {
	return r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F'
}

func liveAllHexOrHash(s string) bool {
	for _, r := range s {
		if !liveIsHex(r) && r != '#' {
			return false
		}
	}
	return true
}

// liveTriggerCues is the bilingual vocabulary of each live signal in
// heuristic triggers.
var liveTriggerCues = map[LiveSignal][]string{
	LiveUserDissatisfaction: {"dissatisf", "unhappy", "frustrat", "reject", "not what", "pushback", "push back",
		"complain", "unsatisf", "wrong approach", "用户不满意", "不满", "否定", "不是我要的", "抱怨", "拒绝", "不满意"},
	LiveConstraintRestatement: {"constraint", "requirement", "must", "restat", "remind", "repeats the",
		"约束", "要求", "必须", "重申", "强调", "限制"},
	LiveRepeatedFailure: {"repeatedly", "retry", "retries", "retrying", "keeps failing", "fails again", "fail",
		"attempts", "多次失败", "反复", "屡次", "重试", "失败"},
	LiveAcceptanceUnclear: {"unclear", "acceptance", "done", "criteria", "criterion", "ambiguous", "verify",
		"expected result", "验收", "不明确", "标准", "模糊", "完成"},
	LiveSameErrorRepeated: {"same error", "again", "recurring", "recurs", "repeated error", "identical error",
		"error repeats", "重复报错", "同样的错误", "相同的错误", "同一个错误", "又报", "再次报错"},
}

// TriggerSimilarity is the seed's trigger_signal_similarity: how well the
// live signals of the conversation match a heuristic's trigger text, in
// [0,1]:
//
//	similarity = |{s ∈ live : some cue of s occurs in trigger}| / |live|
//
// over the distinct known live signals (unknown names are ignored), and 0
// when there are none or the trigger is blank. Each live signal has a
// bilingual cue vocabulary (sameErrorRepeated: "same error", "again",
// "重复报错", "同样的错误"…). A Latin cue occurs when a word of the
// lower-cased trigger starts with it ("fail" matches "fails", "failure");
// a cue with Chinese characters occurs as a substring.
func TriggerSimilarity(live []LiveSignal, trigger string) float64 {
	x := ruleNormalize(trigger)
	if x.spaced == "" {
		return 0
	}
	seen := map[LiveSignal]bool{}
	n, matched := 0, 0
	for _, s := range live {
		cues, ok := liveTriggerCues[s]
		if !ok || seen[s] {
			continue
		}
		seen[s] = true
		n++
		for _, c := range cues {
			if liveCueIn(x, c) {
				matched++
				break
			}
		}
	}
	if n == 0 {
		return 0
	}
	return float64(matched) / float64(n)
}

// liveCueIn reports a cue in the trigger: CJK cues as substrings of the
// compact text, Latin cues at the start of a word.
func liveCueIn(x ruleText, cue string) bool {
	if ruleHasCJK(cue) {
		return strings.Contains(x.compact, cue)
	}
	h := x.spaced
	for from := 0; ; {
		i := strings.Index(h[from:], cue)
		if i < 0 {
			return false
		}
		i += from
		if i == 0 || !ruleIsWordByte(h[i-1]) {
			return true
		}
		from = i + 1
	}
}
