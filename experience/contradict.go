package experience

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

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
// Since q18 it also reads rules across languages and negation traps: two
// rules that both reject contradict when the choice is crossed (each asks
// for what the other rejects); "without" / 没有 reject a side condition
// only, and "never X without Y" asks for Y; SQL phrases ("timestamp
// without time zone", "NOT NULL"), "don't forget" / 别忘了 and "not only"
// are normalised first; "prefer X over Y", "off", "non-" / 非 reject;
// consequence clauses ("…，会卡住界面") and what both triggers name are
// left out.
//
// On the dev pairs (docs/experience.md) the rule flags 17 of 320 unrelated
// pairs of the older sets, including all the shipped classifier would
// fold, 6 of 110 related and 2 of 138 duplicates ("do not change the data"
// vs "leave the data unchanged" is read as opposite); of the 32
// cross-language dev pairs, 15 of 16 contradictions and none of 16
// duplicates.
func Contradicts(a, b MergeLesson) bool {
	pa, ra, na := ruleStance(a.Rule)
	pb, rb, nb := ruleStance(b.Rule)
	if !na && !nb {
		return false
	}
	// The lexicon's concepts are broad ("client" and "request" share
	// one): they bridge a Chinese rule and another rule only.
	concepts := ruleHasCJK(a.Rule) || ruleHasCJK(b.Rule)
	// What both triggers name is the situation the two lessons share, not
	// what they disagree about: "never run the container as root" and
	// "用非 root 用户运行容器", both for a Dockerfile, do not oppose on
	// "container".
	ta, tb := map[string]bool{}, map[string]bool{}
	addUnits(ta, normalizeRule(a.Trigger))
	addUnits(tb, normalizeRule(b.Trigger))
	for u := range ta {
		if tb[u] {
			delete(ra, u)
			delete(rb, u)
		}
	}
	if na && nb {
		// Both rules reject something ("never commit keys" / "do not
		// commit .env files"): restatements of one rule often name its
		// object on both sides of a rejection, so they contradict only
		// when the choice is crossed — each asks for what the other
		// rejects ("rebase, do not make merge commits" / "merge main in
		// rather than rebasing"; "use timestamptz, not timestamp" /
		// "timestamp, not timestamptz").
		return opposed(ra, pa, pb, rb, concepts) && opposed(rb, pb, pa, ra, concepts)
	}
	// One rule rejects: what it rejects is set against what the other asks
	// for. (What the other rule rejects only as a side condition, "so the
	// tests run without a server", opposes nothing by itself.)
	if na {
		return opposed(ra, pa, pb, rb, concepts)
	}
	return opposed(rb, pb, pa, ra, concepts)
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
	{"rather", "than"}, {"instead", "of"}, {"not"}, {"never"}, {"dont"}, {"doesnt"}, {"avoid"}, {"without"}, {"unless"},
	{"wont"}, {"cant"}, {"cannot"}, {"isnt"}, {"arent"}, {"off"},
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
	for _, clause := range splitClauses(normalizeRule(rule)) {
		clause = dropConsequence(clause)
		pos, neg, cue := splitRejection(clause)
		if cue == cueWeak {
			// "没有用户同意不要升级大版本": a lack that sets the scene
			// of a rejection later in the clause is not what is rejected.
			if _, n2, c2 := splitRejection(neg); c2 == cueStrong {
				neg, cue = n2, c2
			}
		}
		if cue == cueFact {
			// "forEach won't await": a statement of fact; its subject is
			// not asked for.
			pos, cue = "", cueWeak
		}
		addUnits(ask, pos)
		if cue == cueNone {
			continue
		}
		// "never call it without a timeout", "不要在没有测试的情况下上线":
		// a rejection of a lack asks for what lacks; the part between the
		// two cues is the situation.
		if _, inner, c2 := splitRejection(neg); c2 == cueWeak {
			// In Chinese the lack can modify a noun that follows 的
			// ("不要用不带时区的 timestamp"): only the lacking thing is
			// asked for, not the noun.
			if i := strings.Index(inner, "的"); i >= 0 {
				inner = inner[:i]
			}
			addUnits(ask, inner)
			continue
		}
		if cue == cueStrong {
			rejects = true
		} else if i := strings.Index(neg, "的"); i >= 0 {
			// "用不带时区的 naive datetime": the lack modifies the noun
			// after 的, which is what the rule uses.
			addUnits(ask, neg[i+len("的"):])
			neg = neg[:i]
		}
		if !namesOrder(neg) {
			addUnits(rej, neg)
		}
	}
	for _, w := range narrowRejections(rule) {
		units := map[string]bool{}
		addUnits(units, w)
		for u := range units {
			delete(ask, u)
			rej[u] = true
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

// cueKind grades a rejection cue: a strong one ("do not", "never",
// "instead of", 不要) makes the rule a rejecting one; a weak one
// ("without", 没有) rejects what follows it as a side condition ("mock
// the database so the tests run without a server") and does not.
type cueKind int

const (
	cueNone cueKind = iota
	cueWeak
	cueStrong
	cueFact // "won't", "can't": what precedes states a fact, what follows is rejected weakly
)

// splitRejection returns the part of a clause before its first rejection
// cue and the part after it, and the kind of that cue.
func splitRejection(clause string) (pos, neg string, kind cueKind) {
	cut := -1
	cueEnd := -1
	// Chinese cues: anywhere.
	for _, c := range hanRejectCues {
		if i := strings.Index(clause, c); i >= 0 && (cut < 0 || i < cut) {
			cut, cueEnd, kind = i, i+len(c), cueStrong
		}
	}
	for _, c := range hanWeakCues {
		if i := strings.Index(clause, c); i >= 0 && (cut < 0 || i < cut) {
			cut, cueEnd, kind = i, i+len(c), cueWeak
		}
	}
	// Latin cues: whole words.
	words := latinWordSpans(clause)
	prefers := false
	for _, w := range words {
		if preferWords[w.word] {
			prefers = true
		}
	}
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
				cut, cueEnd, kind = words[i].from, words[i+len(cue)-1].to, cueStrong
				if latinWeakCues[cue[0]] {
					kind = cueWeak
				}
				if latinFactCues[cue[0]] {
					kind = cueFact
				}
			}
		}
		// "prefer X over Y": Y is rejected.
		if prefers && words[i].word == "over" && i > 0 && (cut < 0 || words[i].from < cut) {
			cut, cueEnd, kind = words[i].from, words[i].to, cueStrong
		}
	}
	if cut < 0 {
		return clause, "", cueNone
	}
	return clause[:cut], clause[cueEnd:], kind
}

// latinWeakCues are the Latin cues (by their first word) that reject a
// side condition only.
var latinWeakCues = map[string]bool{"without": true, "unless": true}

// latinFactCues are negations of a statement of fact ("forEach won't
// await").
var latinFactCues = map[string]bool{"wont": true, "cant": true, "cannot": true, "isnt": true, "arent": true}

// hanWeakCues are their Chinese counterparts.
var hanWeakCues = []string{"没有", "不带", "不加", "除非"}

// preferWords make "over" a rejection cue in their clause ("prefer
// parameterised queries over string concatenation").
var preferWords = map[string]bool{"prefer": true, "prefers": true, "preferred": true, "favor": true, "favour": true, "choose": true, "pick": true}

// splitClauses cuts a rule at punctuation. A full stop or colon inside a
// word ("context.Context", "std::move", "http://") does not end a clause.
func splitClauses(rule string) []string {
	var out []string
	from := 0
	// the runes with their byte offsets and widths (an invalid byte is
	// one byte wide, though it reads as U+FFFD)
	type runeAt struct {
		r      rune
		pos, n int
	}
	var rs []runeAt
	for pos := 0; pos < len(rule); {
		r, n := utf8.DecodeRuneInString(rule[pos:])
		rs = append(rs, runeAt{r, pos, n})
		pos += n
	}
	for i, c := range rs {
		if isClauseBreak(c.r) {
			inWord := (c.r == '.' || c.r == ':') && i+1 < len(rs) && i > 0 &&
				!unicode.IsSpace(rs[i+1].r) && !unicode.IsPunct(rs[i+1].r) && !unicode.IsSpace(rs[i-1].r)
			if !inWord {
				if c.pos > from {
					out = append(out, rule[from:c.pos])
				}
				from = c.pos + c.n
			}
		}
	}
	if len(rule) > from {
		out = append(out, rule[from:])
	}
	return out
}

// consequenceMarks open the part of a clause that tells what happens
// otherwise or why ("会卡住界面", "不然卸载后还会 setState", "so the
// tests run fast"): neither asked for nor rejected.
var (
	hanConsequence   = []string{"否则", "不然", "以免", "免得", "以防", "防止", "会导致", "导致"}
	latinConsequence = [][]string{{"so", "that"}, {"so"}, {"otherwise"}, {"because"}, {"since"}, {"or", "else"}, {"to", "avoid"}, {"to", "prevent"}}
)

// dropConsequence cuts a clause at its first consequence mark; a clause
// that begins with 会 ("…，会卡住界面") is all consequence.
func dropConsequence(clause string) string {
	t := strings.TrimSpace(clause)
	if strings.HasPrefix(t, "会") || strings.HasPrefix(t, "否则") || strings.HasPrefix(t, "不然") {
		return ""
	}
	cut := -1
	for _, c := range hanConsequence {
		if i := strings.Index(clause, c); i >= 0 && (cut < 0 || i < cut) {
			cut = i
		}
	}
	words := latinWordSpans(clause)
	for i := range words {
		for _, m := range latinConsequence {
			if i == 0 || i+len(m) > len(words) {
				continue
			}
			ok := true
			for k, w := range m {
				if words[i+k].word != w {
					ok = false
					break
				}
			}
			if ok && (cut < 0 || words[i].from < cut) {
				cut = words[i].from
			}
		}
	}
	if cut < 0 {
		return clause
	}
	return clause[:cut]
}

// rulePhrases are fixed phrases whose words would otherwise read as a
// stance: SQL types and constraints ("timestamp without time zone", "NOT
// NULL", "IF NOT EXISTS") name a thing, and "don't forget" / 别忘了 asks.
var rulePhrases = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`(?i)\btimestamp\s+with\s+time\s+zone\b`), "timestamptz"},
	{regexp.MustCompile(`(?i)\btimestamp\s+without\s+time\s+zone\b`), "timestamp"},
	{regexp.MustCompile(`(?i)\btime\s+with\s+time\s+zone\b`), "timetz"},
	{regexp.MustCompile(`(?i)\btime\s+without\s+time\s+zone\b`), "time"},
	{regexp.MustCompile(`(?i)\bwith(out)?\s+time\s+zone\b`), "with${1}timezone"},
	{regexp.MustCompile(`(?i)\bif\s+not\s+exists\b`), "ifnotexists"},
	{regexp.MustCompile(`(?i)\bnot\s+exists\b`), "notexists"},
	{regexp.MustCompile(`(?i)\bnot\s+null\b`), "notnull"},
	{regexp.MustCompile(`(?i)\b(do\s+not|don'?t|never)\s+forget(\s+to)?\b`), "remember to"},
	{regexp.MustCompile(`(?i)\bnot\s+(only|just)\b`), "also"},
	{regexp.MustCompile(`(不只是|不仅仅|不仅|不光|不只)`), "也"},
	// A call's empty parentheses ("err.Error()") are code, not a clause.
	{regexp.MustCompile(`\(\)`), ""},
	{regexp.MustCompile(`(别|不要|切勿|勿)忘(了|记)?`), "记得"},
}

func normalizeRule(s string) string {
	for _, p := range rulePhrases {
		s = p.re.ReplaceAllString(s, p.with)
	}
	return s
}

// narrowRejections are the words negated by a prefix that binds one word
// only: "non-root", "非 root".
func narrowRejections(rule string) []string {
	var out []string
	words := latinWordSpans(rule)
	for i := 0; i+1 < len(words); i++ {
		if words[i].word == "non" && words[i+1].from-words[i].to <= 1 {
			out = append(out, words[i+1].word)
		}
	}
	for i := 0; ; {
		j := strings.Index(rule[i:], "非")
		if j < 0 {
			break
		}
		at := i + j + len("非")
		rest := strings.TrimLeft(rule[at:], " ")
		if ws := latinWordSpans(rest); len(ws) > 0 && ws[0].from == 0 {
			out = append(out, ws[0].word)
		}
		i = at
	}
	return out
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
