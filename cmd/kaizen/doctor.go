package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/client"
	"github.com/kaizenhq/kaizen/hook"
	"github.com/kaizenhq/kaizen/hook/spool"
	"github.com/kaizenhq/kaizen/model"
)

func init() { register(doctorCommand) }

// Finding statuses, from good to bad.
const (
	statusOK   = "ok"
	statusInfo = "info"
	statusWarn = "warn"
	statusFail = "fail"
)

// finding is one result of kaizen doctor: what was checked, how it is, and
// how to fix it.
type finding struct {
	Check   string `json:"check"`
	Status  string `json:"status"`
	Message string `json:"message"`
	Fix     string `json:"fix,omitempty"`
}

type doctorReport struct {
	Home     string    `json:"home"`
	Project  string    `json:"project"`
	Findings []finding `json:"findings"`
	// Problems counts the warn and fail findings.
	Problems int `json:"problems"`
}

type doctorOptions struct {
	clients []hook.Client
	dir     string
	// now is the clock of the ages reported (tests).
	now time.Time
}

func doctorCommand(a *app) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check that kaizen works with your coding agents, and say how to fix what does not",
		Long: `Check everything between a coding agent and kaizen, and print each finding
with its fix:

  - per client: the hooks and MCP server installed by 'kaizen setup', in
    which scopes (installed twice is flagged), whether the kaizen they run
    exists (not a deleted 'go run' binary), the events missing from an older
    setup, and the last hook event kaizen received and when;
  - the daemon: running and reachable over its socket, or a stale record;
  - the spool: hook events not recorded yet, events set aside as invalid;
  - the project: the name hooks record into for this directory, the one
    the daemon's viewer opens, and the one of the last hook event;
  - the database: its integrity check and its schema migrations;
  - the chat model and the embedder, when configured: reachable.

It exits 1 when a check fails (warnings exit 0). --json prints the report.`,
		Example: `  kaizen doctor
  kaizen doctor --json
  kaizen setup codex --check     # one client`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runDoctor(cmd.Context(), doctorOptions{clients: hook.Clients, dir: dir})
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "project directory (default: the git root of the working directory)")
	return cmd
}

// errDoctorFailed makes kaizen doctor exit 1 after printing its report.
type errDoctorFailed struct{ n int }

func (e errDoctorFailed) Error() string { return fmt.Sprintf("%d check(s) failed", e.n) }

func (a *app) runDoctor(ctx context.Context, o doctorOptions) error {
	if o.now.IsZero() {
		o.now = time.Now()
	}
	cfg, err := a.config()
	if err != nil {
		return err
	}
	paths, err := setupPaths(o.dir)
	if err != nil {
		return err
	}
	loaded, _ := kaizen.LoadConfig(a.home)
	explicit := a.project != "" || loaded.Project != ""
	project := cfg.Project
	if !explicit {
		project = hook.ProjectForDir(paths.ProjectDir)
	}
	r := doctorReport{Home: cfg.Home, Project: project, Findings: []finding{}}
	add := func(f finding) { r.Findings = append(r.Findings, f) }
	var lastProjects []string
	for _, c := range o.clients {
		for _, f := range checkClient(c, paths, cfg.Home, o.now, &lastProjects) {
			add(f)
		}
	}
	info, infoErr := client.ReadServeInfo(cfg.Home)
	if len(o.clients) == len(hook.Clients) {
		for _, f := range checkDaemon(ctx, cfg, info, infoErr) {
			add(f)
		}
	}
	add(checkSpool(cfg.Home, o.now))
	add(checkProject(project, info, infoErr, lastProjects))
	if len(o.clients) == len(hook.Clients) {
		for _, f := range a.checkDatabase(ctx, cfg) {
			add(f)
		}
		for _, f := range checkModels(ctx, cfg) {
			add(f)
		}
	}
	failed := 0
	for _, f := range r.Findings {
		if f.Status == statusWarn || f.Status == statusFail {
			r.Problems++
		}
		if f.Status == statusFail {
			failed++
		}
	}
	if err := a.print(r, func(w io.Writer) error { return printDoctor(w, r) }); err != nil {
		return err
	}
	if failed > 0 {
		return errDoctorFailed{failed}
	}
	return nil
}

// checkClient reports a client's installation and its last hook event.
func checkClient(c hook.Client, p hook.Paths, home string, now time.Time, lastProjects *[]string) []finding {
	var out []finding
	check := "client " + string(c)
	ins := hook.Inspect(c, p, readConfigFile)
	var hooked []hook.Installation
	for _, in := range ins {
		if in.Problem != "" {
			out = append(out, finding{check, statusFail, fmt.Sprintf("%s (%s scope): %s", c, in.Scope, in.Problem),
				"fix the file (setup leaves a file it cannot parse untouched), then run kaizen setup " + string(c) + " again"})
		}
		if len(in.Events) > 0 {
			hooked = append(hooked, in)
		}
	}
	if len(ins) == 0 {
		return []finding{{check, statusInfo, fmt.Sprintf("kaizen is not installed for %s (no hooks, no MCP server)", c),
			"kaizen setup " + string(c)}}
	}
	for _, in := range ins {
		what := []string{}
		if in.MCP {
			what = append(what, "MCP server")
		}
		if len(in.Events) > 0 {
			what = append(what, fmt.Sprintf("%d hooks", len(in.Events)))
		}
		if len(what) > 0 {
			out = append(out, finding{check, statusOK, fmt.Sprintf("%s scope: %s (%s)", in.Scope, strings.Join(what, " and "),
				filepath.Dir(in.HooksFile)), ""})
		}
		if len(in.Events) == 0 && in.MCP {
			out = append(out, finding{check, statusWarn, fmt.Sprintf("%s scope has the MCP server but no hooks: sessions are not tracked", in.Scope),
				fmt.Sprintf("kaizen setup %s --scope %s", c, in.Scope)})
		}
		if len(in.Missing) > 0 {
			out = append(out, finding{check, statusWarn, fmt.Sprintf("%s scope lacks the hooks %s (installed by an older kaizen setup)",
				in.Scope, strings.Join(in.Missing, ", ")), fmt.Sprintf("kaizen setup %s --scope %s", c, in.Scope)})
		}
		if len(in.Duplicated) > 0 {
			out = append(out, finding{check, statusWarn, fmt.Sprintf("%s scope runs kaizen twice for %s", in.Scope, strings.Join(in.Duplicated, ", ")),
				fmt.Sprintf("kaizen setup %s --scope %s (it keeps one handler per event)", c, in.Scope)})
		}
		for _, cmd := range in.Commands {
			if reason := commandProblem(cmd); reason != "" {
				out = append(out, finding{check, statusFail, fmt.Sprintf("%s scope runs %s, which %s", in.Scope, cmd, reason),
					fmt.Sprintf("go install ./cmd/kaizen, then kaizen setup %s --scope %s with the installed kaizen", c, in.Scope)})
			}
		}
	}
	if len(hooked) > 1 {
		scopes := make([]string, len(hooked))
		for i, in := range hooked {
			scopes[i] = string(in.Scope)
		}
		keep := hooked[0].Scope
		out = append(out, finding{check, statusWarn, fmt.Sprintf("hooks are installed in %d scopes (%s): %s runs each hook once per scope "+
			"(kaizen counts each event once, but every call costs a process)", len(hooked), strings.Join(scopes, ", "), c),
			fmt.Sprintf("keep one: kaizen setup %s --scope %s --uninstall", c, hooked[len(hooked)-1].Scope) + fmt.Sprintf(" (keeping %s)", keep)})
	}
	if c == hook.Codex {
		for _, in := range hooked {
			if !codexTrusted(p, in.HooksFile) {
				out = append(out, finding{check, statusWarn, fmt.Sprintf("Codex has not trusted the hooks of %s: it skips them silently", in.HooksFile),
					"run codex in a terminal and choose \"Trust all and continue\" (or /hooks); codex exec needs --dangerously-bypass-hook-trust until then"})
			}
		}
	}
	st, ok, err := hook.ReadStatus(home, c)
	switch {
	case err != nil:
		out = append(out, finding{check, statusWarn, "cannot read the last hook event: " + err.Error(), ""})
	case !ok && len(hooked) > 0:
		out = append(out, finding{check, statusWarn, fmt.Sprintf("%s's hooks never reached kaizen in %s", c, home),
			fmt.Sprintf("start a new %s session (hooks load at session start); check that %s uses this kaizen home (--home in the hook commands)", c, c)})
	case ok:
		*lastProjects = append(*lastProjects, st.Project)
		out = append(out, finding{check, statusOK, fmt.Sprintf("last hook event: %s %s at %s (%s ago), task %s, project %s",
			c, st.Event, st.At.Format(time.RFC3339), now.Sub(st.At).Round(time.Second), st.Task, st.Project), ""})
	}
	return out
}

// commandProblem says what is wrong with a kaizen executable a client
// runs ("" when nothing is).
func commandProblem(cmd string) string {
	if !filepath.IsAbs(cmd) {
		return ""
	}
	if reason := hook.VolatileExecutable(cmd); reason != "" {
		if _, err := os.Stat(cmd); err != nil {
			return "does not exist (" + reason + ")"
		}
		return "is " + reason + " and will be deleted"
	}
	fi, err := os.Stat(cmd)
	switch {
	case err != nil:
		return "does not exist"
	case fi.IsDir() || fi.Mode().Perm()&0o111 == 0:
		return "is not an executable file"
	}
	return ""
}

// codexTrusted reports whether ~/.codex/config.toml holds a trust entry
// for a hook of hooks.json ([hooks.state."<path>:<event>:<group>:<handler>"]).
func codexTrusted(p hook.Paths, hooksFile string) bool {
	data, err := os.ReadFile(filepath.Join(p.CodexHome, "config.toml"))
	if err != nil {
		return false
	}
	return strings.Contains(string(data), hooksFile+":") && strings.Contains(string(data), "trusted_hash")
}

// checkDaemon reports the daemon of the home.
func checkDaemon(ctx context.Context, cfg kaizen.Config, info client.ServeInfo, infoErr error) []finding {
	locked := client.HomeLocked(cfg.Home)
	switch {
	case infoErr != nil && !locked:
		return []finding{{"daemon", statusInfo, "no daemon runs for this home: each hook opens the database itself",
			"kaizen serve (faster hooks, the viewer, background learning)"}}
	case !locked:
		return []finding{{"daemon", statusWarn, fmt.Sprintf("%s names a daemon (pid %d, %s) that is not running: a stale record",
			client.ServeFile, info.PID, info.Addr), "kaizen serve (it replaces the record), or remove " + filepath.Join(cfg.Home, client.ServeFile)}}
	}
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := client.Discover(pctx, cfg.Home, cfg.Server.Token, 2*time.Second, 2*time.Second); err != nil {
		return []finding{{"daemon", statusFail, fmt.Sprintf("a daemon holds the home's lock but does not answer on its socket: %v", err),
			"restart it: stop the kaizen serve of this home, then kaizen serve"}}
	}
	return []finding{{"daemon", statusOK, fmt.Sprintf("daemon pid %d serves http://%s and the hooks' socket %s", info.PID, info.Addr, info.Socket), ""}}
}

// checkSpool reports hook events waiting to be recorded.
func checkSpool(home string, now time.Time) finding {
	st, err := spool.Open(home).Stat()
	switch {
	case err != nil:
		return finding{"spool", statusFail, "cannot read the spool: " + err.Error(), "check the permissions of " + filepath.Join(home, spool.Dir)}
	case st.Rejected > 0:
		return finding{"spool", statusWarn, fmt.Sprintf("%d hook events were set aside as invalid (%d waiting)", st.Rejected, st.Pending),
			"see why in " + filepath.Join(home, hook.LogFile) + " and " + filepath.Join(home, spool.Dir, "rejected")}
	case st.Pending > 0 && now.Sub(st.Oldest) > time.Minute:
		return finding{"spool", statusWarn, fmt.Sprintf("%d hook events of %d sessions wait to be recorded, the oldest since %s",
			st.Pending, st.Sessions, st.Oldest.UTC().Format(time.RFC3339)),
			"kaizen serve records them, and so does any kaizen command (the database may have been busy); see " + filepath.Join(home, hook.LogFile)}
	case st.Pending > 0:
		return finding{"spool", statusOK, fmt.Sprintf("%d hook events are being recorded", st.Pending), ""}
	}
	return finding{"spool", statusOK, "every hook event is recorded (the spool is drained)", ""}
}

// checkProject compares the project hooks record into with the daemon's
// and the last hook events'.
func checkProject(project string, info client.ServeInfo, infoErr error, last []string) finding {
	var others []string
	if infoErr == nil && info.Project != "" && info.Project != project {
		others = append(others, fmt.Sprintf("the daemon's viewer opens project %q", info.Project))
	}
	for _, p := range last {
		if p != project && !slices.Contains(others, fmt.Sprintf("the last hook event went to project %q", p)) {
			others = append(others, fmt.Sprintf("the last hook event went to project %q", p))
		}
	}
	if len(others) > 0 {
		return finding{"project", statusWarn, fmt.Sprintf("hooks in this directory record into project %q, but %s", project, strings.Join(others, "; ")),
			fmt.Sprintf("name the project once: project = %q in kaizen.toml (or KAIZEN_PROJECT), or open the viewer with ?project=%s", project, project)}
	}
	return finding{"project", statusOK, fmt.Sprintf("hooks and the viewer agree on project %q", project), ""}
}

// checkDatabase opens the database and checks it (without recording the
// spooled hook events, which the report shows as they are).
func (a *app) checkDatabase(ctx context.Context, cfg kaizen.Config) []finding {
	e, err := kaizen.Open(ctx, cfg)
	if err == nil {
		defer e.Close()
	}
	if err != nil {
		return []finding{{"database", statusFail, "the database does not open: " + err.Error(),
			"check --db / KAIZEN_DB; a database written by a newer kaizen needs that kaizen"}}
	}
	h, err := e.CheckStore(ctx)
	if err != nil {
		return []finding{{"database", statusFail, "cannot check the database: " + err.Error(), ""}}
	}
	var out []finding
	if h.Integrity != "ok" {
		out = append(out, finding{"database", statusFail, fmt.Sprintf("%s integrity check: %s", h.Backend, h.Integrity),
			"restore a backup (kaizen export/import), or rebuild the file with sqlite3 .recover"})
	}
	switch {
	case len(h.Unknown) > 0:
		out = append(out, finding{"database", statusWarn, fmt.Sprintf("the database has migrations %v this kaizen does not know: a newer kaizen wrote it", h.Unknown),
			"use that newer kaizen (go install ./cmd/kaizen from its checkout)"})
	case len(h.Pending) > 0:
		out = append(out, finding{"database", statusFail, fmt.Sprintf("migrations %v are not applied", h.Pending), "kaizen migrate"})
	}
	if len(out) == 0 {
		out = append(out, finding{"database", statusOK, fmt.Sprintf("%s: integrity ok, schema at migration %d", h.Backend, h.Applied), ""})
	}
	return out
}

// checkModels probes the configured chat models and embedder.
func checkModels(ctx context.Context, cfg kaizen.Config) []finding {
	var out []finding
	probe := func(what, base, key string) {
		if base == "" {
			return
		}
		pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(pctx, http.MethodGet, strings.TrimRight(base, "/")+"/models", nil)
		if err != nil {
			out = append(out, finding{"model", statusFail, fmt.Sprintf("%s: bad base_url %q: %v", what, base, err), "fix base_url in kaizen.toml"})
			return
		}
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			out = append(out, finding{"model", statusFail, fmt.Sprintf("%s at %s is not reachable: %v", what, base, errors.Unwrap(err)),
				"start the model server, or fix base_url in kaizen.toml (docs/models.md)"})
			return
		}
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
			out = append(out, finding{"model", statusFail, fmt.Sprintf("%s at %s refuses the API key (HTTP %d)", what, base, resp.StatusCode),
				"set the key (api_key_env in kaizen.toml, docs/models.md)"})
		case resp.StatusCode >= 500:
			out = append(out, finding{"model", statusWarn, fmt.Sprintf("%s at %s answers HTTP %d", what, base, resp.StatusCode), ""})
		default:
			out = append(out, finding{"model", statusOK, fmt.Sprintf("%s at %s is reachable", what, base), ""})
		}
	}
	for i, p := range cfg.Model.Chat {
		probe(fmt.Sprintf("chat model %d (%s)", i+1, p.Model), p.BaseURL, apiKey(p))
	}
	if e := cfg.Model.Embedding; e.BaseURL != "" {
		probe("embedder ("+e.Model+")", e.BaseURL, apiKey(e.ProviderConfig))
	}
	if len(out) == 0 {
		out = append(out, finding{"model", statusInfo, "no chat model or remote embedder is configured: rule-based extraction and the offline embedder are used", ""})
	}
	return out
}

// apiKey is a provider's key, from the config or its environment variable.
func apiKey(p model.ProviderConfig) string {
	if p.APIKeyEnv != "" {
		return os.Getenv(p.APIKeyEnv)
	}
	return string(p.APIKey)
}

func printDoctor(w io.Writer, r doctorReport) error {
	fmt.Fprintf(w, "kaizen doctor (home %s, project %s)\n\n", r.Home, r.Project)
	for _, f := range r.Findings {
		fmt.Fprintf(w, "%-4s  %-16s %s\n", strings.ToUpper(f.Status), f.Check, f.Message)
		if f.Fix != "" {
			fmt.Fprintf(w, "      %-16s fix: %s\n", "", f.Fix)
		}
	}
	if r.Problems == 0 {
		fmt.Fprintln(w, "\nno problems found")
	} else {
		fmt.Fprintf(w, "\n%d problem(s)\n", r.Problems)
	}
	return nil
}
