package redact

import "strings"

// keyByte marks the bytes of an assignment's key: letters, digits and
// _ . - (so --password, spring.datasource.password and X-Api-Key are
// whole keys).
var keyByte = newByteSet("A-Za-z0-9_.-")

// bareStop ends an unquoted value, and so does any non-ASCII byte (a
// Chinese comma right after a password is not part of it).
var bareStop = newByteSet(" \t\r\n\v\f\"'`,;&<>(){}[]|\\")

// maxValue bounds the bytes examined for one value.
const maxValue = 4096

// scanAssignments finds secrets assigned to secret-named keys, starting
// from the keyword hits of the generic rule: the key around each hit,
// then an assignment (key=value, key: value, key := value, key => value,
// with the key or value quoted or not), a flag (--key value) or an XML
// element (<key>value</key>). It is a hand-written scanner rather than
// a regular expression because it runs on every text that mentions a
// key, token or password: each key and value is read once, so the cost
// is linear in the text.
func scanAssignments(text string, hits []int32, emit func(int, int, string)) {
	done := -1
	var bare runCache
	for _, h := range hits {
		p := int(h)
		if p <= done || p == 0 {
			continue
		}
		k0 := p - 1
		for k0 > 0 && keyByte[text[k0-1]] {
			k0--
		}
		k1 := p
		for k1 < len(text) && keyByte[text[k1]] {
			k1++
		}
		done = k1
		if k1-k0 > 128 {
			continue
		}
		if c, v0, v1 := assignmentAt(text, k0, k1, &bare); c != kNone {
			emit(v0, v1, className[c])
			done = max(done, v1) // keys inside a redacted value need no look
		}
	}
}

// runCache remembers the last bare run measured, so that values starting
// inside it (token=a token=b… glued together) are not measured again.
type runCache struct{ start, end int }

func (c *runCache) bareEnd(text string, i int) int {
	if i >= c.start && i < c.end {
		return c.end
	}
	j := i
	for j < len(text) && j-i < maxValue && !bareStop[text[j]] && text[j] < 0x80 {
		j++
	}
	c.start, c.end = i, j
	return j
}

// assignmentAt reads what follows the key text[k0:k1] and returns the
// class and span of a secret value, or kNone.
func assignmentAt(text string, k0, k1 int, bare *runCache) (keyClass, int, int) {
	n := len(text)
	// XML element: <password>value</password>.
	if k0 > 0 && text[k0-1] == '<' && k1 < n && text[k1] == '>' {
		v0 := k1 + 1
		v1 := v0
		for v1 < n && v1-v0 < maxValue && text[v1] != '<' && text[v1] != '\n' && text[v1] != '\r' {
			v1++
		}
		if v1 > v0 && strings.HasPrefix(text[v1:], "</") {
			if c, end := judge(text, k0, k1, k1, k1, v0, v1, false, true, kNone); c != kNone {
				return c, v0, end
			}
		}
		return kNone, 0, 0
	}
	i := k1
	if i < n && (text[i] == '"' || text[i] == '\'' || text[i] == '`') {
		i++ // the key's closing quote
	}
	ws := i
	for i < n && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	spaced := i > ws
	s0 := i
	switch {
	case strings.HasPrefix(text[i:], ":="), strings.HasPrefix(text[i:], "=>"):
		i += 2
	case strings.HasPrefix(text[i:], "=="), strings.HasPrefix(text[i:], "::"), strings.HasPrefix(text[i:], "://"):
		return kNone, 0, 0
	case i < n && (text[i] == '=' || text[i] == ':'):
		i++
	default:
		// A flag with its value after white space: --password hunter2.
		if text[k0] == '-' && spaced && k1 == ws && i < n && text[i] != '-' {
			if v0, v1, quoted, ok := valueAt(text, i, bare); ok {
				if c, end := judge(text, k0, k1, k1, k1, v0, v1, quoted, true, kNone); c != kNone {
					return c, v0, end
				}
			}
		}
		return kNone, 0, 0
	}
	s1 := i
	for i < n && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	if v0, v1, quoted, ok := valueAt(text, i, bare); ok {
		if c, end := judge(text, k0, k1, s0, s1, v0, v1, quoted, false, kNone); c != kNone {
			return c, v0, end
		}
	}
	return kNone, 0, 0
}

// valueAt reads a value starting at i: a double-quoted string (with
// backslash escapes), a single- or back-quoted one, each on one line, or
// a bare word. It returns the span inside the quotes.
func valueAt(text string, i int, bare *runCache) (v0, v1 int, quoted, ok bool) {
	n := len(text)
	if i >= n {
		return 0, 0, false, false
	}
	switch q := text[i]; q {
	case '"', '\'', '`':
		j := i + 1
		for j < n && j-i < maxValue {
			c := text[j]
			if c == '\n' || c == '\r' {
				return 0, 0, false, false
			}
			if c == '\\' && q == '"' && j+1 < n && text[j+1] != '\n' {
				j += 2
				continue
			}
			if c == q {
				if j == i+1 {
					return 0, 0, false, false
				}
				return i + 1, j, true, true
			}
			j++
		}
		return 0, 0, false, false
	}
	j := bare.bareEnd(text, i)
	if j == i {
		return 0, 0, false, false
	}
	return i, j, false, true
}
