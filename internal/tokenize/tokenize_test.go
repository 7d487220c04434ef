package tokenize

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// checkTokens asserts what every token of Tokenize must be.
func checkTokens(t *testing.T, text string, tokens []string) {
	t.Helper()
	if len(tokens) > MaxDocumentTokens {
		t.Fatalf("%d tokens > %d", len(tokens), MaxDocumentTokens)
	}
	for _, tok := range tokens {
		if tok == "" || !utf8.ValidString(tok) || strings.ToLower(tok) != tok || utf8.RuneCountInString(tok) > MaxTokenRunes {
			t.Fatalf("bad token %q from %q", tok, text)
		}
		for _, r := range tok {
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				t.Fatalf("token %q from %q has %q, not a letter or digit", tok, text, r)
			}
		}
	}
}

// TestRadicalsSeparate: CJK and Kangxi radicals (U+2E80…U+2FDF) are
// symbols, not letters: they separate words and never reach a token.
func TestRadicalsSeparate(t *testing.T) {
	for text, want := range map[string][]string{
		"⺞":     nil,
		"⼀":     nil,
		"a⼀b":   nil,
		"配⼀置":   {"配", "置"},
		"ab⺞cd": {"ab", "cd"},
		"配置⿕文件": {"配置", "文件"},
	} {
		got := Tokenize(text)
		checkTokens(t, text, got)
		if !slices.Equal(got, want) {
			t.Errorf("Tokenize(%q) = %q, want %q", text, got, want)
		}
		var w Words
		w.Scan(text)
		for _, tk := range w.Tokens {
			if tk.Han {
				for _, r := range w.Runes[tk.From:tk.To] {
					if !IsCJK(r) {
						t.Errorf("Words(%q): %q in a CJK run", text, r)
					}
				}
			}
		}
	}
}

// TestLexiconMeetsAcrossLanguages: an English word and its Chinese term
// share a concept; unrelated words do not.
func TestLexiconMeetsAcrossLanguages(t *testing.T) {
	concepts := func(text string) map[string]bool {
		out := map[string]bool{}
		var w Words
		w.Scan(text)
		for _, tk := range w.Tokens {
			if tk.Han {
				HanConcepts(w.Runes[tk.From:tk.To], func(c int) { out[ConceptName(c)] = true })
				continue
			}
			for _, c := range WordConcepts(w.Buf[tk.StemFrom:tk.StemTo]) {
				out[ConceptName(c)] = true
			}
		}
		return out
	}
	for _, tc := range []struct{ en, zh, concept string }{
		{"the request timed out", "请求超时", "timeout"},
		{"retrying failed calls", "失败后重试", "retry"},
		{"a memory leak", "内存泄漏", "leak"},
		{"rename the column", "列重命名", "rename"},
	} {
		if !concepts(tc.en)[tc.concept] || !concepts(tc.zh)[tc.concept] {
			t.Errorf("%q / %q: want both to carry %q (%v / %v)", tc.en, tc.zh, tc.concept, concepts(tc.en), concepts(tc.zh))
		}
	}
	if concepts("center a div with flexbox")["timeout"] {
		t.Error("an unrelated text carries a concept")
	}
	if ConceptCount() < 100 {
		t.Errorf("%d concepts", ConceptCount())
	}
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"", "config.yaml", "getUserName", "修改配置文件", "⺞", "⼀", "配⼀置", "Ａ０", "don't", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		checkTokens(t, text, Tokenize(text))
		q := QueryTokens(text)
		if len(q) > MaxQueryTokens {
			t.Fatalf("%d query tokens", len(q))
		}
		var w Words
		w.Scan(text)
		for _, tk := range w.Tokens {
			if tk.Han {
				HanConcepts(w.Runes[tk.From:tk.To], func(c int) {
					if ConceptName(c) == "" {
						t.Fatalf("unknown concept %d", c)
					}
				})
			}
		}
	})
}
