package trace

import (
	"path"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Rules for reading a user prompt between two runs as a correction (the
// fix then comes from a user hint rather than from the agent itself). They
// are deliberately simple and bilingual:
//
//   - English: the prompt opens with a refusal or a redirection ("no",
//     "nope", "wrong", "stop", "wait", "actually", "instead", "don't",
//     "do not", "never", "not …") or an imperative verb ("use", "run",
//     "try", "add", "set", "install", "remove", "change", "rename", …), or
//     it contains a correcting phrase ("instead", "rather than", "you
//     should", "you need to", "you forgot", "that's not", "should be",
//     "make sure", "wrong").
//   - Chinese: it contains 不要, 别, 应该, 不对, 错了, 不是, 改成, 换成,
//     改为, 改用, 试试, 而不是, 记得, 注意, 必须, 需要, 先, 请用, 用…代替.
//   - Acknowledgements are not corrections: "ok", "yes", "continue",
//     "go on", "thanks", "looks good", 好的, 继续, 可以, 谢谢, 没问题.
var (
	correctionOpeners = []string{"no", "nope", "nah", "wrong", "stop", "wait", "actually", "instead", "don't", "dont",
		"do not", "never", "not ", "that's not", "that is not", "thats not", "hold on", "hmm, no", "undo", "revert"}
	imperativeVerbs = set("use", "run", "try", "add", "set", "install", "uninstall", "remove", "delete", "drop", "change",
		"rename", "replace", "fix", "update", "upgrade", "downgrade", "pin", "check", "make", "start", "restart", "stop",
		"create", "move", "edit", "call", "pass", "import", "export", "enable", "disable", "increase", "decrease",
		"switch", "wrap", "skip", "ignore", "avoid", "put", "apply", "configure", "kill", "migrate", "clean", "rebuild",
		"reinstall", "specify", "include", "exclude", "mock", "quote", "escape", "encode", "decode", "open", "close",
		"read", "write", "split", "merge", "point", "export", "source", "activate", "bump", "lower", "raise", "convert")
	correctionPhrases = []string{"instead", "rather than", "you should", "you need to", "you must", "you forgot", "you missed",
		"that's not", "that is not", "should be", "should use", "make sure", "wrong", "not what i", "i said", "i told you",
		"please use", "don't ", "do not "}
	correctionZH = []string{"不要", "别", "应该", "不对", "错了", "不是", "改成", "换成", "改为", "改用", "试试", "而不是",
		"记得", "注意", "必须", "需要", "先", "请用", "代替", "不行", "重新"}
	acknowledgements = set("ok", "okay", "k", "yes", "yep", "sure", "continue", "go on", "go ahead", "proceed", "thanks",
		"thank you", "looks good", "lgtm", "great", "nice", "good", "fine", "好的", "好", "继续", "可以", "谢谢", "没问题", "行", "嗯")
)

// IsCorrection reports whether a user prompt reads as the user correcting
// the agent (see the rules above).
func IsCorrection(prompt string) bool {
	p := strings.ToLower(strings.TrimSpace(prompt))
	if p == "" {
		return false
	}
	bare := strings.TrimRight(p, ".!。！ ")
	if acknowledgements[bare] {
		return false
	}
	for _, c := range correctionZH {
		if strings.Contains(p, c) {
			return true
		}
	}
	for _, o := range correctionOpeners {
		if strings.HasPrefix(p, o) {
			rest := p[len(o):]
			switch {
			case strings.HasSuffix(o, " ") || rest == "":
				return true
			case o == "no" || o == "nope" || o == "nah":
				// "no, …" refuses; "no module named …" is a pasted error
				if unicode.IsPunct(firstRune(rest)) {
					return true
				}
			case !isWordRune(firstRune(rest)):
				return true
			}
		}
	}
	first := strings.FieldsFunc(p, func(r rune) bool { return !isWordRune(r) && r != '\'' })
	if len(first) > 0 {
		w := first[0]
		if w == "please" && len(first) > 1 {
			w = first[1]
		}
		if imperativeVerbs[w] {
			return true
		}
	}
	for _, ph := range correctionPhrases {
		if strings.Contains(p, ph) {
			return true
		}
	}
	return false
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

// inspectionPrograms only look at things; running them is not a fix.
var inspectionPrograms = set("ls", "cat", "pwd", "echo", "head", "tail", "grep", "egrep", "rg", "ag", "find", "fd", "which",
	"whereis", "type", "wc", "tree", "less", "more", "file", "stat", "du", "df", "env", "printenv", "date", "whoami", "id",
	"true", "false", "sleep", "man", "history", "ps", "top", "htop", "diff", "jq", "yq", "bat", "clear", "uname", "hostname")

var inspectionFamilies = set("git status", "git diff", "git log", "git show", "git branch", "git remote", "docker ps",
	"docker logs", "docker images", "kubectl get", "kubectl describe", "kubectl logs", "go version", "go env", "go list",
	"go doc", "npm ls", "npm view", "pip list", "pip show", "pip freeze", "cargo tree", "cargo metadata", "node -e",
	"python -c", "git stash list", "git remote -v", "sed")

// IsInspection reports commands that only read state (ls, cat, grep,
// git status…): they neither form traces nor count as fixes.
func IsInspection(c Command) bool {
	return inspectionPrograms[c.Program] || inspectionFamilies[c.Family] || c.Program == "sed" && !containsFlag(c.Flags, "-i")
}

func containsFlag(flags []string, f string) bool {
	for _, x := range flags {
		if x == f || strings.HasPrefix(x, f) && len(x) > len(f) && f == "-i" {
			return true
		}
	}
	return false
}

var sentenceEndRe = regexp.MustCompile(`[.!?。！？\n]`)

// firstSentence returns the first sentence of s, at most n bytes.
func firstSentence(s string, n int) string {
	s = strings.TrimSpace(s)
	if loc := sentenceEndRe.FindStringIndex(s); loc != nil && loc[0] > 0 {
		s = s[:loc[0]]
	}
	return Truncate(strings.TrimSpace(s), n)
}

// DescribeFix renders fix actions as the Attempt.FixApplied text, e.g.
// "user: use utf-8 instead; ran `pip install chardet`; edited load.py,
// util.py". Empty when there are no actions.
func DescribeFix(actions []FixAction) string {
	var prompts, cmds, notes []string
	var files []string
	for _, a := range actions {
		switch a.Kind {
		case ActionPrompt:
			prompts = append(prompts, "user: "+firstSentence(a.Detail, 200))
		case ActionCommand:
			cmds = appendUnique(cmds, "ran `"+Truncate(strings.ReplaceAll(a.Detail, "`", "'"), 200)+"`"+exitSuffix(a.ExitCode, a.Failed))
		case ActionEdit:
			files = appendUnique(files, a.Detail)
		case ActionNote:
			notes = append(notes, "agent: "+firstSentence(a.Detail, 160))
		}
	}
	var parts []string
	parts = append(parts, prompts...)
	if len(notes) > 0 && len(prompts) == 0 {
		parts = append(parts, notes[len(notes)-1])
	}
	parts = append(parts, cmds...)
	if len(files) > 0 {
		parts = append(parts, "edited "+listFiles(files, 6))
	}
	return Truncate(strings.Join(parts, "; "), MaxFixLen)
}

func appendUnique(list []string, s string) []string {
	if contains(list, s) {
		return list
	}
	return append(list, s)
}

func listFiles(files []string, max int) string {
	names := make([]string, 0, len(files))
	for _, f := range files {
		names = appendUnique(names, path.Base(strings.ReplaceAll(f, `\`, "/")))
	}
	if len(names) > max {
		return strings.Join(names[:max], ", ") + " and " + itoa(len(names)-max) + " more"
	}
	return strings.Join(names, ", ")
}

func itoa(n int) string { return strings.TrimSpace(strings.Replace(lengthKey(n), "#", "", 1)) }

var (
	hintLeadRe = regexp.MustCompile(`(?i)^(?:no|nope|nah|wrong|wait|actually|hmm|stop|hold on|please)\b[,.!:;\s-]*`)
	agentPlan  = regexp.MustCompile(`(?i)^(?:i'll|i will|i'm going to|i am going to|let me|let's|i need to|i should|we need to|we should|now i'll|now let me)\s+`)
)

// SuggestFix summarises fix actions as a short imperative for
// FailurePattern.SuggestedFix: the user's correction when there is one
// ("No, use encoding='utf-8'" → "Use encoding='utf-8'"), the commands that
// were run ("Run `go mod tidy`"), the files edited ("Edit go.mod"), or the
// agent's stated plan ("I'll add the missing import" → "Add the missing
// import"). At most 240 bytes.
func SuggestFix(actions []FixAction) string {
	var hint, plan string
	var cmds, files []string
	for _, a := range actions {
		switch a.Kind {
		case ActionPrompt:
			if a.Correction && hint == "" {
				h := strings.TrimSpace(hintLeadRe.ReplaceAllString(strings.TrimSpace(a.Detail), ""))
				hint = firstSentence(h, 200)
			}
		case ActionCommand:
			if len(cmds) < 2 && !a.Failed {
				cmds = appendUnique(cmds, "`"+Truncate(strings.ReplaceAll(a.Detail, "`", "'"), 120)+"`")
			}
		case ActionEdit:
			files = appendUnique(files, a.Detail)
		case ActionNote:
			p := strings.TrimSpace(a.Detail)
			if loc := agentPlan.FindStringIndex(p); loc != nil {
				plan = firstSentence(p[loc[1]:], 200)
			}
		}
	}
	var parts []string
	if hint != "" {
		parts = append(parts, capitalize(hint))
	} else if plan != "" && len(cmds) == 0 {
		parts = append(parts, capitalize(plan))
	}
	if len(cmds) > 0 {
		parts = append(parts, "run "+strings.Join(cmds, " and "))
	}
	if len(files) > 0 && hint == "" && plan == "" {
		parts = append(parts, "edit "+listFiles(files, 3))
	}
	if len(parts) == 0 {
		return ""
	}
	parts[0] = capitalize(parts[0])
	return Truncate(strings.Join(parts, ", then "), 240)
}

func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError || !unicode.IsLower(r) {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// negativeHintRe finds advice to avoid something, in either language.
var negativeHintRe = regexp.MustCompile(`(?i)\b(?:don't|do not|never|avoid|instead|rather than|stop)\b|不要|别|而不是|避免|不能|代替`)
