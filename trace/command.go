package trace

import (
	"path"
	"regexp"
	"strings"
)

// MaxCommandLen bounds the part of a command line ParseCommand reads; the
// rest is ignored.
const MaxCommandLen = 16 << 10

// Command is a shell command line reduced to what identifies it.
type Command struct {
	// Raw is the command as given (truncated to MaxCommandLen).
	Raw string `json:"raw"`
	// Family is the stable command family: the program and its
	// subcommand words, e.g. "go test", "pytest", "npm run build".
	Family string `json:"family"`
	// Program is the canonical program name ("python", "docker", a
	// project script path such as "scripts/test.sh").
	Program string `json:"program"`
	// Args are the remaining non-flag words (targets, paths, flag values),
	// with a leading "./" removed; at most 16.
	Args []string `json:"args,omitempty"`
	// Flags are the flag names used (without values); at most 16.
	Flags []string `json:"flags,omitempty"`
	// Env are the names of environment assignments before the program.
	Env []string `json:"env,omitempty"`
	// Dir is the directory a leading `cd DIR &&` moved to, if any.
	Dir string `json:"dir,omitempty"`
}

// ParseCommand reduces a shell command line to its command family.
//
// The rules, in order:
//
//  1. The line is split like a shell would: quotes, escapes, comments,
//     redirections (2>&1, > out.log) and here-document bodies are handled;
//     `$(…)` stays one word.
//  2. It is cut into commands at &&, ||, ;, & and newlines, and each command
//     into pipeline stages at |. Of a pipeline, leading sources (cat, echo,
//     printf) and trailing filters (grep, tee, head, tail, jq, sort, …) are
//     dropped and the first remaining stage is the command.
//  3. Setup commands (cd, export, source/., set, pushd, mkdir -p, echo,
//     sleep, true, loop headers…) are skipped, and so are fallbacks after
//     `||`; the family is that of the LAST remaining command (its exit
//     status is the line's). A leading `cd DIR` is kept in Dir.
//  4. Wrappers are peeled off: VAR=value prefixes, env, sudo/doas, timeout
//     DURATION, nice, nohup, time, stdbuf, xargs, watch, command, exec;
//     `bash -c '…'`, `sh -c`, `eval` parse their string; npx/pnpx/bunx,
//     `npm exec`, `pnpm exec|dlx`, `yarn dlx|exec`, `poetry|uv|pipenv|pdm|
//     hatch|rye|conda run`, `bundle exec`, `coverage run -m`, and
//     `python -m TOOL` for known tools (pytest, pip, mypy, ruff, …) run the
//     inner command.
//  5. Programs are canonicalised: absolute paths and virtualenv or
//     node_modules/.bin paths by base name; python3.11 → python,
//     pip3 → pip, docker-compose → docker compose, gradlew → gradle,
//     mvnw → mvn; other relative paths (project scripts) stay paths.
//  6. Subcommand words are kept per tool (table toolSpecs): `go test`,
//     `go mod tidy`, `cargo test`, `git commit`, `docker compose up`,
//     `kubectl get`, `alembic upgrade`, `make lint` (the last target),
//     `mvn install` (the last goal but clean), `gradle test`,
//     `npm run build` (npm test/start without run), `pnpm test`,
//     `yarn build`; global flags and their values before the subcommand are
//     skipped. Unknown programs are their own family (`ls -la` → `ls`).
//
// It returns ErrEmptyCommand when no program remains.
func ParseCommand(line string) (Command, error) {
	if len(line) > MaxCommandLen {
		line = Truncate(line, MaxCommandLen)
	}
	c := Command{Raw: line}
	argv, env, dir := mainCommand(line, 0)
	if len(argv) == 0 {
		return c, &ValidationError{Object: "command", Msg: "no program to run", Err: ErrEmptyCommand}
	}
	c.Env = env
	c.Dir = dir
	prog, words, rest := family(argv, 0)
	if prog == "" {
		return c, &ValidationError{Object: "command", Msg: "no program to run", Err: ErrEmptyCommand}
	}
	c.Program = oneLine(prog)
	for i := range words {
		words[i] = oneLine(words[i])
	}
	c.Family = Truncate(strings.Join(append([]string{c.Program}, words...), " "), MaxIDLen-4)
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		if w == "--" {
			continue
		}
		if strings.HasPrefix(w, "-") && len(w) > 1 {
			name := w
			if k := strings.IndexByte(name, '='); k > 0 {
				name = name[:k]
			}
			if len(c.Flags) < 16 && len(name) <= 64 {
				c.Flags = append(c.Flags, name)
			}
			continue
		}
		if len(c.Args) < 16 {
			c.Args = append(c.Args, cleanArg(w))
		}
	}
	return c, nil
}

// FamilyOf returns the command family of line, or "" when it has none.
func FamilyOf(line string) string {
	c, err := ParseCommand(line)
	if err != nil {
		return ""
	}
	return c.Family
}

// oneLine replaces control characters so that a family can serve as an id.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

func cleanArg(w string) string {
	w = strings.TrimPrefix(w, "./")
	if len(w) > 1 {
		w = strings.TrimSuffix(w, "/")
	}
	return Truncate(w, 128)
}

// segment is one command of a list, with the operator before it.
type segment struct {
	conn   string
	stages [][]string
}

func splitSegments(toks []shTok) []segment {
	var segs []segment
	cur := segment{}
	var stage []string
	flushStage := func() {
		if len(stage) > 0 {
			cur.stages = append(cur.stages, stage)
		}
		stage = nil
	}
	flush := func(conn string) {
		flushStage()
		if len(cur.stages) > 0 {
			segs = append(segs, cur)
		}
		cur = segment{conn: conn}
	}
	for _, t := range toks {
		if !t.op {
			stage = append(stage, t.s)
			continue
		}
		switch t.s {
		case "|":
			flushStage()
		case "(", ")":
			// subshell grouping: ignore
		default:
			flush(t.s)
		}
	}
	flush("")
	return segs
}

var (
	pipeSources = set("cat", "echo", "printf", "yes", "zcat")
	pipeFilters = set("grep", "egrep", "fgrep", "rg", "ag", "tee", "head", "tail", "less", "more", "sort", "uniq",
		"wc", "cut", "tr", "column", "sed", "awk", "gawk", "jq", "yq", "fold", "nl", "cat", "bat", "ts", "pv",
		"xclip", "pbcopy", "base64", "fmt", "rev", "tac", "iconv", "ansi2txt", "colrm", "strings", "diff-so-fancy")
	setupCommands = set("cd", "pushd", "popd", "export", "source", ".", "set", "unset", "alias", "unalias", "true",
		":", "false", "echo", "printf", "sleep", "clear", "ulimit", "umask", "trap", "shopt", "mkdir", "touch",
		"read", "wait", "local", "declare", "typeset", "hash", "rehash", "then", "do", "done", "fi", "else", "esac",
		"for", "while", "until", "case", "if", "elif", "function", "return", "exit", "break", "continue", "{", "}",
		"setopt", "nvm", "pyenv", "rbenv", "activate", "deactivate")
	keywordPrefixes = set("then", "do", "else", "elif", "if", "while", "until", "!", "{")
)

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// mainCommand returns the argv of the command that decides the line's
// outcome, with wrappers peeled, the env names assigned before it and the
// directory of a leading cd.
func mainCommand(line string, depth int) (argv, env []string, dir string) {
	segs := splitSegments(lexShell(line))
	var chosen []string
	var chosenEnv []string
	for i, seg := range segs {
		if seg.conn == "||" && i > 0 {
			continue // a fallback
		}
		st := pickStage(seg.stages)
		for len(st) > 0 && keywordPrefixes[st[0]] {
			st = st[1:]
		}
		if len(st) == 0 {
			continue
		}
		a, e := unwrap(st, depth)
		if len(a) == 0 {
			continue
		}
		prog := path.Base(a[0])
		if prog == "cd" || prog == "pushd" {
			if len(a) > 1 && chosen == nil {
				dir = a[1]
			}
			continue
		}
		if prog == "mkdir" || prog == "touch" {
			continue
		}
		if setupCommands[prog] {
			continue
		}
		if prog == "conda" && len(a) > 1 && (a[1] == "activate" || a[1] == "deactivate") {
			continue
		}
		chosen, chosenEnv = a, e
	}
	if chosen == nil {
		// Only setup commands: use the last one (e.g. a lone `echo`).
		for i := len(segs) - 1; i >= 0 && chosen == nil; i-- {
			if st := pickStage(segs[i].stages); len(st) > 0 {
				chosen, chosenEnv = unwrap(st, depth)
			}
		}
	}
	return chosen, chosenEnv, dir
}

func pickStage(stages [][]string) []string {
	if len(stages) == 0 {
		return nil
	}
	lo, hi := 0, len(stages)
	for hi-lo > 1 && pipeSources[path.Base(firstWord(stages[lo]))] {
		lo++
	}
	for hi-lo > 1 && pipeFilters[path.Base(firstWord(stages[hi-1]))] {
		hi--
	}
	return stages[lo]
}

func firstWord(st []string) string {
	for _, w := range st {
		if !isAssignment(w) {
			return w
		}
	}
	return ""
}

var assignmentRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

func isAssignment(w string) bool { return assignmentRe.MatchString(w) }

// wrapperSpec describes a program that runs another command.
type wrapperSpec struct {
	// valueFlags take the next word as their value.
	valueFlags map[string]bool
	// positional words to skip before the inner command (timeout's
	// duration, taskset's mask).
	positional int
	// assignments: NAME=value words are skipped (env).
	assignments bool
}

var wrappers = map[string]wrapperSpec{
	"sudo":       {valueFlags: set("-u", "-g", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "-h", "--user", "--group", "--chdir")},
	"doas":       {valueFlags: set("-u", "-C")},
	"env":        {valueFlags: set("-u", "-C", "-S", "--unset", "--chdir", "--split-string"), assignments: true},
	"nohup":      {},
	"time":       {valueFlags: set("-f", "-o", "--format", "--output")},
	"command":    {},
	"builtin":    {},
	"exec":       {valueFlags: set("-a")},
	"nice":       {valueFlags: set("-n", "--adjustment")},
	"ionice":     {valueFlags: set("-c", "-n", "-p", "--class", "--classdata")},
	"stdbuf":     {valueFlags: set("-i", "-o", "-e", "--input", "--output", "--error")},
	"timeout":    {valueFlags: set("-s", "-k", "--signal", "--kill-after"), positional: 1},
	"gtimeout":   {valueFlags: set("-s", "-k", "--signal", "--kill-after"), positional: 1},
	"watch":      {valueFlags: set("-n", "--interval", "-d", "--differences")},
	"xargs":      {valueFlags: set("-n", "-I", "-i", "-P", "-L", "-l", "-d", "-E", "-e", "-a", "-s", "--max-args", "--max-procs", "--delimiter", "--arg-file", "--replace")},
	"unbuffer":   {},
	"setsid":     {},
	"chronic":    {},
	"caffeinate": {valueFlags: set("-t", "-w")},
	"xvfb-run":   {valueFlags: set("-s", "-n", "-f", "-e", "-p", "--server-args", "--server-num", "--auth-file", "--error-file")},
	"taskset":    {valueFlags: set("-c"), positional: 1},
	"strace":     {valueFlags: set("-o", "-e", "-p", "-s", "-u")},
	"dotenv":     {valueFlags: set("-e", "-f", "-c", "-v")},
	"npx":        {valueFlags: set("-p", "--package", "-c", "--call")},
	"pnpx":       {valueFlags: set("-p", "--package")},
	"bunx":       {valueFlags: set("-p", "--package")},
	"direnv":     {},
}

// unwrap peels env assignments and wrapper programs off a command's argv.
func unwrap(argv []string, depth int) ([]string, []string) {
	var env []string
	for guard := 0; guard < 16 && len(argv) > 0; guard++ {
		for len(argv) > 0 && isAssignment(argv[0]) {
			env = append(env, argv[0][:strings.IndexByte(argv[0], '=')])
			argv = argv[1:]
		}
		if len(argv) == 0 {
			return nil, env
		}
		prog := path.Base(argv[0])
		switch prog {
		case "bash", "sh", "zsh", "dash", "ksh", "fish", "ash":
			i := 1
			for ; i < len(argv) && strings.HasPrefix(argv[i], "-") && argv[i] != "-"; i++ {
				if strings.Contains(strings.TrimLeft(argv[i], "-"), "c") && !strings.HasPrefix(argv[i], "--") {
					if i+1 < len(argv) && depth < 3 {
						inner, innerEnv, _ := mainCommand(argv[i+1], depth+1)
						return inner, append(env, innerEnv...)
					}
					return nil, env
				}
				if argv[i] == "-o" || argv[i] == "+o" || argv[i] == "--rcfile" || argv[i] == "--init-file" {
					i++
				}
			}
			if i < len(argv) {
				argv = argv[i:] // a script: it is the program
				return argv, env
			}
			return argv[:1], env
		case "eval":
			if depth < 3 && len(argv) > 1 {
				inner, innerEnv, _ := mainCommand(strings.Join(argv[1:], " "), depth+1)
				return inner, append(env, innerEnv...)
			}
			return nil, env
		case "direnv":
			// direnv exec DIR cmd…
			if len(argv) >= 3 && argv[1] == "exec" {
				argv = argv[3:]
				continue
			}
			return argv, env
		}
		spec, ok := wrappers[prog]
		if !ok {
			return argv, env
		}
		i := 1
		for ; i < len(argv); i++ {
			w := argv[i]
			if w == "--" {
				i++
				break
			}
			if spec.assignments && isAssignment(w) {
				env = append(env, w[:strings.IndexByte(w, '=')])
				continue
			}
			if strings.HasPrefix(w, "-") && len(w) > 1 {
				if spec.valueFlags[w] {
					i++
				}
				continue
			}
			break
		}
		for k := 0; k < spec.positional && i < len(argv); k++ {
			i++
		}
		if i >= len(argv) {
			if prog == "time" || prog == "command" || prog == "exec" {
				return nil, env
			}
			return argv[:1], env
		}
		argv = argv[i:]
	}
	return argv, env
}

// toolSpec says how many subcommand words identify a tool's family.
type toolSpec struct {
	// depth is the number of subcommand words kept (0: program only).
	depth int
	// valueFlags are global flags before the subcommand that take a value.
	valueFlags map[string]bool
	// nested subcommands keep one more word (go mod tidy).
	nested map[string]bool
	// aliases map a subcommand to its canonical spelling.
	aliases map[string]string
	// runners are subcommands after which another command follows
	// (poetry run X); its family is the family of X.
	runners map[string]bool
	// runnerFlags take a value between the runner word and the command.
	runnerFlags map[string]bool
}

var toolSpecs = map[string]toolSpec{
	"go": {depth: 1, valueFlags: set("-C"), nested: set("mod", "work", "tool")},
	"cargo": {depth: 1, valueFlags: set("--manifest-path", "-C", "--config", "-Z", "--color"), nested: set("nextest"),
		aliases: map[string]string{"b": "build", "c": "check", "t": "test", "r": "run", "d": "doc"}},
	"rustup": {depth: 1, nested: set("target", "component", "toolchain")},
	"git": {depth: 1, valueFlags: set("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"),
		nested: set("remote", "submodule", "worktree", "lfs", "bisect", "stash", "notes")},
	"docker": {depth: 1, valueFlags: set("--context", "-c", "-H", "--host", "--config", "-l", "--log-level"),
		nested: set("compose", "buildx", "container", "image", "network", "volume", "system", "context", "builder",
			"swarm", "service", "stack", "secret", "plugin", "manifest", "trust")},
	"podman":    {depth: 1, valueFlags: set("--connection", "--url", "--root"), nested: set("compose", "container", "image", "network", "volume", "system", "pod", "machine")},
	"kubectl":   {depth: 1, valueFlags: set("-n", "--namespace", "--context", "--kubeconfig", "--cluster", "-s", "--server", "--user", "--as"), nested: set("config", "rollout", "auth", "top", "set", "create")},
	"oc":        {depth: 1, valueFlags: set("-n", "--namespace", "--context", "--kubeconfig")},
	"helm":      {depth: 1, valueFlags: set("-n", "--namespace", "--kube-context", "--kubeconfig"), nested: set("repo", "plugin", "dependency", "registry")},
	"terraform": {depth: 1, nested: set("state", "workspace", "providers")},
	"tofu":      {depth: 1, nested: set("state", "workspace", "providers")},
	"gh":        {depth: 2, valueFlags: set("-R", "--repo")},
	"glab":      {depth: 2, valueFlags: set("-R", "--repo")},
	"aws":       {depth: 2, valueFlags: set("--profile", "--region", "--output", "--endpoint-url")},
	"gcloud":    {depth: 2, valueFlags: set("--project", "--account", "--configuration")},
	"az":        {depth: 2, valueFlags: set("--subscription", "-o", "--output")},
	"alembic":   {depth: 1, valueFlags: set("-c", "--config", "-n", "--name", "-x")},
	"dotnet":    {depth: 1, nested: set("ef", "tool", "nuget")},
	"pip":       {depth: 1, valueFlags: set("--python"), aliases: map[string]string{"i": "install"}},
	"uv": {depth: 1, valueFlags: set("--directory", "--project", "-p", "--python", "--cache-dir"), nested: set("pip", "tool", "python", "cache"),
		runners: set("run"), runnerFlags: set("--with", "--python", "-p", "--project", "--directory", "--package", "--extra", "--group", "--env-file", "--with-requirements", "--index-url")},
	"poetry":           {depth: 1, valueFlags: set("-C", "--directory", "-P", "--project"), nested: set("self", "env", "cache", "source", "debug"), runners: set("run")},
	"pipenv":           {depth: 1, runners: set("run")},
	"pdm":              {depth: 1, valueFlags: set("-p", "--project"), runners: set("run")},
	"hatch":            {depth: 1, valueFlags: set("-e", "--env"), runners: set("run")},
	"rye":              {depth: 1, runners: set("run")},
	"conda":            {depth: 1, nested: set("env"), runners: set("run"), runnerFlags: set("-n", "--name", "-p", "--prefix", "--cwd")},
	"mamba":            {depth: 1, nested: set("env"), runners: set("run"), runnerFlags: set("-n", "--name", "-p", "--prefix")},
	"micromamba":       {depth: 1, runners: set("run"), runnerFlags: set("-n", "--name", "-p", "--prefix")},
	"bundle":           {depth: 1, runners: set("exec"), aliases: map[string]string{"i": "install"}},
	"rails":            {depth: 1, aliases: map[string]string{"s": "server", "c": "console", "g": "generate", "t": "test"}},
	"rake":             {depth: 1},
	"mix":              {depth: 1},
	"flutter":          {depth: 1, nested: set("pub")},
	"dart":             {depth: 1, nested: set("pub")},
	"swift":            {depth: 1, nested: set("package")},
	"deno":             {depth: 1, nested: set("task")},
	"brew":             {depth: 1},
	"apt":              {depth: 1},
	"apt-get":          {depth: 1},
	"yum":              {depth: 1},
	"dnf":              {depth: 1},
	"apk":              {depth: 1},
	"pacman":           {depth: 0},
	"snap":             {depth: 1},
	"systemctl":        {depth: 1},
	"launchctl":        {depth: 1},
	"just":             {depth: 1, valueFlags: set("-f", "--justfile", "-d", "--working-directory")},
	"task":             {depth: 1, valueFlags: set("-d", "--dir", "-t", "--taskfile")},
	"ruff":             {depth: 1},
	"golangci-lint":    {depth: 1},
	"composer":         {depth: 1},
	"artisan":          {depth: 1},
	"manage.py":        {depth: 1, valueFlags: set("--settings", "--pythonpath")},
	"django-admin":     {depth: 1},
	"flask":            {depth: 1, valueFlags: set("--app", "-A", "-e", "--env-file")},
	"ng":               {depth: 1},
	"nx":               {depth: 1},
	"turbo":            {depth: 1},
	"vercel":           {depth: 1},
	"wrangler":         {depth: 1},
	"firebase":         {depth: 1},
	"pre-commit":       {depth: 1},
	"tox":              {depth: 0},
	"sqlx":             {depth: 2},
	"diesel":           {depth: 2},
	"prisma":           {depth: 2},
	"drizzle-kit":      {depth: 1},
	"sequelize":        {depth: 1},
	"knex":             {depth: 1},
	"migrate":          {depth: 0},
	"goose":            {depth: 0},
	"atlas":            {depth: 2},
	"liquibase":        {depth: 1},
	"flyway":           {depth: 1},
	"bazel":            {depth: 1, valueFlags: set("--output_base", "--output_user_root", "--bazelrc")},
	"buck2":            {depth: 1},
	"cmake":            {depth: 0},
	"nix":              {depth: 1},
	"ansible-playbook": {depth: 0},
	"supabase":         {depth: 2},
	"fly":              {depth: 1},
	"heroku":           {depth: 1},
	"vagrant":          {depth: 1},
	"minikube":         {depth: 1},
	"kind":             {depth: 2},
	"skaffold":         {depth: 1},
	"tilt":             {depth: 1},
	"make":             {}, // special
	"npm":              {}, // special
}

var subWordRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_:.+-]*$`)

// isSubWord reports whether w can be a subcommand (not a path or file).
func isSubWord(w string) bool {
	if !subWordRe.MatchString(w) || len(w) > 64 {
		return false
	}
	if ext := path.Ext(w); ext != "" && fileExts[strings.ToLower(ext[1:])] {
		return false
	}
	return true
}

// canonicalProgram maps a program word to its canonical name.
func canonicalProgram(p string) string {
	if p == "" {
		return ""
	}
	if strings.Contains(p, "/") {
		base := path.Base(p)
		clean := strings.TrimPrefix(path.Clean(p), "./")
		dir := path.Dir(clean)
		switch {
		case strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~"):
			p = base
		case strings.Contains(dir, "node_modules/.bin") || strings.HasSuffix(dir, "/bin") && (strings.Contains(dir, "venv") || strings.Contains(dir, ".tox") || strings.HasPrefix(dir, "env")):
			p = base
		case base == "gradlew" || base == "mvnw" || base == "manage.py" || dir == "bin" && (base == "rails" || base == "rake" || base == "bundle"):
			p = base
		default:
			p = clean
		}
	}
	switch {
	case p == "python" || p == "python2" || p == "python3" || pythonVersionRe.MatchString(p) || p == "py":
		return "python"
	case p == "pip" || p == "pip2" || p == "pip3" || pipVersionRe.MatchString(p):
		return "pip"
	case p == "py.test" || p == "pytest-3" || p == "pytest3":
		return "pytest"
	case p == "nodejs":
		return "node"
	case p == "gradlew" || p == "gradle.bat" || p == "gradlew.bat":
		return "gradle"
	case p == "mvnw" || p == "mvnw.cmd":
		return "mvn"
	case p == "gmake":
		return "make"
	case p == "podman-compose":
		return "podman-compose"
	}
	return p
}

var (
	pythonVersionRe = regexp.MustCompile(`^python[23](\.\d+)?$`)
	pipVersionRe    = regexp.MustCompile(`^pip[23](\.\d+)?$`)
)

// pythonModules are `python -m MODULE` tools whose family is the tool.
var pythonModules = set("pytest", "mypy", "black", "ruff", "flake8", "pylint", "isort", "pip", "alembic", "uvicorn",
	"gunicorn", "coverage", "tox", "nox", "poetry", "jupyter", "streamlit", "flask", "celery", "pyright", "pre_commit",
	"twine", "pdm", "hatch", "bandit", "pydocstyle", "unittest", "doctest", "behave", "locust", "sphinx", "mkdocs")

// family computes (program, subcommand words, remaining args) of an argv
// whose wrappers are already peeled.
func family(argv []string, depth int) (string, []string, []string) {
	if len(argv) == 0 || depth > 4 {
		return "", nil, nil
	}
	prog := canonicalProgram(argv[0])
	rest := argv[1:]
	switch prog {
	case "python":
		return pythonFamily(rest, depth)
	case "node", "bun", "deno":
		if prog != "node" {
			break
		}
		return nodeFamily(rest)
	case "npm":
		return npmFamily(rest, depth)
	case "pnpm", "yarn":
		return pnpmFamily(prog, rest, depth)
	case "make":
		return makeFamily(rest)
	case "mvn":
		return goalFamily("mvn", rest, set("-f", "--file", "-s", "--settings", "-gs", "-P", "--activate-profiles", "-pl", "--projects", "-rf", "--resume-from", "-T", "--threads", "-t", "-l", "--log-file", "-D", "-e", "-b", "--builder"))
	case "gradle":
		return goalFamily("gradle", rest, set("-p", "--project-dir", "-x", "--exclude-task", "-b", "--build-file", "-c", "--settings-file", "-g", "--gradle-user-home", "-I", "--init-script", "--tests", "--console", "--warning-mode", "-D", "-P", "--max-workers"))
	case "java":
		return javaFamily(rest)
	case "docker-compose":
		p, w, r := family(append([]string{"docker", "compose"}, rest...), depth+1)
		return p, w, r
	case "php":
		if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
			if path.Base(rest[0]) == "artisan" {
				return family(append([]string{"artisan"}, rest[1:]...), depth+1)
			}
			return "php", []string{cleanArg(rest[0])}, rest[1:]
		}
		return "php", nil, rest
	case "coverage":
		// coverage run [-m] X …
		if len(rest) > 1 && rest[0] == "run" {
			i := 1
			for i < len(rest) && strings.HasPrefix(rest[i], "-") && rest[i] != "-m" {
				if strings.HasPrefix(rest[i], "--") && !strings.Contains(rest[i], "=") && i+1 < len(rest) && rest[i] != "--parallel-mode" && rest[i] != "--branch" {
					i++
				}
				i++
			}
			if i < len(rest) {
				return pythonFamily(rest[i:], depth)
			}
		}
	case "vitest":
		if len(rest) > 0 && (rest[0] == "run" || rest[0] == "watch" || rest[0] == "dev") {
			rest = rest[1:]
		}
		return "vitest", nil, rest
	}
	if prog == "bun" {
		return pnpmFamily("bun", rest, depth)
	}
	spec, ok := toolSpecs[prog]
	if !ok || spec.depth == 0 {
		return prog, nil, rest
	}
	var words []string
	i := 0
	want := spec.depth
	for i < len(rest) && len(words) < want {
		w := rest[i]
		if strings.HasPrefix(w, "+") && prog == "cargo" && len(words) == 0 {
			i++ // toolchain
			continue
		}
		if strings.HasPrefix(w, "-") {
			if len(words) == 0 || prog == "docker" && len(words) == 1 && words[0] == "compose" {
				if spec.valueFlags[w] || composeFlags[w] && len(words) == 1 {
					i++
				}
				i++
				continue
			}
			break
		}
		if !isSubWord(w) {
			break
		}
		if a, ok := spec.aliases[w]; ok && len(words) == 0 {
			w = a
		}
		if len(words) == 0 && spec.runners[w] {
			j := i + 1 + skipFlags(rest[i+1:], spec.runnerFlags)
			if j < len(rest) {
				inner, _ := unwrap(rest[j:], 0)
				if len(inner) > 0 {
					return family(inner, depth+1)
				}
			}
			return prog, []string{w}, nil
		}
		words = append(words, w)
		if len(words) == 1 && spec.nested[w] {
			want++
		}
		i++
	}
	return prog, words, rest[min(i, len(rest)):]
}

var composeFlags = set("-f", "--file", "-p", "--project-name", "--profile", "--env-file", "--project-directory", "--ansi", "--progress", "--parallel")

func pythonFamily(rest []string, depth int) (string, []string, []string) {
	valueOpts := set("-W", "-X", "-Q")
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		switch {
		case w == "-m" && i+1 < len(rest):
			mod := rest[i+1]
			if pythonModules[mod] {
				name := mod
				switch mod {
				case "pre_commit":
					name = "pre-commit"
				case "unittest", "doctest":
					return "python", []string{"-m", mod}, rest[i+2:]
				}
				return family(append([]string{name}, rest[i+2:]...), depth+1)
			}
			return "python", []string{"-m", mod}, rest[i+2:]
		case w == "-c":
			return "python", []string{"-c"}, nil
		case strings.HasPrefix(w, "-m") && len(w) > 2:
			return family(append([]string{"python", "-m", w[2:]}, rest[i+1:]...), depth+1)
		case strings.HasPrefix(w, "-") && len(w) > 1:
			if valueOpts[w] {
				i++
			}
		case w == "-":
			return "python", nil, rest[i+1:]
		default:
			script := cleanArg(w)
			if path.Base(script) == "manage.py" {
				return family(append([]string{"manage.py"}, rest[i+1:]...), depth+1)
			}
			return "python", []string{script}, rest[i+1:]
		}
	}
	return "python", nil, nil
}

func nodeFamily(rest []string) (string, []string, []string) {
	valueOpts := set("-r", "--require", "--import", "--loader", "--experimental-loader", "--env-file", "--conditions", "-C", "--input-type", "--max-old-space-size", "--stack-size")
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		switch {
		case w == "-e" || w == "--eval" || w == "-p" || w == "--print":
			return "node", []string{"-e"}, nil
		case w == "--test":
			return "node", []string{"--test"}, rest[i+1:]
		case strings.HasPrefix(w, "-") && len(w) > 1:
			if valueOpts[w] {
				i++
			}
		default:
			return "node", []string{cleanArg(w)}, rest[i+1:]
		}
	}
	return "node", nil, nil
}

// skipFlags returns the index of the first word of args that is not a flag,
// skipping the values of valueFlags; a "--" ends the flags and is skipped.
func skipFlags(args []string, valueFlags map[string]bool) int {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		if args[i] == "--" {
			return i + 1
		}
		if valueFlags[args[i]] {
			i++
		}
		i++
	}
	return min(i, len(args))
}

var npmAliases = map[string]string{
	"i": "install", "in": "install", "ins": "install", "inst": "install", "insta": "install", "instal": "install",
	"isnt": "install", "isnta": "install", "isntal": "install", "isntall": "install", "add": "install",
	"t": "test", "tst": "test", "run-script": "run", "rum": "run", "urn": "run", "x": "exec",
	"un": "uninstall", "unlink": "uninstall", "remove": "uninstall", "rm": "uninstall", "r": "uninstall",
	"up": "update", "upgrade": "update", "udpate": "update", "ls": "ls", "list": "ls", "la": "ls", "ll": "ls",
	"c": "config", "ci": "ci", "clean-install": "ci", "install-clean": "ci", "ic": "ci", "isntall-clean": "ci",
	"it": "install-test", "cit": "install-ci-test",
}

func npmFamily(rest []string, depth int) (string, []string, []string) {
	valueFlags := set("--prefix", "-w", "--workspace", "--registry", "--cache", "--userconfig", "-C")
	i := skipFlags(rest, valueFlags)
	if i >= len(rest) {
		return "npm", nil, nil
	}
	sub := rest[i]
	if a, ok := npmAliases[sub]; ok {
		sub = a
	}
	after := rest[i+1:]
	switch sub {
	case "run":
		j := skipFlags(after, valueFlags)
		if j >= len(after) {
			return "npm", []string{"run"}, nil
		}
		script := after[j]
		switch script {
		case "test", "start", "stop", "restart":
			return "npm", []string{script}, after[j+1:]
		}
		return "npm", []string{"run", script}, after[j+1:]
	case "exec":
		j := skipFlags(after, set("-p", "--package", "-w", "--workspace"))
		if j < len(after) {
			return family(after[j:], depth+1)
		}
		return "npm", []string{"exec"}, nil
	}
	if !isSubWord(sub) {
		return "npm", nil, rest[i:]
	}
	return "npm", []string{sub}, after
}

func pnpmFamily(prog string, rest []string, depth int) (string, []string, []string) {
	valueFlags := set("-C", "--dir", "-F", "--filter", "--cwd", "--workspace", "--filter-prod", "--reporter", "--loglevel")
	i := skipFlags(rest, valueFlags)
	if i >= len(rest) {
		if prog == "yarn" || prog == "bun" {
			return prog, []string{"install"}, nil
		}
		return prog, nil, nil
	}
	sub := rest[i]
	after := rest[i+1:]
	switch sub {
	case "run", "run-script":
		if j := skipFlags(after, valueFlags); j < len(after) {
			return prog, []string{after[j]}, after[j+1:]
		}
		return prog, []string{"run"}, nil
	case "exec", "dlx", "x":
		if j := skipFlags(after, set("-p", "--package")); j < len(after) {
			return family(after[j:], depth+1)
		}
		return prog, []string{sub}, nil
	case "workspace":
		if prog == "yarn" && len(after) > 1 {
			return pnpmFamily(prog, after[1:], depth)
		}
	case "i":
		sub = "install"
	case "t", "tst":
		sub = "test"
	case "rm", "uninstall":
		sub = "remove"
	case "up", "upgrade":
		sub = "update"
	}
	if !isSubWord(sub) {
		return prog, nil, rest[i:]
	}
	return prog, []string{sub}, after
}

func makeFamily(rest []string) (string, []string, []string) {
	valueFlags := set("-C", "--directory", "-f", "--file", "--makefile", "-I", "--include-dir", "-o", "--old-file", "-W", "--what-if", "--new-file", "--assume-new", "--assume-old")
	optNum := set("-j", "--jobs", "-l", "--load-average", "--max-load")
	var target string
	var args []string
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		switch {
		case valueFlags[w]:
			i++
		case optNum[w]:
			if i+1 < len(rest) && strings.Trim(rest[i+1], "0123456789.") == "" {
				i++
			}
		case strings.HasPrefix(w, "-"):
		case isAssignment(w):
		default:
			if target != "" {
				args = append(args, target)
			}
			target = w
		}
	}
	if target == "" {
		return "make", nil, args
	}
	return "make", []string{target}, args
}

// goalFamily handles Maven goals and Gradle tasks: the last goal that is not
// "clean"; Gradle task paths (:app:test) keep their last element.
func goalFamily(prog string, rest []string, valueFlags map[string]bool) (string, []string, []string) {
	var goals []string
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		switch {
		case valueFlags[w]:
			i++
		case strings.HasPrefix(w, "-"):
		default:
			if prog == "gradle" {
				if k := strings.LastIndexByte(w, ':'); k >= 0 {
					w = w[k+1:]
				}
			}
			if w != "" {
				goals = append(goals, w)
			}
		}
	}
	var kept []string
	for _, g := range goals {
		if g != "clean" {
			kept = append(kept, g)
		}
	}
	switch {
	case len(kept) > 0:
		return prog, []string{kept[len(kept)-1]}, kept[:len(kept)-1]
	case len(goals) > 0:
		return prog, []string{goals[len(goals)-1]}, nil
	}
	return prog, nil, nil
}

func javaFamily(rest []string) (string, []string, []string) {
	valueOpts := set("-cp", "-classpath", "--class-path", "-p", "--module-path", "--add-opens", "--add-exports", "--add-modules", "-javaagent")
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		switch {
		case w == "-jar" && i+1 < len(rest):
			return "java", []string{"-jar", path.Base(rest[i+1])}, rest[i+2:]
		case (w == "-m" || w == "--module") && i+1 < len(rest):
			return "java", []string{"-m", rest[i+1]}, rest[i+2:]
		case valueOpts[w]:
			i++
		case strings.HasPrefix(w, "-"):
		default:
			if strings.HasSuffix(w, ".java") {
				return "java", []string{path.Base(w)}, rest[i+1:]
			}
			return "java", []string{w}, rest[i+1:]
		}
	}
	return "java", nil, nil
}
