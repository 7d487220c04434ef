package tokenize

import (
	"unicode"
	"unicode/utf8"
)

// Token is a word of Words (bytes of Words.Buf) or a CJK run (Words.Runes).
type Token struct {
	From, To         int // the word in buf, or the run in runes
	StemFrom, StemTo int // the stem in buf
	Han              bool
	Stop             bool
	Part             bool // a part of an identifier, e.g. "user" of "getUser"
}

// Words splits text into Latin-script words and CJK runs. Words are
// lowercased, accent-folded (Latin-1 and Latin Extended-A), and joined
// across apostrophes ("don't" → "dont"); full-width forms are folded to
// ASCII; punctuation and symbols separate.
type Words struct {
	Buf    []byte
	Runes  []rune
	Tokens []Token
	splits []int // split points of the current word, offsets in buf
}

const maxWordBytes = 64

func (t *Words) Scan(text string) {
	t.Buf, t.Runes, t.Tokens, t.splits = t.Buf[:0], t.Runes[:0], t.Tokens[:0], t.splits[:0]
	wordStart, hanStart := -1, -1
	var prev rune // previous rune of the current word, original case
	flushWord := func() {
		if wordStart >= 0 {
			t.addWord(wordStart)
			wordStart = -1
		}
	}
	flushHan := func() {
		if hanStart >= 0 {
			t.Tokens = append(t.Tokens, Token{From: hanStart, To: len(t.Runes), Han: true})
			hanStart = -1
		}
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		r = FoldWidth(r)
		switch {
		case IsCJK(r):
			flushWord()
			if hanStart < 0 {
				hanStart = len(t.Runes)
			}
			t.Runes = append(t.Runes, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			flushHan()
			if wordStart < 0 {
				wordStart = len(t.Buf)
				t.splits = t.splits[:0]
			} else if unicode.IsUpper(r) && unicode.IsLower(prev) {
				t.splits = append(t.splits, len(t.Buf)) // camelCase
			}
			if len(t.Buf)-wordStart < maxWordBytes {
				t.Buf = appendFolded(t.Buf, r)
			}
			prev = r
		case wordStart >= 0 && unicode.Is(unicode.Mn, r):
			// a combining accent: dropped, the base letter stays
		case wordStart >= 0 && (r == '\'' || r == '\u2019') && i < len(text) && startsWithLetter(text[i:]):
			// an apostrophe inside a word joins it
		case wordStart >= 0 && r == '_' && i < len(text) && startsWithLetterOrDigit(text[i:]):
			t.splits = append(t.splits, len(t.Buf)) // snake_case: kept whole, split into parts
			t.Buf = append(t.Buf, '_')
			prev = r
		default:
			flushWord()
			flushHan()
		}
	}
	flushWord()
	flushHan()
}

func startsWithLetter(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(r) && !IsCJK(r)
}

func startsWithLetterOrDigit(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return (unicode.IsLetter(r) || unicode.IsDigit(r)) && !IsCJK(r)
}

// addWord records the word buf[from:] and, for an identifier, its parts.
func (t *Words) addWord(from int) {
	to := len(t.Buf)
	if to == from {
		return
	}
	t.Tokens = append(t.Tokens, t.wordToken(from, to, false))
	if len(t.splits) == 0 {
		return
	}
	start := from
	for k := 0; k <= len(t.splits); k++ {
		end := to
		if k < len(t.splits) {
			end = t.splits[k]
		}
		a, b := start, end
		for a < b && t.Buf[a] == '_' {
			a++
		}
		if b-a >= 2 {
			t.Tokens = append(t.Tokens, t.wordToken(a, b, true))
		}
		start = end
	}
}

func (t *Words) wordToken(from, to int, part bool) Token {
	w := t.Buf[from:to]
	tk := Token{From: from, To: to, Part: part, Stop: stopwords[string(w)], StemFrom: from, StemTo: to}
	if n, repl := stem(w); repl != "" {
		tk.StemFrom = len(t.Buf)
		t.Buf = append(t.Buf, w[:n]...)
		t.Buf = append(t.Buf, repl...)
		tk.StemTo = len(t.Buf)
	} else {
		tk.StemTo = from + n
	}
	return tk
}

// latinFold maps U+00C0…U+017F to a base ASCII letter; '.' means none.
const latinFold = "aaaaaaaceeeeiiiidnooooo.ouuuuy..aaaaaaaceeeeiiiidnooooo.ouuuuy.y" +
	"aaaaaaccccccccddddeeeeeeeeeegggggggghhhhiiiiiiiiii..jjkk.lllllll" +
	"lllnnnnnn.nnoooooooorrrrrrssssssssttttttuuuuuuuuuuuuwwyyyzzzzzzs"

// appendFolded appends r lowercased and, for Latin letters, without accents.
func appendFolded(b []byte, r rune) []byte {
	if r < 0x80 {
		if r >= 'A' && r <= 'Z' {
			r += 'a' - 'A'
		}
		return append(b, byte(r))
	}
	if r >= 0xC0 && r < 0x180 {
		switch r {
		case 'ß':
			return append(b, "ss"...)
		case 'Æ', 'æ':
			return append(b, "ae"...)
		case 'Œ', 'œ':
			return append(b, "oe"...)
		case 'Þ', 'þ':
			return append(b, "th"...)
		case 'Ĳ', 'ĳ':
			return append(b, "ij"...)
		}
		if c := latinFold[r-0xC0]; c != '.' {
			return append(b, c)
		}
	}
	return utf8.AppendRune(b, unicode.ToLower(r))
}

// stem is a light English stemmer for lowercase ASCII words: it returns
// the length of the prefix to keep and a replacement suffix ("" for none).
// plurals, -ing, -ed and a final -e go, so that fail/fails/failed/failing
// and configure/configured/configuring meet.
func stem(w []byte) (int, string) {
	n := len(w)
	if n < 4 {
		return n, ""
	}
	for _, c := range w {
		if c < 'a' || c > 'z' {
			return n, ""
		}
	}
	has := func(suffix string) bool { return n >= len(suffix) && string(w[n-len(suffix):n]) == suffix }
	switch {
	case n > 4 && (has("ies") || has("ied")):
		return n - 3, "y"
	case has("sses"):
		n -= 2
	case has("ss") || has("us") || has("is"):
	case has("s"):
		n--
	}
	switch {
	case n > 5 && has("ing") && hasVowel(w[:n-3]):
		n = undouble(w, n-3)
	case n > 4 && has("ed") && hasVowel(w[:n-2]):
		n = undouble(w, n-2)
	}
	if n > 4 && w[n-1] == 'e' {
		n--
	}
	return n, ""
}

func hasVowel(w []byte) bool {
	for _, c := range w {
		switch c {
		case 'a', 'e', 'i', 'o', 'u', 'y':
			return true
		}
	}
	return false
}

// undouble drops the second of a final double consonant ("runn" → "run"),
// except l, s and z ("fall", "pass", "buzz").
func undouble(w []byte, n int) int {
	if n >= 3 && w[n-1] == w[n-2] {
		switch w[n-1] {
		case 'a', 'e', 'i', 'o', 'u', 'l', 's', 'z':
		default:
			return n - 1
		}
	}
	return n
}

// stopwords are the English function words of Words (a longer list than
// the full-text one: for embeddings, two unrelated sentences sharing many
// of them must not look alike).
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range []string{
		"a", "an", "the", "and", "or", "but", "if", "then", "else", "of", "to", "in", "on", "at",
		"by", "for", "with", "from", "into", "onto", "about", "as", "than", "so", "too", "very",
		"is", "am", "are", "was", "were", "be", "been", "being", "do", "does", "did", "doing",
		"have", "has", "had", "having", "it", "its", "this", "that", "these", "those", "there",
		"here", "i", "me", "my", "we", "us", "our", "you", "your", "he", "him", "his", "she",
		"her", "they", "them", "their", "what", "which", "who", "whom", "whose", "when", "where",
		"why", "how", "can", "could", "will", "would", "shall", "should", "may", "might", "must",
		"just", "also", "some", "any", "all", "each", "every", "both", "either", "neither",
		"such", "own", "same", "other", "more", "most", "much", "many", "few", "only", "again",
		"up", "down", "out", "off", "over", "under", "before", "after", "while", "because",
		"until", "s", "t", "d", "ll", "re", "ve", "m", "im", "ive", "id", "youre", "its", "lets",
		"please", "get", "got", "make", "made", "let", "one", "way", "thing", "things", "like",
	} {
		m[w] = true
	}
	return m
}()
