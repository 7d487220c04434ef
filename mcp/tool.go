package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/store"
)

// toolDef is one tool of the registry: what an LLM reads about it, its
// input and output schemas, and how to serve a call.
type toolDef struct {
	name        string
	title       string
	description string
	effect      effect
	// fields describes and constrains the input properties, by JSON name.
	// Properties listed in commonFields need no entry.
	fields map[string]field
	// hidden are input properties accepted but not advertised (aliases).
	hidden []string

	input, output *jsonschema.Schema
	// serve builds the tool's handler for one server.
	serve func(*env) mcpsdk.ToolHandler
}

// effect says what a tool does to stored state; it becomes the tool's
// annotations.
type effect int

const (
	readOnly    effect = iota // reads only
	additive                  // records something new
	idempotent                // changes state; repeating it changes nothing more
	destructive               // discards evidence
)

// field documents an input property for the LLM reader and constrains it in
// the schema. The engine validates every value again: the schema tells a
// client what is valid, the engine's message says what was not.
type field struct {
	desc     string
	required bool
	min, max *float64
	enum     []string
	format   string
}

func bounds(lo, hi float64) (min, max *float64) { return &lo, &hi }

// intField is an integer property between lo and hi.
func intField(desc string, lo, hi float64) field {
	f := field{desc: desc}
	f.min, f.max = bounds(lo, hi)
	return f
}

// commonFields are the descriptions of properties shared by many tools.
var commonFields = map[string]field{
	"project": {desc: "Project (namespace) to work in. Omit it: kaizen uses the project of your workspace " +
		"(the git root of the client's first root, or the server's default). Name a project only to work on another one."},
	"bead_id": {desc: "Id of the task (the beads issue id, or any stable id of your task such as a ticket number). " +
		"Use the same id for a task's errors, its outcome and its guidance."},
	"limit":     intField("Maximum number of items to return (default 50, at most 1000).", 0, 1000),
	"offset":    intField("Number of items to skip, for paging (default 0).", 0, 1e9),
	"timestamp": {desc: "When it happened, RFC 3339 (e.g. 2025-01-31T12:00:00Z); default now. Must not be in the future.", format: "date-time"},
	"pattern": {desc: "The pattern: its id (pattern-… or anti-pattern-…, from list_patterns or plan_guidance) " +
		"or its content, e.g. \"Split by file type\".", required: true},
}

// toolSets are the registered tool constructors, in registration order.
// Tools are built on first use rather than at program start (building the
// schemas takes milliseconds that every short-lived command, such as a
// client hook, would pay for nothing).
var toolSets []func() []*toolDef

var (
	registryOnce sync.Once
	registry     []*toolDef
	// definitionProblems are the problems found in tool definitions.
	definitionProblems []string
)

// registerTools adds a subsystem's tools; call it from an init function.
func registerTools(set func() []*toolDef) { toolSets = append(toolSets, set) }

// tools returns every tool, built on the first call. A duplicate name
// panics (every test that serves the tools catches it).
func tools() []*toolDef {
	registryOnce.Do(func() {
		for _, set := range toolSets {
			for _, d := range set() {
				for _, r := range registry {
					if r.name == d.name {
						panic(fmt.Sprintf("mcp: tool %q registered twice", d.name))
					}
				}
				registry = append(registry, d)
			}
		}
	})
	return registry
}

// ToolNames lists the names of the tools every server serves, in the order
// tools/list returns them (e.g. to pre-register metric labels).
func ToolNames() []string {
	all := tools()
	names := make([]string, len(all))
	for i, d := range all {
		names[i] = d.name
	}
	return names
}

// define completes a tool definition for an engine call taking In and
// returning Out: its input schema is inferred from In and decorated with
// d.fields, its output schema inferred from Out (an object), and text
// renders the result for the LLM. A definition problem (an undescribed
// property, a described property that does not exist) is recorded in
// definitionProblems, which the tests require to be empty; the tool is
// served anyway, so that a field added to an engine type never stops the
// program.
func define[In, Out any](d toolDef, run func(context.Context, *kaizen.Engine, In) (Out, error), text func(Out) string) *toolDef {
	problem := func(format string, a ...any) {
		definitionProblems = append(definitionProblems, d.name+": "+fmt.Sprintf(format, a...))
	}
	in, err := jsonschema.For[In](nil)
	if err != nil {
		problem("input schema: %v", err)
		in = &jsonschema.Schema{Type: "object"}
	}
	for _, p := range decorate(&d, in) {
		problem("%s", p)
	}
	out, err := jsonschema.For[Out](nil)
	switch {
	case err != nil:
		problem("output schema: %v", err)
		out = nil
	case out.Type != "object":
		problem("output %T is not an object", *new(Out))
		out = nil
	}
	d.input, d.output = in, out
	project := projectField(reflect.TypeFor[In]())
	name := d.name
	d.serve = func(env *env) mcpsdk.ToolHandler {
		return func(ctx context.Context, req *mcpsdk.CallToolRequest) (res *mcpsdk.CallToolResult, _ error) {
			start := time.Now()
			var err error
			asking := false
			defer func() {
				if p := recover(); p != nil {
					err = env.internal(name, fmt.Errorf("panic: %v", p), debug.Stack())
					res = errorResult(name, err)
				}
				if !asking {
					env.observe(name, time.Since(start), err)
				}
			}()
			var input In
			if err = decodeArguments(name, req.Params.Arguments, &input); err != nil {
				return errorResult(name, err), nil
			}
			if project != nil {
				v := reflect.ValueOf(&input).Elem().FieldByIndex(project)
				if v.String() == "" {
					p, ask := env.project(ctx, req)
					if ask != nil {
						asking = true // the client calls again with its roots
						return ask, nil
					}
					v.SetString(p)
				}
			}
			var out Out
			if out, err = run(ctx, env.engine, input); err != nil {
				err = env.toolError(name, err)
				return errorResult(name, err), nil
			}
			data, merr := json.Marshal(out)
			if merr != nil {
				err = env.internal(name, fmt.Errorf("encode result: %w", merr), nil)
				return errorResult(name, err), nil
			}
			return &mcpsdk.CallToolResult{
				Content:           []mcpsdk.Content{&mcpsdk.TextContent{Text: text(out)}},
				StructuredContent: json.RawMessage(data),
			}, nil
		}
	}
	return &d
}

// sdkTool is the tool as listed by tools/list.
func (d *toolDef) sdkTool() *mcpsdk.Tool {
	yes, no := true, false
	a := &mcpsdk.ToolAnnotations{Title: d.title, OpenWorldHint: &no}
	switch d.effect {
	case readOnly:
		a.ReadOnlyHint = true
	case additive:
		a.DestructiveHint = &no
	case idempotent:
		a.DestructiveHint, a.IdempotentHint = &no, true
	case destructive:
		a.DestructiveHint, a.IdempotentHint = &yes, true
	}
	// The schemas are given as JSON: the SDK re-reads a tool's input schema
	// on every HTTP call (for its parameter headers), and reading bytes costs
	// a fraction of marshalling a *jsonschema.Schema each time.
	t := &mcpsdk.Tool{Name: d.name, Title: d.title, Description: d.description, Annotations: a, InputSchema: schemaJSON(d.input)}
	if d.output != nil {
		t.OutputSchema = schemaJSON(d.output)
	}
	return t
}

// schemaJSON marshals a schema built by define; failing is a programming
// error that every test run catches.
func schemaJSON(s *jsonschema.Schema) json.RawMessage {
	data, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("mcp: marshal schema: %v", err))
	}
	return data
}

// decorate applies the tool's field descriptions and constraints to the
// inferred input schema, removes hidden properties, and sets the required
// list. It returns the definition's problems: every property must be
// described, and every description must name a property.
func decorate(d *toolDef, s *jsonschema.Schema) (problems []string) {
	if s.Type != "object" {
		return []string{"input must be an object"}
	}
	for _, h := range d.hidden {
		if _, ok := s.Properties[h]; !ok {
			problems = append(problems, fmt.Sprintf("hidden property %q does not exist", h))
		}
		delete(s.Properties, h)
		s.PropertyOrder = slices.DeleteFunc(s.PropertyOrder, func(p string) bool { return p == h })
	}
	for name := range d.fields {
		if _, ok := s.Properties[name]; !ok {
			problems = append(problems, fmt.Sprintf("described property %q does not exist", name))
		}
	}
	var required []string
	for _, name := range propertyOrder(s) {
		p := s.Properties[name]
		f, ok := d.fields[name]
		if !ok {
			f, ok = commonFields[name]
		}
		if !ok || f.desc == "" {
			problems = append(problems, fmt.Sprintf("property %q has no description", name))
		}
		// Optional values are omitted rather than null: advertise the plain type.
		if len(p.Types) == 2 && p.Types[0] == "null" {
			p.Type, p.Types = p.Types[1], nil
		}
		p.Description = f.desc
		p.Format = f.format
		if f.min != nil {
			p.Minimum = f.min
		}
		if f.max != nil {
			p.Maximum = f.max
		}
		if len(f.enum) > 0 {
			p.Enum = make([]any, len(f.enum))
			for i, v := range f.enum {
				p.Enum[i] = v
			}
		}
		if f.required {
			required = append(required, name)
		}
	}
	s.Required = required
	return problems
}

// propertyOrder lists a schema's properties in declaration order.
func propertyOrder(s *jsonschema.Schema) []string {
	if len(s.PropertyOrder) == len(s.Properties) {
		return s.PropertyOrder
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// projectField finds the string field of t whose JSON name is "project"
// (possibly in an embedded struct), or returns nil.
func projectField(t reflect.Type) []int {
	if t.Kind() != reflect.Struct {
		return nil
	}
	for _, f := range reflect.VisibleFields(t) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "project" && f.Type.Kind() == reflect.String && f.IsExported() {
			return f.Index
		}
	}
	return nil
}

// decodeArguments decodes a call's arguments strictly into v: a JSON
// object, no unknown property, the right types (the engine's rules for
// every surface). No arguments mean an empty object.
func decodeArguments(tool string, raw json.RawMessage, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if raw[0] != '{' {
		return &kaizen.Error{Op: tool, Kind: kaizen.KindInvalid, Message: "arguments must be a JSON object",
			Hint: "pass the fields listed in the tool's input schema"}
	}
	err := kaizen.DecodeStrict(bytes.NewReader(raw), v, tool)
	var ke *kaizen.Error
	if errors.As(err, &ke) && ke.Message == "unknown field" {
		ke.Message = "is not a property of this tool"
		ke.Hint = "see the tool's input schema for the property names (they follow the seed: bead_id, duration_ms, …)"
	}
	return err
}

// toolError turns an engine error into the error shown to the client:
// engine errors keep their operation, field, message and hint; internal
// errors are logged and shown without storage details.
func (env *env) toolError(tool string, err error) error {
	var ke *kaizen.Error
	switch {
	case errors.Is(err, store.ErrClosed):
		return &kaizen.Error{Op: opOf(err, tool), Kind: kaizen.KindInternal, Err: err,
			Message: "the store is closed (kaizen is shutting down)", Hint: "retry in a moment, against the restarted server"}
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return &kaizen.Error{Op: opOf(err, tool), Kind: kaizen.KindInternal, Err: err, Message: "the call was cancelled"}
	case errors.As(err, &ke) && ke.Kind != kaizen.KindInternal:
		return ke
	case kaizen.KindOf(err) == kaizen.KindNotFound:
		return &kaizen.Error{Op: opOf(err, tool), Kind: kaizen.KindNotFound, Message: "not found", Err: err}
	}
	return env.internal(tool, err, nil)
}

// internal logs an internal error with a reference and returns the error
// shown to the client, which names the reference but no details.
func (env *env) internal(tool string, err error, stack []byte) error {
	ref := strings.ToLower(rand.Text()[:10])
	args := []any{"tool", tool, "ref", ref, "err", err}
	if stack != nil {
		args = append(args, "stack", string(stack))
	}
	env.log.Error("mcp tool failed", args...)
	return &kaizen.Error{Op: opOf(err, tool), Kind: kaizen.KindInternal, Err: err,
		Message: "internal error (ref " + ref + ")", Hint: "the kaizen server log has the details under this ref"}
}

func opOf(err error, tool string) string {
	var ke *kaizen.Error
	if errors.As(err, &ke) && ke.Op != "" {
		return ke.Op
	}
	return tool
}

// defaultHints tell the caller what to do next when the engine gave no hint.
var defaultHints = map[kaizen.ErrorKind]string{
	kaizen.KindInvalid:  "nothing was recorded; correct the argument and call the tool again",
	kaizen.KindNotFound: "check the id or content, e.g. with list_patterns, list_errors or list_outcomes",
	kaizen.KindConflict: "the current state does not allow this; explain_pattern shows the pattern's state",
}

// errorResult renders an error as a tool result with isError set. The
// text names the operation, the kind, the field and a hint.
func errorResult(tool string, err error) *mcpsdk.CallToolResult {
	var ke *kaizen.Error
	if !errors.As(err, &ke) {
		ke = &kaizen.Error{Op: tool, Kind: kaizen.KindInternal, Message: err.Error()}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s failed (%s)", ke.Op, ke.Kind)
	if ke.Field != "" {
		fmt.Fprintf(&b, ": field %q", ke.Field)
	}
	msg := ke.Message
	if msg == "" && ke.Err != nil {
		msg = ke.Err.Error()
	}
	fmt.Fprintf(&b, ": %s.", strings.TrimSuffix(msg, "."))
	hint := ke.Hint
	next := ke.Next != "" && hasTool(ke.Next)
	if hint == "" {
		hint = defaultHints[ke.Kind]
		if next && ke.Kind == kaizen.KindNotFound {
			hint = "check the id or content" // the tool named below lists them
		}
	}
	if next {
		hint = strings.TrimSuffix(hint, ".") + " (call the " + ke.Next + " tool)"
	}
	if hint != "" {
		fmt.Fprintf(&b, "\nHint: %s.", strings.TrimSuffix(hint, "."))
	}
	res := &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: b.String()}}}
	res.SetError(err)
	return res
}

// hasTool reports whether a tool of that name is registered.
func hasTool(name string) bool {
	for _, n := range ToolNames() {
		if n == name {
			return true
		}
	}
	return false
}
