package model

import (
	"fmt"
	"unicode/utf8"
)

// scanner is a JSON prefix parser. Started on a '{' or '[', it reports
// whether the text from there holds a complete value, a valid prefix cut
// off by the end of the text (and how to close it), or a syntax error.
type scanner struct {
	s      string // the text; its end is the end of input
	start  int
	pos    int
	stack  []frame
	budget *int

	// Set when the input ends inside a token.
	partial      partialKind
	partialStart int    // offset of the partial token
	escapeCut    int    // partial string: offset of an incomplete escape, or -1
	literal      string // partial literal: the literal it must be

	errPos   int
	errMsg   string
	sawToken bool // a complete scalar token was read: the text looked like JSON
}

type frame struct {
	obj   bool
	state scanState
	safe  int // offset just after the last complete member, or after the bracket
}

type scanState uint8

const (
	stValue        scanState = iota // a value must follow (after ':' or after ',' in an array)
	stValueOrClose                  // after '['
	stKeyOrClose                    // after '{'
	stKey                           // after ',' in an object
	stColon                         // after a key
	stCommaOrClose                  // after a member
)

type partialKind uint8

const (
	partialNone partialKind = iota
	partialKey
	partialString
	partialNumber
	partialLiteral
)

type scanResult uint8

const (
	scanComplete  scanResult = iota // a whole value ends at pos
	scanTruncated                   // the input ended inside a valid prefix
	scanInvalid                     // syntax error at errPos
	scanExhausted                   // the work budget ran out
)

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (sc *scanner) fail(pos int, format string, args ...any) scanResult {
	sc.errPos, sc.errMsg = pos, fmt.Sprintf(format, args...)
	return scanInvalid
}

// run scans from sc.start, which must hold '{' or '['.
func (sc *scanner) run() scanResult {
	s := sc.s
	i := sc.start
	sc.stack = sc.stack[:0]
	sc.partial = partialNone
	sc.escapeCut = -1
	for {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		*sc.budget--
		if *sc.budget <= 0 {
			return scanExhausted
		}
		if i >= len(s) {
			sc.pos = i
			if len(sc.stack) == 0 { // cannot happen: the first byte is a bracket
				return sc.fail(i, "no value")
			}
			return scanTruncated
		}
		c := s[i]
		if len(sc.stack) == 0 { // the opening bracket
			sc.push(c == '{', i+1)
			i++
			continue
		}
		top := &sc.stack[len(sc.stack)-1]
		switch top.state {
		case stKeyOrClose, stKey:
			switch {
			case c == '}' && top.state == stKeyOrClose:
				i++
				if sc.pop(i) {
					sc.pos = i
					return scanComplete
				}
			case c == '"':
				end, r := sc.str(i, true)
				if r != scanComplete {
					return r
				}
				i = end
				top.state = stColon
			default:
				return sc.fail(i, "expected an object key string, found %q", rune(c))
			}
		case stColon:
			if c != ':' {
				return sc.fail(i, "expected ':' after object key, found %q", rune(c))
			}
			i++
			top.state = stValue
		case stCommaOrClose:
			switch {
			case c == ',':
				i++
				if top.obj {
					top.state = stKey
				} else {
					top.state = stValue
				}
			case (c == '}' && top.obj) || (c == ']' && !top.obj):
				i++
				if sc.pop(i) {
					sc.pos = i
					return scanComplete
				}
			default:
				want := "']'"
				if top.obj {
					want = "'}'"
				}
				return sc.fail(i, "expected ',' or %s, found %q", want, rune(c))
			}
		case stValue, stValueOrClose:
			if c == ']' && top.state == stValueOrClose {
				i++
				if sc.pop(i) {
					sc.pos = i
					return scanComplete
				}
				continue
			}
			switch {
			case c == '{' || c == '[':
				top.state = stCommaOrClose
				sc.push(c == '{', i+1)
				i++
			case c == '"':
				end, r := sc.str(i, false)
				if r != scanComplete {
					return r
				}
				i = end
				top.state, top.safe = stCommaOrClose, i
			case c == '-' || (c >= '0' && c <= '9'):
				end, r := sc.number(i)
				if r != scanComplete {
					return r
				}
				i = end
				top.state, top.safe = stCommaOrClose, i
			case c == 't' || c == 'f' || c == 'n':
				end, r := sc.lit(i)
				if r != scanComplete {
					return r
				}
				i = end
				top.state, top.safe = stCommaOrClose, i
			default:
				return sc.fail(i, "expected a value, found %q", rune(c))
			}
		}
	}
}

func (sc *scanner) push(obj bool, after int) {
	st := stValueOrClose
	if obj {
		st = stKeyOrClose
	}
	sc.stack = append(sc.stack, frame{obj: obj, state: st, safe: after})
}

// pop closes the innermost container ending before end; it reports whether
// that was the outermost.
func (sc *scanner) pop(end int) bool {
	sc.stack = sc.stack[:len(sc.stack)-1]
	if len(sc.stack) == 0 {
		return true
	}
	sc.stack[len(sc.stack)-1].safe = end
	return false
}

// str scans the string starting at the quote at i.
func (sc *scanner) str(i int, key bool) (int, scanResult) {
	s := sc.s
	start := i
	i++
	for i < len(s) {
		*sc.budget--
		c := s[i]
		switch {
		case c == '"':
			sc.sawToken = true
			return i + 1, scanComplete
		case c == '\\':
			if i+1 >= len(s) {
				return sc.truncatedString(start, key, i)
			}
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for k := 2; k < 6; k++ {
					if i+k >= len(s) {
						return sc.truncatedString(start, key, i)
					}
					if !isHex(s[i+k]) {
						return i, sc.fail(i+k, "invalid \\u escape in string")
					}
				}
				i += 6
			default:
				return i, sc.fail(i+1, "invalid escape '\\%c' in string", s[i+1])
			}
		case c < 0x20:
			return i, sc.fail(i, "control character %q in string", rune(c))
		default:
			i++
		}
	}
	return sc.truncatedString(start, key, -1)
}

func (sc *scanner) truncatedString(start int, key bool, escapeCut int) (int, scanResult) {
	sc.pos = len(sc.s)
	sc.partial, sc.partialStart, sc.escapeCut = partialString, start, escapeCut
	if key {
		sc.partial = partialKey
	}
	return len(sc.s), scanTruncated
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// number scans a number starting at i and checks its grammar.
func (sc *scanner) number(i int) (int, scanResult) {
	s := sc.s
	start := i
	for i < len(s) && (s[i] == '-' || s[i] == '+' || s[i] == '.' || s[i] == 'e' || s[i] == 'E' || (s[i] >= '0' && s[i] <= '9')) {
		i++
	}
	*sc.budget -= i - start
	if i == len(s) {
		sc.pos = i
		sc.partial, sc.partialStart = partialNumber, start
		return i, scanTruncated
	}
	if !validNumber(s[start:i]) {
		return i, sc.fail(start, "invalid number %q", s[start:i])
	}
	sc.sawToken = true
	return i, scanComplete
}

// validNumber checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(n string) bool {
	i := 0
	if i < len(n) && n[i] == '-' {
		i++
	}
	digits := func() int {
		j := i
		for i < len(n) && n[i] >= '0' && n[i] <= '9' {
			i++
		}
		return i - j
	}
	if i < len(n) && n[i] == '0' {
		i++
	} else if digits() == 0 {
		return false
	}
	if i < len(n) && n[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(n) && (n[i] == 'e' || n[i] == 'E') {
		i++
		if i < len(n) && (n[i] == '+' || n[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(n)
}

// lit scans true, false or null starting at i.
func (sc *scanner) lit(i int) (int, scanResult) {
	s := sc.s
	want := "null"
	switch s[i] {
	case 't':
		want = "true"
	case 'f':
		want = "false"
	}
	for k := 0; k < len(want); k++ {
		if i+k >= len(s) {
			sc.pos = len(s)
			sc.partial, sc.partialStart, sc.literal = partialLiteral, i, want
			return len(s), scanTruncated
		}
		if s[i+k] != want[k] {
			return i, sc.fail(i+k, "invalid literal (expected %s)", want)
		}
	}
	*sc.budget -= len(want)
	sc.sawToken = true
	return i + len(want), scanComplete
}

// repair closes a truncated scan: it finishes or drops the partial token,
// drops a dangling key, colon or comma, and closes every open container.
// The result is not yet checked; the caller validates it.
func (sc *scanner) repair() string {
	s := sc.s
	top := sc.stack[len(sc.stack)-1]
	var head string
	switch sc.partial {
	case partialString: // keep what was written, drop an incomplete escape
		end := len(s)
		if sc.escapeCut >= 0 {
			end = sc.escapeCut
		}
		body := s[sc.start:end]
		// Drop a rune cut in the middle of its bytes.
		if r, size := utf8.DecodeLastRuneInString(body); r == utf8.RuneError && size <= 1 && len(body) > 0 && body[len(body)-1] >= 0x80 {
			k := len(body) - 1
			for k > 0 && len(body)-k < utf8.UTFMax && !utf8.RuneStart(body[k]) {
				k--
			}
			if !utf8.FullRuneInString(body[k:]) {
				body = body[:k]
			}
		}
		head = body + `"`
	case partialLiteral: // "tr" can only have been true
		head = s[sc.start:sc.partialStart] + sc.literal
	case partialKey, partialNumber:
		// A key without its value is dropped; so is a number that may have
		// lost digits (0.8 cut to "0." would read as 0).
		head = s[sc.start:top.safe]
	default:
		switch top.state {
		case stValue, stKey, stColon: // dangling ',' or ':' or key
			head = s[sc.start:top.safe]
		default:
			head = trimRightSpace(s[sc.start:sc.pos])
		}
	}
	b := make([]byte, 0, len(head)+len(sc.stack))
	b = append(b, head...)
	for k := len(sc.stack) - 1; k >= 0; k-- {
		if sc.stack[k].obj {
			b = append(b, '}')
		} else {
			b = append(b, ']')
		}
	}
	return string(b)
}

func trimRightSpace(s string) string {
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}
