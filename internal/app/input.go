package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kaizenhq/kaizen/learning"
)

// MaxDurationMs is the largest accepted duration_ms (one year).
const MaxDurationMs = int64(365 * 24 * time.Hour / time.Millisecond)

// MaxCount is the largest accepted error or retry count.
const MaxCount = 1_000_000

// Input limits. Anything beyond them is rejected, never truncated.
const (
	MaxInputBytes     = 1 << 20
	MaxIDLen          = 256
	MaxTextLen        = 64 << 10
	MaxPathLen        = 4096
	MaxFilesTouched   = 10_000
	MaxPatternRefs    = 100
	MaxCriteria       = 50
	FutureSkew        = 5 * time.Minute
	MaxPatternContent = 1024
)

// DecodeStrict reads r (at most MaxInputBytes) and decodes it with
// DecodeJSON.
func DecodeStrict(r io.Reader, v any, op string) error {
	data, err := io.ReadAll(io.LimitReader(r, MaxInputBytes+1))
	if err != nil {
		return &Error{Op: op, Kind: KindInvalid, Message: "read input: " + err.Error(), Err: err}
	}
	if len(data) > MaxInputBytes {
		return &Error{Op: op, Kind: KindInvalid, Message: fmt.Sprintf("input is larger than %d bytes", MaxInputBytes)}
	}
	return DecodeJSON(data, v, op)
}

// CheckJSON checks what DecodeJSON checks before decoding, for callers
// that decode on their own (hook payloads): valid UTF-8, no key given twice
// in an object, nesting within MaxJSONDepth.
func CheckJSON(data []byte, op string) error {
	if !utf8.Valid(data) {
		return &Error{Op: op, Kind: KindInvalid, Message: "input is not valid UTF-8"}
	}
	return checkJSONShape(data, op)
}

// MaxJSONDepth bounds the nesting of objects and arrays in an input.
const MaxJSONDepth = 64

// DecodeJSON is the one strict decoder of every input (REST bodies, MCP
// tool arguments, CLI --input, import records): exactly one JSON value,
// valid UTF-8 (never silently replaced), not null, no key given twice in
// an object, nesting within MaxJSONDepth, no field the target does not
// know, nothing after the value. The caller bounds the size.
func DecodeJSON(data []byte, v any, op string) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return &Error{Op: op, Kind: KindInvalid, Message: "input is empty", Hint: "send a JSON object"}
	}
	if !utf8.Valid(data) {
		return &Error{Op: op, Kind: KindInvalid, Message: "input is not valid UTF-8",
			Hint: "send UTF-8 text; other charsets are not accepted"}
	}
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return &Error{Op: op, Kind: KindInvalid, Message: "input is null", Hint: "send a JSON object"}
	}
	if err := checkJSONShape(data, op); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return JSONError(op, err)
	}
	if dec.More() {
		return &Error{Op: op, Kind: KindInvalid, Message: "unexpected data after the JSON object"}
	}
	if _, err := dec.Token(); err != io.EOF {
		return &Error{Op: op, Kind: KindInvalid, Message: "unexpected data after the JSON object"}
	}
	return nil
}

// checkJSONShape walks the tokens of one JSON value, refusing duplicate
// object keys (which decoders resolve differently: one may check the first
// and another use the last) and nesting deeper than MaxJSONDepth.
func checkJSONShape(data []byte, op string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		object bool
		keys   map[string]struct{}
		key    bool // the next string token of an object is a key
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err != nil {
			if err == io.EOF && len(stack) == 0 {
				return nil
			}
			return JSONError(op, err)
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			top := &stack[len(stack)-1]
			if top.key {
				if d, ok := tok.(json.Delim); ok && d == '}' {
					stack = stack[:len(stack)-1]
					if len(stack) == 0 {
						return nil
					}
					continue
				}
				k, _ := tok.(string)
				if _, dup := top.keys[k]; dup {
					return &Error{Op: op, Kind: KindInvalid, Field: k, Message: "key is given twice in one object",
						Hint: "give each key once"}
				}
				top.keys[k] = struct{}{}
				top.key = false
				continue
			}
			top.key = true // a value: the next token is a key or }
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{object: true, keys: map[string]struct{}{}, key: true})
		case json.Delim('['):
			stack = append(stack, frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > MaxJSONDepth {
			return &Error{Op: op, Kind: KindInvalid, Message: fmt.Sprintf("JSON nested deeper than %d levels", MaxJSONDepth)}
		}
		if len(stack) == 0 {
			return nil
		}
	}
}

func JSONError(op string, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return &Error{Op: op, Kind: KindInvalid, Message: fmt.Sprintf("malformed JSON at byte %d: %v", syn.Offset, syn), Err: err}
	case errors.As(err, &typ) && typ.Field == "":
		return &Error{Op: op, Kind: KindInvalid, Message: fmt.Sprintf("got JSON %s, want an object", typ.Value), Err: err}
	case errors.As(err, &typ):
		return &Error{Op: op, Kind: KindInvalid, Field: typ.Field,
			Message: fmt.Sprintf("got JSON %s, want %s", typ.Value, jsonKind(typ.Type.String())), Err: err}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &Error{Op: op, Kind: KindInvalid, Message: "malformed JSON: unexpected end of input", Err: err}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return &Error{Op: op, Kind: KindInvalid, Field: field, Message: "unknown field", Err: err}
	default:
		return &Error{Op: op, Kind: KindInvalid, Message: "malformed JSON: " + err.Error(), Err: err}
	}
}

func jsonKind(goType string) string {
	goType = strings.TrimPrefix(goType, "*")
	switch goType {
	case "int", "int64":
		return "an integer in range"
	case "bool":
		return "true or false"
	case "string":
		return "a string"
	case "[]string":
		return "a list of strings"
	}
	return goType
}

// ValidText checks a free-text field: valid UTF-8 within a size limit.
// Control characters other than newline and tab are rejected.
func ValidText(op, field, s string, limit int, required bool) error {
	switch {
	case required && strings.TrimSpace(s) == "":
		return Invalid(op, field, "is required and must not be blank")
	case len(s) > limit:
		return Invalid(op, field, "is longer than %d bytes", limit)
	case !utf8.ValidString(s):
		return Invalid(op, field, "is not valid UTF-8")
	}
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t' && r != '\r') || r == 0x7f {
			return Invalid(op, field, "contains a control character (U+%04X)", r)
		}
	}
	return nil
}

// ValidID checks an identifier supplied by a caller (task id, record id).
func ValidID(op, field, s string) error {
	if err := ValidText(op, field, s, MaxIDLen, true); err != nil {
		return err
	}
	if strings.ContainsAny(s, "\n\r\t") || strings.TrimSpace(s) != s {
		return Invalid(op, field, "must be one line without surrounding spaces")
	}
	return nil
}

// ValidProject checks a project name: a name without path separators,
// so that it is safe wherever it names a file or directory.
func ValidProject(p string) error {
	if err := learning.ValidateName("project", p); err != nil {
		return err
	}
	if strings.ContainsAny(p, `/\`) || p == "." || p == ".." {
		return fmt.Errorf("project %q must not contain path separators or be . or ..", p)
	}
	return nil
}

// ParseTime parses an optional RFC 3339 time: empty means now; the result
// is truncated to microseconds (the storage precision) and may not lie in
// the future beyond a small clock skew.
func ParseTime(op, field, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return now, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, &Error{Op: op, Kind: KindInvalid, Field: field,
			Message: fmt.Sprintf("%q is not an RFC 3339 time", s), Hint: "e.g. 2025-01-31T12:00:00Z"}
	}
	return CheckTime(op, field, t, now)
}

func CheckTime(op, field string, t, now time.Time) (time.Time, error) {
	t = t.UTC().Truncate(time.Microsecond)
	if t.Year() < 1970 {
		return time.Time{}, Invalid(op, field, "%s is before 1970", t.Format(time.RFC3339))
	}
	if t.After(now.Add(FutureSkew)) {
		return time.Time{}, &Error{Op: op, Kind: KindInvalid, Field: field,
			Message: fmt.Sprintf("%s is in the future (now is %s)", t.Format(time.RFC3339), now.Format(time.RFC3339)),
			Hint:    "events cannot be recorded ahead of time; check the clock"}
	}
	if t.After(now) {
		t = now // within clock skew: an event is never younger than now
	}
	return t, nil
}

func CheckCount(op, field string, n int) error {
	if n < 0 {
		return Invalid(op, field, "must be >= 0, got %d", n)
	}
	if n > MaxCount {
		return Invalid(op, field, "must be <= %d, got %d", MaxCount, n)
	}
	return nil
}

func CheckFloat(op, field string, f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return Invalid(op, field, "must be a finite number")
	}
	return nil
}
