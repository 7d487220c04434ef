package hook

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
)

// Scope is where setup installs: in the project (files in the repository,
// shared with everyone who clones it) or for the user (files in the home
// directory, for every project).
type Scope string

// The scopes.
const (
	ScopeProject Scope = "project"
	ScopeUser    Scope = "user"
	// ScopeLocal is Claude Code's local scope: this project, for this user
	// only, in files git does not track (.claude/settings.local.json, and
	// the project's entry of ~/.claude.json).
	ScopeLocal Scope = "local"
)

// Scopes lists the scopes of a client, the one setup uses by default first.
func Scopes(c Client) []Scope {
	if c == Claude {
		return []Scope{ScopeProject, ScopeLocal, ScopeUser}
	}
	return []Scope{ScopeProject, ScopeUser}
}

// Paths locates the configuration files of the clients.
type Paths struct {
	// ProjectDir is the project root (project scope).
	ProjectDir string
	// Home is the user's home directory.
	Home string
	// ConfigHome is $XDG_CONFIG_HOME, else ~/.config (opencode).
	ConfigHome string
	// CodexHome is $CODEX_HOME, else ~/.codex.
	CodexHome string
}

// SetupOptions says what to install or uninstall.
type SetupOptions struct {
	Client Client
	Scope  Scope
	Paths  Paths
	// Command is the kaizen command the client runs: the absolute path of
	// the executable and any global flags (--home DIR).
	Command   []string
	Uninstall bool
	// MCPTools is the MCP tool profile the client's MCP server offers
	// ("core", the default, or "full").
	MCPTools string
}

// FileChange is the planned new state of one file.
type FileChange struct {
	Path string
	// Existed: the file exists; Before is its content and Mode its mode.
	Existed bool
	Before  []byte
	Mode    fs.FileMode
	// After is the new content, unless Remove.
	After  []byte
	Remove bool
	// What names the entries setup manages in the file.
	What string
}

// Changed reports whether the file would change.
func (c FileChange) Changed() bool {
	if c.Remove {
		return c.Existed
	}
	return !c.Existed || !bytes.Equal(c.Before, c.After)
}

// SetupPlan is what setup would do: the files, and notes for the user.
type SetupPlan struct {
	Changes []FileChange
	Notes   []string
}

// ReadFunc reads a file; a missing file is an error wrapping fs.ErrNotExist.
type ReadFunc func(path string) ([]byte, fs.FileMode, error)

// hookTimeoutSeconds is the timeout setup gives each hook in the clients
// that take one; the hook itself gives up after two seconds.
const hookTimeoutSeconds = 10

// PlanSetup computes the file changes of `kaizen setup` (or of its
// --uninstall) without writing anything. Existing files are merged into:
// unknown keys, other servers and other hooks are kept, and a file that
// does not parse is an error that names it (it is never overwritten).
func PlanSetup(o SetupOptions, read ReadFunc) (*SetupPlan, error) {
	if len(o.Command) == 0 || o.Command[0] == "" {
		return nil, errors.New("setup: the kaizen command is empty")
	}
	if !slices.Contains(Scopes(o.Client), o.Scope) {
		return nil, fmt.Errorf("setup: scope %q is not one of %s's scopes: %v", o.Scope, o.Client, Scopes(o.Client))
	}
	if (o.Scope == ScopeProject || o.Scope == ScopeLocal) && o.Paths.ProjectDir == "" {
		return nil, errors.New("setup: no project directory")
	}
	if (o.Scope == ScopeUser || o.Scope == ScopeLocal) && o.Paths.Home == "" {
		return nil, errors.New("setup: no home directory")
	}
	s := &planner{o: o, read: read, plan: &SetupPlan{}}
	var err error
	switch o.Client {
	case Claude:
		err = s.claude()
	case Codex:
		err = s.codex()
	case Cursor:
		err = s.cursor()
	case Opencode:
		err = s.opencode()
	default:
		err = fmt.Errorf("setup: unknown client %q: use one of %s", o.Client, joinClients())
	}
	if err != nil {
		return nil, err
	}
	return s.plan, nil
}

type planner struct {
	o    SetupOptions
	read ReadFunc
	plan *SetupPlan
}

func (s *planner) note(format string, args ...any) {
	s.plan.Notes = append(s.plan.Notes, fmt.Sprintf(format, args...))
}

func (s *planner) project(elem ...string) string {
	return filepath.Join(append([]string{s.o.Paths.ProjectDir}, elem...)...)
}

func (s *planner) home(elem ...string) string {
	return filepath.Join(append([]string{s.o.Paths.Home}, elem...)...)
}

// hookCommand is the shell command a client runs for an event.
func (s *planner) hookCommand(event string) string {
	return ShellJoin(append(append([]string{}, s.o.Command...), "hook", string(s.o.Client), event))
}

// mcpArgs are the arguments of the MCP server command.
func (s *planner) mcpArgs() []string {
	tools := s.o.MCPTools
	if tools == "" {
		tools = "core"
	}
	return append(append([]string{}, s.o.Command[1:]...), "mcp", "--tools", tools)
}

func (s *planner) claude() error {
	// Claude Code 2.1.332 (docs/clients.md): project servers in .mcp.json,
	// user servers in ~/.claude.json, local (this project, this user) ones
	// under projects["<dir>"] of ~/.claude.json, all as "mcpServers"; hooks
	// in .claude/settings.json, .claude/settings.local.json or
	// ~/.claude/settings.json.
	mcpPath, container, settings := s.project(".mcp.json"), []string{"mcpServers"}, s.project(".claude", "settings.json")
	switch s.o.Scope {
	case ScopeUser:
		mcpPath, settings = s.home(".claude.json"), s.home(".claude", "settings.json")
	case ScopeLocal:
		mcpPath, settings = s.home(".claude.json"), s.project(".claude", "settings.local.json")
		container = []string{"projects", s.o.Paths.ProjectDir, "mcpServers"}
	}
	if err := s.mcpServer(mcpPath, container, nil, []field{
		{"type", jsonString("stdio")},
		{"command", jsonString(s.o.Command[0])},
		{"args", jsonStrings(s.mcpArgs()...)},
	}, isEmptyDoc); err != nil {
		return err
	}
	// hooks.<Event>[] = {matcher?, hooks: [{type: "command", command,
	// timeout}]}
	if err := s.hooks(settings, nested, nil, isEmptyDoc); err != nil {
		return err
	}
	if !s.o.Uninstall {
		s.note("Claude Code reads its hooks when a session starts: start a new session (or review them with /hooks).")
		switch s.o.Scope {
		case ScopeProject:
			s.note("Claude Code asks once before using the project's MCP servers from .mcp.json.")
		case ScopeLocal:
			s.note(".claude/settings.local.json is for you only: Claude Code keeps it out of git.")
		}
	}
	return nil
}

func (s *planner) codex() error {
	dir := s.o.Paths.CodexHome
	if s.o.Scope == ScopeProject {
		dir = s.project(".codex")
	}
	if dir == "" {
		return errors.New("setup: no Codex home directory")
	}
	if err := s.codexConfig(filepath.Join(dir, "config.toml")); err != nil {
		return err
	}
	// Codex 0.169.0: hooks.json next to the config layer, in Claude
	// Code's shape.
	hooksPath := filepath.Join(dir, "hooks.json")
	if err := s.hooks(hooksPath, nested, nil, isEmptyDoc); err != nil {
		return err
	}
	if !s.o.Uninstall {
		s.note("Codex runs only hooks you have trusted, and skips new or changed ones silently: run `codex` once in a terminal " +
			"and choose \"Trust all and continue\" when it lists kaizen's hooks (or review them with /hooks). Trust is kept per " +
			"hook in ~/.codex/config.toml ([hooks.state]); running setup with another kaizen path or --home changes the hooks and " +
			"asks for trust again.")
		s.note("Workers started with `codex exec` run untrusted hooks only with --dangerously-bypass-hook-trust: trust them " +
			"interactively first.")
		if s.o.Scope == ScopeProject {
			s.note("Codex loads a project's .codex/ directory only when the project is trusted (codex exec --trust, or the prompt " +
				"when codex starts there).")
		}
		s.note("Codex has no tool-failure hook: a PostToolUse whose Bash output starts with a non-zero \"Exit code\" is recorded as a tool failure.")
	}
	return nil
}

func (s *planner) cursor() error {
	dir := s.home(".cursor")
	if s.o.Scope == ScopeProject {
		dir = s.project(".cursor")
	}
	if err := s.mcpServer(filepath.Join(dir, "mcp.json"), []string{"mcpServers"}, nil, []field{
		{"command", jsonString(s.o.Command[0])},
		{"args", jsonStrings(s.mcpArgs()...)},
	}, isEmptyDoc); err != nil {
		return err
	}
	// https://cursor.com/docs/hooks: {"version": 1, "hooks": {"<event>":
	// [{"command": ...}]}}
	newDoc := func() *jsonNode { return jsonObject("version", jsonInt(1)) }
	emptyBut := func(doc *jsonNode) bool { return onlyKeys(doc, "version") }
	if err := s.hooks(filepath.Join(dir, "hooks.json"), flat, newDoc, emptyBut); err != nil {
		return err
	}
	if !s.o.Uninstall {
		s.note("Restart Cursor (or reload the window) to load the hooks.")
		s.note("Cursor rejects a whole hooks.json that names an event it does not know: kaizen's events (sessionStart, " +
			"beforeSubmitPrompt, postToolUse, postToolUseFailure, afterFileEdit, preCompact, stop, sessionEnd) need a Cursor " +
			"with the agent runtime 1.0.32 or later; with an older one, run setup --uninstall.")
	}
	return nil
}

func (s *planner) opencode() error {
	config, plugin := s.project("opencode.json"), s.project(".opencode", "plugins", "kaizen.js")
	if s.o.Scope == ScopeUser {
		base := s.o.Paths.ConfigHome
		if base == "" {
			base = s.home(".config")
		}
		config, plugin = filepath.Join(base, "opencode", "opencode.json"), filepath.Join(base, "opencode", "plugins", "kaizen.js")
	}
	if _, _, err := s.read(config); errors.Is(err, fs.ErrNotExist) {
		jsonc := strings.TrimSuffix(config, ".json") + ".jsonc"
		if _, _, err := s.read(jsonc); err == nil && !s.o.Uninstall {
			return fmt.Errorf("%s exists: kaizen setup edits opencode.json only, and does not rewrite JSONC (its comments would be lost); "+
				"add to its \"mcp\" object: \"kaizen\": {\"type\": \"local\", \"command\": %s, \"enabled\": true}",
				jsonc, strings.TrimSpace(string(jsonStrings(append([]string{s.o.Command[0]}, s.mcpArgs()...)...).encode(""))))
		}
	}
	// https://opencode.ai/docs/mcp-servers: "mcp": {"<name>": {"type":
	// "local", "command": [...], "enabled": true}}
	newDoc := func() *jsonNode { return jsonObject("$schema", jsonString("https://opencode.ai/config.json")) }
	if err := s.mcpServer(config, []string{"mcp"}, newDoc, []field{
		{"type", jsonString("local")},
		{"command", jsonStrings(append([]string{s.o.Command[0]}, s.mcpArgs()...)...)},
		{"enabled", jsonBool(true)},
	}, func(doc *jsonNode) bool { return onlyKeys(doc, "$schema") }); err != nil {
		return err
	}
	// https://opencode.ai/docs/plugins: local plugins are loaded from
	// .opencode/plugins/ and ~/.config/opencode/plugins/.
	if err := s.pluginFile(plugin); err != nil {
		return err
	}
	if !s.o.Uninstall {
		s.note("Restart opencode to load the plugin (one file for opencode 1.x and 2.x); it runs `kaizen hook opencode <event>` " +
			"for session, prompt, tool, file, idle and end events.")
	}
	return nil
}

type field struct {
	key string
	val *jsonNode
}

func isEmptyDoc(doc *jsonNode) bool { return len(doc.keys) == 0 }

// onlyKeys reports whether an object has no members but the given ones.
func onlyKeys(doc *jsonNode, keys ...string) bool {
	for _, k := range doc.keys {
		found := false
		for _, want := range keys {
			found = found || k == want
		}
		if !found {
			return false
		}
	}
	return true
}

// editJSON plans the edit of one JSON file. newDoc makes the document of
// a missing file (nil: an empty object); edit changes the document and
// reports whether it did; empty tells an uninstalled document that has
// nothing left worth keeping, so the file is removed.
func (s *planner) editJSON(path, what string, newDoc func() *jsonNode, edit func(doc *jsonNode) (bool, error),
	empty func(doc *jsonNode) bool) error {
	data, mode, err := s.read(path)
	existed := err == nil
	var doc *jsonNode
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if s.o.Uninstall {
			return nil
		}
		doc = &jsonNode{kind: '{'}
		if newDoc != nil {
			doc = newDoc()
		}
	case err != nil:
		return fmt.Errorf("read %s: %w", path, err)
	default:
		if len(bytes.TrimSpace(data)) == 0 {
			doc = &jsonNode{kind: '{'}
		} else if doc, err = parseJSON(data); err != nil {
			return fmt.Errorf("%s is not valid JSON (%v); kaizen setup leaves it untouched: fix it and run setup again", path, err)
		}
		if !doc.isObject() {
			return fmt.Errorf("%s does not hold a JSON object; kaizen setup leaves it untouched", path)
		}
	}
	changed, err := edit(doc)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	c := FileChange{Path: path, Existed: existed, Before: data, Mode: mode, What: what}
	switch {
	case !changed:
		c.After = data
	case s.o.Uninstall && empty(doc):
		c.Remove = true
	default:
		indent := "  "
		if existed {
			indent = detectIndent(data)
		}
		c.After = doc.encode(indent)
	}
	if !existed && !c.Changed() {
		return nil
	}
	s.plan.Changes = append(s.plan.Changes, c)
	return nil
}

// mcpServer adds, updates or removes the "kaizen" member of the servers
// object at the container path (nested objects, created when missing).
// Only the fields kaizen sets are updated, so fields a user added to the
// entry (env, timeouts) stay.
func (s *planner) mcpServer(path string, container []string, newDoc func() *jsonNode, fields []field, empty func(*jsonNode) bool) error {
	return s.editJSON(path, "MCP server \"kaizen\"", newDoc, func(doc *jsonNode) (bool, error) {
		parents := []*jsonNode{doc}
		servers := doc
		for _, key := range container {
			next := servers.get(key)
			if next != nil && !next.isObject() {
				return false, fmt.Errorf("%q is not an object", strings.Join(container, "."))
			}
			if next == nil {
				if s.o.Uninstall {
					return false, nil
				}
				next = &jsonNode{kind: '{'}
				servers.set(key, next)
			}
			parents = append(parents, next)
			servers = next
		}
		if s.o.Uninstall {
			kz := servers.get("kaizen")
			if kz == nil {
				return false, nil
			}
			if !s.isKaizenServer(kz) {
				s.note("%s: left the MCP server \"kaizen\" in place: it does not run a kaizen executable", path)
				return false, nil
			}
			servers.del("kaizen")
			// drop the objects left empty, from the servers object up
			for i := len(parents) - 1; i > 0 && len(parents[i].keys) == 0; i-- {
				parents[i-1].del(container[i-1])
			}
			return true, nil
		}
		kz := servers.get("kaizen")
		if !kz.isObject() {
			kz = &jsonNode{kind: '{'}
			servers.set("kaizen", kz)
			for _, f := range fields {
				kz.set(f.key, f.val)
			}
			return true, nil
		}
		changed := false
		for _, f := range fields {
			if !kz.get(f.key).equal(f.val) {
				kz.set(f.key, f.val)
				changed = true
			}
		}
		return changed, nil
	}, empty)
}

// isKaizenServer tells kaizen's own MCP entry: its command (or the first
// element of an opencode command array) is a kaizen executable.
func (s *planner) isKaizenServer(entry *jsonNode) bool {
	cmd := entry.get("command")
	if cmd.isArray() && len(cmd.elems) > 0 {
		cmd = cmd.elems[0]
	}
	return s.isKaizenExecutable(cmd.str())
}

// isKaizenExecutable tells a kaizen executable: one named kaizen…, or the
// one setup writes now.
func (s *planner) isKaizenExecutable(path string) bool {
	base := strings.ToLower(filepath.Base(path))
	return path != "" && (strings.HasPrefix(base, "kaizen") || path == s.o.Command[0])
}

// hookLayout is how a client nests its hook handlers.
type hookLayout int

const (
	// nested: hooks.<Event> = [{matcher?, hooks: [{type, command, timeout}]}]
	// (Claude Code, Codex).
	nested hookLayout = iota
	// flat: hooks.<event> = [{command}] (Cursor).
	flat
)

// hooks installs one hook handler per event of the client (updating an
// existing kaizen handler in place), or removes every kaizen handler of
// the client. Other handlers, matcher groups and keys are kept.
func (s *planner) hooks(path string, layout hookLayout, newDoc func() *jsonNode, empty func(*jsonNode) bool) error {
	names := Events(s.o.Client)
	return s.editJSON(path, "hooks "+strings.Join(names, ", "), newDoc, func(doc *jsonNode) (bool, error) {
		hooks := doc.get("hooks")
		if hooks != nil && !hooks.isObject() {
			return false, errors.New(`"hooks" is not an object`)
		}
		if s.o.Uninstall {
			if hooks == nil {
				return false, nil
			}
			changed := false
			for _, event := range append([]string(nil), hooks.keys...) {
				arr := hooks.get(event)
				if arr.isArray() && s.removeHandlers(arr, layout, "") {
					changed = true
					if len(arr.elems) == 0 {
						hooks.del(event)
					}
				}
			}
			if changed && len(hooks.keys) == 0 {
				doc.del("hooks")
			}
			return changed, nil
		}
		if hooks == nil {
			hooks = &jsonNode{kind: '{'}
			doc.set("hooks", hooks)
		}
		changed := false
		for _, event := range names {
			arr := hooks.get(event)
			if arr == nil {
				arr = &jsonNode{kind: '['}
				hooks.set(event, arr)
			}
			if !arr.isArray() {
				return false, fmt.Errorf("hooks.%s is not an array", event)
			}
			if s.installHandler(arr, layout, event) {
				changed = true
			}
		}
		return changed, nil
	}, empty)
}

// handlerFields are the fields kaizen sets on its handler of an event.
func (s *planner) handlerFields(layout hookLayout, event string) []field {
	if layout == flat {
		return []field{{"command", jsonString(s.hookCommand(event))}}
	}
	return []field{
		{"type", jsonString("command")},
		{"command", jsonString(s.hookCommand(event))},
		{"timeout", jsonInt(hookTimeoutSeconds)},
	}
}

// handlerSlot is one handler inside an event's array.
type handlerSlot struct {
	group, index int // index is -1 in the flat layout
	node         *jsonNode
}

// ourHandlers finds the kaizen handlers of the client in an event's array
// (of event, or of any event when event is "").
func (s *planner) ourHandlers(arr *jsonNode, layout hookLayout, event string) []handlerSlot {
	var out []handlerSlot
	match := func(h *jsonNode) bool {
		ev, ok := parseHookCommand(h.get("command").str(), s.o.Client, s.isKaizenExecutable)
		return ok && (event == "" || ev == event)
	}
	for g, el := range arr.elems {
		if layout == flat {
			if el.isObject() && match(el) {
				out = append(out, handlerSlot{group: g, index: -1, node: el})
			}
			continue
		}
		inner := el.get("hooks")
		if !inner.isArray() {
			continue
		}
		for i, h := range inner.elems {
			if h.isObject() && match(h) {
				out = append(out, handlerSlot{group: g, index: i, node: h})
			}
		}
	}
	return out
}

func (s *planner) installHandler(arr *jsonNode, layout hookLayout, event string) bool {
	fields := s.handlerFields(layout, event)
	ours := s.ourHandlers(arr, layout, event)
	if len(ours) == 0 {
		h := &jsonNode{kind: '{'}
		for _, f := range fields {
			h.set(f.key, f.val)
		}
		if layout == flat {
			arr.elems = append(arr.elems, h)
		} else {
			arr.elems = append(arr.elems, jsonObject("hooks", &jsonNode{kind: '[', elems: []*jsonNode{h}}))
		}
		return true
	}
	changed := false
	first := ours[0].node
	for _, f := range fields {
		if !first.get(f.key).equal(f.val) {
			first.set(f.key, f.val)
			changed = true
		}
	}
	if len(ours) > 1 {
		// duplicates (from an older setup): keep the first
		s.removeSlots(arr, layout, ours[1:])
		changed = true
	}
	return changed
}

// removeHandlers removes the client's kaizen handlers (of event, or all
// when event is ""), and the matcher groups they leave empty.
func (s *planner) removeHandlers(arr *jsonNode, layout hookLayout, event string) bool {
	ours := s.ourHandlers(arr, layout, event)
	if len(ours) == 0 {
		return false
	}
	s.removeSlots(arr, layout, ours)
	return true
}

func (s *planner) removeSlots(arr *jsonNode, layout hookLayout, slots []handlerSlot) {
	drop := map[*jsonNode]bool{}
	for _, sl := range slots {
		drop[sl.node] = true
	}
	var kept []*jsonNode
	for _, el := range arr.elems {
		if layout == flat {
			if !drop[el] {
				kept = append(kept, el)
			}
			continue
		}
		inner := el.get("hooks")
		if !inner.isArray() {
			kept = append(kept, el)
			continue
		}
		var keptInner []*jsonNode
		for _, h := range inner.elems {
			if !drop[h] {
				keptInner = append(keptInner, h)
			}
		}
		if len(keptInner) == len(inner.elems) {
			kept = append(kept, el)
			continue
		}
		if len(keptInner) > 0 {
			inner.elems = keptInner
			kept = append(kept, el)
		}
	}
	arr.elems = kept
}

// parseHookCommand recognises a command that setup wrote for a client:
// a kaizen executable, then `hook <client> <event>` (global flags may come
// between). It returns the event.
func parseHookCommand(command string, c Client, isKaizen func(string) bool) (string, bool) {
	words := ShellSplit(command)
	if len(words) < 3 || !isKaizen(words[0]) {
		return "", false
	}
	for i := 1; i+1 < len(words); i++ {
		if words[i] == "hook" && words[i+1] == string(c) {
			if i+2 < len(words) {
				return words[i+2], true
			}
			return "", true
		}
	}
	return "", false
}

// codexConfig plans the edit of Codex's config.toml.
func (s *planner) codexConfig(path string) error {
	data, mode, err := s.read(path)
	existed := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if !existed && s.o.Uninstall {
		return nil
	}
	c := FileChange{Path: path, Existed: existed, Before: data, Mode: mode,
		What: "MCP server [mcp_servers.kaizen]"}
	if s.o.Uninstall {
		out, empty, err := codexConfigUninstall(data)
		if err != nil {
			return fmt.Errorf("%s: %v; kaizen setup leaves it untouched", path, err)
		}
		switch {
		case empty:
			c.Remove = true
		case out == nil:
			c.After = data
		default:
			c.After = out
		}
	} else {
		// Codex 0.169.0: [mcp_servers.<name>] command, args; hooks are
		// on by default (no [features] flag).
		out, notes, err := codexConfigInstall(data, codexServer{Command: s.o.Command[0], Args: s.mcpArgs()})
		if err != nil {
			return fmt.Errorf("%s: %v; kaizen setup leaves it untouched: fix it and run setup again", path, err)
		}
		for _, n := range notes {
			s.note("%s: %s", path, n)
		}
		c.After = data
		if out != nil {
			c.After = out
		}
	}
	if existed || c.Changed() {
		s.plan.Changes = append(s.plan.Changes, c)
	}
	return nil
}

//go:embed opencode_plugin.js
var opencodePlugin string

// pluginMarker identifies the plugin file setup writes.
const pluginMarker = "kaizen-setup: managed file"

// OpencodePlugin is the opencode plugin that runs command (argv).
func OpencodePlugin(command []string) []byte {
	b, _ := marshalNoHTML(command)
	return []byte(strings.Replace(opencodePlugin, "__KAIZEN_COMMAND__", string(b), 1))
}

func (s *planner) pluginFile(path string) error {
	data, mode, err := s.read(path)
	existed := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	ours := existed && bytes.Contains(data, []byte(pluginMarker))
	c := FileChange{Path: path, Existed: existed, Before: data, Mode: mode, What: "opencode plugin"}
	switch {
	case s.o.Uninstall && !existed:
		return nil
	case s.o.Uninstall && !ours:
		s.note("%s: left in place: it was not written by kaizen setup", path)
		return nil
	case s.o.Uninstall:
		c.Remove = true
	case existed && !ours:
		return fmt.Errorf("%s exists and was not written by kaizen setup; move it away and run setup again", path)
	default:
		c.After = OpencodePlugin(s.o.Command)
	}
	s.plan.Changes = append(s.plan.Changes, c)
	return nil
}

// ShellJoin quotes words for a POSIX shell (the clients run hook commands
// through one).
func ShellJoin(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = shellQuote(w)
	}
	return strings.Join(q, " ")
}

func shellQuote(w string) string {
	if w == "" {
		return "''"
	}
	safe := true
	for _, r := range w {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./:=@%+,", r)) {
			safe = false
			break
		}
	}
	if safe {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// ShellSplit splits a command line into words, understanding single and
// double quotes and backslash escapes (enough to read back ShellJoin and
// hand-written commands).
func ShellSplit(s string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				cur.WriteString(s[i+1:])
				i = len(s)
			} else {
				cur.WriteString(s[i+1 : i+1+j])
				i += j + 1
			}
		case c == '"':
			inWord = true
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
		case c == '\\' && i+1 < len(s):
			inWord = true
			i++
			cur.WriteByte(s[i])
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			inWord = true
			cur.WriteByte(c)
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
