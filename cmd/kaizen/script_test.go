package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets testscript run this test binary as the kaizen command.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"kaizen": func() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the CLI scripts in testdata/script. Every script passes
// --home $WORK/home, so it uses a fresh SQLite database and no network.
//
// Besides the standard commands, scripts can use:
//
//	exitcode N prog args...   run prog; it must exit with status N
//	json PATH [WANT]          the last stdout is JSON with a value at PATH
//	                          (dot-separated keys and indexes; @len is an
//	                          array's length), equal to WANT when given
//	                          (strings compare unquoted, others as JSON)
//	jsonenv NAME PATH         set $NAME to the string at PATH of the last stdout
func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		// KAIZEN_UPDATE_SCRIPTS=1 rewrites the golden files of failing cmp
		// commands in the scripts (review the diff).
		UpdateScripts: os.Getenv("KAIZEN_UPDATE_SCRIPTS") == "1",
		// The scripts check the hooks' answers: give them a budget a loaded
		// machine (or -race) cannot exceed. The budget itself is tested in
		// TestHookGivesUpAtItsDeadline and the saturation test.
		Setup: func(env *testscript.Env) error {
			env.Setenv("KAIZEN_HOOKS_TIMEOUT", "2m")
			return nil
		},
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			"exitcode": cmdExitCode,
			"json":     cmdJSON,
			"jsonenv":  cmdJSONEnv,
		},
	})
}

func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exitcode")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N prog args...")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %q is not a number", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("exitcode: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

func cmdJSON(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: json PATH [WANT]")
	}
	got, err := jsonPath(stdoutJSON(ts), args[0])
	switch {
	case err != nil && !neg:
		ts.Fatalf("%v", err)
	case err != nil:
		return
	}
	match := true
	if len(args) == 2 {
		s, ok := got.(string)
		if !ok {
			b, _ := json.Marshal(got)
			s = string(b)
		}
		match = s == args[1]
		if !match && !neg {
			ts.Fatalf("%s = %s, want %s", args[0], s, args[1])
		}
	}
	if match && neg {
		ts.Fatalf("%s unexpectedly present (or equal)", args[0])
	}
}

func cmdJSONEnv(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: jsonenv NAME PATH")
	}
	v, err := jsonPath(stdoutJSON(ts), args[1])
	ts.Check(err)
	s, ok := v.(string)
	if !ok {
		ts.Fatalf("%s is a %T, not a string", args[1], v)
	}
	ts.Setenv(args[0], s)
}

// stdoutJSON decodes the last command's standard output.
func stdoutJSON(ts *testscript.TestScript) any {
	var v any
	if err := json.Unmarshal([]byte(ts.ReadFile("stdout")), &v); err != nil {
		ts.Fatalf("stdout is not JSON: %v", err)
	}
	return v
}

// jsonPath follows a dot-separated path of object keys and array indexes.
func jsonPath(v any, path string) (any, error) {
	if path == "." {
		return v, nil
	}
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[k]
			if !ok {
				return nil, fmt.Errorf("no key %q in %s", k, path)
			}
			v = next
		case []any:
			if k == "@len" {
				v = len(x)
				continue
			}
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(x) {
				return nil, fmt.Errorf("no index %q (length %d) in %s", k, len(x), path)
			}
			v = x[i]
		default:
			return nil, fmt.Errorf("%s: %q applied to a %T", path, k, v)
		}
	}
	return v, nil
}
