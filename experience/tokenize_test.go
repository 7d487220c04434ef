package experience_test

import (
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/kaizenhq/kaizen/experience"
)

func TestTokenize(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		text string
		want []string
	}{
		{"empty", "", []string{}},
		{"punctuation only", " ... --- !!! ", []string{}},
		{"file name splits on the dot", "Edit config.yaml, not config.yml",
			[]string{"edit", "config", "yaml", "not", "config", "yml"}},
		{"stop words and one-letter words go", "It is a test of the parser",
			[]string{"test", "parser"}},
		{"numbers are kept", "HTTP 404 on port 8080", []string{"http", "404", "port", "8080"}},
		{"camelCase yields the word and its parts", "call getUserName()",
			[]string{"call", "getusername", "get", "user", "name"}},
		{"snake_case splits", "MAX_RETRY_COUNT", []string{"max", "retry", "count"}},
		{"apostrophe joins", "don't touch dist", []string{"dont", "touch", "dist"}},
		{"path", "src/lib/parse_test.go", []string{"src", "lib", "parse", "test", "go"}},
		{"full width folds", "ｃｏｎｆｉｇ．ｙａｍｌ", []string{"config", "yaml"}},
		{"CJK bigrams", "修改配置文件", []string{"修改", "改配", "配置", "置文", "文件"}},
		{"single CJK char is a unigram", "用 pnpm 装", []string{"用", "pnpm", "装"}},
		{"single stop char is dropped", "的 pnpm", []string{"pnpm"}},
		{"CJK stop bigrams are dropped", "我们这个项目", []string{"们这", "个项", "项目"}},
		{"mixed scripts split runs", "不能用root用户", []string{"不能", "能用", "root", "用户"}},
		{"accents are kept, case folded", "Déjà Vu", []string{"déjà", "vu"}},
		{"long word is cut", strings.Repeat("ab", 40), []string{strings.Repeat("ab", 16)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := experience.Tokenize(c.text)
			if got == nil {
				got = []string{}
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("Tokenize(%q) (-want +got):\n%s", c.text, diff)
			}
		})
	}
}

func TestTokenizeBoundsTheDocument(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("alpha beta ", experience.MaxDocumentTokens) // twice the limit
	got := experience.Tokenize(text)
	if len(got) != experience.MaxDocumentTokens {
		t.Fatalf("len = %d, want %d", len(got), experience.MaxDocumentTokens)
	}
	cjk := strings.Repeat("配置", experience.MaxDocumentTokens)
	if n := len(experience.Tokenize(cjk)); n != experience.MaxDocumentTokens {
		t.Fatalf("CJK: len = %d, want %d", n, experience.MaxDocumentTokens)
	}
	if n := len(experience.Tokenize(strings.Repeat("a", 1<<20))); n != 1 {
		t.Fatalf("one huge word: %d tokens, want 1", n)
	}
}

func TestSearchTextKeepsDuplicates(t *testing.T) {
	t.Parallel()
	if got, want := experience.SearchText("Retry, retry and RETRY the build"), "retry retry retry build"; got != want {
		t.Fatalf("SearchText = %q, want %q", got, want)
	}
	if got := experience.SearchText("the of a"); got != "" {
		t.Fatalf("SearchText of stop words = %q, want empty", got)
	}
}

func TestQueryTokensAreDistinct(t *testing.T) {
	t.Parallel()
	got := experience.QueryTokens("retry the retry; 配置 配置文件")
	want := []string{"retry", "配置", "置文", "文件"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("QueryTokens (-want +got):\n%s", diff)
	}
	var b strings.Builder
	for i := range 200 { // 200 distinct words: word0 … word199
		b.WriteString("word")
		b.WriteString(strconv.Itoa(i))
		b.WriteByte(' ')
	}
	if n := len(experience.QueryTokens(b.String())); n != experience.MaxQueryTokens {
		t.Fatalf("QueryTokens kept %d, want %d", n, experience.MaxQueryTokens)
	}
}

func checkTokens(t *testing.T, text string, tokens []string) {
	t.Helper()
	if len(tokens) > experience.MaxDocumentTokens {
		t.Fatalf("%d tokens > %d", len(tokens), experience.MaxDocumentTokens)
	}
	for _, tok := range tokens {
		if tok == "" {
			t.Fatalf("empty token from %q", text)
		}
		if !utf8.ValidString(tok) {
			t.Fatalf("invalid UTF-8 token %q from %q", tok, text)
		}
		if strings.ToLower(tok) != tok {
			t.Fatalf("token %q from %q is not lower-case", tok, text)
		}
		if utf8.RuneCountInString(tok) > experience.MaxTokenRunes {
			t.Fatalf("token %q longer than %d runes", tok, experience.MaxTokenRunes)
		}
		for _, r := range tok {
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				t.Fatalf("token %q from %q has %q, not a letter or digit", tok, text, r)
			}
		}
	}
	if st := experience.SearchText(text); st != strings.Join(tokens, " ") {
		t.Fatalf("SearchText differs from the joined tokens")
	}
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"", "config.yaml", "getUserName", "修改配置文件", "Ａ０", "don't",
		"\xff\xfe", "İstanbul ǅemal", "a\u0301b", strings.Repeat("配", 100), "x'", "'y", "ΣΑΣ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		checkTokens(t, text, experience.Tokenize(text))
	})
}
