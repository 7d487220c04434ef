package redact

import (
	"encoding/base64"
	"math"
	"strings"
	"unicode/utf8"
)

// entropy returns the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	if len(s) == 0 {
		return 0
	}
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	n := float64(len(s))
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// charClasses counts which of lower case, upper case, digits and other
// printable ASCII occur in s.
func charClasses(s string) (lowerC, upperC, digitC, otherC bool) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z':
			lowerC = true
		case 'A' <= c && c <= 'Z':
			upperC = true
		case '0' <= c && c <= '9':
			digitC = true
		default:
			otherC = true
		}
	}
	return
}

func nClasses(s string) int {
	l, u, d, o := charClasses(s)
	n := 0
	for _, b := range []bool{l, u, d, o} {
		if b {
			n++
		}
	}
	return n
}

// distinct counts the distinct bytes of s, stopping at limit.
func distinct(s string, limit int) int {
	var seen [256]bool
	n := 0
	for i := 0; i < len(s) && n < limit; i++ {
		if !seen[s[i]] {
			seen[s[i]] = true
			n++
		}
	}
	return n
}

// randomLooking reports whether a provider-prefixed token body looks
// generated rather than a placeholder such as "xxxxxxxx" or "0000…".
func randomLooking(s string) bool {
	return !isMaskLike(s) && distinct(s, 6) >= 6
}

// mixedToken reports whether s looks like a generated token: at least
// two character classes and enough entropy for its length.
func mixedToken(s string) bool {
	if !randomLooking(s) || nClasses(s) < 2 {
		return false
	}
	return entropy(s) >= minEntropy(len(s))
}

// minEntropy is the Shannon entropy a generated value of length n is
// expected to exceed (bits per byte); short values cannot reach high.
func minEntropy(n int) float64 {
	switch {
	case n < 12:
		return 2.5
	case n < 20:
		return 3.0
	default:
		return 3.3
	}
}

// isMaskLike reports placeholder runs: xxxx, XXXX, ****, ...., ••••,
// 0000 or a value of at most two distinct bytes.
func isMaskLike(s string) bool {
	if distinct(s, 3) <= 2 {
		return true
	}
	for _, run := range []string{"xxxx", "XXXX", "****", "....", "••", "0000000", "____", "----", "…"} {
		if strings.Contains(s, run) {
			return true
		}
	}
	return false
}

// placeholderWords are values that stand for a secret without being
// one (compared lower case, quotes removed).
var placeholderWords = map[string]bool{
	"null": true, "none": true, "nil": true, "undefined": true, "true": true, "false": true,
	"yes": true, "no": true, "on": true, "off": true, "string": true, "str": true, "bool": true,
	"int": true, "number": true, "object": true, "any": true, "bytes": true, "text": true,
	"required": true, "optional": true, "empty": true, "blank": true, "default": true, "value": true,
	"secret": true, "password": true, "passwd": true, "pass": true, "token": true, "key": true,
	"apikey": true, "api_key": true, "api-key": true, "auth": true, "credentials": true,
	"changeme": true, "change_me": true, "change-me": true, "changeit": true, "placeholder": true,
	"example": true, "sample": true, "dummy": true, "redacted": true, "hidden": true, "masked": true,
	"unset": true, "n/a": true, "na": true, "tbd": true, "todo": true, "fixme": true,
	"bearer": true, "basic": true, "digest": true, "oauth": true, "oauth2": true, "jwt": true,
	"secretref": true, "valuefrom": true, "mysecret": true, "mypassword": true, "yourpassword": true,
	"yoursecret": true, "yourtoken": true, "notasecret": true, "not-a-secret": true, "insecure": true,
	"prompt": true, "stdin": true, "env": true, "environment": true, "vault": true, "file": true,
	"inherit": true, "keychain": true, "keyring": true, "system": true, "anonymous": true, "guest": true,
	"public": true, "private": true, "new": true, "old": true, "current": true, "must": true,
	"struct": true, "interface": true, "func": true, "function": true, "class": true, "map": true,
	"chan": true, "const": true, "var": true, "let": true, "type": true, "enum": true, "lambda": true,
	"self": true, "this": true, "import": true, "return": true, "unused": true, "ignored": true,
	"notused": true, "nopass": true, "nopassword": true,
}

// isPlaceholder reports whether v is a stand-in rather than a secret: a
// variable or template reference, an angle-bracket or mask placeholder,
// a marker this package wrote, or a word from placeholderWords.
func isPlaceholder(v string) bool {
	if v == "" {
		return true
	}
	return placeholderWords[strings.ToLower(v)] || isTemplate(v)
}

// isTemplate reports values that are placeholders by their syntax: a
// variable or template reference, an angle-bracket placeholder, a mask,
// a marker this package wrote, or "changeme"/"your-…"-style filler.
func isTemplate(v string) bool {
	if v == "" {
		return true
	}
	if strings.HasPrefix(v, MarkerPrefix) || strings.HasPrefix(v, "[REDACTED") {
		return true
	}
	switch v[0] {
	case '<', '{', '[', '?':
		// <your-key> {{ x }} [list] ?
		return true
	case '$', '%', '@':
		// $VAR ${VAR} $(cmd) %s %-10v %(name)s %APPDATA% @file; a value
		// that only starts with one of them ("%!nC18…", "$ecr3t!") is not
		// a reference.
		if sigilReference(v) {
			return true
		}
	}
	lv := strings.ToLower(v)
	for _, sub := range []string{"${", "{{", "}}", "$(", "%s", "%(", "%v", "%q", "changeme", "change_me", "change-me",
		"placeholder", "redacted", "replace_me", "replace-me", "replaceme", "insert_", "insert-", "your_", "your-",
		"_here", "-here", "<", ">", "example.com", `\x1b`, `\033`, `\e[`, "\x1b"} {
		if strings.Contains(lv, sub) {
			return true
		}
	}
	if strings.HasPrefix(lv, "your") || strings.HasPrefix(lv, "my_") || strings.HasPrefix(lv, "my-") || strings.HasPrefix(lv, "urn:") {
		return true
	}
	return isMaskLike(v)
}

// sigilReference reports whether v, starting with $, % or @, is a
// reference rather than a secret that starts with that byte: $VAR,
// ${…}, $(…), a printf verb, %(name)s, %{…}, %VAR%, @file.
func sigilReference(v string) bool {
	rest := v[1:]
	switch {
	case rest == "":
		return true
	case v[0] == '$':
		return rest[0] == '{' || rest[0] == '(' || isIdent(rest) || rest[0] == '$'
	case v[0] == '@':
		return isPathish(rest)
	case rest[0] == '(' || rest[0] == '{':
		return true
	case strings.HasSuffix(rest, "%") && isIdent(rest[:len(rest)-1]):
		return true // %APPDATA%
	}
	// A printf verb: flags, width and precision, then one letter.
	i := 0
	for i < len(rest) && strings.IndexByte("-+# 0123456789.*", rest[i]) >= 0 {
		i++
	}
	return i+1 == len(rest) && isLetter(rest[i])
}

// isPathish reports whether s is made of path characters only.
func isPathish(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isLetter(c) || '0' <= c && c <= '9' || strings.IndexByte("._-/~", c) >= 0) {
			return false
		}
	}
	return s != ""
}

// isReference reports whether an unquoted value is code that reads a
// secret from somewhere (os.Getenv, process.env.X, cfg.Password,
// get_token(), a variable named like a secret) rather than the secret.
// next is the byte after the value (0 at the end of text).
func isReference(v string, next byte, codeLike bool) bool {
	if next == '(' || next == '[' || next == '.' {
		return true // a call, an index or a selector continues
	}
	if (v[0] == '*' || v[0] == '&') && (isIdent(v[1:]) || isDottedIdent(v[1:])) {
		return true // *cfgSecret, &opts.Token
	}
	if codeLike && isIdent(v) {
		// x = someIdentifier in code (spaces around "="): a variable when
		// it names a secret, even with digits (Fts5Token = TFts5Token).
		lv := strings.ToLower(v)
		for _, stem := range []string{"pass", "pwd", "secret", "token", "key", "auth", "cred", "session"} {
			if strings.Contains(lv, stem) {
				return true
			}
		}
	}
	lv := strings.ToLower(v)
	for _, sub := range []string{"getenv", "environ", "process.env", "env.", "env::", "secrets.", "vault:", "ssm:",
		"secretsmanager", "keyvault", "valuefrom"} {
		if strings.Contains(lv, sub) {
			return true
		}
	}
	if isDottedIdent(v) {
		return true
	}
	// A bare identifier without digits that names a secret is a
	// variable: password=dbPassword, token: authToken.
	if isIdent(v) && !strings.ContainsAny(v, "0123456789") {
		for _, stem := range []string{"pass", "pwd", "secret", "token", "key", "auth", "cred", "session"} {
			if strings.Contains(lv, stem) {
				return true
			}
		}
	}
	return false
}

func isIdentByte(c byte, first bool) bool {
	return c == '_' || c == '$' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || !first && '0' <= c && c <= '9'
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdentByte(s[i], i == 0) {
			return false
		}
	}
	return true
}

// isDottedIdent reports a.b or a.b.c made of identifiers, the first
// starting with a letter: cfg.Password, settings.SECRET_KEY.
func isDottedIdent(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if !isIdent(p) {
			return false
		}
	}
	return true
}

// isPathLike reports file system paths and URLs.
func isPathLike(v string) bool {
	return strings.HasPrefix(v, "/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") ||
		strings.HasPrefix(v, "~/") || strings.Contains(v, "://") || strings.Contains(v, `:\`) ||
		strings.HasPrefix(v, "file:")
}

// isEnumWord reports identifier-like values made of words and numbers
// joined by _ - or .: client_secret_basic, scram-sha-256, read-only,
// STANDARD_RIGHTS_EXECUTE. A part mixing letters and digits (a8f5f1)
// makes it a token instead.
func isEnumWord(v string) bool {
	if v == "" {
		return false
	}
	seps, words := 0, 0
	letters, digitsN := false, false // within the current part
	for i := 0; i <= len(v); i++ {
		if i == len(v) || v[i] == '_' || v[i] == '-' || v[i] == '.' {
			if letters && digitsN {
				return false
			}
			if letters {
				words++
			}
			letters, digitsN = false, false
			if i < len(v) {
				seps++
			}
			continue
		}
		switch c := v[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			letters = true
		case '0' <= c && c <= '9':
			digitsN = true
		default:
			return false
		}
	}
	return seps > 0 && words > 0
}

// isNumberLiteral reports decimal or hex integer literals (-0x3f8, 1024).
func isNumberLiteral(v string) bool {
	v = strings.TrimPrefix(v, "-")
	if len(v) > 2 && (v[:2] == "0x" || v[:2] == "0X") {
		for i := 2; i < len(v); i++ {
			c := v[i]
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
		return true
	}
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// isHumanWord reports a value that reads as a word of prose: letters
// only, lower case or capitalised (must, Enter, required).
func isHumanWord(v string) bool {
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if 'a' <= c && c <= 'z' {
			continue
		}
		if i == 0 && 'A' <= c && c <= 'Z' {
			continue
		}
		return false
	}
	return true
}

// basicCredential reports whether v is base64 of printable "user:pass".
func basicCredential(v string) bool {
	raw, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		raw, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(v, "="))
		if err != nil {
			return false
		}
	}
	i := strings.IndexByte(string(raw), ':')
	if i < 0 || !utf8.Valid(raw) {
		return false
	}
	for _, r := range string(raw) {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return len(raw)-i-1 >= 1
}

// isUUID reports the canonical 8-4-4-4-12 hex form.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}
