package redact

// The redaction pass experience.RedactSecrets ran before it delegated to
// this package, kept verbatim (renamed) as the baseline the data sets and
// benchmarks compare against. It is test code: nothing ships it.

import (
	"regexp"
	"strings"
	"unicode"
)

// Patterns of likely secrets. Each match is checked by its filter before
// it is replaced.
var legacyPatterns = []struct {
	re *regexp.Regexp
	// keep is the number of leading submatches kept (a key and its
	// separator); the rest of the match is replaced.
	keep   int
	filter func(token string) bool
}{
	{re: regexp.MustCompile(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|[\s\S]*$)`)},
	{re: regexp.MustCompile(`\bsk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{20,}`), filter: legacyMixed},
	{re: regexp.MustCompile(`\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}\b`)},
	{re: regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{30,}`)},
	{re: regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`)},
	{re: regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`)},
	{re: regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`)},
	{re: regexp.MustCompile(`(?i)(\bbearer\s+)([A-Za-z0-9._~+/=-]{16,})`), keep: 1, filter: legacyMixed},
	{re: regexp.MustCompile(`(?i)(\b(?:password|passwd|pwd|secret|client[_-]?secret|api[_-]?key|apikey|access[_-]?token|auth[_-]?token|private[_-]?key)["']?\s*[:=]\s*)("[^"\n]*"|'[^'\n]*'|[^\s,;"'}\]]+)`),
		keep: 1, filter: legacySecretValue},
}

const legacyRedacted = "[REDACTED]"

// legacyMixed reports whether a token has both letters and digits (keys
// do; kebab-case words and prose do not).
func legacyMixed(tok string) bool {
	letter, digit := false, false
	for _, r := range tok {
		letter = letter || unicode.IsLetter(r)
		digit = digit || unicode.IsDigit(r)
	}
	return letter && digit
}

// legacySecretValue reports whether an assigned value looks like a real
// secret rather than a placeholder or a reference to one.
func legacySecretValue(v string) bool {
	v = strings.Trim(v, `"'`)
	lower := strings.ToLower(v)
	switch {
	case len(v) < 4, v == legacyRedacted, strings.Trim(v, "*xX.•-_") == "":
		return false
	case strings.ContainsAny(v[:1], "$<{%"), strings.Contains(lower, "redacted"):
		return false
	case strings.HasPrefix(lower, "os.") || strings.HasPrefix(lower, "process.env") ||
		strings.Contains(lower, "getenv") || strings.Contains(lower, "environ"):
		return false
	}
	switch lower {
	case "null", "none", "nil", "true", "false", "string", "str", "required", "optional", "your-password",
		"changeme", "example", "placeholder", "password", "secret":
		return false
	}
	return true
}

// legacyRedact replaces likely secrets in text with "[REDACTED]" and
// returns the text and the number of replacements: OpenAI and Anthropic
// style keys (sk-…), GitHub tokens (ghp_, gho_, ghu_, ghs_, ghr_,
// github_pat_), AWS access key ids (AKIA…, ASIA…), Slack tokens (xox…),
// Google API keys (AIza…), bearer tokens, assignments such as
// password=… or api_key: … (placeholders like $VAR, <key>, *** and
// environment lookups are left alone), and PEM private key blocks. It runs
// before skills and bundles are written.
func legacyRedact(text string) (string, int) {
	count := 0
	for _, p := range legacyPatterns {
		text = p.re.ReplaceAllStringFunc(text, func(match string) string {
			prefix, token := "", match
			if p.keep > 0 {
				sub := p.re.FindStringSubmatch(match)
				if len(sub) > p.keep {
					prefix = strings.Join(sub[1:p.keep+1], "")
					token = match[len(prefix):]
				}
			}
			if p.filter != nil && !p.filter(token) {
				return match
			}
			count++
			return prefix + legacyRedacted
		})
	}
	return text, count
}
