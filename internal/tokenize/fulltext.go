package tokenize

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Full-text limits. They bound the work of one document and keep one
// pathological input (a minified file, a base64 blob) from dominating an
// index.
const (
	// MaxDocumentTokens is the number of tokens Tokenize returns at most;
	// the rest of a longer text is not indexed.
	MaxDocumentTokens = 2000
	// MaxTokenRunes is the length at which a token is cut: longer words
	// (hashes, blobs, long identifiers) are indexed by their first
	// MaxTokenRunes letters, identically in documents and queries.
	MaxTokenRunes = 32
	// MaxQueryTokens is the number of distinct tokens QueryTokens returns.
	MaxQueryTokens = 64
)

// Tokenize splits text into the terms every storage backend indexes, so
// that full-text search behaves the same on SQLite and PostgreSQL:
//
//   - letters and digits form words; everything else separates them, so
//     "config.yaml" gives "config" and "yaml", and "snake_case" gives
//     "snake" and "case"; an apostrophe inside a word is dropped ("don't"
//     gives "dont");
//   - words are lower-cased; full-width forms are folded to ASCII;
//   - a camelCase word also yields its parts ("getUser" gives "getuser",
//     "get" and "user"), so a query for a part finds the identifier;
//   - one-letter Latin words and a small list of English and Chinese stop
//     words are dropped (numbers are kept: "404" is a good search term);
//   - a word longer than MaxTokenRunes is cut to its first MaxTokenRunes
//     runes;
//   - a run of Chinese, Japanese or Korean characters becomes its
//     overlapping character bigrams ("配置文件" gives "配置", "置文",
//     "文件"); a run of one character is kept as a unigram unless it is a
//     stop character (的, 了, 是…); stop bigrams (我们, 这个…) are dropped.
//
// Duplicates are kept, in text order, because BM25 ranks by term
// frequency. At most MaxDocumentTokens tokens are returned. Every token
// is non-empty, lower-case and made of letters and digits only.
func Tokenize(text string) []string {
	var t fullTextTokenizer
	t.run(text)
	return t.tokens
}

// SearchText is the document text stored for full-text search: the tokens
// of text joined by single spaces (duplicates kept for term frequency).
func SearchText(text string) string {
	return strings.Join(Tokenize(text), " ")
}

// QueryTokens returns the distinct tokens of a query, in order of first
// appearance, at most MaxQueryTokens of them: the terms to pass to a
// full-text search, where repeating a term adds nothing.
func QueryTokens(text string) []string {
	all := Tokenize(text)
	seen := make(map[string]bool, len(all))
	out := make([]string, 0, min(len(all), MaxQueryTokens))
	for _, tok := range all {
		if seen[tok] {
			continue
		}
		seen[tok] = true
		out = append(out, tok)
		if len(out) == MaxQueryTokens {
			break
		}
	}
	return out
}

// fullTextTokenizer holds the state of one Tokenize call.
type fullTextTokenizer struct {
	tokens []string
	word   []rune // the current Latin-script word, lower-cased
	parts  []int  // camelCase split points in word
	cjk    []rune // the current CJK run
	prev   rune   // previous rune of the current word, original case
}

func (t *fullTextTokenizer) full() bool { return len(t.tokens) >= MaxDocumentTokens }

func (t *fullTextTokenizer) run(text string) {
	for i := 0; i < len(text) && !t.full(); {
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		r = FoldWidth(r)
		switch {
		case IsCJK(r):
			t.flushWord()
			t.cjk = append(t.cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			t.flushCJK()
			if len(t.word) > 0 && unicode.IsUpper(r) && unicode.IsLower(t.prev) {
				t.parts = append(t.parts, len(t.word))
			}
			t.word = append(t.word, unicode.ToLower(r))
			t.prev = r
		case len(t.word) > 0 && (r == '\'' || r == '\u2019') && nextIsLetter(text[i:]):
			// an apostrophe inside a word joins it
		default:
			t.flushWord()
			t.flushCJK()
		}
	}
	t.flushWord()
	t.flushCJK()
	if len(t.tokens) > MaxDocumentTokens {
		t.tokens = t.tokens[:MaxDocumentTokens]
	}
}

func (t *fullTextTokenizer) flushWord() {
	if len(t.word) == 0 {
		return
	}
	t.emitWord(t.word)
	if len(t.parts) > 0 {
		start := 0
		for k := 0; k <= len(t.parts); k++ {
			end := len(t.word)
			if k < len(t.parts) {
				end = t.parts[k]
			}
			t.emitWord(t.word[start:end])
			start = end
		}
	}
	t.word, t.parts, t.prev = t.word[:0], t.parts[:0], 0
}

func (t *fullTextTokenizer) emitWord(w []rune) {
	if len(w) > MaxTokenRunes {
		w = w[:MaxTokenRunes]
	}
	if len(w) == 1 && !unicode.IsDigit(w[0]) {
		return
	}
	s := string(w)
	if englishStopWords[s] {
		return
	}
	t.emit(s)
}

func (t *fullTextTokenizer) flushCJK() {
	run := t.cjk
	t.cjk = t.cjk[:0]
	switch len(run) {
	case 0:
		return
	case 1:
		if !cjkStopChars[run[0]] {
			t.emit(string(run))
		}
		return
	}
	for i := 1; i < len(run); i++ {
		bigram := string(run[i-1 : i+1])
		if !cjkStopBigrams[bigram] {
			t.emit(bigram)
		}
	}
}

func (t *fullTextTokenizer) emit(tok string) {
	if !t.full() {
		t.tokens = append(t.tokens, tok)
	}
}

func nextIsLetter(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(r) && !IsCJK(r)
}

// englishStopWords are function words that carry no topic. The list is
// short on purpose: BM25 already discounts frequent terms, and words such
// as "not", "no" or "without" matter in lessons.
var englishStopWords = setOf(
	"the", "an", "and", "or", "of", "to", "in", "on", "at", "by", "for", "with", "from", "as",
	"is", "are", "was", "were", "be", "been", "it", "its", "this", "that", "these", "those",
	"we", "you", "he", "she", "they", "me", "my", "our", "your", "their", "them", "us",
	"do", "does", "did", "so", "then", "than", "there", "here", "just", "also", "very",
	"can", "could", "will", "would", "should", "shall", "may", "might", "has", "have", "had",
	"what", "which", "who", "when", "where", "how", "why", "if", "but", "about", "into", "please",
)

// cjkStopChars are Chinese function characters dropped when they stand
// alone.
var cjkStopChars = func() map[rune]bool {
	m := map[rune]bool{}
	for _, r := range "的了是在和也就都而及与着之把被吗呢吧啊呀哦嗯这那个我你他她它们有一不要会对说让给很还又或但并等" {
		m[r] = true
	}
	return m
}()

// cjkStopBigrams are frequent Chinese function words.
var cjkStopBigrams = setOf(
	"我们", "你们", "他们", "她们", "它们", "这个", "那个", "一个", "这些", "那些", "就是", "可以",
	"什么", "因为", "所以", "但是", "如果", "还是", "然后", "这样", "那样", "已经", "现在", "自己",
	"的话", "一下", "一些", "这里", "那里", "时候", "是不", "不是", "了一",
)

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}
