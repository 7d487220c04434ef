package redact

import (
	"fmt"
	"strings"
	"testing"
)

// corpus repeats the dev set's texts (look-alikes or secret-bearing
// ones) until n bytes.
func corpus(tb testing.TB, secrets bool, n int) string {
	var b strings.Builder
	for b.Len() < n {
		for _, ex := range loadSet(tb, "testdata/dev.jsonl") {
			if (len(ex.Secrets) > 0) == secrets {
				b.WriteString(ex.Text)
				b.WriteByte('\n')
			}
		}
	}
	return b.String()[:n]
}

// prose is developer text that mentions no rule's keyword.
func prose(n int) string {
	const line = "2024-05-01T10:22:13Z INFO build finished in 12.3s; 418 tests passed, 0 failed (package ./store/sqlite)\n"
	return strings.Repeat(line, n/len(line)+1)[:n]
}

func benchRedact(b *testing.B, in string) {
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		Redact(in)
	}
}

// BenchmarkRedactClean: text without secrets, both keyword-free log lines
// and the dev set's look-alikes (keyword-dense: hashes, tokens named in
// prose, placeholders).
func BenchmarkRedactClean(b *testing.B) {
	for _, size := range []int{4 << 10, 64 << 10} {
		b.Run(fmt.Sprintf("prose-%dKB", size>>10), func(b *testing.B) { benchRedact(b, prose(size)) })
		b.Run(fmt.Sprintf("lookalikes-%dKB", size>>10), func(b *testing.B) { benchRedact(b, corpus(b, false, size)) })
	}
}

// BenchmarkRedactSecrets: the dev set's secret-bearing texts.
func BenchmarkRedactSecrets(b *testing.B) {
	for _, size := range []int{4 << 10, 64 << 10} {
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) { benchRedact(b, corpus(b, true, size)) })
	}
}

// adversarial inputs: dense keyword hits and unterminated structures.
var adversarial = map[string]string{
	"token-chain":  "token=",
	"quote-chain":  `token="`,
	"begin-key":    "-----BEGIN PRIVATE KEY-----\n",
	"url-userinfo": "http://a:b",
	"jwt-prefix":   "eyJabcdefghij.",
	"akia":         "AKIAAAAAAAAAAAAAAAAA ",
	"zh-key":       "密码：",
	"netrc":        "login x password ",
	"mysql":        "mysql -u root ",
	"b64-run":      "aGVsbG8gd29ybGQ",
}

// BenchmarkRedactAdversarial shows that time grows linearly with input
// size on inputs built to defeat the windows and the scanners (compare
// the 64KB and 1MB rates).
func BenchmarkRedactAdversarial(b *testing.B) {
	for name, unit := range adversarial {
		for _, size := range []int{64 << 10, 1 << 20} {
			in := strings.Repeat(unit, size/len(unit)+1)[:size]
			b.Run(fmt.Sprintf("%s-%dKB", name, size>>10), func(b *testing.B) { benchRedact(b, in) })
		}
	}
}
