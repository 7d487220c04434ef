package experience

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/kaizenhq/kaizen/internal/tokenize"
)

// This file is the rule-based feedback-signal extractor kaizen uses when no
// chat model is configured (mode minimal, or a model failure). It reads
// English, Chinese and mixed messages.
//
// Decisions the rules encode (the development set in
// testdata/signals/dev.jsonl is labelled by the same decisions):
//
//   - Only turns after an assistant or tool turn can reject, correct,
//     confirm or be confused: the first message of a task is its goal. A
//     first message can still state a constraint or a preference.
//   - "That's wrong"/"不对" alone is a reject; followed by what it should be
//     ("不对，应该…", "wrong branch, base it on develop") it is a
//     correction. Reverting, undoing, "not what I asked", "opposite of what
//     I asked", "这不是我要的" are rejects whatever follows.
//   - "Still failing"/"还是报错" after an assistant turn is a correction (the
//     attempt did not fix it); "thanks but it still fails" is therefore a
//     correction and not a success.
//   - "No, use X instead"/"不要用X，用Y" is a correction and a preference;
//     "I'd rather X"/"我更喜欢X"/"以后都用X" is a preference only.
//   - "Don't touch X"/"不要改X"/"must"/"必须" is a constraint, unless the turn
//     is a correction (the constraint is then part of the correction) or
//     restates the task's goal (a restated requirement is not new).
//   - A user turn restating the task's first message after assistant turns
//     is an implicit reject; a question asked again is confusion.
//   - A failing tool result (test failure, compiler diagnostic, panic,
//     traceback) is a reject from execution; a passing one a success.
//   - An assistant turn admitting a mistake in its own change is a
//     correction from assistant_self_check.
//   - A short "no"/"不用" answering the assistant's question is not a
//     reject, "no problem"/"没问题" is not a reject, "不错" is not "不对",
//     and a success phrase inside a question ("可以了吗？") is no success.

// RuleHit is one rule that fired on a turn: the signal type, the rule's
// name (for explain and debugging) and the rule's calibrated confidence.
type RuleHit struct {
	Type       SignalType
	Rule       string
	Confidence float64
}

// Evidence limit of a rule-based signal, in runes.
const ruleEvidenceRunes = 200

// ExtractSignalsByRules finds the feedback signals of one task's turns
// (in conversation order) with the bilingual rules of ClassifyTurn. Each
// signal has its type, its source (user for user turns, execution for tool
// turns, assistant_self_check for assistant turns), the triggering excerpt
// as evidence (at most 200 runes, cut at a rune boundary), the turn id
// (Turn.TurnID, else Turn.ID), the rule's confidence, Extractor rules, the
// turn's task and project, and CreatedAt now. IDs are left empty. There is
// at most one signal per turn and type; signals are ordered by turn, then
// by SignalTypes. Signals under MinSignalConfidence are never returned.
// The result is non-nil.
func ExtractSignalsByRules(turns []Turn, now time.Time) []FeedbackSignal {
	out := []FeedbackSignal{}
	for i, t := range turns {
		src, ok := ruleSourceOf(t.Role)
		if !ok {
			continue
		}
		for _, m := range ruleClassify(turns[:i], t) {
			if m.hit.Confidence < MinSignalConfidence {
				continue
			}
			turnID := t.TurnID
			if turnID == "" {
				turnID = t.ID
			}
			out = append(out, FeedbackSignal{
				Project:    t.Project,
				TaskID:     t.TaskID,
				Type:       m.hit.Type,
				Source:     src,
				Evidence:   ruleEvidence(t.Content, m.cue),
				TurnID:     turnID,
				Confidence: m.hit.Confidence,
				Extractor:  ExtractorRules,
				CreatedAt:  now,
			})
		}
	}
	return out
}

// ClassifyTurn applies the rules to turn t, given the earlier turns of the
// task (prev, in order). It returns at most one hit per signal type, in the
// order of SignalTypes, each with confidence in [MinSignalConfidence, 1].
// System turns and empty turns give no hits. The result is non-nil.
func ClassifyTurn(prev []Turn, t Turn) []RuleHit {
	ms := ruleClassify(prev, t)
	out := make([]RuleHit, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.hit)
	}
	return out
}

func ruleSourceOf(r Role) (SignalSource, bool) {
	switch r {
	case RoleUser:
		return SourceUser, true
	case RoleTool:
		return SourceExecution, true
	case RoleAssistant:
		return SourceSelfCheck, true
	}
	return "", false
}

// ruleMatch is a hit with the cue that triggered it (for evidence).
type ruleMatch struct {
	hit RuleHit
	cue string
}

// ruleSet collects at most one match per type, keeping the most confident.
type ruleSet map[SignalType]ruleMatch

func (s ruleSet) add(typ SignalType, rule string, conf float64, cue string) {
	if old, ok := s[typ]; ok && old.hit.Confidence >= conf {
		return
	}
	s[typ] = ruleMatch{hit: RuleHit{Type: typ, Rule: rule, Confidence: conf}, cue: cue}
}

func (s ruleSet) has(typ SignalType) bool { _, ok := s[typ]; return ok }

func (s ruleSet) sorted() []ruleMatch {
	out := make([]ruleMatch, 0, len(s))
	for _, typ := range SignalTypes {
		if m, ok := s[typ]; ok {
			m.hit.Confidence = min(max(m.hit.Confidence, MinSignalConfidence), 1)
			out = append(out, m)
		}
	}
	return out
}

func ruleClassify(prev []Turn, t Turn) []ruleMatch {
	if strings.TrimSpace(t.Content) == "" {
		return []ruleMatch{}
	}
	s := ruleSet{}
	switch t.Role {
	case RoleUser:
		ruleUser(prev, t, s)
	case RoleTool:
		ruleTool(t, s)
	case RoleAssistant:
		ruleSelfCheck(t, s)
	}
	return s.sorted()
}

// ---- text normalisation and matching ----

// ruleText is a turn's content prepared for matching: spaced is lower-case,
// full-width folded, with runs of white space collapsed to one space;
// compact is spaced without any spaces (for Chinese cues, which are
// written without them: "有个 bug" and "有个bug" both match "有个bug").
type ruleText struct {
	raw     string
	spaced  string
	compact string
}

func ruleNormalize(s string) ruleText {
	var b, c strings.Builder
	space := false
	for _, r := range s {
		r = tokenize.FoldWidth(r)
		switch r {
		case '\u2019', '\u2018':
			r = '\''
		case '\u201c', '\u201d':
			r = '"'
		case '\uff0c', '\u3001':
			r = ','
		case '\u3002':
			r = '.'
		}
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		r = unicode.ToLower(r)
		b.WriteRune(r)
		c.WriteRune(r)
	}
	return ruleText{raw: s, spaced: b.String(), compact: c.String()}
}

func ruleHasCJK(s string) bool {
	for _, r := range s {
		if tokenize.IsCJK(r) {
			return true
		}
	}
	return false
}

func ruleIsWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '_'
}

// find returns the byte offset of cue in the text and the string it was
// found in (spaced or compact), or -1. Latin cues match at word
// boundaries of the spaced text; cues with CJK characters match anywhere
// in the compact text.
func (x ruleText) find(cue string) (int, string) {
	if ruleHasCJK(cue) {
		return strings.Index(x.compact, strings.ReplaceAll(cue, " ", "")), x.compact
	}
	h := x.spaced
	for from := 0; from <= len(h); {
		i := strings.Index(h[from:], cue)
		if i < 0 {
			return -1, h
		}
		i += from
		end := i + len(cue)
		okL := i == 0 || !ruleIsWordByte(cue[0]) || !ruleIsWordByte(h[i-1])
		okR := end == len(h) || !ruleIsWordByte(cue[len(cue)-1]) || !ruleIsWordByte(h[end])
		if okL && okR {
			return i, h
		}
		from = i + 1
	}
	return -1, h
}

func (x ruleText) has(cue string) bool { i, _ := x.find(cue); return i >= 0 }

// first returns the first cue of cues found in the text ("" when none).
func (x ruleText) first(cues []string) string {
	for _, c := range cues {
		if x.has(c) {
			return c
		}
	}
	return ""
}

// firstUnnegated is first, skipping occurrences preceded by a negation
// ("not working", "没好").
func (x ruleText) firstUnnegated(cues []string) string {
	for _, c := range cues {
		i, h := x.find(c)
		if i < 0 {
			continue
		}
		if ruleNegatedAt(h, i) {
			continue
		}
		return c
	}
	return ""
}

func ruleNegatedAt(h string, i int) bool {
	before := h[max(0, i-14):i]
	for _, n := range []string{"not ", "n't ", "never ", "no longer ", "nothing "} {
		if strings.Contains(before, n) {
			return true
		}
	}
	r, _ := utf8.DecodeLastRuneInString(h[:i])
	return r == '不' || r == '没' || r == '未' || r == '别'
}

// sentenceOf returns the normalised sentence of the text that contains
// cue ("" when absent).
func (x ruleText) sentenceOf(cue string) string {
	i, h := x.find(cue)
	if i < 0 {
		return ""
	}
	start := strings.LastIndexAny(h[:i], ".!?;。！？；\n")
	end := strings.IndexAny(h[i+len(cue):], ".!?;。！？；\n")
	if end < 0 {
		end = len(h)
	} else {
		end += i + len(cue)
		if r, _ := utf8.DecodeRuneInString(h[end:]); r == '?' || r == '？' {
			end += utf8.RuneLen(r)
		}
	}
	return h[start+1 : end]
}

// ruleIsQuestion reports whether a normalised sentence is a question.
func ruleIsQuestion(s string) bool {
	s = strings.TrimRight(s, " .!~。！")
	if strings.HasSuffix(s, "?") || strings.HasSuffix(s, "？") {
		return true
	}
	for _, q := range []string{"吗", "么", "没有", "了没"} {
		if strings.HasSuffix(s, q) {
			return true
		}
	}
	return false
}

// ruleEvidence is the excerpt of content that shows the cue: the sentence
// or line holding it, else the start of the content, with white space
// collapsed and at most ruleEvidenceRunes runes.
func ruleEvidence(content, cue string) string {
	text := strings.Join(strings.Fields(content), " ")
	if cue != "" {
		for _, part := range ruleSplitSentences(content) {
			p := strings.Join(strings.Fields(part), " ")
			if p != "" && ruleNormalize(p).has(cue) {
				text = p
				break
			}
		}
	}
	return ruleCutRunes(text, ruleEvidenceRunes)
}

func ruleSplitSentences(s string) []string {
	var out []string
	start := 0
	for i, r := range s {
		switch r {
		case '\n', '.', '!', '?', '。', '！', '？', ';', '；':
			if r == '.' && i+1 < len(s) && s[i+1] != ' ' && s[i+1] != '\n' {
				continue // a dot inside a file name or version
			}
			out = append(out, s[start:i+utf8.RuneLen(r)])
			start = i + utf8.RuneLen(r)
		}
	}
	return append(out, s[start:])
}

// ruleCutRunes cuts s to at most n runes, at a rune boundary.
func ruleCutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, k := 0, 0
	for i < len(s) && k < n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		k++
	}
	return strings.TrimSpace(s[:i])
}

// ruleContentTokens are a text's tokens for overlap comparisons: Tokenize
// minus words that carry no topic in a request, Latin words stemmed to
// their first five letters ("collapsible" and "collapse" meet).
func ruleContentTokens(s string) map[string]bool {
	out := map[string]bool{}
	for _, tok := range Tokenize(s) {
		if ruleRequestWords[tok] {
			continue
		}
		if r, _ := utf8.DecodeRuneInString(tok); !tokenize.IsCJK(r) && utf8.RuneCountInString(tok) > 5 {
			tok = string([]rune(tok)[:5])
		}
		out[tok] = true
	}
	return out
}

var ruleRequestWords = setOf("make", "want", "need", "needs", "let", "lets", "add", "like", "would", "so", "now",
	"again", "still", "said", "step", "back", "way", "what", "need", "please", "ok", "okay", "hmm", "just", "only",
	"所以", "到底", "我要", "要的", "的是", "需要", "我需", "再说", "说一", "一遍", "我再")

// ruleOverlap is |a∩b| / min(|a|,|b|) (0 when either is empty).
func ruleOverlap(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	n := 0
	for k := range a {
		if b[k] {
			n++
		}
	}
	return float64(n) / float64(min(len(a), len(b)))
}

// ---- user rules ----

// Cue lists. Latin cues are lower-case and match at word boundaries.
var (
	ruleRejectStrong = []string{
		"not what i asked", "not what i want", "not what i wanted", "not what i need", "that's not it",
		"revert", "undo", "roll back", "rollback", "throw it away", "throw this away", "start over",
		"won't work", "will not work", "opposite of what", "garbage", "this is useless", "doesn't make sense",
		"不是我要的", "不是我想要的", "撤回", "回滚", "撤销", "行不通", "这样不行", "完全相反", "相反", "全删了", "删掉重来",
		"什么玩意", "重来", "不是我想要",
	}
	ruleRejectStop     = []string{"stop", "停"}
	ruleNegativeEval   = []string{"that's wrong", "this is wrong", "it's wrong", "is wrong", "wrong", "not what i meant", "not quite right", "not right", "incorrect", "nope", "no", "不对", "错了", "不是这个意思", "不是这个", "放错", "搞错", "弄错", "写错", "不太对"}
	ruleNegativeEvalNo = []string{"not wrong", "nothing wrong", "不是不对", "对不对", "没错", "no problem", "no worries", "no rush", "no thanks", "no need", "no errors", "no error"}
	ruleFiller         = setOf("hmm", "no", "nope", "thats", "that", "actually", "yeah", "oh", "ok", "well", "its", "hm", "嗯", "啊")

	ruleStillFailing = []string{
		"still fail", "still failing", "still fails", "still broken", "still throws", "still throwing", "still crash",
		"still crashes", "still see", "still get", "still getting", "still error", "still errors", "still not work",
		"still doesn't work", "still does not work", "still no", "still the same", "same error", "same problem",
		"same issue", "again", "don't pass", "doesn't pass", "do not pass", "not passing", "doesn't work", "not working",
		"still", "还是", "又挂", "又报错", "又失败", "又崩", "一样的错误", "同样的错误", "同样的问题", "没变化", "没有变化",
		"没通过", "不通过", "没用",
	}
	ruleFailWords = []string{"fail", "fails", "failing", "broken", "break", "breaks", "error", "errors", "crash", "crashes",
		"throw", "throwing", "panic", "see the old", "same", "timeout", "pass", "not work", "doesn't work",
		"报错", "错", "不行", "没", "失败", "挂", "崩", "空指针", "老样子", "超时", "不过", "timeout", "一样", "变化", "不通过", "没用"}
	ruleUnderstandWords = []string{"understand", "get it", "know", "明白", "懂", "知道", "理解", "清楚"}

	ruleSubstitutionEN = []string{"instead", "rather than", "don't use", "do not use", "not "}
	rulePreferExplicit = []string{"i prefer", "i'd prefer", "i would prefer", "prefer", "i'd rather", "i would rather",
		"from now on", "going forward", "in the future", "always use", "my preference",
		"更喜欢", "比较喜欢", "喜欢用", "倾向", "以后都", "以后统一", "统一用", "以后这个", "以后用", "以后", "偏好", "习惯用"}
	ruleDislike   = []string{"don't like", "do not like", "i hate", "不喜欢", "不太喜欢"}
	ruleDirective = []string{"rename", "call it", "change it to", "should be", "should only", "put it", "base it on",
		"move it", "改成", "换成", "改为", "应该", "改名"}

	ruleConstraintStrong = []string{"must", "mustn't", "must not", "never", "don't touch", "do not touch", "don't modify",
		"do not modify", "don't change", "do not change", "under no circumstances", "has to", "have to", "it has to",
		"必须", "一定要", "务必", "不许", "不准", "禁止", "千万", "一律", "不得", "只能", "不能"}
	ruleConstraintMedium = []string{"don't use", "do not use", "don't add", "don't commit", "don't push", "don't delete",
		"don't remove", "don't edit", "don't break", "don't rename", "keep the", "keep it", "stay compatible",
		"backwards compatible", "backward compatible", "remember to", "make sure", "without",
		"不要", "别动", "别改", "别用", "记得", "保持", "兼容", "不可以"}
	ruleConstraintAdd = []string{"can you also", "could you also", "also,", "also add", "also make", "also update",
		"and also", "顺便", "另外", "而且", "还要", "同时要"}

	ruleSuccessStrong = []string{"works now", "working now", "it works", "that works", "everything works", "it worked",
		"that fixed it", "fixed it", "that did it", "exactly what i wanted", "exactly what i need", "exactly what i needed",
		"perfect", "lgtm", "looks good", "all green", "tests pass", "tests passed", "passes now", "finally",
		"no errors", "build is fine", "it runs", "thank you so much", "works",
		"可以了", "好了", "没问题了", "搞定", "成功了", "通过了", "正常了", "太好了", "正是我想要的", "完美", "跑起来了",
		"没有报错", "没报错", "不报错了", "ok了", "可以merge", "没毛病"}
	ruleSuccessMedium = []string{"great", "awesome", "brilliant", "excellent", "nice", "not bad", "well done",
		"good job", "cool", "不错", "很好", "挺好", "漂亮", "太棒"}

	ruleConfusionStrong = []string{"i don't understand", "don't understand", "do not understand", "don't get",
		"i'm confused", "confused", "not sure what", "i'm lost", "makes no sense", "don't know how",
		"don't know why", "没看懂", "看不懂", "不明白", "不懂", "不太明白", "糊涂", "不知道怎么", "不知道为什么", "什么意思", "啥意思"}
	ruleConfusionWhy = []string{"why", "how come", "huh", "what?", "curious", "为什么", "为啥", "怎么会", "怎么多了",
		"怎么少了", "怎么没了", "去哪了", "啥?", "啥？", "好奇"}
	ruleConfusionWhat = []string{"what does", "what do you mean", "what's the difference", "difference between",
		"where did", "explain again", "有什么区别", "区别是", "是干什么的", "在干什么"}
	ruleWhyNot = []string{"why not", "why don't we", "why don't you", "为什么不用", "何不"}

	ruleRestateCues = []string{"i said", "as i said", "what i need is", "what i want is", "i want", "i need",
		"我再说一遍", "我说的是", "我要的是", "我需要的是", "再说一遍"}
	ruleDeclines = []string{"no", "nope", "no thanks", "no thank you", "not needed", "不用", "不用了", "不要", "不", "不需要", "算了"}
)

func ruleUser(prev []Turn, t Turn, s ruleSet) {
	x := ruleNormalize(t.Content)
	afterAgent := false
	var lastAgent *Turn
	for i := range prev {
		if prev[i].Role == RoleAssistant || prev[i].Role == RoleTool {
			afterAgent = true
			if prev[i].Role == RoleAssistant {
				lastAgent = &prev[i]
			}
		}
	}

	// Preference.
	explicitPref := x.first(rulePreferExplicit)
	if explicitPref != "" {
		s.add(SignalPreference, "preference.explicit", 0.85, explicitPref)
	}
	if c := x.first(ruleDislike); c != "" {
		s.add(SignalPreference, "preference.dislike", 0.65, c)
		if afterAgent && x.first(ruleDirective) != "" {
			s.add(SignalCorrection, "correction.dislike_directive", 0.7, c)
		}
	}

	// Confusion.
	whyNot := x.first(ruleWhyNot) != ""
	confusionWhy := false
	if afterAgent {
		if c := x.first(ruleConfusionStrong); c != "" {
			s.add(SignalConfusion, "confusion.explicit", 0.85, c)
		}
		if c := x.first(ruleConfusionWhy); c != "" && !whyNot {
			s.add(SignalConfusion, "confusion.why", 0.7, c)
			confusionWhy = true
		}
		if c := x.first(ruleConfusionWhat); c != "" {
			s.add(SignalConfusion, "confusion.what", 0.65, c)
		}
		if ruleRepeatedQuestion(prev, t) {
			s.add(SignalConfusion, "confusion.repeated_question", 0.65, "")
		}
	}

	// Substitution: "use X instead", "不要用X，用Y".
	substitution := ""
	if !confusionWhy && !ruleIsQuestion(x.spaced) {
		substitution = ruleSubstitution(x)
	}
	if substitution != "" && explicitPref == "" {
		s.add(SignalPreference, "preference.substitution", 0.7, substitution)
		if afterAgent {
			s.add(SignalCorrection, "correction.substitution", 0.75, substitution)
		}
	}

	// Answer to the assistant's question: "no"/"不用" is not a reject.
	declined := lastAgent != nil && ruleIsQuestion(ruleNormalize(lastAgent.Content).spaced) && ruleIsDecline(x)

	if afterAgent && !declined {
		// Reject and correction by evaluation.
		if c := x.first(ruleRejectStrong); c != "" {
			s.add(SignalReject, "reject.explicit", 0.85, c)
		} else if c := ruleStopCue(x); c != "" {
			s.add(SignalReject, "reject.stop", 0.75, c)
		}
		if !s.has(SignalReject) && x.first(ruleNegativeEvalNo) == "" {
			if c := ruleNegativeEvalCue(x); c != "" {
				if ruleElaborated(x, c) {
					s.add(SignalCorrection, "correction.negation_with_fix", 0.8, c)
				} else {
					s.add(SignalReject, "reject.negation", 0.75, c)
				}
			}
		}
		// "Still failing" after an attempt.
		if c := ruleStillFailingCue(x); c != "" && lastAgent != nil {
			s.add(SignalCorrection, "correction.still_failing", 0.75, c)
		}
		// A change request after the agent's work.
		if !s.has(SignalCorrection) && !ruleIsQuestion(x.spaced) {
			if c := x.first(ruleDirective); c != "" {
				s.add(SignalCorrection, "correction.directive", 0.65, c)
			}
		}
	}

	// Implicit reject: the goal restated.
	restated := false
	if afterAgent && !declined && !s.has(SignalConfusion) && !s.has(SignalCorrection) {
		if conf, ok := ruleRestatesGoal(prev, t, x); ok {
			s.add(SignalReject, "reject.restated_goal", conf, "")
			restated = true
		}
	}

	// Constraint.
	if !s.has(SignalCorrection) && !restated && substitution == "" && !declined {
		if c := x.first(ruleConstraintStrong); c != "" && !ruleConstraintTrap(x, c) {
			s.add(SignalConstraint, "constraint.explicit", 0.85, c)
		} else if c := x.first(ruleConstraintMedium); c != "" && !ruleConstraintTrap(x, c) {
			s.add(SignalConstraint, "constraint.rule", 0.75, c)
		} else if c := x.first(ruleConstraintAdd); c != "" && afterAgent {
			s.add(SignalConstraint, "constraint.added", 0.6, c)
		}
	}

	// Success: not in a question, not with a reject or correction.
	if afterAgent && !s.has(SignalReject) && !s.has(SignalCorrection) {
		if c := ruleSuccessCue(x, ruleSuccessStrong); c != "" {
			s.add(SignalSuccess, "success.explicit", 0.85, c)
		} else if c := ruleSuccessCue(x, ruleSuccessMedium); c != "" {
			s.add(SignalSuccess, "success.approval", 0.65, c)
		}
	}
}

// ruleNegativeEvalCue finds a negative evaluation of the agent's work:
// "wrong", "no,", "不对", "错了" — but not "报错了" (an error was reported)
// nor "no" inside a phrase ("no longer").
func ruleNegativeEvalCue(x ruleText) string {
	for _, c := range ruleNegativeEval {
		i, h := x.find(c)
		if i < 0 {
			continue
		}
		if c == "no" && ruleHasNoNegated(x) {
			continue
		}
		if c == "错了" {
			if r, _ := utf8.DecodeLastRuneInString(h[:i]); r == '报' || r == '出' {
				continue
			}
		}
		return c
	}
	return ""
}

func ruleIsDecline(x ruleText) bool {
	toks := Tokenize(x.raw)
	if len(toks) > 5 {
		return false
	}
	s := strings.Trim(x.spaced, " .!,~。！，")
	for _, d := range ruleDeclines {
		if s == d || strings.HasPrefix(s, d+",") || strings.HasPrefix(s, d+".") || strings.HasPrefix(s, d+" ") {
			return true
		}
	}
	return false
}

// ruleHasNoNegated reports that the only "no" of the text is not a
// reply ("no errors", "no longer") but part of a phrase.
func ruleHasNoNegated(x ruleText) bool {
	i, h := x.find("no")
	if i < 0 {
		return true
	}
	rest := strings.TrimLeft(h[i+2:], " ")
	// "no," "no." "no" at the end or "no <verb>" at the start are replies.
	if rest == "" || rest[0] == ',' || rest[0] == '.' || rest[0] == '!' {
		return false
	}
	return i != 0
}

func ruleStopCue(x ruleText) string {
	s := strings.TrimLeft(x.spaced, " ")
	for _, c := range ruleRejectStop {
		if strings.HasPrefix(s, c) {
			rest := s[len(c):]
			if rest == "" || strings.IndexAny(rest[:1], ".!,;") == 0 {
				return c
			}
		}
	}
	return ""
}

// ruleElaborated reports whether, besides the negative cue and filler
// words, the text says more (what it should be): two or more content
// tokens.
func ruleElaborated(x ruleText, cue string) bool {
	i, h := x.find(cue)
	rest := h[:i] + " " + h[i+len(cue):]
	n := 0
	for _, tok := range Tokenize(rest) {
		if ruleFiller[tok] {
			continue
		}
		n++
	}
	return n >= 3
}

func ruleStillFailingCue(x ruleText) string {
	for _, c := range ruleStillFailing {
		i, h := x.find(c)
		if i < 0 {
			continue
		}
		window := h[i:min(len(h), i+len(c)+40)]
		if c == "still" || c == "还是" || c == "again" {
			// Only with a failure word close by, and not "still don't understand".
			if ruleContainsAny(window, ruleUnderstandWords) {
				continue
			}
			if c == "还是" {
				window = h[i:min(len(h), i+len(c)+18)]
			}
			if !ruleContainsAny(window[len(c):], ruleFailWords) && !(c == "again" && ruleContainsAny(h[max(0, i-30):i], ruleFailWords)) {
				continue
			}
			return c
		}
		if ruleContainsAny(window, ruleUnderstandWords) {
			continue
		}
		return c
	}
	return ""
}

func ruleContainsAny(s string, subs []string) bool {
	for _, w := range subs {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// ruleSubstitution finds "use X instead (of Y)", "use X, not Y", "X rather
// than Y", "不要用X，用Y", "别用X", "用X而不是Y".
func ruleSubstitution(x ruleText) string {
	h := x.spaced
	if x.has("instead") && (x.has("use") || x.has("instead of")) {
		return "instead"
	}
	if x.has("rather than") {
		return "rather than"
	}
	if i, _ := x.find("use"); i >= 0 {
		if strings.Contains(h[i:], ", not ") {
			return "use"
		}
	}
	if (x.has("don't use") || x.has("do not use")) && strings.Count(" "+h, " use ") >= 2 {
		return "use"
	}
	c := x.compact
	if j := strings.Index(c, "不要用"); j >= 0 && strings.Contains(c[j+len("不要用"):], "用") {
		return "不要用"
	}
	if strings.Contains(c, "别用") && strings.Contains(strings.Replace(c, "别用", "", 1), "用") {
		return "别用"
	}
	if j := strings.Index(c, "用"); j >= 0 && strings.Contains(c[j:], "而不是") {
		return "而不是"
	}
	return ""
}

// ruleConstraintTrap rejects constraint cues used in another sense.
func ruleConstraintTrap(x ruleText, cue string) bool {
	sent := x.sentenceOf(cue)
	switch cue {
	case "不能":
		return strings.Contains(sent, "为什么不能") || strings.Contains(sent, "还是不能")
	case "never":
		// "it never fires" describes a problem, "never commit" is a rule.
		i, h := x.find(cue)
		next := strings.Fields(h[i+len(cue):])
		return len(next) == 0 || !ruleConstraintVerbs[strings.Trim(next[0], ".,!")]
	case "不要":
		return strings.Contains(x.compact, "不要紧")
	}
	return false
}

var ruleConstraintVerbs = setOf("use", "commit", "push", "touch", "change", "modify", "edit", "delete", "remove",
	"add", "call", "log", "store", "hardcode", "rename", "merge", "deploy", "run", "skip", "disable", "break", "expose")

func ruleSuccessCue(x ruleText, cues []string) string {
	for _, c := range cues {
		i, h := x.find(c)
		if i < 0 {
			continue
		}
		if c != "not bad" && c != "不错" && ruleNegatedAt(h, i) {
			continue
		}
		if ruleIsQuestion(x.sentenceOf(c)) {
			continue
		}
		if c == "好了" && (strings.Contains(x.compact, "好了吗") || strings.Contains(x.compact, "好了没")) {
			continue
		}
		return c
	}
	return ""
}

// ruleRepeatedQuestion: t is a question sharing most of its content tokens
// with an earlier user question, with an answer in between.
func ruleRepeatedQuestion(prev []Turn, t Turn) bool {
	if !ruleLooksLikeQuestion(t.Content) {
		return false
	}
	cur := ruleContentTokens(t.Content)
	if len(cur) < 2 {
		return false
	}
	answered, asked := false, 0
	for i := len(prev) - 1; i >= 0 && asked < ruleQuestionLookback; i-- {
		p := prev[i]
		switch p.Role {
		case RoleAssistant:
			answered = true
		case RoleUser:
			asked++
			if answered && ruleLooksLikeQuestion(p.Content) {
				old := ruleContentTokens(p.Content)
				if len(old) >= 2 && ruleOverlap(cur, old) >= 0.6 {
					return true
				}
			}
		}
	}
	return false
}

// ruleQuestionLookback is how many earlier user turns a repeated question
// is looked for in (it bounds the work per turn in long conversations).
const ruleQuestionLookback = 8

func ruleLooksLikeQuestion(s string) bool {
	x := ruleNormalize(s)
	if ruleIsQuestion(x.spaced) {
		return true
	}
	for _, w := range []string{"how ", "where ", "what ", "which ", "怎么", "哪里", "在哪", "什么", "如何", "哪个"} {
		if strings.HasPrefix(x.spaced, w) || ruleHasCJK(w) && strings.Contains(x.compact, w) {
			return true
		}
	}
	return false
}

// ruleRestatesGoal: after assistant work, t says the task's first user
// message again (most of its content tokens), and is not a question.
func ruleRestatesGoal(prev []Turn, t Turn, x ruleText) (float64, bool) {
	if ruleLooksLikeQuestion(t.Content) {
		return 0, false
	}
	goal := -1
	for i, p := range prev {
		if p.Role == RoleUser {
			goal = i
			break
		}
	}
	if goal < 0 {
		return 0, false
	}
	worked := false
	for _, p := range prev[goal+1:] {
		if p.Role == RoleAssistant {
			worked = true
		}
	}
	if !worked {
		return 0, false
	}
	g := ruleContentTokens(prev[goal].Content)
	cur := ruleContentTokens(t.Content)
	if len(g) < 2 || len(cur) < 2 {
		return 0, false
	}
	ov := ruleOverlap(g, cur)
	if ov < 0.6 {
		return 0, false
	}
	if x.first(ruleRestateCues) != "" || ov >= 0.85 {
		return 0.7, true
	}
	return 0.6, true
}

// ---- execution (tool) rules ----

var (
	ruleToolFail = []string{"--- fail", "fail\t", "failed", "failure", "error:", "error ", "panic:", "traceback",
		"exception", "undefined:", "cannot ", "can't ", "no such file", "not found", "exit status", "exit code",
		"segmentation fault", "npm err!", "fatal:", "command not found", "permission denied", "syntaxerror",
		"测试失败", "编译错误", "构建失败", "错误:", "错误：", "失败", "报错", "异常", "找不到"}
	ruleToolPass = []string{"passed", "pass", "ok ", "build succeeded", "all tests passed", "success",
		"编译成功", "测试通过", "构建成功", "全部通过", "成功"}
)

func ruleTool(t Turn, s ruleSet) {
	x := ruleNormalize(t.Content)
	if c := ruleToolFailure(t.Content, x); c != "" {
		conf := 0.7
		if strings.Contains(c, "fail") || strings.Contains(c, "panic") || strings.Contains(c, "失败") {
			conf = 0.75
		}
		s.add(SignalReject, "execution.failure", conf, c)
		return
	}
	if c := ruleToolSuccess(t.Content); c != "" {
		s.add(SignalSuccess, "execution.pass", 0.6, c)
	}
}

// ruleToolFailure returns the failure cue of a tool output ("" when it did
// not fail). Counts of zero ("0 failed", "0 个失败") are not failures; a
// compiler diagnostic (file:line:col: message) is.
func ruleToolFailure(raw string, x ruleText) string {
	for _, line := range strings.Split(raw, "\n") {
		l := strings.ToLower(strings.TrimSpace(line))
		if l == "" {
			continue
		}
		if l == "fail" || strings.HasPrefix(l, "fail ") {
			return "fail"
		}
		if ruleIsDiagnostic(l) {
			return l
		}
		for _, c := range ruleToolFail {
			i := strings.Index(l, c)
			if i < 0 {
				continue
			}
			if ruleZeroCount(l, i) {
				continue
			}
			return c
		}
	}
	_ = x
	return ""
}

// ruleZeroCount reports a count of zero right before a failure word at i
// ("0 failed", "0 errors", "0 个失败"), or "no errors".
func ruleZeroCount(l string, i int) bool {
	before := strings.TrimRight(l[:i], " ")
	before = strings.TrimSuffix(before, "个")
	before = strings.TrimRight(before, " ")
	if strings.HasSuffix(before, " 0") || before == "0" || strings.HasSuffix(before, "no") {
		return true
	}
	return false
}

// ruleIsDiagnostic matches "path/file.ext:12:3: message" and
// "file.ext:12: message".
func ruleIsDiagnostic(l string) bool {
	l = strings.TrimPrefix(l, "./")
	colon := strings.Index(l, ":")
	if colon <= 0 || strings.ContainsAny(l[:colon], " \t") || !strings.Contains(l[:colon], ".") {
		return false
	}
	rest := l[colon+1:]
	digits := 0
	for digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9' {
		digits++
	}
	if digits == 0 || digits == len(rest) || rest[digits] != ':' {
		return false
	}
	return strings.Contains(rest[digits:], " ")
}

func ruleToolSuccess(raw string) string {
	for _, line := range strings.Split(raw, "\n") {
		l := strings.ToLower(strings.TrimSpace(line))
		if l == "" {
			continue
		}
		if l == "pass" || l == "ok" || strings.HasPrefix(l, "ok ") || strings.HasPrefix(l, "ok\t") || strings.HasPrefix(l, "--- pass") {
			return strings.Fields(l)[0]
		}
		for _, c := range ruleToolPass {
			if c == "pass" || c == "ok " {
				continue
			}
			if strings.Contains(l, c) {
				return c
			}
		}
	}
	return ""
}

// ---- assistant self-check rules ----

var ruleSelfCheckCues = []string{
	"i made a mistake", "my mistake", "my bad", "i was wrong", "that's wrong", "that was wrong", "i got it wrong",
	"introduced a regression", "introduced a bug", "i introduced", "bug in my", "my previous change broke",
	"my last change broke", "my change broke", "my previous change", "my last change", "oops", "i forgot to",
	"i missed", "i used the wrong", "i used the deprecated", "i overlooked", "that was a mistake", "i broke",
	"改错了", "弄错了", "搞错了", "写错了", "用错了", "是我的错", "我的错", "我疏忽", "我漏了", "我忘了", "引入了回归",
	"引入了bug", "引入了问题", "我之前的修改有", "我上一次的修改有", "我刚才的修改有", "我上次的修改有",
}

var ruleSelfCheckNeedsProblem = setOf("my previous change", "my last change", "i introduced")

func ruleSelfCheck(t Turn, s ruleSet) {
	x := ruleNormalize(t.Content)
	for _, c := range ruleSelfCheckCues {
		if !x.has(c) {
			continue
		}
		if ruleSelfCheckNeedsProblem[c] {
			sent := x.sentenceOf(c)
			if !ruleContainsAny(sent, []string{"broke", "bug", "regression", "wrong", "mistake", "error", "fail"}) {
				continue
			}
		}
		s.add(SignalCorrection, "self_check.mistake", 0.8, c)
		return
	}
	// "我发现…修改有个 bug": a bug in the assistant's own change.
	if strings.Contains(x.compact, "bug") && ruleContainsAny(x.compact, []string{"我的修改", "我上一次", "我刚才", "我之前", "我上次"}) {
		s.add(SignalCorrection, "self_check.own_bug", 0.75, "bug")
	}
}

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}
