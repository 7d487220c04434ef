package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// jsonNode is a JSON value that remembers what encoding/json forgets: the
// order of object members and the exact text of every number and string.
// Setup edits client configuration files through it, so a file comes back
// with only the kaizen entries changed: unknown keys, their order, numbers
// too large for a float64 and escapes such as "\u00e9" are kept.
type jsonNode struct {
	kind byte // '{' object, '[' array, '"' string, '0' number, 't' true, 'f' false, 'n' null
	raw  string
	// object members, in file order
	keys []string
	vals []*jsonNode
	// array elements
	elems []*jsonNode
}

// jsonSyntaxError reports where a document stops being JSON.
type jsonSyntaxError struct {
	Line, Col int
	Msg       string
}

func (e *jsonSyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Col, e.Msg)
}

type jsonParser struct {
	data  []byte
	pos   int
	depth int
}

const maxJSONDepth = 1000

// parseJSON parses one JSON document. Comments (JSONC) are rejected with a
// message that says so: rewriting such a file would drop them.
func parseJSON(data []byte) (*jsonNode, error) {
	p := &jsonParser{data: data}
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		p.pos = 3
	}
	p.space()
	if p.pos == len(p.data) {
		return nil, p.fail("the file is empty (expected a JSON object)")
	}
	n, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.data) {
		return nil, p.fail("unexpected text after the JSON value")
	}
	return n, nil
}

func (p *jsonParser) fail(format string, args ...any) error {
	line, col := 1, 1
	for _, c := range p.data[:min(p.pos, len(p.data))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return &jsonSyntaxError{Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

func (p *jsonParser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonParser) value() (*jsonNode, error) {
	if p.pos >= len(p.data) {
		return nil, p.fail("unexpected end of the file")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return &jsonNode{kind: '"', raw: s}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == '/':
		return nil, p.fail("comments are not JSON (a JSONC file?); kaizen does not rewrite files with comments, as they would be lost")
	}
	for _, lit := range []struct {
		text string
		kind byte
	}{{"true", 't'}, {"false", 'f'}, {"null", 'n'}} {
		if bytes.HasPrefix(p.data[p.pos:], []byte(lit.text)) {
			p.pos += len(lit.text)
			return &jsonNode{kind: lit.kind, raw: lit.text}, nil
		}
	}
	return nil, p.fail("unexpected character %q", rune(p.data[p.pos]))
}

func (p *jsonParser) enter() error {
	p.depth++
	if p.depth > maxJSONDepth {
		return p.fail("nested more than %d levels deep", maxJSONDepth)
	}
	return nil
}

func (p *jsonParser) object() (*jsonNode, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	n := &jsonNode{kind: '{'}
	p.pos++ // {
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return n, nil
	}
	seen := map[string]bool{}
	for {
		p.space()
		if p.pos < len(p.data) && p.data[p.pos] == '/' {
			return nil, p.fail("comments are not JSON (a JSONC file?); kaizen does not rewrite files with comments, as they would be lost")
		}
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			if p.pos < len(p.data) && p.data[p.pos] == '}' {
				return nil, p.fail("trailing comma before '}'")
			}
			return nil, p.fail("expected a member name in double quotes")
		}
		rawKey, err := p.str()
		if err != nil {
			return nil, err
		}
		var key string
		if err := json.Unmarshal([]byte(rawKey), &key); err != nil {
			return nil, p.fail("invalid member name %s", rawKey)
		}
		if seen[key] {
			return nil, p.fail("duplicate member %q", key)
		}
		seen[key] = true
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.fail("expected ':' after member %q", key)
		}
		p.pos++
		p.space()
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		n.keys = append(n.keys, key)
		n.vals = append(n.vals, v)
		p.space()
		if p.pos >= len(p.data) {
			return nil, p.fail("unexpected end of the file in an object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return n, nil
		case '/':
			return nil, p.fail("comments are not JSON (a JSONC file?); kaizen does not rewrite files with comments, as they would be lost")
		default:
			return nil, p.fail("expected ',' or '}' after member %q", key)
		}
	}
}

func (p *jsonParser) array() (*jsonNode, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	n := &jsonNode{kind: '['}
	p.pos++ // [
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return n, nil
	}
	for {
		p.space()
		if p.pos < len(p.data) && p.data[p.pos] == ']' {
			return nil, p.fail("trailing comma before ']'")
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		n.elems = append(n.elems, v)
		p.space()
		if p.pos >= len(p.data) {
			return nil, p.fail("unexpected end of the file in an array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return n, nil
		default:
			return nil, p.fail("expected ',' or ']' in an array")
		}
	}
}

// str scans a string literal and returns its exact text, quotes included.
func (p *jsonParser) str() (string, error) {
	start := p.pos
	p.pos++ // opening quote
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(p.data[start:p.pos]), nil
		case c == '\\':
			if p.pos+1 >= len(p.data) {
				return "", p.fail("unterminated escape in a string")
			}
			switch e := p.data[p.pos+1]; e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.pos += 2
			case 'u':
				if p.pos+6 > len(p.data) {
					return "", p.fail("short \\u escape in a string")
				}
				for _, h := range p.data[p.pos+2 : p.pos+6] {
					if !isHex(h) {
						return "", p.fail("invalid \\u escape in a string")
					}
				}
				p.pos += 6
			default:
				return "", p.fail("invalid escape \\%c in a string", e)
			}
		case c < 0x20:
			return "", p.fail("control character in a string (escape it)")
		case c < utf8.RuneSelf:
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			if r == utf8.RuneError && size == 1 {
				return "", p.fail("invalid UTF-8 in a string")
			}
			p.pos += size
		}
	}
	return "", p.fail("unterminated string")
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func (p *jsonParser) number() (*jsonNode, error) {
	start := p.pos
	if p.data[p.pos] == '-' {
		p.pos++
	}
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.pos < len(p.data) && p.data[p.pos] == '0' {
		p.pos++
	} else if digits() == 0 {
		return nil, p.fail("invalid number")
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, p.fail("invalid number: digits expected after '.'")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.fail("invalid number: digits expected in the exponent")
		}
	}
	return &jsonNode{kind: '0', raw: string(p.data[start:p.pos])}, nil
}

// Constructors for the values setup writes.

func jsonString(s string) *jsonNode {
	b, _ := marshalNoHTML(s)
	return &jsonNode{kind: '"', raw: string(b)}
}

func jsonInt(i int) *jsonNode { return &jsonNode{kind: '0', raw: fmt.Sprint(i)} }

func jsonBool(b bool) *jsonNode {
	if b {
		return &jsonNode{kind: 't', raw: "true"}
	}
	return &jsonNode{kind: 'f', raw: "false"}
}

func jsonStrings(items ...string) *jsonNode {
	n := &jsonNode{kind: '['}
	for _, s := range items {
		n.elems = append(n.elems, jsonString(s))
	}
	return n
}

// jsonObject builds an object from key, value pairs, in that order.
func jsonObject(pairs ...any) *jsonNode {
	n := &jsonNode{kind: '{'}
	for i := 0; i+1 < len(pairs); i += 2 {
		n.set(pairs[i].(string), pairs[i+1].(*jsonNode))
	}
	return n
}

func marshalNoHTML(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// str returns the value of a string node ("" for other kinds).
func (n *jsonNode) str() string {
	if n == nil || n.kind != '"' {
		return ""
	}
	var s string
	_ = json.Unmarshal([]byte(n.raw), &s)
	return s
}

func (n *jsonNode) isObject() bool { return n != nil && n.kind == '{' }
func (n *jsonNode) isArray() bool  { return n != nil && n.kind == '[' }

// get returns the member named key of an object, or nil.
func (n *jsonNode) get(key string) *jsonNode {
	if n == nil || n.kind != '{' {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// set replaces the member named key in place, or appends it.
func (n *jsonNode) set(key string, v *jsonNode) {
	for i, k := range n.keys {
		if k == key {
			n.vals[i] = v
			return
		}
	}
	n.keys = append(n.keys, key)
	n.vals = append(n.vals, v)
}

// del removes the member named key and reports whether it was there.
func (n *jsonNode) del(key string) bool {
	for i, k := range n.keys {
		if k == key {
			n.keys = append(n.keys[:i:i], n.keys[i+1:]...)
			n.vals = append(n.vals[:i:i], n.vals[i+1:]...)
			return true
		}
	}
	return false
}

// equal reports whether two values are the same JSON (member order aside).
func (n *jsonNode) equal(o *jsonNode) bool {
	if n == nil || o == nil {
		return n == o
	}
	if n.kind != o.kind {
		return false
	}
	switch n.kind {
	case '{':
		if len(n.keys) != len(o.keys) {
			return false
		}
		for i, k := range n.keys {
			if !n.vals[i].equal(o.get(k)) {
				return false
			}
		}
		return true
	case '[':
		if len(n.elems) != len(o.elems) {
			return false
		}
		for i := range n.elems {
			if !n.elems[i].equal(o.elems[i]) {
				return false
			}
		}
		return true
	case '"':
		return n.str() == o.str()
	case '0':
		return n.raw == o.raw || numbersEqual(n.raw, o.raw)
	default:
		return n.raw == o.raw
	}
}

func numbersEqual(a, b string) bool {
	var x, y json.Number = json.Number(a), json.Number(b)
	fx, err1 := x.Float64()
	fy, err2 := y.Float64()
	return err1 == nil && err2 == nil && fx == fy
}

// clone copies a value deeply.
func (n *jsonNode) clone() *jsonNode {
	if n == nil {
		return nil
	}
	c := &jsonNode{kind: n.kind, raw: n.raw, keys: append([]string(nil), n.keys...)}
	for _, v := range n.vals {
		c.vals = append(c.vals, v.clone())
	}
	for _, v := range n.elems {
		c.elems = append(c.elems, v.clone())
	}
	return c
}

// encode writes the document with the given indentation unit, in the
// layout of JSON.stringify(value, null, indent) and json.MarshalIndent,
// with a final newline.
func (n *jsonNode) encode(indent string) []byte {
	var b bytes.Buffer
	n.write(&b, indent, 0)
	b.WriteByte('\n')
	return b.Bytes()
}

func (n *jsonNode) write(b *bytes.Buffer, indent string, level int) {
	nl := func(l int) {
		b.WriteByte('\n')
		b.WriteString(strings.Repeat(indent, l))
	}
	switch n.kind {
	case '{':
		if len(n.keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			nl(level + 1)
			key, _ := marshalNoHTML(k)
			b.Write(key)
			b.WriteString(": ")
			n.vals[i].write(b, indent, level+1)
		}
		nl(level)
		b.WriteByte('}')
	case '[':
		if len(n.elems) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, e := range n.elems {
			if i > 0 {
				b.WriteByte(',')
			}
			nl(level + 1)
			e.write(b, indent, level+1)
		}
		nl(level)
		b.WriteByte(']')
	default:
		b.WriteString(n.raw)
	}
}

// detectIndent returns the indentation unit of a JSON file: the leading
// whitespace of its first indented line, else two spaces.
func detectIndent(data []byte) string {
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		if trimmed != "" && len(trimmed) < len(line) {
			return line[:len(line)-len(trimmed)]
		}
	}
	return "  "
}
