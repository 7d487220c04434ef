package redact

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// cleanFragment draws a piece of text that holds no secret: prose that
// names secrets, hashes, ids, paths, URLs without credentials, numbers,
// code identifiers, Chinese prose, placeholders.
func cleanFragment() *rapid.Generator[string] {
	words := []string{"the", "token", "tokens", "password", "secret", "key", "keys", "auth", "session", "credentials",
		"expired", "rotate", "failed", "retry", "deploy", "build", "test", "error", "warning", "config", "value",
		"Passwords", "TOKEN", "apiKey", "max_tokens", "token_count", "secret_name", "password_min_length",
		"sessions", "monkey", "keyboard", "passthrough", "bypass", "compass", "pathname", "pattern", "sid"}
	zh := []string{"请输入密码后重试", "令牌已过期，请重新登录", "密钥请在控制台创建", "配置文件有误", "构建失败", "测试通过"}
	hex := rapid.StringOfN(rapid.RuneFrom([]rune("0123456789abcdef")), 7, 64, -1)
	return rapid.OneOf(
		rapid.SampledFrom(words),
		rapid.SampledFrom(zh),
		hex,
		rapid.Custom(func(t *rapid.T) string { // UUID
			h := rapid.StringOfN(rapid.RuneFrom([]rune("0123456789abcdef")), 32, 32, -1).Draw(t, "uuid")
			return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
		}),
		rapid.Custom(func(t *rapid.T) string {
			return fmt.Sprint(rapid.IntRange(-1_000_000, 1_000_000).Draw(t, "n"))
		}),
		rapid.SampledFrom([]string{"/usr/local/bin/go", "./cmd/kaizen/main.go:42", "C:\\Users\\dev\\token.txt",
			"https://example.com/docs/auth?lang=en", "git@github.com:acme/api.git", "ssh://git@host:22/r.git",
			"dev@example.com", "12:30:45", "2024-05-01T10:22:13Z", "sha256:", "v1.4.2", "0xc000123456",
			"password: ${DB_PASSWORD}", "token=<your-token>", "api_key = os.Getenv(\"API_KEY\")",
			"Authorization: Bearer $TOKEN", "secret: ********", "password: required", "--password-stdin",
			"max_tokens: 4096", "PWD=/home/dev", "session_id=3f2a9c1d-4b7e-4f0a-9c5d-8e1f2a3b4c5d"}),
		rapid.Custom(func(t *rapid.T) string { // snake_case identifier
			parts := rapid.SliceOfN(rapid.StringOfN(rapid.RuneFrom([]rune("abcdefghijklmnopqrstuvwxyz")), 2, 8, -1), 1, 4).Draw(t, "parts")
			return strings.Join(parts, "_")
		}),
	)
}

// Text made only of non-secret fragments comes back unchanged.
func TestCleanTextUnchanged(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		frags := rapid.SliceOfN(cleanFragment(), 1, 40).Draw(t, "frags")
		seps := rapid.SliceOfN(rapid.SampledFrom([]string{" ", "\n", ". ", "\t", " | "}), len(frags), len(frags)).Draw(t, "seps")
		var b strings.Builder
		for i, f := range frags {
			b.WriteString(f)
			b.WriteString(seps[i])
		}
		in := b.String()
		if out, rep := Redact(in); out != in {
			t.Fatalf("clean text changed (%+v):\n in %q\nout %q", rep.Findings, in, out)
		}
	})
}

// A secret put anywhere between clean fragments disappears, and every
// byte of the clean text around it stays.
func TestSecretInCleanTextIsRemoved(t *testing.T) {
	t.Parallel()
	samples := ruleSamples()
	names := Rules()
	rapid.Check(t, func(t *rapid.T) {
		before := rapid.SliceOfN(cleanFragment(), 0, 10).Draw(t, "before")
		after := rapid.SliceOfN(cleanFragment(), 0, 10).Draw(t, "after")
		sm := samples[rapid.SampledFrom(names).Draw(t, "rule")]
		pre, post := strings.Join(before, " ")+"\n", "\n"+strings.Join(after, " ")
		in := pre + sm[0] + post
		out, rep := Redact(in)
		if strings.Contains(out, sm[1]) {
			t.Fatalf("secret survived:\n in %q\nout %q", in, out)
		}
		if !strings.HasPrefix(out, pre) || !strings.HasSuffix(out, post) {
			t.Fatalf("clean text around the secret changed:\n in %q\nout %q", in, out)
		}
		checkReport(t, in, out, rep)
	})
}
