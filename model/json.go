package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxReplyBytes is the largest reply [ExtractJSON] examines.
const MaxReplyBytes = 4 << 20

// Work bounds of the extraction: how many bytes the scanner may examine in
// total (prose full of brackets costs more than one pass) and how many
// candidates [DecodeJSON] tries.
const (
	scanBudgetMin       = 1 << 20
	scanBudgetFactor    = 16
	maxDecodeCandidates = 8
	excerptRunes        = 60
)

// JSONErrorKind classifies why no JSON could be taken from a reply.
type JSONErrorKind uint8

// Kinds of [JSONError].
const (
	// JSONEmpty: the reply is empty, or only a reasoning (<think>) block.
	JSONEmpty JSONErrorKind = iota + 1
	// JSONNotFound: no JSON object or array anywhere in the reply.
	JSONNotFound
	// JSONMalformed: something that starts like JSON has a syntax error.
	JSONMalformed
	// JSONTruncated: the reply ends inside JSON that cannot be closed into
	// a useful value.
	JSONTruncated
	// JSONTooLarge: the reply exceeds [MaxReplyBytes] or the work bound.
	JSONTooLarge
	// JSONMismatch: the JSON does not decode into the expected type.
	JSONMismatch
)

func (k JSONErrorKind) String() string {
	switch k {
	case JSONEmpty:
		return "empty reply"
	case JSONNotFound:
		return "no JSON object or array in reply"
	case JSONMalformed:
		return "malformed JSON"
	case JSONTruncated:
		return "truncated JSON that cannot be repaired"
	case JSONTooLarge:
		return "reply too large"
	case JSONMismatch:
		return "JSON does not match the expected shape"
	}
	return fmt.Sprintf("JSONErrorKind(%d)", uint8(k))
}

// JSONError explains why a reply yielded no usable JSON. It carries a short
// excerpt of the reply around the problem.
type JSONError struct {
	Kind JSONErrorKind
	// Offset is the byte offset in the reply where the problem was found,
	// or -1.
	Offset int
	// Detail says what was wrong, e.g. "expected ':' after object key".
	Detail string
	// Excerpt is a short, single-line piece of the reply.
	Excerpt string
	// Err is the decoding error for [JSONMismatch].
	Err error
}

func (e *JSONError) Error() string {
	var b strings.Builder
	b.WriteString("model: extract JSON: ")
	b.WriteString(e.Kind.String())
	if e.Offset >= 0 {
		fmt.Fprintf(&b, " at offset %d", e.Offset)
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if e.Excerpt != "" {
		fmt.Fprintf(&b, " (reply: %q)", e.Excerpt)
	}
	return b.String()
}

// Unwrap returns the decoding error, if any.
func (e *JSONError) Unwrap() error { return e.Err }

func newJSONError(kind JSONErrorKind, reply string, offset int, detail string) *JSONError {
	return &JSONError{Kind: kind, Offset: offset, Detail: detail, Excerpt: excerptAround(reply, offset)}
}

// excerptAround returns a short piece of text around offset (from the
// start when offset is not positive).
func excerptAround(text string, offset int) string {
	if offset <= 0 {
		return excerpt(text, excerptRunes)
	}
	from := max(0, offset-excerptRunes) // bytes, moved to a rune start below
	for from > 0 && from < len(text) && !utf8.RuneStart(text[from]) {
		from++
	}
	out := excerpt(text[min(from, len(text)):], excerptRunes*2)
	if from > 0 {
		out = "…" + out
	}
	return out
}

// JSONExtraction is the JSON found in a reply and how it was found.
type JSONExtraction struct {
	// JSON is one complete object or array.
	JSON json.RawMessage
	// Offset is the byte offset of the JSON in the reply.
	Offset int
	// Fenced reports that it came from a ``` code block.
	Fenced bool
	// Repaired reports that the reply was cut inside the JSON and the
	// value was closed (open strings, arrays and objects; a dangling key
	// or number dropped). Values near the cut may be incomplete.
	Repaired bool
}

// ExtractJSON returns the JSON object or array of a model reply. It accepts
// a bare JSON reply, a fenced block (```json … ```, preferred when present),
// JSON surrounded by prose (the first complete top-level object or array
// wins), a leading <think>…</think> block, and output cut off inside the
// JSON, which is closed when that yields valid JSON. Anything else is a
// [*JSONError] saying why, with an excerpt.
func ExtractJSON(reply string) (json.RawMessage, error) {
	x, err := ExtractJSONDetailed(reply)
	return x.JSON, err
}

// ExtractJSONDetailed is [ExtractJSON] that also reports where the JSON was
// and whether it was repaired.
func ExtractJSONDetailed(reply string) (JSONExtraction, error) {
	var found JSONExtraction
	err := extractCandidates(reply, func(x JSONExtraction) bool {
		found = x
		return false
	})
	if err != nil {
		return JSONExtraction{}, err
	}
	return found, nil
}

// DecodeOptions tunes [DecodeJSON].
type DecodeOptions struct {
	// DisallowUnknownFields rejects objects with fields the target type
	// does not have.
	DisallowUnknownFields bool
	// RejectRepaired refuses JSON that had to be closed after truncation.
	RejectRepaired bool
}

// DecodeJSON extracts JSON from a reply like [ExtractJSON] and decodes it
// into a T. When the reply holds several candidates (prose citing "[1]"
// before the real object), the first that decodes wins. Errors are
// [*JSONError]; a value of the wrong shape is kind [JSONMismatch].
func DecodeJSON[T any](reply string, opts DecodeOptions) (T, error) {
	var out T
	var firstErr error
	tried := 0
	err := extractCandidates(reply, func(x JSONExtraction) bool {
		tried++
		if x.Repaired && opts.RejectRepaired {
			if firstErr == nil {
				firstErr = newJSONError(JSONTruncated, reply, x.Offset, "the reply was cut off and repairs are refused")
			}
			return tried < maxDecodeCandidates
		}
		var v T
		dec := json.NewDecoder(bytes.NewReader(x.JSON))
		if opts.DisallowUnknownFields {
			dec.DisallowUnknownFields()
		}
		if err := dec.Decode(&v); err != nil {
			if firstErr == nil {
				je := newJSONError(JSONMismatch, reply, x.Offset, err.Error())
				je.Err = err
				firstErr = je
			}
			return tried < maxDecodeCandidates
		}
		out, firstErr = v, nil
		return false
	})
	if err != nil {
		return out, err
	}
	if firstErr != nil {
		var zero T
		return zero, firstErr
	}
	return out, nil
}

// extractCandidates calls yield with each JSON candidate of the reply in
// order of preference until yield returns false. It returns an error when
// it found none.
func extractCandidates(reply string, yield func(JSONExtraction) bool) error {
	if len(reply) > MaxReplyBytes {
		return &JSONError{Kind: JSONTooLarge, Offset: -1, Detail: fmt.Sprintf("%d bytes, limit %d", len(reply), MaxReplyBytes), Excerpt: excerpt(reply[:512], excerptRunes)}
	}
	text, base, err := stripPreamble(reply)
	if err != nil {
		return err
	}
	budget := max(scanBudgetMin, scanBudgetFactor*len(text))
	ex := extractor{text: text, base: base, reply: reply, budget: &budget, seen: map[int]bool{}, yield: yield}
	// A reply that is JSON and nothing else is taken as it is.
	if whole := strings.TrimSpace(text); (whole[0] == '{' || whole[0] == '[') && json.Valid([]byte(whole)) {
		ex.emit(strings.Index(text, whole), whole, false, false)
		return nil
	}
	stopped := false
	for _, f := range fences(text) {
		if stopped = ex.find(f.from, f.to, f.open, true); stopped {
			break
		}
	}
	if !stopped {
		ex.find(0, len(text), true, false)
	}
	if ex.yielded > 0 {
		return nil
	}
	if ex.diag != nil {
		return ex.diag
	}
	return newJSONError(JSONNotFound, reply, -1, "")
}

// stripPreamble drops a byte-order mark and a leading reasoning block; it
// returns the rest and its offset in reply.
func stripPreamble(reply string) (string, int, error) {
	text, base := reply, 0
	if strings.HasPrefix(text, "\uFEFF") {
		text, base = text[3:], 3
	}
	trimmed := strings.TrimLeft(text, " \t\r\n")
	if strings.TrimSpace(trimmed) == "" {
		return "", 0, &JSONError{Kind: JSONEmpty, Offset: -1}
	}
	for _, tag := range []string{"<think>", "<thinking>"} {
		if len(trimmed) >= len(tag) && strings.EqualFold(trimmed[:len(tag)], tag) {
			closeTag := "</" + tag[1:]
			end := indexFold(trimmed, closeTag)
			if end < 0 {
				return "", 0, newJSONError(JSONEmpty, reply, -1, "the reply ended inside its "+tag+" block")
			}
			skip := len(text) - len(trimmed) + end + len(closeTag)
			text, base = text[skip:], base+skip
			if strings.TrimSpace(text) == "" {
				return "", 0, newJSONError(JSONEmpty, reply, -1, "nothing after the "+tag+" block")
			}
			break
		}
	}
	return text, base, nil
}

func indexFold(s, sub string) int {
	return strings.Index(strings.ToLower(s), strings.ToLower(sub))
}

type fence struct {
	from, to int  // body
	open     bool // no closing fence: the body runs to the end of the reply
}

// fences finds the bodies of ``` code blocks, JSON-tagged ones first.
func fences(text string) []fence {
	var tagged, other []fence
	i := 0
	for len(tagged)+len(other) < 16 {
		k := strings.Index(text[i:], "```")
		if k < 0 {
			break
		}
		open := i + k + 3
		nl := strings.IndexByte(text[open:], '\n')
		if nl < 0 {
			break
		}
		lang := strings.ToLower(strings.TrimSpace(text[open : open+nl]))
		from := open + nl + 1
		end := strings.Index(text[from:], "```")
		f := fence{from: from, to: len(text), open: true}
		if end >= 0 {
			f.to, f.open = from+end, false
		}
		if lang == "json" || lang == "jsonc" || lang == "json5" {
			tagged = append(tagged, f)
		} else {
			other = append(other, f)
		}
		if f.open {
			break
		}
		i = f.to + 3
	}
	return append(tagged, other...)
}

type extractor struct {
	text    string
	base    int
	reply   string
	budget  *int
	seen    map[int]bool
	yield   func(JSONExtraction) bool
	yielded int
	diag    *JSONError
	sc      scanner
}

// find scans text[from:to] for candidates and yields them; it reports
// whether the caller should stop (yield said so, or the work budget ran
// out). open says the region runs to the end of the reply, so a value cut
// by its end may be repaired.
func (ex *extractor) find(from, to int, open, fenced bool) bool {
	region := ex.text[:to]
	if open {
		region = ex.text
	}
	ex.sc.s, ex.sc.budget = region, ex.budget
	for i := from; i < to; {
		k := strings.IndexAny(region[i:to], "{[")
		if k < 0 {
			return false
		}
		i += k
		ex.sc.start = i
		ex.sc.sawToken = false
		switch ex.sc.run() {
		case scanComplete:
			end := ex.sc.pos
			if !ex.emit(i, region[i:end], fenced, false) {
				return true
			}
			i = end
		case scanInvalid:
			if ex.sc.sawToken && ex.diag == nil { // the first thing that looked like JSON
				ex.diag = newJSONError(JSONMalformed, ex.reply, ex.base+ex.sc.errPos, ex.sc.errMsg)
			}
			i++
		case scanTruncated:
			if !open || strings.TrimSpace(ex.text[to:]) != "" {
				ex.setDiag(JSONTruncated, i, "the JSON in a closed code block is incomplete")
				return false
			}
			fixed := ex.sc.repair()
			if json.Valid([]byte(fixed)) && !emptyContainer(fixed) {
				return !ex.emit(i, fixed, fenced, true)
			}
			ex.setDiag(JSONTruncated, i, "the reply ends inside the JSON and closing it leaves nothing usable")
			return false
		case scanExhausted:
			ex.diag = newJSONError(JSONTooLarge, ex.reply, ex.base+i, "too many JSON-like fragments to examine")
			return true
		}
	}
	return false
}

func (ex *extractor) setDiag(kind JSONErrorKind, at int, detail string) {
	if ex.diag == nil || ex.diag.Kind != JSONTruncated {
		ex.diag = newJSONError(kind, ex.reply, ex.base+at, detail)
	}
}

// emit yields a candidate unless it was already yielded; it reports
// whether to go on.
func (ex *extractor) emit(at int, js string, fenced, repaired bool) bool {
	if ex.seen[at] {
		return true
	}
	ex.seen[at] = true
	ex.yielded++
	return ex.yield(JSONExtraction{JSON: json.RawMessage(js), Offset: ex.base + at, Fenced: fenced, Repaired: repaired})
}

func emptyContainer(js string) bool {
	t := strings.TrimSpace(js)
	if len(t) < 2 {
		return true
	}
	return strings.TrimSpace(t[1:len(t)-1]) == ""
}
