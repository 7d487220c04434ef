package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"

	"github.com/kaizenhq/kaizen/internal/redact"
)

// Scrub returns s with every secret the rule set recognises replaced by
// a marker "[REDACTED:rule]". It is the one redaction at the engine
// boundary; see the comment above.
func Scrub(s string) string {
	if s == "" {
		return s
	}
	out, _ := redact.Redact(s)
	return out
}

// ScrubCount is Scrub that also returns the number of secrets replaced.
func ScrubCount(s string) (string, int) {
	if s == "" {
		return s, 0
	}
	out, rep := redact.Redact(s)
	return out, rep.Count()
}

// ScrubAll returns ss with every element scrubbed. It never changes the
// caller's slice: when some element changes it returns a copy.
func ScrubAll(ss []string) []string {
	var out []string
	for i, s := range ss {
		r := Scrub(s)
		if r == s && out == nil {
			continue
		}
		if out == nil {
			out = make([]string, len(ss))
			copy(out, ss[:i])
		}
		out[i] = r
	}
	if out == nil {
		return ss
	}
	return out
}

// ScrubFields scrubs each of the given strings in place; call it on the
// text fields of a request struct the service holds by value.
func ScrubFields(fields ...*string) {
	for _, f := range fields {
		if f != nil {
			*f = Scrub(*f)
		}
	}
}

// ScrubJSON scrubs every string (keys are kept) in a JSON document and
// returns it re-encoded compactly when something changed; a document that
// is not valid JSON is scrubbed as text. Numbers keep their digits.
func ScrubJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return json.RawMessage(Scrub(string(raw)))
	}
	changed := false
	v = scrubValue(v, &changed)
	if !changed {
		return raw
	}
	out, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(Scrub(string(raw)))
	}
	return out
}

func scrubValue(v any, changed *bool) any {
	switch x := v.(type) {
	case string:
		r := Scrub(x)
		if r != x {
			*changed = true
		}
		return r
	case []any:
		for i := range x {
			x[i] = scrubValue(x[i], changed)
		}
		return x
	case map[string]any:
		for k, e := range x {
			// A secret held by a key's name ({"password": "x"}) is caught
			// by scrubbing the pair as text.
			if s, ok := e.(string); ok {
				pair := k + "=" + s
				if r := Scrub(pair); r != pair && len(r) > len(k)+1 && r[:len(k)+1] == k+"=" {
					x[k], *changed = r[len(k)+1:], true
					continue
				}
			}
			x[k] = scrubValue(e, changed)
		}
		return x
	}
	return v
}

// ScrubLogger returns a logger whose records have their message and every
// string, error and Stringer attribute scrubbed: logs are written from
// untrusted input (error messages, ids, paths) and are kept on disk.
func ScrubLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return nil
	}
	if _, ok := l.Handler().(scrubHandler); ok {
		return l
	}
	return slog.New(scrubHandler{l.Handler()})
}

// scrubHandler is the slog.Handler of ScrubLogger.
type scrubHandler struct{ h slog.Handler }

func (s scrubHandler) Enabled(ctx context.Context, l slog.Level) bool { return s.h.Enabled(ctx, l) }

func (s scrubHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, Scrub(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(scrubAttr(a))
		return true
	})
	return s.h.Handle(ctx, out)
}

func (s scrubHandler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = scrubAttr(a)
	}
	return scrubHandler{s.h.WithAttrs(out)}
}

func (s scrubHandler) WithGroup(name string) slog.Handler { return scrubHandler{s.h.WithGroup(name)} }

func scrubAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, Scrub(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]slog.Attr, len(g))
		for i, e := range g {
			out[i] = scrubAttr(e)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, Scrub(x.Error()))
		case fmt.Stringer:
			return slog.String(a.Key, Scrub(x.String()))
		case []string:
			return slog.Any(a.Key, ScrubAll(x))
		case []byte:
			return slog.String(a.Key, Scrub(string(x)))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// ScrubStruct scrubs, in place, every string reachable from v (a
// pointer): exported string fields of structs, elements of slices and
// arrays, string values of maps, through pointers and interfaces. It is
// for records made of free text from elsewhere (an agent's or a model's
// extraction, an imported bundle) whose every field is untrusted; ids and
// enum words among them do not look like secrets and pass unchanged. A
// map's keys are kept. Slices are changed in place, so a caller's slice
// shared with v is scrubbed too.
func ScrubStruct(v any) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return
	}
	scrubReflect(rv.Elem(), 0)
}

var anyMapType = reflect.TypeFor[map[string]any]()

func scrubReflect(v reflect.Value, depth int) {
	if depth > 32 {
		return
	}
	if v.Type() == anyMapType && !v.IsNil() {
		// Decoded JSON (tool arguments): keys name the values.
		changed := false
		scrubValue(v.Interface(), &changed)
		return
	}
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			if s := v.String(); s != "" {
				if r := Scrub(s); r != s {
					v.SetString(r)
				}
			}
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			e := v.Elem()
			if v.Kind() == reflect.Interface {
				// Values in interfaces are not addressable: scrub a copy
				// and put it back.
				if e.Kind() == reflect.String && v.CanSet() {
					v.Set(reflect.ValueOf(Scrub(e.String())).Convert(e.Type()))
					return
				}
				if e.Kind() != reflect.Pointer && e.Kind() != reflect.Map && e.Kind() != reflect.Slice {
					return
				}
			}
			scrubReflect(e, depth+1)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range v.NumField() {
			if t.Field(i).IsExported() {
				scrubReflect(v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // bytes: raw JSON, vectors; not text here
		}
		for i := range v.Len() {
			scrubReflect(v.Index(i), depth+1)
		}
	case reflect.Array:
		for i := range v.Len() {
			scrubReflect(v.Index(i), depth+1)
		}
	case reflect.Map:
		if v.Type().Elem().Kind() != reflect.String {
			iter := v.MapRange()
			for iter.Next() {
				e := iter.Value()
				if e.Kind() == reflect.Pointer || e.Kind() == reflect.Map || e.Kind() == reflect.Slice {
					scrubReflect(e, depth+1)
				}
			}
			return
		}
		iter := v.MapRange()
		for iter.Next() {
			s := iter.Value().String()
			if r := Scrub(s); r != s {
				v.SetMapIndex(iter.Key(), reflect.ValueOf(r).Convert(v.Type().Elem()))
			}
		}
	}
}
