package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/client"
	"github.com/kaizenhq/kaizen/hook"
	"github.com/kaizenhq/kaizen/hook/spool"
)

// doctorRun runs kaizen doctor --json in-process and returns its report
// and exit code.
func doctorRun(t *testing.T, args ...string) (doctorReport, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(append(args, "--json", "doctor"), strings.NewReader(""), &out, &errOut)
	var r doctorReport
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("doctor: exit %d, %v\n%s\n%s", code, err, out.String(), errOut.String())
	}
	return r, code
}

// has reports whether a finding of the check, status and message part is
// in the report.
func has(r doctorReport, check, status, part string) bool {
	for _, f := range r.Findings {
		if f.Check == check && f.Status == status && strings.Contains(f.Message, part) && (status == statusOK || status == statusInfo || f.Fix != "") {
			return true
		}
	}
	return false
}

// kaizen doctor reports each problem staged here, each with its fix: hooks
// installed in two scopes, a hook command that does not exist or is a
// deleted `go run` binary, hooks that never fired, a stale daemon record,
// events waiting in the spool and events set aside, the project differing
// between the hooks and the daemon, a database migrated by a newer kaizen,
// and an unreachable chat model.
func TestDoctorReportsEachStagedProblem(t *testing.T) {
	home, user := t.TempDir(), t.TempDir()
	repo := filepath.Join(t.TempDir(), "webapp")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", user)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("CODEX_HOME", "")
	t.Chdir(repo)
	base := []string{"--home", home}

	// A clean start: nothing installed, no daemon, nothing pending.
	r, code := doctorRun(t, base...)
	if code != 0 || !has(r, "client claude", statusInfo, "not installed") || !has(r, "daemon", statusInfo, "no daemon") ||
		!has(r, "spool", statusOK, "drained") || !has(r, "database", statusOK, "integrity ok") || r.Project != "webapp" {
		t.Fatalf("clean start: exit %d %+v", code, r)
	}

	// A kaizen executable that exists, installed in two scopes.
	exe := filepath.Join(t.TempDir(), "bin", "kaizen")
	if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, scope := range []string{"project", "local"} {
		var out bytes.Buffer
		if c := run(append(base, "setup", "claude", "--scope", scope, "--command", exe, "--allow-temporary"), nil, &out, &out); c != 0 {
			t.Fatalf("setup: %d %s", c, out.String())
		}
	}
	r, _ = doctorRun(t, base...)
	if !has(r, "client claude", statusWarn, "installed in 2 scopes (project, local)") {
		t.Errorf("two scopes not flagged: %+v", r.Findings)
	}
	if !has(r, "client claude", statusWarn, "never reached kaizen") {
		t.Errorf("hooks that never fired not flagged: %+v", r.Findings)
	}
	if !has(r, "client claude", statusFail, "in a temporary directory") {
		t.Errorf("a temporary executable not flagged: %+v", r.Findings)
	}

	// The executable goes away (a deleted go run binary).
	gone := filepath.Join(user, "go-build123", "b001", "exe", "kaizen")
	var out bytes.Buffer
	if c := run(append(base, "setup", "codex", "--scope", "user", "--command", gone, "--allow-temporary"), nil, &out, &out); c != 0 {
		t.Fatalf("setup codex: %d %s", c, out.String())
	}
	r, code = doctorRun(t, base...)
	if code != 1 || !has(r, "client codex", statusFail, "does not exist (in a Go build directory (go run))") {
		t.Errorf("a deleted go run binary: exit %d %+v", code, r.Findings)
	}
	if !has(r, "client codex", statusWarn, "has not trusted the hooks") {
		t.Errorf("untrusted Codex hooks not flagged: %+v", r.Findings)
	}

	// A hook fires (into another project than the daemon's, below).
	payload := `{"session_id":"s1","cwd":"` + repo + `","hook_event_name":"SessionStart"}`
	if c := run(append(base, "hook", "claude", "SessionStart"), strings.NewReader(payload), &out, &out); c != 0 {
		t.Fatal(c)
	}
	r, _ = doctorRun(t, base...)
	if !has(r, "client claude", statusOK, "last hook event: claude SessionStart") || has(r, "client claude", statusWarn, "never reached") {
		t.Errorf("the last hook event: %+v", r.Findings)
	}

	// A stale daemon record naming another project; events waiting and
	// set aside in the spool.
	if _, err := client.WriteServeInfo(home, client.ServeInfo{Addr: "127.0.0.1:7411", Socket: client.SocketPath(home),
		PID: 1 << 22, Project: "default"}); err != nil {
		t.Fatal(err)
	}
	sp := spool.Open(home)
	old := time.Now().Add(-time.Hour)
	e, err := sp.Append("claude-s9", "evold", []byte(`{}`), old)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sp.Append("claude-s8", "evbad", []byte(`{}`), old); err != nil {
		t.Fatal(err)
	}
	bad, _ := sp.Pending("claude-s8")
	if err := sp.Reject(bad[0], "staged"); err != nil {
		t.Fatal(err)
	}
	_ = e
	r, _ = doctorRun(t, base...)
	if !has(r, "daemon", statusWarn, "not running: a stale record") {
		t.Errorf("a stale serve.json: %+v", r.Findings)
	}
	if !has(r, "spool", statusWarn, "set aside as invalid (1 waiting)") {
		t.Errorf("the spool: %+v", r.Findings)
	}
	if !has(r, "project", statusWarn, `the daemon's viewer opens project "default"`) {
		t.Errorf("the project mismatch: %+v", r.Findings)
	}
	os.RemoveAll(filepath.Join(home, spool.Dir, "rejected"))
	r, _ = doctorRun(t, base...)
	if !has(r, "spool", statusWarn, "1 hook events of 1 sessions wait to be recorded") {
		t.Errorf("waiting events: %+v", r.Findings)
	}

	// A database migrated by a newer kaizen; an unreachable chat model.
	db, err := sql.Open("sqlite", filepath.Join(home, "kaizen.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(context.Background(), `INSERT INTO goose_db_version (version_id, is_applied) VALUES (99999, 1)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	toml := "[[model.chat]]\nname = \"local\"\nbase_url = \"http://" + dead + "/v1\"\nmodel = \"m\"\n"
	if err := os.WriteFile(filepath.Join(home, "kaizen.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	r, code = doctorRun(t, base...)
	if !has(r, "database", statusWarn, "migrations [99999] this kaizen does not know") {
		t.Errorf("a newer database: %+v", r.Findings)
	}
	if code != 1 || !has(r, "model", statusFail, "is not reachable") {
		t.Errorf("an unreachable model: exit %d %+v", code, r.Findings)
	}

	// setup <client> --check reports that client only.
	var chk bytes.Buffer
	run(append(base, "--json", "setup", "claude", "--check"), nil, &chk, &chk)
	var cr doctorReport
	if err := json.Unmarshal(chk.Bytes(), &cr); err != nil {
		t.Fatalf("%v: %s", err, chk.String())
	}
	for _, f := range cr.Findings {
		if strings.HasPrefix(f.Check, "client ") && f.Check != "client "+string(hook.Claude) {
			t.Errorf("setup claude --check reports %s", f.Check)
		}
	}
}
