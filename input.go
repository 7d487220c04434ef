package kaizen

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
	maxIDLen          = 256
	maxTextLen        = 64 << 10
	maxPathLen        = 4096
	maxFilesTouched   = 10_000
	maxPatternRefs    = 100
	maxCriteria       = 50
	maxCount          = MaxCount
	maxDurationMs     = MaxDurationMs
	futureSkew        = 5 * time.Minute
	maxPatternContent = 1024
)

// OutcomeInput is what an agent reports when a task ends. Field names
// follow the seed (bead_id is the task id; task_id is accepted as an alias).
type OutcomeInput struct {
	Project string `json:"project,omitempty"`
	TaskID  string `json:"bead_id,omitempty"`
	// TaskIDAlias accepts "task_id" for callers that do not speak beads.
	TaskIDAlias string `json:"task_id,omitempty"`
	DurationMs  *int64 `json:"duration_ms,omitempty"`
	// ErrorCount, when omitted, is taken from the error accumulator: the
	// number of errors recorded for the task.
	ErrorCount     *int     `json:"error_count,omitempty"`
	RetryCount     *int     `json:"retry_count,omitempty"`
	Success        *bool    `json:"success,omitempty"`
	FilesTouched   []string `json:"files_touched,omitempty"`
	Strategy       string   `json:"strategy,omitempty"`
	FailureMode    string   `json:"failure_mode,omitempty"`
	FailureDetails string   `json:"failure_details,omitempty"`
	// Timestamp is when the task finished (RFC 3339); default now.
	Timestamp string `json:"timestamp,omitempty"`
	// Patterns are the decomposition patterns used, by id or content.
	Patterns []string `json:"patterns,omitempty"`
	// Criteria judged (default: type_safe, no_bugs, patterns, readable).
	Criteria []string `json:"criteria,omitempty"`
	// Description of the decomposition; strategies found in it count as
	// patterns used.
	Description string `json:"description,omitempty"`
}

// ParseOutcomeInput decodes one JSON object strictly: unknown fields,
// trailing data, wrong types and oversized input are errors naming the
// field. It does not validate values (RecordOutcome does).
func ParseOutcomeInput(r io.Reader) (OutcomeInput, error) {
	var in OutcomeInput
	return in, DecodeStrict(r, &in, "parse outcome")
}

// DecodeStrict decodes exactly one JSON value from r into v, rejecting
// unknown fields, trailing data and input over MaxInputBytes.
func DecodeStrict(r io.Reader, v any, op string) error {
	data, err := io.ReadAll(io.LimitReader(r, MaxInputBytes+1))
	if err != nil {
		return &Error{Op: op, Kind: KindInvalid, Message: "read input: " + err.Error(), Err: err}
	}
	if len(data) > MaxInputBytes {
		return &Error{Op: op, Kind: KindInvalid, Message: fmt.Sprintf("input is larger than %d bytes", MaxInputBytes)}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return &Error{Op: op, Kind: KindInvalid, Message: "input is empty", Hint: "send a JSON object"}
	}
	if !utf8.Valid(data) {
		return &Error{Op: op, Kind: KindInvalid, Message: "input is not valid UTF-8"}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(op, err)
	}
	if dec.More() {
		return &Error{Op: op, Kind: KindInvalid, Message: "unexpected data after the JSON object"}
	}
	if _, err := dec.Token(); err != io.EOF {
		return &Error{Op: op, Kind: KindInvalid, Message: "unexpected data after the JSON object"}
	}
	return nil
}

func jsonError(op string, err error) error {
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

// validText checks a free-text field: valid UTF-8 within a size limit.
// Control characters other than newline and tab are rejected.
func validText(op, field, s string, limit int, required bool) error {
	switch {
	case required && strings.TrimSpace(s) == "":
		return invalid(op, field, "is required and must not be blank")
	case len(s) > limit:
		return invalid(op, field, "is longer than %d bytes", limit)
	case !utf8.ValidString(s):
		return invalid(op, field, "is not valid UTF-8")
	}
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t' && r != '\r') || r == 0x7f {
			return invalid(op, field, "contains a control character (U+%04X)", r)
		}
	}
	return nil
}

// validID checks an identifier supplied by a caller (task id, record id).
func validID(op, field, s string) error {
	if err := validText(op, field, s, maxIDLen, true); err != nil {
		return err
	}
	if strings.ContainsAny(s, "\n\r\t") || strings.TrimSpace(s) != s {
		return invalid(op, field, "must be one line without surrounding spaces")
	}
	return nil
}

// validProject checks a project name: a name without path separators,
// so that it is safe wherever it names a file or directory.
func validProject(p string) error {
	if err := learning.ValidateName("project", p); err != nil {
		return err
	}
	if strings.ContainsAny(p, `/\`) || p == "." || p == ".." {
		return fmt.Errorf("project %q must not contain path separators or be . or ..", p)
	}
	return nil
}

// parseTime parses an optional RFC 3339 time: empty means now; the result
// is truncated to microseconds (the storage precision) and may not lie in
// the future beyond a small clock skew.
func parseTime(op, field, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return now, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, &Error{Op: op, Kind: KindInvalid, Field: field,
			Message: fmt.Sprintf("%q is not an RFC 3339 time", s), Hint: "e.g. 2025-01-31T12:00:00Z"}
	}
	return checkTime(op, field, t, now)
}

func checkTime(op, field string, t, now time.Time) (time.Time, error) {
	t = t.UTC().Truncate(time.Microsecond)
	if t.Year() < 1970 {
		return time.Time{}, invalid(op, field, "%s is before 1970", t.Format(time.RFC3339))
	}
	if t.After(now.Add(futureSkew)) {
		return time.Time{}, &Error{Op: op, Kind: KindInvalid, Field: field,
			Message: fmt.Sprintf("%s is in the future (now is %s)", t.Format(time.RFC3339), now.Format(time.RFC3339)),
			Hint:    "events cannot be recorded ahead of time; check the clock"}
	}
	if t.After(now) {
		t = now // within clock skew: an event is never younger than now
	}
	return t, nil
}

func checkCount(op, field string, n int) error {
	if n < 0 {
		return invalid(op, field, "must be >= 0, got %d", n)
	}
	if n > maxCount {
		return invalid(op, field, "must be <= %d, got %d", maxCount, n)
	}
	return nil
}

func checkFloat(op, field string, f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return invalid(op, field, "must be a finite number")
	}
	return nil
}

// patternContent validates pattern content or a pattern reference.
func patternContent(op, field, s string) error {
	if err := validText(op, field, s, maxPatternContent, true); err != nil {
		return err
	}
	if strings.ContainsAny(s, "\n\r") {
		return invalid(op, field, "must be a single line")
	}
	return nil
}
