package experience

import (
	"strings"
	"unicode"

	"github.com/kaizenhq/kaizen/internal/tokenize"
)

// Contradicts reports whether the rules of two lessons prescribe opposite
// actions: something one rule rejects ("npm ci rather than npm install",
// "do not create a commit yourself", "不要用 npm install") is what the
// other rule asks for, while that rule neither asks for it too nor rejects
// it. Such a pair is never one lesson, however many words it shares ("use
// npm ci rather than npm install" / "use npm install"; "conclude with git
// commit" / "do not create a commit yourself"), so the heuristic writer
// keeps it apart whatever the merge classifier says.
//
// Each rule is cut into clauses at punctuation; in a clause, what follows
// a rejection cue ("not", "never", "don't", "avoid", "instead of",
// "rather than", "without"; "不要", "别", "避免", "而不是", "而非", "代替",
// …) is rejected, the rest asked for. The units compared are content word
// stems and adjacent stem pairs ("npm install") of Latin script, and the
// bilingual lexicon's concepts of Chinese runs (so that "不要用 npm
// install" and "use npm install" meet; English words carry their concepts
// too, which count only when one of the rules has Chinese). Only a rule
// that rejects something set against a rule that rejects nothing can
// contradict (two rules that both reject are restatements far more often
// than opposites); then a unit the first rejects, and does not ask for
// elsewhere, contradicts when the second asks for it.
//
// On the dev pairs (docs/experience.md) the rule flags 21 of 320 unrelated
// pairs, including both the shipped classifier folded, and 4 of 138
// duplicates (2 of which the classifier merged): "do not change the data"
// vs "leave the data unchanged" is read as opposite.
func Contradicts(a, b MergeLesson) bool {
	pa, ra, na := ruleStance(a.Rule)
	pb, rb, nb := ruleStance(b.Rule)
	if na == nb {
		// Both rules reject something ("never commit keys" / "do not
		// commit .env files"), or neither does: restatements of one rule
		// often name its object on both sides of a rejection, so only a
		// rule that rejects set against one that only asks counts.
		return false
	}
	// The lexicon's concepts are broad ("client" and "request" share
	// one): they bridge a Chinese rule and another rule only.
	concepts := ruleHasCJK(a.Rule) || ruleHasCJK(b.Rule)
	return opposed(ra, pa, pb, rb, concepts) || opposed(rb, pb, pa, ra, concepts)
}

// opposed: a unit rejected by one side (rej) that the same side does not
// ask for (ask) and the other side asks for (otherAsk) without rejecting
// it (otherRej).
func opposed(rej, ask, otherAsk, otherRej map[string]bool, concepts bool) bool {
	for u := range rej {
		if !concepts && strings.HasPrefix(u, "#") {
			continue
		}
		if !ask[u] && otherAsk[u] && !otherRej[u] {
			return true
		}
	}
	return false
}

// latinRejectCues are the word sequences after which a clause rejects
// what it names, as Words yields them (lowercased, apostrophes joined).
var latinRejectCues = [][]string{
	{"rather", "than"}, {"instead", "of"}, {"not"}, {"never"}, {"dont"}, {"doesnt"}, {"avoid"}, {"without"},
}

// hanRejectCues are the Chinese terms after which a clause rejects what
// it names.
var hanRejectCues = []string{"而不是", "而非", "代替", "替代", "取代", "不要", "不用", "不能", "不应", "不得", "切勿", "禁止", "避免", "别", "勿"}

// ruleStance splits a rule into the units it asks for and those it
// rejects, and reports whether it has a rejection cue at all. A rejected
// part that names an order ("do not copy the source before installing
// the dependencies", "never lock rows in whatever order they arrive")
// rejects a sequence, not its items: its units are left out (the rule
// still counts as rejecting).
func ruleStance(rule string) (ask, rej map[string]bool, rejects bool) {
	ask, rej = map[string]bool{}, map[string]bool{}
	for _, clause := range strings.FieldsFunc(rule, isClauseBreak) {
		pos, neg, cue := splitRejection(clause)
		addUnits(ask, pos)
		if cue {
			rejects = true
			if !namesOrder(neg) {
				addUnits(rej, neg)
			}
		}
	}
	return ask, rej, rejects
}

// orderWords are the words and terms of a sequence.
var orderWords = map[string]bool{"before": true, "after": true, "first": true, "then": true, "until": true, "order": true, "ordering": true}

var orderTerms = []string{"之前", "之后", "以前", "以后", "先", "再", "顺序"}

func namesOrder(s string) bool {
	for _, w := range latinWordSpans(s) {
		if orderWords[w.word] {
			return true
		}
	}
	for _, t := range orderTerms {
		if strings.Contains(s, t) {
			return true
		}
	}
	return false
}

func isClauseBreak(r rune) bool {
	switch r {
	case ',', '.', ';', ':', '(', ')', '!', '?', '，', '。', '；', '：', '（', '）', '！', '？', '、':
		return true
	}
	return false
}

// splitRejection returns the part of a clause before its first rejection
// cue and the part after it, and whether it has one.
func splitRejection(clause string) (pos, neg string, cue bool) {
	cut := -1
	cueEnd := -1
	// Chinese cues: anywhere.
	for _, c := range hanRejectCues {
		if i := strings.Index(clause, c); i >= 0 && (cut < 0 || i < cut) {
			cut, cueEnd = i, i+len(c)
		}
	}
	// Latin cues: whole words.
	words := latinWordSpans(clause)
	for i := range words {
		for _, cue := range latinRejectCues {
			if i+len(cue) > len(words) {
				continue
			}
			ok := true
			for k, w := range cue {
				if words[i+k].word != w {
					ok = false
					break
				}
			}
			if ok && (cut < 0 || words[i].from < cut) {
				cut, cueEnd = words[i].from, words[i+len(cue)-1].to
			}
		}
	}
	if cut < 0 {
		return clause, "", false
	}
	return clause[:cut], clause[cueEnd:], true
}

type wordSpan struct {
	word     string
	from, to int
}

// latinWordSpans lists the Latin words of s, lowercased, apostrophes
// joined ("Don't" → "dont"), with their byte offsets.
func latinWordSpans(s string) []wordSpan {
	var out []wordSpan
	from := -1
	var b strings.Builder
	flush := func(to int) {
		if from >= 0 {
			out = append(out, wordSpan{word: b.String(), from: from, to: to})
			from = -1
			b.Reset()
		}
	}
	for i, r := range s {
		switch {
		case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			if from < 0 {
				from = i
			}
			b.WriteRune(unicode.ToLower(r))
		case (r == '\'' || r == '’') && from >= 0:
			// joined: "don't" → "dont"
		default:
			flush(i)
		}
	}
	flush(len(s))
	return out
}

// addUnits adds the content stems, adjacent stem pairs and Chinese
// concepts of text to set.
func addUnits(set map[string]bool, text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	var w tokenize.Words
	w.Scan(text)
	prev := ""
	for _, tk := range w.Tokens {
		if tk.Han {
			tokenize.HanConcepts(w.Runes[tk.From:tk.To], func(c int) { set["#"+tokenize.ConceptName(c)] = true })
			prev = ""
			continue
		}
		if tk.Stop || tk.Part {
			continue
		}
		s := string(w.Buf[tk.StemFrom:tk.StemTo])
		if len(s) < 2 || contradictionFiller[s] {
			continue
		}
		set[s] = true
		for _, c := range tokenize.WordConcepts(w.Buf[tk.StemFrom:tk.StemTo]) {
			set["#"+tokenize.ConceptName(c)] = true
		}
		if prev != "" {
			set[prev+" "+s] = true
		}
		prev = s
	}
}

// contradictionFiller are stems that say how, not what: they are not
// units of a rule's stance.
var contradictionFiller = map[string]bool{"use": true, "run": true, "make": true, "sure": true, "just": true, "only": true}
