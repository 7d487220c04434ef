package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/hook"
)

func init() { register(setupCommand) }

// BackupSuffix names the copy of a file setup keeps before changing it.
const backupSuffix = ".kaizen-backup"

func setupCommand(a *app) *cobra.Command {
	var (
		scope, dir, command, tools string
		dryRun, uninstall, check   bool
		allowTemp                  bool
	)
	cmd := &cobra.Command{
		Use:   "setup <claude|codex|cursor|opencode>",
		Short: "Install kaizen's MCP server and hooks in a coding agent's configuration",
		Long: `Register kaizen with a coding agent: its MCP server ('kaizen mcp') and its
hooks ('kaizen hook <client> <event>'), in the client's own files:

  claude    project: .mcp.json, .claude/settings.json
            local:   ~/.claude.json (this project's entry), .claude/settings.local.json
            user:    ~/.claude.json, ~/.claude/settings.json
  codex     project: .codex/config.toml, .codex/hooks.json
            user:    ~/.codex/config.toml, ~/.codex/hooks.json ($CODEX_HOME)
  cursor    project: .cursor/mcp.json, .cursor/hooks.json
            user:    ~/.cursor/mcp.json, ~/.cursor/hooks.json
  opencode  project: opencode.json, .opencode/plugins/kaizen.js
            user:    ~/.config/opencode/opencode.json, ~/.config/opencode/plugins/kaizen.js

Existing files are merged into: other servers, other hooks and unknown keys
are kept, and running setup again changes nothing. Before changing a file,
setup copies it to <file>.kaizen-backup; a file that does not parse is an
error and is left untouched. --uninstall removes exactly what setup added
(files left empty are removed). --dry-run prints the changes as a diff and
writes nothing.

The commands use the absolute path of this kaizen executable (--command to
choose another), with --home when the kaizen home is not the default one and
--project when --project was given. Setup refuses an executable in a
temporary directory or Go's build cache (what 'go run' builds and deletes):
install kaizen first ('go install ./cmd/kaizen') and run the installed one.

The MCP server offers the core tools (plan guidance, record outcome, record
error, recall, heuristic feedback) unless --mcp-tools full asks for all.

--check writes nothing: it reports, as 'kaizen doctor' does for this client,
whether the hooks are installed once, run an existing kaizen, and fired.
See docs/clients.md.`,
		Example: `  kaizen setup claude                 # this project (the git root of the working directory)
  kaizen setup codex --scope user     # every project of this user
  kaizen setup cursor --dry-run       # show the changes, write nothing
  kaizen setup claude --scope local     # this project, for you only (not in git)
  kaizen setup claude --check
  kaizen setup claude --uninstall`,
		Args: exactArgs(1, "a client (claude, codex, cursor or opencode)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := hook.ParseClient(args[0])
			if err != nil {
				return usageError{err}
			}
			if check {
				return a.runDoctor(cmd.Context(), doctorOptions{clients: []hook.Client{c}, dir: dir})
			}
			opts := hook.SetupOptions{Client: c, Scope: hook.Scope(scope), Uninstall: uninstall, MCPTools: tools}
			if !slices.Contains(hook.Scopes(c), opts.Scope) {
				return usageError{fmt.Errorf("--scope %q: %s's scopes are %v", scope, c, hook.Scopes(c))}
			}
			if tools != "core" && tools != "full" {
				return usageError{fmt.Errorf("--mcp-tools %q: use core or full", tools)}
			}
			if opts.Paths, err = setupPaths(dir); err != nil {
				return err
			}
			if opts.Command, err = a.setupKaizenCommand(command); err != nil {
				return err
			}
			if !uninstall && !allowTemp {
				if err := checkExecutable(opts.Command[0]); err != nil {
					return err
				}
			}
			plan, err := hook.PlanSetup(opts, readConfigFile)
			if err != nil {
				return &kaizen.Error{Op: "setup " + string(c), Kind: kaizen.KindInvalid, Message: err.Error()}
			}
			report := setupReport{Client: string(c), Scope: scope, DryRun: dryRun, Uninstall: uninstall,
				Command: opts.Command, Files: []setupFile{}, Notes: plan.Notes}
			if opts.Scope != hook.ScopeUser {
				report.Dir = opts.Paths.ProjectDir
			}
			if report.Notes == nil {
				report.Notes = []string{}
			}
			for _, ch := range plan.Changes {
				f := setupFile{Path: ch.Path, What: ch.What, Action: setupAction(ch)}
				if dryRun {
					f.Diff = setupDiff(ch)
				} else if ch.Changed() {
					if f.Backup, err = applyChange(ch); err != nil {
						return fmt.Errorf("setup %s: %w", c, err)
					}
				}
				report.Files = append(report.Files, f)
			}
			return a.print(report, func(w io.Writer) error { return printSetupReport(w, report) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&scope, "scope", "project", "project (files in the project, shared), local (Claude Code: this project, for you only) or user (files in your home, every project)")
	f.StringVar(&tools, "mcp-tools", "core", "MCP tools the client gets: core (a few, cheap in tokens) or full (every tool)")
	f.BoolVar(&allowTemp, "allow-temporary", false, "install an executable in a temporary directory all the same (tests)")
	f.BoolVar(&check, "check", false, "write nothing: check the client's installation (see kaizen doctor)")
	f.StringVar(&dir, "dir", "", "project directory for --scope project (default: the git root of the working directory)")
	f.StringVar(&command, "command", "", "kaizen executable the client runs (default: this executable's absolute path)")
	f.BoolVar(&dryRun, "dry-run", false, "print the changes as a diff and write nothing")
	f.BoolVar(&uninstall, "uninstall", false, "remove what setup added")
	return cmd
}

// setupPaths locates the client files: the project directory (given, else
// the git root of the working directory, else the working directory), the
// home directory, $XDG_CONFIG_HOME and $CODEX_HOME.
func setupPaths(dir string) (hook.Paths, error) {
	var p hook.Paths
	home, err := os.UserHomeDir()
	if err != nil {
		return p, fmt.Errorf("setup: cannot find the home directory: %w", err)
	}
	p.Home = home
	p.ConfigHome = os.Getenv("XDG_CONFIG_HOME")
	if p.ConfigHome == "" {
		p.ConfigHome = filepath.Join(home, ".config")
	}
	p.CodexHome = os.Getenv("CODEX_HOME")
	if p.CodexHome == "" {
		p.CodexHome = filepath.Join(home, ".codex")
	}
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return p, err
		}
		dir = hook.GitRoot(wd)
	}
	if p.ProjectDir, err = filepath.Abs(dir); err != nil {
		return p, err
	}
	if fi, err := os.Stat(p.ProjectDir); err != nil || !fi.IsDir() {
		return p, usageError{fmt.Errorf("--dir %q is not a directory", dir)}
	}
	return p, nil
}

// setupKaizenCommand is the kaizen command the clients run: the executable
// (absolute), then --home when the home is not the default one, then
// --project when it was given on the command line.
func (a *app) setupKaizenCommand(exe string) ([]string, error) {
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("setup: cannot find the kaizen executable (use --command): %w", err)
		}
	} else if strings.ContainsRune(exe, filepath.Separator) {
		abs, err := filepath.Abs(exe)
		if err != nil {
			return nil, err
		}
		exe = abs
	}
	cmd := []string{exe}
	home := a.home
	if home == "" {
		home = os.Getenv("KAIZEN_HOME")
	}
	if home != "" {
		abs, err := filepath.Abs(home)
		if err != nil {
			return nil, err
		}
		if abs != defaultHomeWithoutEnv() {
			cmd = append(cmd, "--home", abs)
		}
	}
	if a.project != "" {
		cmd = append(cmd, "--project", a.project)
	}
	return cmd, nil
}

// checkExecutable refuses to install a kaizen that will not be there when
// the client runs it: one in a temporary directory or in Go's build cache
// (the binary `go run` builds and deletes when it exits).
func checkExecutable(exe string) error {
	if reason := hook.VolatileExecutable(exe); reason != "" {
		return &kaizen.Error{Op: "setup", Kind: kaizen.KindInvalid, Field: "command",
			Message: fmt.Sprintf("%s is %s: the clients would run a file that is deleted when this command exits", exe, reason),
			Hint: "install kaizen first (go install ./cmd/kaizen, then run `kaizen setup` from $(go env GOPATH)/bin), " +
				"or give the installed executable with --command"}
	}
	return nil
}

// defaultHomeWithoutEnv is the home kaizen uses when KAIZEN_HOME is unset
// (clients may not have the variable the user has in this shell).
func defaultHomeWithoutEnv() string {
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "kaizen")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "share", "kaizen")
	}
	return ""
}

// readConfigFile reads a client file, through symbolic links.
func readConfigFile(path string) ([]byte, fs.FileMode, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	if fi.IsDir() {
		return nil, 0, fmt.Errorf("%s is a directory", path)
	}
	data, err := os.ReadFile(path)
	return data, fi.Mode().Perm(), err
}

func setupAction(ch hook.FileChange) string {
	switch {
	case !ch.Changed():
		return "unchanged"
	case ch.Remove:
		return "removed"
	case !ch.Existed:
		return "created"
	}
	return "updated"
}

func setupDiff(ch hook.FileChange) string {
	if !ch.Changed() {
		return ""
	}
	oldName, newName := ch.Path, ch.Path
	if !ch.Existed {
		oldName = "/dev/null"
	}
	if ch.Remove {
		newName = "/dev/null"
	}
	return hook.Diff(oldName, newName, ch.Before, ch.After)
}

// applyChange writes (or removes) one file, after copying the previous
// version to <file>.kaizen-backup with its mode. Writes are atomic (a
// temporary file renamed over the target) and keep the file's mode; a
// symbolic link is followed, so the file it points to is updated.
func applyChange(ch hook.FileChange) (backup string, err error) {
	path := ch.Path
	if ch.Existed {
		if target, err := filepath.EvalSymlinks(path); err == nil {
			path = target
		}
		backup = path + backupSuffix
		if err := writeAtomic(backup, ch.Before, ch.Mode); err != nil {
			return "", fmt.Errorf("back up %s: %w", path, err)
		}
	}
	if ch.Remove {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return backup, err
		}
		return backup, nil
	}
	mode := ch.Mode
	if !ch.Existed {
		mode = 0o644
		if strings.HasPrefix(filepath.Base(path), ".claude.json") {
			mode = 0o600
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", err
		}
	}
	return backup, writeAtomic(path, ch.After, mode)
}

func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

type setupReport struct {
	Client    string      `json:"client"`
	Scope     string      `json:"scope"`
	Dir       string      `json:"dir,omitempty"`
	DryRun    bool        `json:"dry_run"`
	Uninstall bool        `json:"uninstall"`
	Command   []string    `json:"command"`
	Files     []setupFile `json:"files"`
	Notes     []string    `json:"notes"`
}

type setupFile struct {
	Path string `json:"path"`
	// Action is created, updated, removed or unchanged (what was done, or
	// with --dry-run what would be done).
	Action string `json:"action"`
	What   string `json:"what"`
	Backup string `json:"backup,omitempty"`
	Diff   string `json:"diff,omitempty"`
}

func printSetupReport(w io.Writer, r setupReport) error {
	verb := "setup"
	if r.Uninstall {
		verb = "setup --uninstall"
	}
	where := r.Scope + " scope"
	if r.Dir != "" {
		where += ", " + r.Dir
	}
	dry := ""
	if r.DryRun {
		dry = " (dry run: nothing written)"
	}
	fmt.Fprintf(w, "kaizen %s %s (%s)%s\n", verb, r.Client, where, dry)
	if len(r.Files) == 0 {
		fmt.Fprintln(w, "  nothing to do")
	}
	for _, f := range r.Files {
		action := f.Action
		if r.DryRun && action != "unchanged" {
			action = "would be " + action
		}
		fmt.Fprintf(w, "  %-9s %s (%s)", action, f.Path, f.What)
		if f.Backup != "" {
			fmt.Fprintf(w, "; backup %s", f.Backup)
		}
		fmt.Fprintln(w)
	}
	for _, f := range r.Files {
		if f.Diff != "" {
			fmt.Fprintf(w, "\n%s", f.Diff)
		}
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range r.Notes {
			fmt.Fprintf(w, "note: %s\n", n)
		}
	}
	return nil
}
