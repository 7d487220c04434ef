// Command kaizen is the command-line interface and daemon of the kaizen
// learning engine. Each command is a thin adapter over one kaizen.Engine
// method; see `kaizen help` and docs/cli.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/hook/hookcmd"
	_ "github.com/kaizenhq/kaizen/store/all" // the command opens SQLite and PostgreSQL stores
)

// Exit codes.
const (
	exitOK       = 0
	exitInternal = 1
	exitInvalid  = 2 // invalid input or usage
	exitNotFound = 3
	exitConflict = 4
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

// run executes the CLI with the given arguments and streams and returns the
// process exit code (separated from main for tests).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o, ok := hookInvocation(args); ok {
		// A hook runs before anything else is built: it must start fast.
		o.Stdin, o.Stdout, o.Open = stdin, stdout, openEngine
		return hookcmd.Run(ctx, o)
	}
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr}
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if a.engine != nil {
		a.engine.Close()
	}
	if err == nil {
		return exitOK
	}
	return a.fail(err)
}

// app holds the global flags and the lazily opened engine.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer

	home, project, db, now string
	json                   bool

	engine *kaizen.Engine
}

// usageError marks errors in how a command was invoked.
type usageError struct{ error }

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "kaizen",
		Short: "Make AI coding agents learn from their own results",
		Long: `kaizen scores task outcomes reported by coding agents, learns which
decomposition strategies work and which fail, and hands back guidance before
the next plan.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       kaizen.Version,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	// An unknown command is a usage error (exit 2); cobra's own check
	// returns a plain error, which would exit 1.
	root.Args = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
		if s := c.SuggestionsFor(args[0]); len(s) > 0 {
			msg += fmt.Sprintf(" (did you mean %q?)", s[0])
		}
		return usageError{errors.New(msg)}
	}
	root.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
	pf := root.PersistentFlags()
	pf.StringVar(&a.home, "home", "", "data directory (env KAIZEN_HOME, default ~/.local/share/kaizen)")
	pf.StringVar(&a.project, "project", "", "project name (env KAIZEN_PROJECT, default: the git root's directory name)")
	pf.StringVar(&a.db, "db", "", "database: a SQLite file path, or a postgres:// DSN (env KAIZEN_DB)")
	pf.StringVar(&a.now, "now", "", "evaluate time-dependent results at this RFC 3339 instant")
	pf.BoolVar(&a.json, "json", false, "print JSON instead of text")
	for _, c := range commands {
		root.AddCommand(c(a))
	}
	return root
}

// commands are the subcommand constructors; each command file registers
// its own in an init function.
var commands []func(*app) *cobra.Command

func register(c func(*app) *cobra.Command) { commands = append(commands, c) }

// config loads the configuration with flags applied on top.
func (a *app) config() (kaizen.Config, error) {
	cfg, err := kaizen.LoadConfig(a.home)
	if err != nil {
		return cfg, err
	}
	if a.db != "" {
		cfg.DB = a.db
	}
	if a.project != "" {
		cfg.Project = a.project
	}
	if cfg.Project == "" {
		cfg.Project = deriveProject()
	}
	if a.now != "" {
		t, err := time.Parse(time.RFC3339Nano, a.now)
		if err != nil {
			return cfg, usageError{fmt.Errorf("--now %q is not an RFC 3339 time (e.g. 2025-01-31T12:00:00Z)", a.now)}
		}
		cfg.Now = func() time.Time { return t }
	}
	return cfg, cfg.Validate()
}

// open returns the engine, opening it on first use.
func (a *app) open(ctx context.Context) (*kaizen.Engine, error) {
	if a.engine != nil {
		return a.engine, nil
	}
	cfg, err := a.config()
	if err != nil {
		return nil, err
	}
	e, err := kaizen.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	a.engine = e
	// Record the hook events still in the spool (hooks that gave up, no
	// daemon running), so that this command sees every event. A daemon
	// ingesting at the same time holds the spool's lock for a moment.
	if _, err := hookcmd.IngestPending(ctx, cfg, e, 30*time.Second); err != nil {
		fmt.Fprintf(a.stderr, "kaizen: some spooled hook events are not recorded yet: %v\n", err)
	}
	return e, nil
}

// deriveProject names the project after the git root of the working
// directory (the nearest parent holding .git), else the directory itself.
func deriveProject() string {
	wd, err := os.Getwd()
	if err != nil {
		return kaizen.DefaultProject
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			return projectName(dir)
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	return projectName(wd)
}

func projectName(dir string) string {
	name := filepath.Base(dir)
	if name == "" || name == "/" || name == "." {
		return kaizen.DefaultProject
	}
	return name
}

// print writes v as indented JSON with --json, else calls text.
func (a *app) print(v any, text func(w io.Writer) error) error {
	if a.json {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(v)
	}
	return text(a.stdout)
}

// nextCommands are the CLI commands of the actions engine errors suggest
// (kaizen.Error.Next).
var nextCommands = map[string]string{
	"list_patterns": "kaizen pattern list",
	"list_outcomes": "kaizen outcome list",
	"reset_pattern": "kaizen pattern reset",
	"explore_start": "kaizen explore start",
	// The experience system (experience*.go).
	"capture":            "kaizen capture",
	"extraction_request": "kaizen experience request",
	"extract_experience": "kaizen experience extract",
	"get_experience":     "kaizen experience show",
	"list_heuristics":    "kaizen heuristic list",
	"list_skills":        "kaizen skill list",
}

// fail reports err and returns the exit code for it: with --json the error
// is printed to stdout as {"error": {...}}, otherwise as one line on stderr.
func (a *app) fail(err error) int {
	code := exitInternal
	var df errDoctorFailed
	if errors.As(err, &df) { // the report says it all (and --json prints one document)
		if !a.json {
			fmt.Fprintf(a.stderr, "kaizen: %v\n", err)
		}
		return code
	}
	var ke *kaizen.Error
	var ue usageError
	switch {
	case errors.As(err, &ue):
		code = exitInvalid
		ke = &kaizen.Error{Op: "usage", Kind: kaizen.KindInvalid, Message: ue.Error(), Hint: "see --help"}
	case errors.As(err, &ke):
		switch ke.Kind {
		case kaizen.KindInvalid:
			code = exitInvalid
		case kaizen.KindNotFound:
			code = exitNotFound
		case kaizen.KindConflict:
			code = exitConflict
		}
	default:
		ke = &kaizen.Error{Op: "kaizen", Kind: kaizen.KindOf(err), Message: err.Error()}
		if ke.Kind == kaizen.KindNotFound {
			code = exitNotFound
		}
	}
	if cmd, ok := nextCommands[ke.Next]; ok && !a.json {
		c := *ke
		if c.Hint == "" {
			c.Hint = "see `" + cmd + "`"
		} else {
			c.Hint = strings.TrimSuffix(c.Hint, ".") + "; see `" + cmd + "`"
		}
		ke = &c
	}
	if a.json {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string]any{"error": ke})
	} else {
		fmt.Fprintln(a.stderr, errorLine(ke))
	}
	return code
}

// errorLine is the one stderr line of an error: "kaizen: " once, however
// many layers named the program already.
func errorLine(err error) string {
	msg := err.Error()
	for strings.HasPrefix(msg, "kaizen: ") {
		msg = strings.TrimPrefix(msg, "kaizen: ")
	}
	return "kaizen: " + msg
}
