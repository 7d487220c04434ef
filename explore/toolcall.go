package explore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ToolKind is what a tool call does for exploration.
type ToolKind string

// Tool kinds. Search calls consume the search budget; read, list, query and
// exec calls bring information; submit and finding calls are output and never
// count as new information.
const (
	KindSearch  ToolKind = "search"  // content or web search (Grep, Glob, WebSearch, code.search)
	KindRead    ToolKind = "read"    // read one file or page (Read, WebFetch, code.read)
	KindList    ToolKind = "list"    // structure or directory listing (LS, code.structure)
	KindQuery   ToolKind = "query"   // structured query (graph.*)
	KindExec    ToolKind = "exec"    // shell command (Bash)
	KindWrite   ToolKind = "write"   // file change (Edit, Write)
	KindSubmit  ToolKind = "submit"  // knowledge submission, counted against max_submits
	KindFinding ToolKind = "finding" // recorded finding (note_finding)
	KindOther   ToolKind = "other"   // anything else
)

func (k ToolKind) valid() bool {
	switch k {
	case KindSearch, KindRead, KindList, KindQuery, KindExec, KindWrite, KindSubmit, KindFinding, KindOther:
		return true
	}
	return false
}

// evidence reports whether a successful call of this kind is evidence about
// the code base (the evidence-gated analyst counts them).
func (k ToolKind) evidence() bool {
	switch k {
	case KindSearch, KindRead, KindList, KindQuery, KindExec:
		return true
	}
	return false
}

// CallStatus is the outcome of a tool call.
type CallStatus string

// Call statuses. The empty status means ok.
const (
	StatusOK        CallStatus = "ok"
	StatusError     CallStatus = "error"
	StatusRejected  CallStatus = "rejected"  // a submit the knowledge base refused
	StatusDuplicate CallStatus = "duplicate" // a submit of something already known
)

// ToolCall describes one tool call as an agent hook reports it; for Claude
// Code's PostToolUse: Name = tool_name, Args = tool_input, Output = the text of
// tool_response, Status = error when the tool failed.
type ToolCall struct {
	Name   string         `json:"name"`
	Args   map[string]any `json:"args,omitempty"`
	Status CallStatus     `json:"status,omitempty"`
	// Output is the result text; search hits in it ("path:12:…" lines) count as seen files.
	Output string `json:"output,omitempty"`
	// Files lists files the result showed, when the caller knows them.
	Files []string `json:"files,omitempty"`
	// Hits is the number of results a search returned, when the caller
	// knows it. A search counts against the search budget only when it
	// found something: Hits > 0, else hits in Files or Output (an empty
	// Output or a "no matches" reply is nothing found); a call that reports
	// neither Hits nor any output counts (nothing is known).
	Hits *int `json:"hits,omitempty"`
}

// emptyResult matches the replies of a search that found nothing.
var emptyResult = regexp.MustCompile(`(?i)^\s*(no\s+(matches|results|files|matching\s+\w+)(\s+(were\s+)?found)?|found\s+0\s+\w+|0\s+(matches|results|files)(\s+found)?|nothing\s+found|none|\[\]|\{\})[.!]?\s*$`)

// found reports whether a search call found something (see Hits).
func (c ToolCall) found() bool {
	switch {
	case c.Hits != nil:
		return *c.Hits > 0
	case len(c.Files) > 0:
		return true
	case c.Output == "":
		return true // nothing reported: nothing known
	}
	return strings.TrimSpace(c.Output) != "" && !emptyResult.MatchString(c.Output)
}

const maxToolNameLen = 256

// Validate reports a call without a name or with an unknown status.
func (c ToolCall) Validate() error {
	name := strings.TrimSpace(c.Name)
	if name == "" {
		return fmt.Errorf("%w: empty tool name", ErrInvalidToolCall)
	}
	if len(name) > maxToolNameLen {
		return fmt.Errorf("%w: tool name longer than %d bytes", ErrInvalidToolCall, maxToolNameLen)
	}
	switch c.Status {
	case "", StatusOK, StatusError, StatusRejected, StatusDuplicate:
		return nil
	}
	return fmt.Errorf("%w: unknown status %q (want ok, error, rejected or duplicate)", ErrInvalidToolCall, c.Status)
}

func (c ToolCall) ok() bool { return c.Status == "" || c.Status == StatusOK }

// CallResult is what RecordToolCall learned from one call.
type CallResult struct {
	Kind ToolKind `json:"kind"`
	// New is true when the call added a file, pattern or query not seen before.
	New bool `json:"new"`
	// Ignored is true when the session had already exited.
	Ignored bool `json:"ignored,omitempty"`
}

// DefaultToolKinds returns the default classification of common agent tools,
// keyed by lower-case tool name, optionally "tool.action" (the action comes
// from a dotted name like "code.search" or from args["action"]). MCP names
// "mcp__server__tool" are looked up by their last segment. Strategies extend
// or override it with their Tools map.
func DefaultToolKinds() map[string]ToolKind {
	m := make(map[string]ToolKind, len(defaultToolKinds))
	for k, v := range defaultToolKinds {
		m[k] = v
	}
	return m
}

var defaultToolKinds = map[string]ToolKind{
	// Claude Code, opencode, Codex, Cursor and generic MCP names.
	"grep": KindSearch, "glob": KindSearch, "search": KindSearch, "websearch": KindSearch,
	"web_search": KindSearch, "search_code": KindSearch, "codebase_search": KindSearch,
	"grep_search": KindSearch, "file_search": KindSearch, "ripgrep": KindSearch, "find": KindSearch,
	"read": KindRead, "view": KindRead, "read_file": KindRead, "notebookread": KindRead,
	"webfetch": KindRead, "web_fetch": KindRead, "fetch": KindRead, "open_file": KindRead,
	"get_file_contents": KindRead, "read_many_files": KindRead,
	"ls": KindList, "list": KindList, "list_dir": KindList, "list_directory": KindList, "tree": KindList,
	"bash": KindExec, "shell": KindExec, "terminal": KindExec, "exec": KindExec,
	"run_terminal_cmd": KindExec, "run_command": KindExec, "execute_command": KindExec,
	"edit": KindWrite, "multiedit": KindWrite, "write": KindWrite, "notebookedit": KindWrite,
	"create_file": KindWrite, "apply_patch": KindWrite, "str_replace_based_edit_tool": KindWrite,
	"write_file": KindWrite, "edit_file": KindWrite,
	// The peer's tool families (code.*, graph.*, knowledge.*, memory.*).
	"code.search": KindSearch, "code.read": KindRead, "code.outline": KindRead, "code.write": KindWrite,
	"code.structure": KindList, "graph": KindQuery, "graph.query": KindSearch, "graph.overview": KindList,
	"terminal.exec":    KindExec,
	"submit_knowledge": KindSubmit, "submit_with_check": KindSubmit, "collect_scan_recipe": KindSubmit,
	"knowledge": KindSubmit, "knowledge.submit": KindSubmit, "knowledge.submit_batch": KindSubmit,
	"submit_batch": KindSubmit,
	"note_finding": KindFinding, "memory.note_finding": KindFinding,
}

// searchCommands are shell programs whose use counts as a search action.
var searchCommands = map[string]bool{"grep": true, "rg": true, "ag": true, "ack": true, "find": true, "fd": true, "git-grep": true}

// classify returns the kind of a call: strategy overrides first, then the defaults.
func classify(overrides map[string]ToolKind, c *ToolCall) ToolKind {
	name := strings.TrimSpace(c.Name)
	if !isLower(name) {
		name = strings.ToLower(name)
	}
	if i := strings.LastIndex(name, "__"); i >= 0 && strings.HasPrefix(name, "mcp__") {
		name = name[i+2:]
	}
	base, action := name, ""
	if i := strings.IndexByte(name, '.'); i > 0 {
		base, action = name[:i], name[i+1:]
	} else if a, ok := c.Args["action"].(string); ok && a != "" {
		action = strings.ToLower(a)
	}
	lookup := func(key string) (ToolKind, bool) {
		if k, ok := overrides[key]; ok {
			return k, true
		}
		k, ok := defaultToolKinds[key]
		return k, ok
	}
	if action != "" {
		if k, ok := lookup(base + "." + action); ok {
			return k
		}
	}
	k, ok := lookup(name)
	if !ok && base != name {
		k, ok = lookup(base)
	}
	if !ok {
		return KindOther
	}
	if k == KindExec && searchCommands[commandProgram(commandOf(c))] {
		return KindSearch
	}
	return k
}

func isLower(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			return false
		}
	}
	return true
}

// commandOf returns a shell command from common argument names.
func commandOf(c *ToolCall) string {
	for _, k := range [...]string{"command", "cmd", "script"} {
		if s, ok := c.Args[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

func commandProgram(cmd string) string {
	fields := strings.Fields(cmd)
	if len(fields) == 0 {
		return ""
	}
	if fields[0] == "git" && len(fields) > 1 && fields[1] == "grep" {
		return "git-grep"
	}
	return path.Base(fields[0])
}

// Argument names that carry file paths, search patterns and list targets.
var (
	pathArgs    = [...]string{"file_path", "path", "filePath", "notebook_path", "file", "url", "filename"}
	pathsArgs   = [...]string{"filePaths", "file_paths", "paths", "files"}
	patternArgs = [...]string{"pattern", "patterns", "query", "regex", "q", "search", "glob", "keyword"}
	listArgs    = [...]string{"path", "dir", "directory", "pattern", "target"}
)

// observer receives the keys a call contributes; it reports whether the key was new.
type observer interface {
	addFile(string) bool
	addPattern(string) bool
	addQuery(string) bool
}

// observe feeds the call's keys to o and reports whether any was new.
func observe(o observer, kind ToolKind, c *ToolCall) bool {
	name := c.Name
	isNew := false
	switch kind {
	case KindSubmit, KindFinding:
		return false
	case KindRead, KindWrite:
		found := false
		eachString(c.Args, pathArgs[:], pathsArgs[:], func(p string) {
			if p = normPath(p); p != "" {
				found = true
				isNew = o.addFile(p) || isNew
			}
		})
		if !found {
			isNew = o.addQuery(genericKey(name, c.Args))
		}
	case KindSearch:
		found := false
		eachString(c.Args, patternArgs[:], nil, func(p string) {
			if p = normSpace(p); p != "" {
				found = true
				isNew = o.addPattern(p) || isNew
			}
		})
		if cmd := commandOf(c); !found && cmd != "" {
			found = true
			isNew = o.addQuery(commandKey(cmd))
		}
		if !found {
			isNew = o.addQuery(genericKey(name, c.Args))
		}
		for _, f := range c.Files {
			if f = normPath(f); f != "" {
				isNew = o.addFile(f) || isNew
			}
		}
		eachHitFile(c.Output, func(f string) { isNew = o.addFile(f) || isNew })
	case KindList:
		target := "/"
		for _, k := range listArgs {
			if s, ok := c.Args[k].(string); ok && strings.TrimSpace(s) != "" {
				target = normPath(s)
				break
			}
		}
		isNew = o.addQuery("list:" + target)
	case KindExec:
		if cmd := commandOf(c); cmd != "" {
			isNew = o.addQuery(commandKey(cmd))
		} else {
			isNew = o.addQuery(genericKey(name, c.Args))
		}
	default:
		isNew = o.addQuery(genericKey(name, c.Args))
	}
	return isNew
}

// eachString calls f for every string under the single-value keys and every
// string element under the list keys.
func eachString(args map[string]any, single, lists []string, f func(string)) {
	for _, k := range single {
		switch v := args[k].(type) {
		case string:
			f(v)
		case []any:
			for _, e := range v {
				if s, ok := e.(string); ok {
					f(s)
				}
			}
		case []string:
			for _, s := range v {
				f(s)
			}
		}
	}
	if lists != nil {
		eachString(args, lists, nil, f)
	}
}

func normPath(p string) string {
	p = strings.TrimSpace(p)
	if p == "" {
		return ""
	}
	if strings.Contains(p, "://") {
		return p
	}
	p = path.Clean(strings.ReplaceAll(p, `\`, "/"))
	if p == "." {
		return ""
	}
	return p
}

func normSpace(s string) string {
	s = strings.TrimSpace(s)
	if !strings.ContainsAny(s, "\t\n\r") && !strings.Contains(s, "  ") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// commandKey normalises a shell command; long commands keep a 100-character
// prefix plus a hash of the whole, so distinct commands never collide.
func commandKey(cmd string) string {
	cmd = normSpace(cmd)
	if utf8.RuneCountInString(cmd) <= 100 {
		return "exec:" + cmd
	}
	return "exec:" + string([]rune(cmd)[:100]) + "#" + hashString(cmd)
}

// genericKey identifies a call by tool name and a hash of its arguments
// (fmt prints maps with sorted keys, so the hash does not depend on key order).
func genericKey(name string, args map[string]any) string {
	h := fnv.New64a()
	fmt.Fprint(h, args)
	return strings.ToLower(strings.TrimSpace(name)) + "#" + strconv.FormatUint(h.Sum64(), 16)
}

func hashString(s string) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	return strconv.FormatUint(h.Sum64(), 16)
}

const (
	maxScannedOutput = 64 << 10
	maxHitFiles      = 200
)

// eachHitFile finds file paths in search output: grep-style "path:12:" or
// "path-12-" hit lines and "── path ──" group separators.
func eachHitFile(out string, f func(string)) {
	if len(out) > maxScannedOutput {
		out = out[:maxScannedOutput]
	}
	n := 0
	for line := range strings.Lines(out) {
		if n >= maxHitFiles {
			return
		}
		line = strings.TrimSpace(line)
		if p, ok := strings.CutPrefix(line, "──"); ok {
			if p, ok = strings.CutSuffix(p, "──"); ok {
				if p = normPath(p); p != "" && !strings.ContainsRune(p, ' ') {
					f(p)
					n++
				}
			}
			continue
		}
		if p := hitPath(line); p != "" {
			f(p)
			n++
		}
	}
}

// hitPath returns the path of a "path:line:" or "path-line-" hit line.
func hitPath(line string) string {
	i := strings.IndexAny(line, ":")
	if i <= 0 {
		return ""
	}
	p := line[:i]
	if strings.ContainsAny(p, " \t") || !strings.ContainsAny(p, "./") {
		return ""
	}
	rest := line[i+1:]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	if j == 0 || j == len(rest) || (rest[j] != ':' && rest[j] != '-') {
		return ""
	}
	return normPath(p)
}

// Finding evidence: a "file.ext:12" reference, or a path key next to a line key.
var (
	lineArgs  = [...]string{"line", "lines", "start_line", "startLine", "line_start", "range", "line_range"}
	slotArgs  = [...]string{"slot", "depth", "dimension", "aspect"}
	depthSlot = map[string]bool{
		"designintent": true, "design_intent": true, "boundaries": true,
		"failuremodes": true, "failure_modes": true, "tradeoffs": true, "trade_offs": true,
	}
)

// findingQuality reports whether a finding cites file-and-line evidence and
// whether it fills a depth slot (design intent, boundaries, failure modes, trade-offs).
func findingQuality(args map[string]any) (verified, depth bool) {
	hasPath, hasLine := false, false
	for _, k := range pathArgs {
		if s, ok := args[k].(string); ok && s != "" {
			hasPath = true
		}
	}
	for _, k := range lineArgs {
		if v, ok := args[k]; ok && v != nil {
			hasLine = true
		}
	}
	verified = hasPath && hasLine || anyString(args, 3, hasFileLineRef)
	for _, k := range slotArgs {
		if s, ok := args[k].(string); ok && depthSlot[strings.ToLower(s)] {
			depth = true
		}
	}
	return verified, depth
}

func anyString(v any, depth int, pred func(string) bool) bool {
	if depth < 0 {
		return false
	}
	switch v := v.(type) {
	case string:
		return pred(v)
	case map[string]any:
		for _, e := range v {
			if anyString(e, depth-1, pred) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if anyString(e, depth-1, pred) {
				return true
			}
		}
	}
	return false
}

// hasFileLineRef reports whether s contains "name.ext:digits".
func hasFileLineRef(s string) bool {
	for i := 1; i+1 < len(s); i++ {
		if s[i] != ':' || s[i+1] < '0' || s[i+1] > '9' {
			continue
		}
		j := i - 1
		for j >= 0 && s[j] != ' ' && s[j] != '(' && s[j] != '`' && s[j] != '"' {
			j--
		}
		word := s[j+1 : i]
		if dot := strings.LastIndexByte(word, '.'); dot > 0 && dot < len(word)-1 {
			return true
		}
	}
	return false
}

// argsText is the lower-cased text of a call's name and string arguments,
// matched against plan-step keywords.
func argsText(c *ToolCall) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(c.Name))
	for _, v := range c.Args {
		anyString(v, 2, func(s string) bool {
			b.WriteByte(' ')
			b.WriteString(strings.ToLower(s))
			return false
		})
	}
	return b.String()
}

// maxHookPayload bounds the tool input and response ToolCallFromHook decodes.
const maxHookPayload = 8 << 20

// ToolCallFromHook builds a ToolCall from an agent hook's tool event, such as
// Claude Code's PostToolUse payload (tool_name, tool_input, tool_response).
// The input must be a JSON object (or empty). The response may be a JSON
// string, or an object (Claude Code's {"file": {"filePath", "content"}},
// {"filenames": [...]}, {"stdout", "stderr"}…): its content, stdout, stderr,
// output, result and text strings, at any depth up to 4 and in key order,
// become Output (at most MaxHookOutput bytes), and its filePath, file_path,
// path, filenames and files become Files (at most MaxHookFiles). A response
// with is_error/isError true or a non-empty error field marks the call as
// failed. Errors wrap ErrInvalidToolCall.
func ToolCallFromHook(name string, input, response json.RawMessage) (ToolCall, error) {
	c := ToolCall{Name: name}
	if len(input) > maxHookPayload || len(response) > maxHookPayload {
		return ToolCall{}, fmt.Errorf("%w: hook payload larger than %d bytes", ErrInvalidToolCall, maxHookPayload)
	}
	if len(bytes.TrimSpace(input)) > 0 && string(bytes.TrimSpace(input)) != "null" {
		if err := json.Unmarshal(input, &c.Args); err != nil {
			return ToolCall{}, fmt.Errorf("%w: tool input is not a JSON object: %v", ErrInvalidToolCall, err)
		}
	}
	var resp any
	if len(bytes.TrimSpace(response)) > 0 {
		if err := json.Unmarshal(response, &resp); err != nil {
			return ToolCall{}, fmt.Errorf("%w: tool response is not JSON: %v", ErrInvalidToolCall, err)
		}
	}
	var parts responseParts
	parts.walk(resp, "", 0)
	c.Output, c.Files = parts.output(), parts.files
	if len(bytes.TrimSpace(response)) > 0 {
		// a response was given: how many results it holds is known
		n := 0
		if r, ok := resp.(map[string]any); ok {
			for _, k := range []string{"numFiles", "numMatches", "numLines", "totalMatches", "num_results", "count"} {
				if f, ok := r[k].(float64); ok && f > float64(n) {
					n = int(f)
				}
			}
		}
		if n == 0 && (len(c.Files) > 0 || (strings.TrimSpace(c.Output) != "" && !emptyResult.MatchString(c.Output))) {
			n = 1
		}
		c.Hits = &n
	}
	if r, ok := resp.(map[string]any); ok {
		failed, _ := r["is_error"].(bool)
		if b, _ := r["isError"].(bool); b {
			failed = true
		}
		if s, _ := r["error"].(string); s != "" {
			failed = true
		}
		if failed {
			c.Status = StatusError
		}
	}
	return c, c.Validate()
}

// Bounds of what ToolCallFromHook takes from a response.
const (
	MaxHookOutput = 64 << 10
	MaxHookFiles  = 1000
)

// responseParts collects from a tool response the text a model would read
// and the files it names.
type responseParts struct {
	text  []string
	files []string
	size  int
}

var (
	responseFileKeys = map[string]bool{"filePath": true, "file_path": true, "path": true, "filenames": true, "files": true}
	responseTextKeys = map[string]bool{"content": true, "stdout": true, "stderr": true, "output": true, "result": true, "text": true}
)

func (r *responseParts) walk(v any, key string, depth int) {
	if depth > 4 {
		return
	}
	switch x := v.(type) {
	case string:
		switch {
		case x == "":
		case responseFileKeys[key]:
			r.addFile(x)
		case (key == "" || responseTextKeys[key]) && r.size < MaxHookOutput:
			r.text = append(r.text, x)
			r.size += len(x) + 1
		}
	case []any:
		for _, e := range x {
			r.walk(e, key, depth+1)
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			r.walk(x[k], k, depth+1)
		}
	}
}

func (r *responseParts) addFile(f string) {
	if f = strings.TrimSpace(f); f != "" && len(r.files) < MaxHookFiles {
		r.files = append(r.files, f)
	}
}

// output joins the texts, cut to MaxHookOutput bytes at a character boundary.
func (r *responseParts) output() string {
	s := strings.Join(r.text, "\n")
	if len(s) <= MaxHookOutput {
		return s
	}
	cut := MaxHookOutput
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
