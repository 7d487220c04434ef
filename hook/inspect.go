package hook

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Installation is what kaizen setup left in one scope of a client, as
// found in the client's files.
type Installation struct {
	Client Client `json:"client"`
	Scope  Scope  `json:"scope"`
	// HooksFile holds the hooks (the plugin file for opencode).
	HooksFile string `json:"hooks_file"`
	// Events have a kaizen handler; Missing are the events setup installs
	// that have none; Duplicated have more than one.
	Events     []string `json:"events"`
	Missing    []string `json:"missing,omitempty"`
	Duplicated []string `json:"duplicated,omitempty"`
	// Commands are the kaizen executables the hooks and the MCP server run.
	Commands []string `json:"commands"`
	// MCPFile holds the MCP server entry; MCP tells whether it is there.
	MCPFile string `json:"mcp_file"`
	MCP     bool   `json:"mcp"`
	// Problem is set when a file could not be read or parsed.
	Problem string `json:"problem,omitempty"`
}

// Installed reports whether anything of kaizen is in this scope.
func (in Installation) Installed() bool { return len(in.Events) > 0 || in.MCP }

// installFiles locates a client's files in a scope: the MCP file and the
// path of containers to the servers object, and the hooks file.
func installFiles(c Client, scope Scope, p Paths) (mcp string, container []string, hooks string) {
	project := func(elem ...string) string { return filepath.Join(append([]string{p.ProjectDir}, elem...)...) }
	home := func(elem ...string) string { return filepath.Join(append([]string{p.Home}, elem...)...) }
	switch c {
	case Claude:
		switch scope {
		case ScopeUser:
			return home(".claude.json"), []string{"mcpServers"}, home(".claude", "settings.json")
		case ScopeLocal:
			return home(".claude.json"), []string{"projects", p.ProjectDir, "mcpServers"}, project(".claude", "settings.local.json")
		}
		return project(".mcp.json"), []string{"mcpServers"}, project(".claude", "settings.json")
	case Codex:
		dir := p.CodexHome
		if scope == ScopeProject {
			dir = project(".codex")
		}
		return filepath.Join(dir, "config.toml"), []string{"mcp_servers"}, filepath.Join(dir, "hooks.json")
	case Cursor:
		dir := home(".cursor")
		if scope == ScopeProject {
			dir = project(".cursor")
		}
		return filepath.Join(dir, "mcp.json"), []string{"mcpServers"}, filepath.Join(dir, "hooks.json")
	case Opencode:
		if scope == ScopeUser {
			base := p.ConfigHome
			if base == "" {
				base = home(".config")
			}
			return filepath.Join(base, "opencode", "opencode.json"), []string{"mcp"}, filepath.Join(base, "opencode", "plugins", "kaizen.js")
		}
		return project("opencode.json"), []string{"mcp"}, project(".opencode", "plugins", "kaizen.js")
	}
	return "", nil, ""
}

var pluginCommand = regexp.MustCompile(`(?m)^const KAIZEN = (\[.*\])$`)

// Inspect reads what kaizen setup installed for a client in each of its
// scopes (only the scopes where something is found are returned).
func Inspect(c Client, p Paths, read ReadFunc) []Installation {
	var out []Installation
	for _, scope := range Scopes(c) {
		if (scope == ScopeProject || scope == ScopeLocal) && p.ProjectDir == "" {
			continue
		}
		in := Installation{Client: c, Scope: scope, Events: []string{}, Commands: []string{}}
		mcpPath, container, hooksPath := installFiles(c, scope, p)
		in.MCPFile, in.HooksFile = mcpPath, hooksPath
		s := &planner{o: SetupOptions{Client: c, Command: []string{"kaizen"}}, read: read, plan: &SetupPlan{}}
		addCmd := func(cmd string) {
			if cmd != "" && !slices.Contains(in.Commands, cmd) {
				in.Commands = append(in.Commands, cmd)
			}
		}
		var problems []string
		// the MCP server
		if data, _, err := read(mcpPath); err == nil {
			if c == Codex {
				if m, err := decodeTOML(data); err == nil {
					if kz, ok := tomlTable(m, "mcp_servers", "kaizen"); ok {
						in.MCP = true
						cmd, _ := kz["command"].(string)
						addCmd(cmd)
					}
				} else {
					problems = append(problems, fmt.Sprintf("%s: %v", mcpPath, err))
				}
			} else if doc, err := parseJSON(data); err == nil {
				node := doc
				for _, k := range container {
					node = node.get(k)
				}
				if kz := node.get("kaizen"); kz.isObject() && s.isKaizenServer(kz) {
					in.MCP = true
					cmd := kz.get("command")
					if cmd.isArray() && len(cmd.elems) > 0 {
						cmd = cmd.elems[0]
					}
					addCmd(cmd.str())
				}
			} else if len(bytes.TrimSpace(data)) > 0 {
				problems = append(problems, fmt.Sprintf("%s is not valid JSON: %v", mcpPath, err))
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			problems = append(problems, err.Error())
		}
		// the hooks
		data, _, err := read(hooksPath)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			problems = append(problems, err.Error())
		case c == Opencode:
			if bytes.Contains(data, []byte(pluginMarker)) {
				in.Events = Events(c)
				if m := pluginCommand.FindSubmatch(data); m != nil {
					var argv []string
					if doc, err := parseJSON(m[1]); err == nil {
						for _, e := range doc.elems {
							argv = append(argv, e.str())
						}
					}
					if len(argv) > 0 {
						addCmd(argv[0])
					}
				}
			}
		default:
			doc, err := parseJSON(data)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s is not valid JSON: %v", hooksPath, err))
				break
			}
			layout := nested
			if c == Cursor {
				layout = flat
			}
			hooks := doc.get("hooks")
			if !hooks.isObject() {
				break
			}
			for _, event := range hooks.keys {
				arr := hooks.get(event)
				if !arr.isArray() {
					continue
				}
				ours := s.ourHandlers(arr, layout, "")
				if len(ours) == 0 {
					continue
				}
				in.Events = append(in.Events, event)
				if len(ours) > 1 {
					in.Duplicated = append(in.Duplicated, event)
				}
				for _, h := range ours {
					if words := ShellSplit(h.node.get("command").str()); len(words) > 0 {
						addCmd(words[0])
					}
				}
			}
		}
		if len(in.Events) > 0 {
			for _, e := range Events(c) {
				if !slices.Contains(in.Events, e) {
					in.Missing = append(in.Missing, e)
				}
			}
		}
		in.Problem = strings.Join(problems, "; ")
		if in.Installed() || in.Problem != "" {
			out = append(out, in)
		}
	}
	return out
}
