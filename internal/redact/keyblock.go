package redact

import (
	"strings"
)

// findPrivateKeys reports PEM, OpenSSH and PGP private key blocks
// ("-----BEGIN … PRIVATE KEY[ BLOCK]-----"), with real or JSON-escaped
// (\n) line breaks, or flattened onto one line. A block runs to its END
// line; a truncated one runs as far as its body looks like base64. A
// BEGIN line followed by no body (a mention in prose) is left alone.
// Public keys and certificates are not secrets and are not reported.
func findPrivateKeys(text string, lo, hi int, emit func(start, end int, name string)) {
	const begin = "-----BEGIN "
	pos := lo
	for {
		i := strings.Index(text[pos:hi], begin)
		if i < 0 {
			return
		}
		start := pos + i
		hdr := start + len(begin)
		j := hdr
		for j < hi && j-hdr < 64 && (text[j] == ' ' || 'A' <= text[j] && text[j] <= 'Z' || '0' <= text[j] && text[j] <= '9') {
			j++
		}
		label := text[hdr:j]
		if !strings.HasPrefix(text[j:hi], "-----") || !strings.Contains(label, "PRIVATE KEY") {
			pos = hdr
			continue
		}
		bodyStart := j + 5
		end, ok := scanKeyBody(text[:hi], bodyStart)
		if !ok {
			end, ok = completeBlock(text[:hi], bodyStart, label)
		}
		if !ok {
			pos = bodyStart
			continue
		}
		emit(start, end, "")
		pos = end
	}
}

// scanKeyBody walks a key body from i: tokens separated by white space
// or escaped line breaks, each base64 (or a "Header: value" line, or a
// PGP "=abcd" checksum). It stops at the END line (included) or at the
// first token that is not body. ok is false when it found no body.
func scanKeyBody(text string, i int) (end int, ok bool) {
	const endMark = "-----END "
	end = i
	for i < len(text) {
		// Skip separators: white space and \n, \r, \t escapes.
		if c := text[i]; c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			i++
			continue
		}
		if text[i] == '\\' && i+1 < len(text) && strings.IndexByte("nrt", text[i+1]) >= 0 {
			i += 2
			continue
		}
		if strings.HasPrefix(text[i:], endMark) {
			k := i + len(endMark)
			for k < len(text) && k-i < 80 && (text[k] == ' ' || 'A' <= text[k] && text[k] <= 'Z' || '0' <= text[k] && text[k] <= '9') {
				k++
			}
			if !strings.HasPrefix(text[k:], "-----") {
				return end, ok
			}
			return k + 5, ok
		}
		// One token.
		j := i
		for j < len(text) && b64Chars[text[j]] {
			j++
		}
		tok := text[i:j]
		switch {
		case j < len(text) && text[j] == ':' && j > i && isHeaderName(tok):
			// "Proc-Type: 4,ENCRYPTED", "Version: GnuPG v2": to line end.
			for j < len(text) && text[j] != '\n' && !(text[j] == '\\' && j+1 < len(text) && text[j+1] == 'n') {
				j++
			}
		case len(tok) >= 16 || len(tok) >= 2 && tok[0] == '=' || len(tok) > 0 && nextIsEnd(text, j):
		default:
			return end, ok
		}
		i, end, ok = j, j, true
	}
	return end, ok
}

// completeBlock accepts a block whose body is too short for scanKeyBody
// (a key cut for an example, a test fixture) when the END line of the
// same label closes it and the body between is lines of base64 (line
// breaks, real or escaped, separate them; prose, with its spaces, is not
// a body). It returns the end of the END line.
func completeBlock(text string, i int, label string) (int, bool) {
	endLine := "-----END " + label + "-----"
	k := strings.Index(text[i:min(len(text), i+8192)], endLine)
	if k < 0 {
		return 0, false
	}
	body := text[i : i+k]
	tokens := 0
	for _, line := range strings.FieldsFunc(strings.NewReplacer(`\r`, "\n", `\n`, "\n").Replace(body), func(r rune) bool { return r == '\n' || r == '\r' }) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		for j := 0; j < len(line); j++ {
			if !b64Chars[line[j]] {
				return 0, false
			}
		}
		tokens++
	}
	if tokens == 0 {
		return 0, false
	}
	return i + k + len(endLine), true
}

// isHeaderName reports the RFC 1421 / OpenPGP armour header names.
func isHeaderName(s string) bool {
	switch s {
	case "Proc-Type", "DEK-Info", "Comment", "Version", "Hash", "Charset", "MessageID":
		return true
	}
	return false
}

// nextIsEnd reports whether the next non-separator text after i is an
// END line (so a short last body line still counts).
func nextIsEnd(text string, i int) bool {
	for i < len(text) {
		switch {
		case text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n':
			i++
		case text[i] == '\\' && i+1 < len(text) && strings.IndexByte("nrt", text[i+1]) >= 0:
			i += 2
		default:
			return strings.HasPrefix(text[i:], "-----END ")
		}
	}
	return false
}

// findAWSSecretNearID reports bare 40-character AWS secret access keys
// within 256 bytes of an access key id (a CSV row, "id / secret" in a
// chat message). Hex strings (git SHAs) are not keys.
func findAWSSecretNearID(idRule *rule) func(string, int, int, func(int, int, string)) {
	const window = 256
	return func(text string, wlo, whi int, emit func(int, int, string)) {
		scanned := 0
		for _, m := range idRule.re.FindAllStringIndex(text[wlo:whi], -1) {
			m[0], m[1] = m[0]+wlo, m[1]+wlo
			if !idRule.tokenChars.bounded(text, m[0], m[1]) {
				continue
			}
			lo, hi := max(scanned, m[0]-window), min(len(text), m[1]+window)
			// Start at a token boundary.
			for lo > 0 && lo < len(text) && b64Chars[text[lo-1]] && lo > m[0]-window-64 {
				lo--
			}
			i := lo
			for i < hi {
				if !b64Chars[text[i]] {
					i++
					continue
				}
				j := i
				for j < len(text) && b64Chars[text[j]] {
					j++
				}
				if j-i == 40 && awsSecretLike(text[i:j]) {
					emit(i, j, "")
				}
				i = j
			}
			scanned = max(scanned, i)
		}
	}
}

// awsSecretLike: 40 base64 characters with upper and lower case letters
// and a digit or / or +, high entropy, no padding.
func awsSecretLike(s string) bool {
	if strings.Contains(s, "=") {
		return false
	}
	l, u, d, o := charClasses(s)
	return l && u && (d || o) && entropy(s) >= 4.0 && randomLooking(s)
}
