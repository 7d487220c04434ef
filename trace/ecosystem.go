package trace

import (
	"path"
	"regexp"
	"strings"
)

// Frame is a stack frame: the file's base name and the function.
type Frame struct {
	File string `json:"file"`
	Func string `json:"func,omitempty"`
}

// finding is what one detector extracts from error output.
type finding struct {
	lang  string // go, python, node, rust, java, shell, db, generic
	typ   string // "<ecosystem>:<name>", e.g. "python:KeyError"
	msg   string // the key message, unmasked
	raw   string // the key line(s) as printed, for display
	frame Frame
	// keyFrame: the frame is part of the group key (code defects); false
	// for environment failures and where a test name identifies it.
	keyFrame bool
	// values: every quoted text in msg is a value (assertions, lint).
	values bool
	score  int
}

// langOfProgram maps a command family's program to an ecosystem, used as a
// prior when the output alone is ambiguous.
func langOfProgram(prog string) string {
	switch prog {
	case "go", "gofmt", "golangci-lint", "staticcheck", "dlv":
		return "go"
	case "python", "pytest", "pip", "mypy", "ruff", "black", "flake8", "pylint", "manage.py", "django-admin",
		"uv", "poetry", "pipenv", "pdm", "hatch", "tox", "nox", "flask", "uvicorn", "gunicorn", "celery", "coverage", "isort":
		return "python"
	case "node", "npm", "pnpm", "yarn", "bun", "deno", "tsc", "jest", "vitest", "mocha", "eslint", "prettier",
		"next", "vite", "webpack", "ng", "nx", "turbo", "ts-node", "tsx", "playwright", "cypress":
		return "node"
	case "cargo", "rustc", "rustup", "clippy-driver":
		return "rust"
	case "java", "javac", "mvn", "gradle", "kotlin", "kotlinc", "sbt", "scala":
		return "java"
	case "psql", "mysql", "mariadb", "sqlite3", "alembic", "pg_dump", "pg_restore", "createdb", "dropdb", "mysqldump", "liquibase", "flyway":
		return "db"
	case "bash", "sh", "zsh", "make", "curl", "wget", "git", "ssh", "scp", "rsync", "tar", "cp", "mv", "rm", "chmod", "docker", "kubectl":
		return "shell"
	}
	return ""
}

// analyze runs every detector over the output and returns the most
// specific finding (ties go to the command's ecosystem).
func analyze(output, command string) finding {
	text := strings.ReplaceAll(output, "\r\n", "\n")
	text = ansiRe.ReplaceAllString(text, "")
	if len(text) > MaxTextLen {
		// keep the head (panics, first compile error) and the tail
		// (tracebacks, summaries).
		text = Truncate(text[:MaxTextLen/2], MaxTextLen/2) + "\n" + TruncateTail(text[len(text)-MaxTextLen/2:], MaxTextLen/2)
	}
	lines := strings.Split(text, "\n")
	if len(lines) > 4000 {
		lines = append(lines[:2000:2000], lines[len(lines)-2000:]...)
	}
	prog := ""
	if c, err := ParseCommand(command); err == nil {
		prog = c.Program
	}
	prior := langOfProgram(prog)
	best := finding{lang: "generic", typ: "generic:empty", score: 0}
	consider := func(f finding, ok bool) {
		if !ok {
			return
		}
		if prior != "" && f.lang == prior {
			f.score += 15
		}
		if f.score > best.score {
			best = f
		}
	}
	consider(detectDB(text))
	consider(detectGo(lines))
	consider(detectPython(lines))
	consider(detectNode(lines))
	consider(detectRust(lines))
	consider(detectJava(lines))
	consider(detectShell(lines, prog))
	if best.score < 5 {
		consider(detectGeneric(text, lines))
	}
	if best.raw == "" {
		best.raw = best.msg
	}
	best.raw = Truncate(strings.TrimSpace(best.raw), MaxExampleLen)
	if len(best.msg) > 1024 {
		best.msg = Truncate(best.msg, 1024)
	}
	if !best.keyFrame {
		best.frame.File = ""
	}
	if isEnvironmental(best.typ, best.msg) {
		best.frame.File = ""
		best.keyFrame = false
	}
	return best
}

var environmentalRe = regexp.MustCompile(`(?i)modulenotfound|no module named|noclassdeffound|classnotfound|cannot find module|module_not_found|` +
	`econnrefused|eaddrinuse|enotfound|etimedout|econnreset|connection refused|connectionrefused|connectionerror|connectexception|` +
	`unknownhost|bindexception|address already in use|filenotfound|nosuchfile|no such file or directory|permissionerror|` +
	`permission denied|accessdenied|timeouterror|timed out|timeout|outofmemory|memoryerror|no space left|sslerror|certificate`)

// isEnvironmental reports failures of the environment (a missing module, a
// service that is down, a missing file): where the code happened to hit
// them says nothing about the failure, so no frame is keyed.
func isEnvironmental(typ, msg string) bool {
	return environmentalRe.MatchString(typ) || environmentalRe.MatchString(msg)
}

// ---- database tools ----

type dbRule struct {
	lit     string // a literal every match contains (cheap prefilter)
	lit2    string // or this one
	re      *regexp.Regexp
	typ     string
	msg     string // template with %1, %2 for submatches
	useLine bool   // the message is submatch 1 (generic rules)
}

var dbRules = []dbRule{
	{lit: "\" does not exist", re: regexp.MustCompile(`relation "([^"]+)" does not exist`), typ: "postgres:42P01", msg: `relation "%1" does not exist`},
	{lit: "\" does not exist", re: regexp.MustCompile(`column "([^"]+)"(?: of relation "[^"]+")? does not exist`), typ: "postgres:42703", msg: `column "%1" does not exist`},
	{lit: " does not exist", re: regexp.MustCompile(`ERROR:\s+column ([\w.]+) does not exist`), typ: "postgres:42703", msg: `column "%1" does not exist`},
	{lit: "duplicate key value", re: regexp.MustCompile(`duplicate key value violates unique constraint "([^"]+)"`), typ: "postgres:23505", msg: `duplicate key value violates unique constraint "%1"`},
	{lit: "null value in column", re: regexp.MustCompile(`null value in column "([^"]+)"(?: of relation "[^"]+")? violates not-null constraint`), typ: "postgres:23502", msg: `null value in column "%1" violates not-null constraint`},
	{lit: "violates foreign key", re: regexp.MustCompile(`violates foreign key constraint "([^"]+)"`), typ: "postgres:23503", msg: `violates foreign key constraint "%1"`},
	{lit: "violates check", re: regexp.MustCompile(`violates check constraint "([^"]+)"`), typ: "postgres:23514", msg: `violates check constraint "%1"`},
	{lit: "syntax error at or near", re: regexp.MustCompile(`syntax error at or near "([^"]*)"`), typ: "postgres:42601", msg: `syntax error at or near "%1"`},
	{lit: "syntax error at end of input", re: regexp.MustCompile(`syntax error at end of input`), typ: "postgres:42601", msg: `syntax error at end of input`},
	{lit: "permission denied for ", re: regexp.MustCompile(`permission denied for (table|relation|schema|sequence|database|function|view) "?([\w.]+)"?`), typ: "postgres:42501", msg: `permission denied for %1 "%2"`},
	{lit: "password authentication failed", re: regexp.MustCompile(`password authentication failed for user "([^"]+)"`), typ: "postgres:28P01", msg: `password authentication failed for user "%1"`},
	{lit: "\" does not exist", re: regexp.MustCompile(`role "([^"]+)" does not exist`), typ: "postgres:28000", msg: `role "%1" does not exist`},
	{lit: "\" does not exist", re: regexp.MustCompile(`database "([^"]+)" does not exist`), typ: "postgres:3D000", msg: `database "%1" does not exist`},
	{lit: "deadlock detected", re: regexp.MustCompile(`deadlock detected`), typ: "postgres:40P01", msg: `deadlock detected`},
	{lit: "canceling statement", re: regexp.MustCompile(`canceling statement due to statement timeout`), typ: "postgres:57014", msg: `canceling statement due to statement timeout`},
	{lit: "could not serialize", re: regexp.MustCompile(`could not serialize access due to`), typ: "postgres:40001", msg: `could not serialize access`},
	{lit: "too many clients", lit2: "remaining connection slots", re: regexp.MustCompile(`too many clients already|remaining connection slots are reserved`), typ: "postgres:53300", msg: `too many connections`},
	{lit: "Connection refused", lit2: " refused. Check", re: regexp.MustCompile(`connection to server at .*? failed: Connection refused|could not connect to server: Connection refused|Connection to \S+ refused\. Check that the hostname and port are correct`), typ: "postgres:08001", msg: `connection refused`},
	{lit: "connection to server on socket", re: regexp.MustCompile(`connection to server on socket "[^"]*" failed: No such file or directory`), typ: "postgres:08001", msg: `server socket missing`},
	{lit: "SQLSTATE", re: regexp.MustCompile(`(?:ERROR|FATAL|PANIC):\s+(.*?)\s*\(SQLSTATE ([0-9A-Z]{5})\)`), typ: "postgres:%2", msg: `%1`},
	{lit: "ERROR ", re: regexp.MustCompile(`(?m)ERROR (\d{4}) \(([0-9A-Z]{5})\)(?: at line \d+)?: (.*)$`), typ: "mysql:%1", msg: `%3`},
	{lit: "Error ", re: regexp.MustCompile(`(?m)Error (\d{4}) \(([0-9A-Z]{5})\): (.*)$`), typ: "mysql:%1", msg: `%3`},
	{lit: "Error ", re: regexp.MustCompile(`(?m)Error (1\d{3}|2\d{3}): (.*)$`), typ: "mysql:%1", msg: `%2`},
	{lit: "no such table: ", re: regexp.MustCompile(`no such table: ([\w.]+)`), typ: "sqlite:no_such_table", msg: `no such table: %1`},
	{lit: "no such column: ", re: regexp.MustCompile(`no such column: ([\w.]+)`), typ: "sqlite:no_such_column", msg: `no such column: %1`},
	{lit: " constraint failed", re: regexp.MustCompile(`(UNIQUE|NOT NULL|FOREIGN KEY|CHECK|PRIMARY KEY) constraint failed(?:: ([\w.]+))?`), typ: "sqlite:constraint", msg: `%1 constraint failed: %2`},
	{lit: "database is locked", re: regexp.MustCompile(`database is locked`), typ: "sqlite:busy", msg: `database is locked`},
	{lit: "readonly database", re: regexp.MustCompile(`attempt to write a readonly database`), typ: "sqlite:readonly", msg: `attempt to write a readonly database`},
	{lit: "unable to open database file", re: regexp.MustCompile(`unable to open database file`), typ: "sqlite:cantopen", msg: `unable to open database file`},
	{lit: "file is not a database", re: regexp.MustCompile(`file is not a database`), typ: "sqlite:notadb", msg: `file is not a database`},
	{lit: "Can't locate revision", re: regexp.MustCompile(`Can't locate revision identified by '([^']*)'`), typ: "alembic:missing_revision", msg: `can't locate revision`},
	{lit: "Target database is not up to date", re: regexp.MustCompile(`Target database is not up to date`), typ: "alembic:not_up_to_date", msg: `target database is not up to date`},
	{lit: "Multiple head revisions", re: regexp.MustCompile(`Multiple head revisions are present`), typ: "alembic:multiple_heads", msg: `multiple head revisions are present`},
}

func detectDB(text string) (finding, bool) {
	for _, r := range dbRules {
		if !strings.Contains(text, r.lit) && (r.lit2 == "" || !strings.Contains(text, r.lit2)) {
			continue
		}
		loc := r.re.FindStringSubmatchIndex(text)
		if loc == nil {
			continue
		}
		sub := func(i int) string {
			if 2*i+1 < len(loc) && loc[2*i] >= 0 {
				return text[loc[2*i]:loc[2*i+1]]
			}
			return ""
		}
		expand := func(t string) string {
			for i := 3; i >= 1; i-- {
				t = strings.ReplaceAll(t, "%"+string(rune('0'+i)), sub(i))
			}
			return t
		}
		// the printed line holding the match
		ls := strings.LastIndexByte(text[:loc[0]], '\n') + 1
		le := strings.IndexByte(text[loc[1]:], '\n')
		raw := text[ls:]
		if le >= 0 {
			raw = text[ls : loc[1]+le]
		}
		return finding{lang: "db", typ: expand(r.typ), msg: expand(r.msg), raw: raw, score: 100}, true
	}
	return finding{}, false
}

// ---- Go ----

var (
	goPanicRe    = regexp.MustCompile(`^panic: (.*?)(?: \[recovered\])?$`)
	goFatalRe    = regexp.MustCompile(`^fatal error: (.*)$`)
	goFailRe     = regexp.MustCompile(`^\s*--- FAIL: (\S+)`)
	goLogRe      = regexp.MustCompile(`^\s+([\w.-]+\.go):\d+: (.*)$`)
	goCompileRe  = regexp.MustCompile(`^(?:vet: )?(?:\./)?(\S+\.go):(\d+)(?::\d+)?: (.*)$`)
	goToolRe     = regexp.MustCompile(`^go: (.*)$`)
	goPackageRe  = regexp.MustCompile(`^package (\S+): (.*)$`)
	goFileLineRe = regexp.MustCompile(`^\s*(\S+\.go):\d+`)
)

func detectGo(lines []string) (finding, bool) {
	for i, l := range lines {
		if m := goPanicRe.FindStringSubmatch(l); m != nil {
			return finding{lang: "go", typ: "go:panic", msg: m[1], raw: l, frame: goOwnFrame(lines[i+1:]), keyFrame: true, score: 90}, true
		}
		if m := goFatalRe.FindStringSubmatch(l); m != nil && !strings.Contains(l, ".c:") {
			return finding{lang: "go", typ: "go:fatal", msg: m[1], raw: l, frame: goOwnFrame(lines[i+1:]), keyFrame: true, score: 90}, true
		}
		if strings.HasPrefix(l, "WARNING: DATA RACE") {
			return finding{lang: "go", typ: "go:race", msg: "data race", raw: l, frame: goOwnFrame(lines[i+1:]), keyFrame: true, score: 88}, true
		}
	}
	for _, l := range lines {
		if m := goCompileRe.FindStringSubmatch(l); m != nil && !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "\t") {
			return finding{lang: "go", typ: "go:compile", msg: m[3], raw: l, frame: Frame{File: path.Base(m[1])}, score: 80}, true
		}
	}
	test := ""
	for _, l := range lines {
		if m := goFailRe.FindStringSubmatch(l); m != nil && len(m[1]) > len(test) {
			test = m[1]
		}
	}
	if test != "" {
		logMsg, raw := "", ""
		for _, l := range lines {
			if m := goLogRe.FindStringSubmatch(l); m != nil && !strings.HasPrefix(strings.TrimSpace(l), "testing.go:") {
				logMsg, raw = m[2], strings.TrimSpace(l)
				break
			}
		}
		if logMsg == "" {
			for _, l := range lines {
				if m := goLogRe.FindStringSubmatch(l); m != nil {
					logMsg, raw = m[2], strings.TrimSpace(l)
					break
				}
			}
		}
		return finding{lang: "go", typ: "go:test_fail", msg: test + ": " + logMsg, raw: "--- FAIL: " + test + "\n" + raw, values: true, score: 70}, true
	}
	for _, l := range lines {
		if strings.Contains(l, "import cycle not allowed") {
			return finding{lang: "go", typ: "go:build", msg: "import cycle not allowed", raw: l, score: 65}, true
		}
		if m := goPackageRe.FindStringSubmatch(l); m != nil {
			return finding{lang: "go", typ: "go:build", msg: m[2], raw: l, score: 60}, true
		}
		if m := goToolRe.FindStringSubmatch(l); m != nil {
			return finding{lang: "go", typ: "go:tool", msg: m[1], raw: l, score: 60}, true
		}
	}
	return finding{}, false
}

// goOwnFrame returns the first frame of a goroutine trace in the project's
// code: a function whose package path starts with a domain (github.com/…)
// or main, in a file outside the module cache and vendor directories.
func goOwnFrame(lines []string) Frame {
	for i := 0; i+1 < len(lines) && i < 400; i++ {
		fn := strings.TrimSpace(lines[i])
		m := goFileLineRe.FindStringSubmatch(lines[i+1])
		if m == nil || fn == "" || strings.HasPrefix(fn, "created by") || !strings.Contains(fn, "(") {
			continue
		}
		if k := strings.LastIndex(fn, "("); k > 0 && strings.HasSuffix(fn, ")") {
			fn = fn[:k]
		}
		file := m[1]
		if strings.Contains(file, "/pkg/mod/") || strings.Contains(file, "/vendor/") {
			continue
		}
		pkg := fn
		if k := strings.IndexByte(pkg, '/'); k >= 0 {
			pkg = pkg[:k]
		} else if k := strings.IndexByte(pkg, '.'); k >= 0 {
			pkg = pkg[:k]
		}
		if !(strings.Contains(pkg, ".") || pkg == "main") {
			continue // standard library
		}
		if k := strings.LastIndexByte(fn, '/'); k >= 0 {
			fn = fn[k+1:]
		}
		return Frame{File: path.Base(file), Func: maskNumbers(fn)}
	}
	return Frame{}
}

// ---- Python ----

var (
	pyExcRe       = regexp.MustCompile(`^(?:E\s+)?((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt|Iteration|Failure|Fault|Timeout|Refused|NotFound|Exceeded))(?:: (.*))?$`)
	pyFrameRe     = regexp.MustCompile(`^\s*File "([^"]+)", line \d+, in (\S+)`)
	pytestFrameRe = regexp.MustCompile(`^(\S+\.py):\d+: (?:in (\S+)|(\w+))$`)
	pytestFailed  = regexp.MustCompile(`^FAILED (\S+?)(?:\[[^\]]*\])?(?: - (.*))?$`)
	pytestHeader  = regexp.MustCompile(`^_{3,} (\S+?)(?:\[[^\]]*\])? _{3,}$`)
	mypyRe        = regexp.MustCompile(`^(\S+\.pyi?):\d+: error: (.*?)(?:\s+\[([\w-]+)\])?$`)
	pyLintRe      = regexp.MustCompile(`^(\S+\.pyi?):\d+:\d+: ([A-Z]{1,4}\d{2,4}) (?:\[\*\] )?(.*)$`)
	pylintRe      = regexp.MustCompile(`^(\S+\.py):\d+:\d+: ([CRWEF]\d{4}): (.*) \(([\w-]+)\)$`)
	pipErrRe      = regexp.MustCompile(`^ERROR: (.*)$`)
)

func pyOwn(file string) bool {
	for _, bad := range []string{"site-packages", "dist-packages", "/lib/python", "<frozen", "<string>", "/usr/lib/", "/.venv/", "/venv/", "lib/pypy", "importlib", "<stdin>"} {
		if strings.Contains(file, bad) {
			return false
		}
	}
	return true
}

func detectPython(lines []string) (finding, bool) {
	hasTraceback := false
	lastTB := 0
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "Traceback (most recent call last)") {
			hasTraceback, lastTB = true, i
		}
	}
	var f finding
	found := false
	testName := ""
	for _, l := range lines {
		if m := pytestHeader.FindStringSubmatch(l); m != nil && !strings.HasPrefix(m[1], "ERROR") {
			testName = m[1]
			break
		}
	}
	// The exception: after the last traceback, else pytest's E lines,
	// else the FAILED summary, else any exception line.
	if hasTraceback {
		for i := len(lines) - 1; i > lastTB; i-- {
			if m := pyExcRe.FindStringSubmatch(strings.TrimRight(lines[i], " ")); m != nil && !strings.HasPrefix(lines[i], " ") {
				f = finding{lang: "python", typ: "python:" + lastDotted(m[1]), msg: m[2], raw: lines[i], score: 85}
				f.frame = pyFrame(lines[lastTB:i])
				found = true
				break
			}
		}
	}
	if !found {
		for i, l := range lines {
			if strings.HasPrefix(l, "E ") {
				body := strings.TrimSpace(l[1:])
				if m := pyExcRe.FindStringSubmatch(body); m != nil {
					f = finding{lang: "python", typ: "python:" + lastDotted(m[1]), msg: m[2], raw: l, score: 80}
					f.frame = pyFrame(lines[:min(i+3, len(lines))])
					found = true
					break
				}
				if strings.HasPrefix(body, "assert ") || strings.HasPrefix(body, "AssertionError") {
					f = finding{lang: "python", typ: "python:AssertionError", msg: strings.TrimPrefix(body, "AssertionError: "), raw: l, score: 80}
					found = true
					break
				}
			}
		}
	}
	for _, l := range lines {
		m := pytestFailed.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if testName == "" {
			if k := strings.LastIndex(m[1], "::"); k >= 0 {
				testName = m[1][k+2:]
			}
		}
		if !found {
			detail := m[2]
			if em := pyExcRe.FindStringSubmatch(detail); em != nil {
				f = finding{lang: "python", typ: "python:" + lastDotted(em[1]), msg: em[2], raw: l, score: 80}
			} else {
				f = finding{lang: "python", typ: "python:AssertionError", msg: detail, raw: l, score: 80}
			}
			frameFile := m[1]
			if k := strings.Index(frameFile, "::"); k >= 0 {
				frameFile = frameFile[:k]
			}
			f.frame = Frame{File: path.Base(frameFile)}
			found = true
		}
		break
	}
	if found {
		f.keyFrame = true
		if f.typ == "python:AssertionError" {
			f.values = true
			f.keyFrame = false
			if testName != "" {
				f.msg = testName + ": " + f.msg
			}
		}
		return f, true
	}
	for _, l := range lines {
		if m := mypyRe.FindStringSubmatch(l); m != nil {
			typ := "python:mypy"
			if m[3] != "" {
				typ += ":" + m[3]
			}
			return finding{lang: "python", typ: typ, msg: m[2], raw: l, score: 75}, true
		}
		if m := pylintRe.FindStringSubmatch(l); m != nil {
			return finding{lang: "python", typ: "lint:pylint:" + m[2], msg: m[3], raw: l, values: true, score: 75}, true
		}
		if m := pyLintRe.FindStringSubmatch(l); m != nil {
			return finding{lang: "python", typ: "lint:python:" + m[2], msg: m[3], raw: l, values: true, score: 75}, true
		}
	}
	for _, l := range lines {
		if m := pipErrRe.FindStringSubmatch(l); m != nil {
			return finding{lang: "python", typ: "python:pip", msg: m[1], raw: l, score: 55}, true
		}
	}
	// A bare exception line (no traceback printed).
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimRight(lines[i], " ")
		if m := pyExcRe.FindStringSubmatch(l); m != nil && !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "\t") {
			return finding{lang: "python", typ: "python:" + lastDotted(m[1]), msg: m[2], raw: l, score: 40}, true
		}
	}
	return finding{}, false
}

// pyFrame returns the innermost frame of a traceback in the project's code.
func pyFrame(lines []string) Frame {
	var fr Frame
	for _, l := range lines {
		if m := pyFrameRe.FindStringSubmatch(l); m != nil && pyOwn(m[1]) {
			fr = Frame{File: path.Base(m[1]), Func: m[2]}
		} else if m := pytestFrameRe.FindStringSubmatch(l); m != nil && pyOwn(m[1]) {
			fr = Frame{File: path.Base(m[1]), Func: m[2]}
		}
	}
	return fr
}

func lastDotted(s string) string {
	if k := strings.LastIndexByte(s, '.'); k >= 0 {
		return s[k+1:]
	}
	return s
}

// ---- Node.js and TypeScript ----

var (
	tsRe        = regexp.MustCompile(`^(\S+?)(?:\((\d+),(\d+)\)|:(\d+):(\d+))(?::| -) error (TS\d+): (.*)$`)
	tsBareRe    = regexp.MustCompile(`^(?:error )?(TS\d{4,5}): (.*)$`)
	jestTitleRe = regexp.MustCompile(`^\s*● (.+)$`)
	vitestRe    = regexp.MustCompile(`^\s*FAIL\s+(\S+)\s+>\s+(.+)$`)
	nodeErrRe   = regexp.MustCompile(`^(?:Uncaught )?((?:[A-Z]\w*)?(?:Error|Exception))(?: \[(\w+)\])?: (.*)$`)
	nodeCauseRe = regexp.MustCompile(`^\s*(?:\[cause\]|cause): (\w*Error)(?: \[\w+\])?: (.*?)(?: \{)?$`)
	nodeAtRe    = regexp.MustCompile(`^\s+at (?:async )?(?:(.+?) \((.+)\)|(.+))$`)
	npmRe       = regexp.MustCompile(`^npm (?:ERR!|error) ?(.*)$`)
	eslintRe    = regexp.MustCompile(`^\s+\d+:\d+\s+(error|warning)\s+(.*?)\s{2,}(\S+)$`)
	locRe       = regexp.MustCompile(`^(.*?)(?::\d+)+$`)
)

func nodeOwn(loc string) bool {
	return !(strings.Contains(loc, "node_modules") || strings.HasPrefix(loc, "node:") || strings.HasPrefix(loc, "internal/") ||
		strings.Contains(loc, "<anonymous>") || loc == "native" || strings.HasPrefix(loc, "file:///usr/"))
}

// nodeFrame returns the first `at` frame in the project's code.
func nodeFrame(lines []string) Frame {
	for _, l := range lines {
		m := nodeAtRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		fn, loc := m[1], m[2]
		if loc == "" {
			loc = m[3]
		}
		loc = strings.TrimSpace(loc)
		if !nodeOwn(loc) {
			continue
		}
		if k := strings.IndexByte(loc, '?'); k >= 0 { // vite ?t=… query
			if e := strings.LastIndexByte(loc, ':'); e > k {
				loc = loc[:k] + loc[strings.LastIndex(loc[:e], ":"):]
			} else {
				loc = loc[:k]
			}
		}
		if mm := locRe.FindStringSubmatch(loc); mm != nil {
			loc = mm[1]
		}
		if loc == "" {
			continue
		}
		return Frame{File: path.Base(loc), Func: fn}
	}
	return Frame{}
}

func detectNode(lines []string) (finding, bool) {
	for _, l := range lines {
		if m := tsRe.FindStringSubmatch(l); m != nil {
			return finding{lang: "node", typ: "ts:" + m[6], msg: m[7], raw: l, score: 85}, true
		}
		if m := tsBareRe.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			return finding{lang: "node", typ: "ts:" + m[1], msg: m[2], raw: l, score: 80}, true
		}
	}
	for i, l := range lines {
		title, window := "", 0
		if m := jestTitleRe.FindStringSubmatch(l); m != nil && !strings.Contains(m[1], "Test suite failed to run") {
			title, window = m[1], 12
		} else if m := vitestRe.FindStringSubmatch(l); m != nil {
			title, window = m[2], 6
		}
		if title != "" {
			if f, ok := testFailure(lines, i, strings.TrimSpace(title), window); ok {
				return f, true
			}
		}
	}
	for _, l := range lines {
		if m := eslintRe.FindStringSubmatch(l); m != nil && m[1] == "error" {
			return finding{lang: "node", typ: "lint:eslint:" + m[3], msg: m[2], raw: strings.TrimSpace(l), values: true, score: 75}, true
		}
	}
	// npm's own errors
	code, msg, raw := "", "", ""
	for _, l := range lines {
		m := npmRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		body := strings.TrimSpace(m[1])
		switch {
		case body == "":
		case strings.HasPrefix(body, "code ") && code == "":
			code = strings.TrimSpace(body[5:])
		case strings.HasPrefix(body, "errno ") || strings.HasPrefix(body, "A complete log") || strings.HasPrefix(body, "/") ||
			strings.HasPrefix(body, "Log files") || strings.HasPrefix(body, "This is probably not a problem with npm"):
		case msg == "":
			msg, raw = body, l
		case code == "ERESOLVE" && strings.HasPrefix(body, "peer ") && !strings.Contains(msg, " | "):
			msg += " | " + body
		}
	}
	if code != "" || msg != "" {
		score := 70
		if code == "ELIFECYCLE" || code == "1" || code == "2" || strings.HasPrefix(msg, "Lifecycle script") || strings.HasPrefix(msg, "command failed") {
			score = 30
		}
		typ := "npm:error"
		if code != "" {
			typ = "npm:" + code
		}
		return finding{lang: "node", typ: typ, msg: msg, raw: raw, score: score}, true
	}
	// a thrown error with its stack
	for i, l := range lines {
		m := nodeErrRe.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil || strings.HasPrefix(l, "    ") {
			continue
		}
		f := finding{lang: "node", typ: "node:" + m[1], msg: m[3], raw: strings.TrimSpace(l), frame: nodeFrame(lines[i+1:]), keyFrame: true, score: 50}
		if i+1 < len(lines) && nodeAtRe.MatchString(lines[i+1]) {
			f.score = 80
		}
		for _, cl := range lines[i+1:] {
			if cm := nodeCauseRe.FindStringSubmatch(cl); cm != nil {
				f.msg += " (cause: " + cm[1] + ": " + cm[2] + ")"
				break
			}
		}
		if m[2] != "" {
			f.typ += ":" + m[2]
		}
		return f, true
	}
	return finding{}, false
}

// testFailure reads the first line after a Jest or Vitest test title: an
// error thrown by the code under test (keyed on its own frame), else the
// assertion (keyed on the test title, its values masked).
func testFailure(lines []string, i int, title string, window int) (finding, bool) {
	for j := i + 1; j < len(lines) && j <= i+window; j++ {
		body := strings.TrimSpace(lines[j])
		if body == "" {
			continue
		}
		if em := nodeErrRe.FindStringSubmatch(body); em != nil && em[1] != "AssertionError" {
			return finding{lang: "node", typ: "node:" + em[1], msg: em[3], raw: body, frame: nodeFrame(lines[j+1:]), keyFrame: true, score: 80}, true
		}
		return finding{lang: "node", typ: "node:test_fail", msg: title + ": " + body, raw: lines[i] + "\n" + body, values: true, score: 80}, true
	}
	return finding{}, false
}

// ---- Rust ----

var (
	rustCodeRe     = regexp.MustCompile(`^error\[(E\d{4})\]: (.*)$`)
	rustLabelRe    = regexp.MustCompile(`\^+\s+(\S.*)$`)
	rustArrowRe    = regexp.MustCompile(`^\s*--> (\S+?)(?::\d+)+$`)
	rustPanicNew   = regexp.MustCompile(`^thread '([^']+)' panicked at (\S+?)(?::\d+)+:$`)
	rustPanicOld   = regexp.MustCompile(`^thread '([^']+)' panicked at '(.*)', (\S+?)(?::\d+)+$`)
	rustErrorRe    = regexp.MustCompile(`^error: (.*)$`)
	rustLintURLRe  = regexp.MustCompile(`rust-clippy/\S*#(\w+)`)
	rustLdRe       = regexp.MustCompile(`(?:/usr/bin/ld|\bld|ld\.lld|rust-lld|collect2): (?:error: )?(.*)$`)
	rustSkipErrors = []string{"could not compile", "aborting due to", "test failed, to rerun", "process didn't exit successfully", "Could not compile"}
)

func detectRust(lines []string) (finding, bool) {
	for i, l := range lines {
		if m := rustCodeRe.FindStringSubmatch(l); m != nil {
			msg := m[2]
			f := finding{lang: "rust", typ: "rust:" + m[1], raw: l, score: 90}
			for j := i + 1; j < len(lines) && j < i+30; j++ {
				if strings.HasPrefix(lines[j], "error") || strings.HasPrefix(lines[j], "warning") {
					break
				}
				if am := rustArrowRe.FindStringSubmatch(lines[j]); am != nil && f.frame.File == "" {
					f.frame = Frame{File: path.Base(am[1])}
				}
				if lm := rustLabelRe.FindStringSubmatch(lines[j]); lm != nil {
					label := strings.TrimSpace(lm[1])
					if label != msg && !strings.Contains(msg, label) {
						msg += " | " + label
					}
					break
				}
			}
			f.msg = msg
			return f, true
		}
	}
	for i, l := range lines {
		var thread, msg, loc string
		if m := rustPanicNew.FindStringSubmatch(l); m != nil {
			thread, loc = m[1], m[2]
			if i+1 < len(lines) {
				msg = strings.TrimSpace(lines[i+1])
			}
		} else if m := rustPanicOld.FindStringSubmatch(l); m != nil {
			thread, msg, loc = m[1], m[2], m[3]
		} else {
			continue
		}
		f := finding{lang: "rust", typ: "rust:panic", msg: msg, raw: l + "\n" + msg, frame: Frame{File: path.Base(loc)}, keyFrame: true, score: 85}
		if strings.HasPrefix(msg, "assertion") {
			f.values = true
			f.keyFrame = false
			f.msg = thread + ": " + msg
		}
		return f, true
	}
	for i, l := range lines {
		m := rustErrorRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		skip := false
		for _, s := range rustSkipErrors {
			if strings.HasPrefix(m[1], s) {
				skip = true
			}
		}
		if skip {
			continue
		}
		f := finding{lang: "rust", typ: "rust:error", msg: m[1], raw: l, score: 50}
		for j := i + 1; j < len(lines) && j < i+40; j++ {
			if strings.HasPrefix(lines[j], "error") {
				break
			}
			if um := rustLintURLRe.FindStringSubmatch(lines[j]); um != nil {
				f.typ, f.values, f.score = "lint:clippy:"+um[1], true, 75
				break
			}
			if strings.Contains(m[1], "linking with") {
				if lm := rustLdRe.FindStringSubmatch(lines[j]); lm != nil && !strings.Contains(lines[j], "ld returned") {
					f.msg = m[1] + " | " + strings.TrimSpace(lm[1])
					f.typ, f.score = "rust:link", 75
					break
				}
			}
		}
		return f, true
	}
	return finding{}, false
}

// ---- Java ----

var (
	javaExcRe       = regexp.MustCompile(`^\s*(Exception in thread "[^"]*" |Caused by: )?((?:[a-zA-Z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error|Throwable|Failure|Failed))(?:: (.*))?$`)
	javaAtRe        = regexp.MustCompile(`^\s*at (?:[\w.$@-]+/+)?([\w.$<>]+)\.([\w$<>]+)\(([^)]*)\)`)
	mavenCompileRe  = regexp.MustCompile(`^\[ERROR\] (\S+\.java):\[(\d+),(\d+)\] (.*)$`)
	javacRe         = regexp.MustCompile(`^(\S+\.java):(\d+): (?:error|错误): (.*)$`)
	javaSymbolRe    = regexp.MustCompile(`^(?:\[ERROR\])?\s+symbol:\s+(.*)$`)
	gradleWrongRe   = regexp.MustCompile(`^\* What went wrong:`)
	javaThirdParty  = []string{"java.", "javax.", "jdk.", "sun.", "com.sun.", "org.junit.", "junit.", "org.opentest4j.", "org.springframework.", "org.hibernate.", "org.apache.", "com.zaxxer.", "org.postgresql.", "com.mysql.", "org.mariadb.", "kotlin.", "kotlinx.", "scala.", "io.netty.", "reactor.", "com.fasterxml.", "org.gradle.", "worker.org.gradle.", "org.mockito.", "org.assertj.", "lombok.", "org.slf4j.", "ch.qos.", "com.google.", "io.micrometer.", "org.eclipse.", "net.bytebuddy.", "org.testng.", "io.grpc.", "okhttp3.", "retrofit2.", "org.jboss.", "jakarta.", "org.h2.", "org.flywaydb.", "org.liquibase.", "io.quarkus.", "io.micronaut.", "org.aspectj."}
	javaAssertTypes = set("AssertionFailedError", "AssertionError", "ComparisonFailure", "AssertionFailedException", "MultipleFailuresError")
)

func javaOwn(class string) bool {
	for _, p := range javaThirdParty {
		if strings.HasPrefix(class, p) {
			return false
		}
	}
	return true
}

func detectJava(lines []string) (finding, bool) {
	for i, l := range lines {
		if m := mavenCompileRe.FindStringSubmatch(l); m != nil {
			return finding{lang: "java", typ: "java:compile", msg: m[4] + javaSymbol(lines[i+1:]), raw: l, score: 82}, true
		}
		if m := javacRe.FindStringSubmatch(l); m != nil {
			return finding{lang: "java", typ: "java:compile", msg: m[3] + javaSymbol(lines[i+1:]), raw: l, score: 82}, true
		}
	}
	// exception sections: the root cause is the last one
	type section struct {
		line   int
		class  string
		msg    string
		frames []Frame
		prefix string
	}
	var secs []section
	for i, l := range lines {
		t := strings.TrimRight(l, " ")
		if m := javaExcRe.FindStringSubmatch(t); m != nil {
			secs = append(secs, section{line: i, class: m[2], msg: m[3], prefix: m[1]})
			continue
		}
		if len(secs) > 0 {
			if m := javaAtRe.FindStringSubmatch(l); m != nil {
				s := &secs[len(secs)-1]
				file := m[3]
				if k := strings.IndexByte(file, ':'); k >= 0 {
					file = file[:k]
				}
				cls := m[1]
				if javaOwn(cls) {
					simple := cls
					if k := strings.LastIndexByte(simple, '.'); k >= 0 {
						simple = simple[k+1:]
					}
					s.frames = append(s.frames, Frame{File: file, Func: simple + "." + m[2]})
				} else {
					s.frames = append(s.frames, Frame{})
				}
			}
		}
	}
	// keep sections that look like Java: a stack, or a thread/cause prefix
	var real []section
	for _, s := range secs {
		if len(s.frames) > 0 || s.prefix != "" {
			real = append(real, s)
		}
	}
	if len(real) > 0 {
		root := real[len(real)-1]
		simple := lastDotted(root.class)
		f := finding{lang: "java", typ: "java:" + simple, msg: root.msg, raw: strings.TrimSpace(lines[root.line]), keyFrame: true, score: 85}
		for _, fr := range root.frames {
			if fr.File != "" {
				f.frame = fr
				break
			}
		}
		if javaAssertTypes[simple] {
			f.values = true
			f.keyFrame = false
			if f.frame.Func != "" {
				f.msg = f.frame.Func + ": " + f.msg
			}
		}
		return f, true
	}
	for i, l := range lines {
		if gradleWrongRe.MatchString(l) && i+1 < len(lines) {
			return finding{lang: "java", typ: "java:gradle", msg: strings.TrimSpace(lines[i+1]), raw: lines[i+1], score: 40}, true
		}
	}
	return finding{}, false
}

func javaSymbol(lines []string) string {
	for i, l := range lines {
		if i > 3 {
			break
		}
		if m := javaSymbolRe.FindStringSubmatch(l); m != nil {
			sym := strings.Fields(m[1])
			if len(sym) >= 2 { // "method getPrice()" → method `getPrice()`
				return " | symbol: " + sym[0] + " `" + strings.Join(sym[1:], " ") + "`"
			}
			return " | symbol: `" + strings.TrimSpace(m[1]) + "`"
		}
	}
	return ""
}

// ---- shells and command-line tools ----

var (
	notFoundRes = []*regexp.Regexp{
		regexp.MustCompile(`^(?:\S+: )?(?:line \d+: )?([^\s:]+): command not found$`),
		regexp.MustCompile(`^(?:zsh|bash|fish|ksh): command not found: (\S+)$`),
		regexp.MustCompile(`^(?:/bin/|/usr/bin/)?(?:sh|dash|ash): \d+: ([^\s:]+): not found$`),
		regexp.MustCompile(`^fish: Unknown command:? '?([^\s']+)'?`),
		regexp.MustCompile(`^'([^']+)' is not recognized as an internal or external command`),
	}
	shellExecRe   = regexp.MustCompile(`^(?:\S*(?:bash|sh|zsh|dash|ksh)|[\w./-]+\.sh)(?:: line \d+)?: (\S+): (Permission denied|No such file or directory|Is a directory|Not a directory|cannot execute binary file.*)$`)
	signalRe      = regexp.MustCompile(`Segmentation fault|Killed\b|Aborted \(core dumped\)|Bus error|Illegal instruction|Floating point exception`)
	makeRe        = regexp.MustCompile(`^g?make(?:\[\d+\])?: \*\*\* (.*)$`)
	gitFatalRe    = regexp.MustCompile(`^fatal: (.*)$`)
	gitRejectRe   = regexp.MustCompile(`! \[(?:rejected|remote rejected)\]\s+\S+ -> \S+ \(([^)]+)\)`)
	gitConflictRe = regexp.MustCompile(`^CONFLICT \(([^)]+)\): (.*)$`)
	sshDeniedRe   = regexp.MustCompile(`Permission denied \(publickey[^)]*\)`)
	curlRe        = regexp.MustCompile(`^curl: \((\d+)\) (.*)$`)
	dockerDownRe  = regexp.MustCompile(`Cannot connect to the Docker daemon`)
	dockerErrRe   = regexp.MustCompile(`Error response from daemon: (.*)$`)
	errnoRe       = regexp.MustCompile(`^([\w.+-]+): (.+?): (No such file or directory|Permission denied|No space left on device|Read-only file system|Is a directory|Not a directory|File exists|Directory not empty|Operation not permitted|Too many open files)$`)
	noSpaceRe     = regexp.MustCompile(`No space left on device`)
	exitRe        = regexp.MustCompile(`(?i)exit (?:status|code):? (\d+)|exited with (?:code|status) (\d+)|returned non-zero exit status (\d+)`)
	errorLineRe   = regexp.MustCompile(`^error: (.*)$`)
)

var errnoNames = map[string]string{
	"No such file or directory": "ENOENT", "Permission denied": "EACCES", "No space left on device": "ENOSPC",
	"Read-only file system": "EROFS", "Is a directory": "EISDIR", "Not a directory": "ENOTDIR", "File exists": "EEXIST",
	"Directory not empty": "ENOTEMPTY", "Operation not permitted": "EPERM", "Too many open files": "EMFILE",
}

func detectShell(lines []string, prog string) (finding, bool) {
	best := finding{}
	ok := false
	take := func(f finding) {
		if !ok || f.score > best.score {
			best, ok = f, true
		}
	}
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if !shellCandidate(t) {
			continue
		}
		for _, re := range notFoundRes {
			if m := re.FindStringSubmatch(t); m != nil {
				take(finding{lang: "shell", typ: "shell:command_not_found", msg: "`" + path.Base(m[1]) + "`: command not found", raw: t, score: 85})
			}
		}
		if m := shellExecRe.FindStringSubmatch(t); m != nil {
			take(finding{lang: "shell", typ: "shell:exec", msg: m[1] + ": " + m[2], raw: t, score: 75})
		}
		if m := signalRe.FindString(t); m != "" {
			take(finding{lang: "shell", typ: "shell:signal", msg: strings.ToLower(strings.Fields(m)[0]), raw: t, score: 70})
		}
		if m := makeRe.FindStringSubmatch(t); m != nil {
			if strings.HasPrefix(m[1], "No rule to make target") {
				take(finding{lang: "shell", typ: "make:no_rule", msg: m[1], raw: t, score: 75})
			} else {
				take(finding{lang: "shell", typ: "make:error", msg: m[1], raw: t, score: 30})
			}
		}
		if sshDeniedRe.MatchString(t) {
			take(finding{lang: "shell", typ: "ssh:publickey", msg: "permission denied (publickey)", raw: t, score: 78})
		}
		if m := gitRejectRe.FindStringSubmatch(t); m != nil {
			take(finding{lang: "shell", typ: "git:push_rejected", msg: "rejected (" + m[1] + ")", raw: t, score: 75})
		}
		if m := gitConflictRe.FindStringSubmatch(t); m != nil {
			take(finding{lang: "shell", typ: "git:conflict", msg: m[2], raw: t, score: 75})
		}
		if m := gitFatalRe.FindStringSubmatch(t); m != nil {
			take(finding{lang: "shell", typ: "git:fatal", msg: m[1], raw: t, score: 60})
		}
		if m := curlRe.FindStringSubmatch(t); m != nil {
			take(finding{lang: "shell", typ: "curl:" + m[1], msg: m[2], raw: t, score: 75})
		}
		if dockerDownRe.MatchString(t) {
			take(finding{lang: "shell", typ: "docker:daemon_unreachable", msg: "cannot connect to the docker daemon", raw: t, score: 78})
		}
		if m := dockerErrRe.FindStringSubmatch(t); m != nil {
			take(finding{lang: "shell", typ: "docker:daemon_error", msg: m[1], raw: t, score: 70})
		}
		if m := errnoRe.FindStringSubmatch(t); m != nil {
			take(finding{lang: "shell", typ: "shell:" + errnoNames[m[3]], msg: m[1] + ": " + m[2] + ": " + m[3], raw: t, score: 60})
		}
		if noSpaceRe.MatchString(t) {
			take(finding{lang: "shell", typ: "shell:ENOSPC", msg: "no space left on device", raw: t, score: 55})
		}
		if m := errorLineRe.FindStringSubmatch(t); m != nil {
			p := prog
			if p == "" || strings.Contains(p, "/") {
				p = "tool"
			}
			take(finding{lang: langOfProgram(prog), typ: p + ":error", msg: m[1], raw: t, score: 45})
		}
		if m := exitRe.FindStringSubmatch(t); m != nil {
			code := m[1] + m[2] + m[3]
			take(finding{lang: "shell", typ: "shell:exit_" + code, msg: "exit status " + code, raw: t, score: 10})
		}
	}
	if ok && best.lang == "" {
		best.lang = "shell"
	}
	return best, ok
}

// shellLits are substrings one of which every line a shell rule matches
// contains; other lines are skipped without running the rules.
var shellLits = []string{"not found", "ot recognized", "nknown command", "ermission denied", "No such file", "Is a directory",
	"Not a directory", "cannot execute", "Segmentation fault", "Killed", "Aborted", "Bus error", "Illegal instruction",
	"Floating point", "make", "fatal: ", "rejected]", "CONFLICT (", "curl: (", "Docker daemon", "Error response from daemon",
	"No space left", "Read-only file system", "File exists", "not empty", "not permitted", "Too many open files", "error: ",
	"xit ", "xited with", "non-zero exit"}

func shellCandidate(t string) bool {
	for _, l := range shellLits {
		if strings.Contains(t, l) {
			return true
		}
	}
	return false
}

// ---- anything else ----

var genericRe = regexp.MustCompile(`(?i)\b(error|errors|fatal|failed|failure|exception|panic|cannot|can't|could not|couldn't|denied|refused|not found|no such|invalid|unable|abort|aborted|timed out|错误|失败|异常)\b`)

func detectGeneric(text string, lines []string) (finding, bool) {
	if loc := genericRe.FindStringIndex(text); loc != nil {
		start := strings.LastIndexByte(text[:loc[0]], '\n') + 1
		end := strings.IndexByte(text[loc[0]:], '\n')
		t := text[start:]
		if end >= 0 {
			t = text[start : loc[0]+end]
		}
		t = strings.TrimSpace(t)
		return finding{lang: "generic", typ: "generic:error", msg: t, raw: t, score: 5}, true
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if t := strings.TrimSpace(lines[i]); t != "" {
			return finding{lang: "generic", typ: "generic:unknown", msg: t, raw: t, score: 1}, true
		}
	}
	return finding{}, false
}
