package trace

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Mask kinds: the placeholders Mask writes in place of volatile tokens. A
// MaskConfig may disable some of them (to reproduce an older normaliser).
const (
	MaskURL       = "url"
	MaskEmail     = "email"
	MaskTimestamp = "ts"
	MaskUUID      = "uuid"
	MaskHex       = "hex"
	MaskIP        = "ip"
	MaskPath      = "path"
	MaskHash      = "hash"
	MaskID        = "id"
	MaskTemp      = "tmp"
	MaskDuration  = "dur"
	MaskSize      = "size"
	MaskVersion   = "ver"
	MaskNumber    = "num"
	MaskString    = "str"
)

// AllMasks lists every mask kind, in the order they are applied.
var AllMasks = []string{MaskURL, MaskEmail, MaskUUID, MaskTimestamp, MaskIP, MaskPath, MaskHex, MaskVersion,
	MaskDuration, MaskSize, MaskHash, MaskTemp, MaskID, MaskNumber, MaskString}

// fileExts are extensions that make a word a file name even without a
// directory ("duration_test.go", "fixtures.sql"). Extensions that are also
// common identifier suffixes (env, sum, a, m, r) are left out.
var fileExts = set("go", "py", "pyi", "pyc", "js", "jsx", "ts", "tsx", "mjs", "cjs", "mts", "cts", "rs", "java", "kt", "kts",
	"scala", "groovy", "gradle", "rb", "erb", "php", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "cs", "swift", "dart", "vue",
	"svelte", "ex", "exs", "erl", "hs", "lua", "pl", "pm", "sh", "bash", "zsh", "fish", "ps1", "bat", "cmd", "sql", "json",
	"jsonl", "yaml", "yml", "toml", "ini", "cfg", "conf", "xml", "html", "htm", "css", "scss", "sass", "less", "md", "rst",
	"txt", "csv", "tsv", "log", "lock", "mod", "proto", "tf", "tfvars", "hcl", "dockerfile", "zip", "tar", "gz", "tgz",
	"bz2", "xz", "zst", "whl", "jar", "war", "class", "so", "dll", "dylib", "exe", "o", "bin", "dat", "db", "sqlite",
	"sqlite3", "png", "jpg", "jpeg", "gif", "svg", "webp", "ico", "pdf", "ipynb", "properties", "pem", "crt", "key",
	"map", "wasm", "tmpl", "tpl", "j2", "mdx", "astro", "rake", "gemspec", "nix", "pbxproj", "plist", "xcconfig")

var (
	ansiRe      = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)
	didYouMean  = regexp.MustCompile(`(?i)[.;,]?\s*\(?did you mean:?\s[^\n]*$`)
	urlRe       = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s'"<>()\[\]{}]*`)
	emailRe     = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b`)
	uuidRe      = regexp.MustCompile(`\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`)
	isoTimeRe   = regexp.MustCompile(`\b\d{4}[-/]\d{2}[-/]\d{2}(?:[T ]\d{2}[:_]\d{2}(?:[:_]\d{2})?(?:[.,_]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)?`)
	clockRe     = regexp.MustCompile(`\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b`)
	userHostRe  = regexp.MustCompile(`@'[^'\s]*'`)
	ipv4Re      = regexp.MustCompile(`\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b`)
	ipv6Re      = regexp.MustCompile(`\[[0-9a-fA-F:.]*:[0-9a-fA-F:.]*\](?::\d+)?|(?:^|\s)::[0-9a-fA-F:]*`)
	localhostRe = regexp.MustCompile(`\blocalhost\b`)
	javaHashRe  = regexp.MustCompile(`@[0-9a-f]{5,}\b`)
	hexRe       = regexp.MustCompile(`\b0[xX][0-9a-fA-F]+\b`)
	versionRe   = regexp.MustCompile(`\bv?\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]*[0-9A-Za-z])?\b|\bv\d+(?:\.\d+)?\b`)
	durationRe  = regexp.MustCompile(`\b(?:\d+(?:\.\d+)?(?:ns|µs|us|ms|s|m|h))+\b|\b\d+(?:\.\d+)? ?(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|milliseconds?|millis)\b`)
	sizeRe      = regexp.MustCompile(`\b\d+(?:\.\d+)? ?(?:[KMGTP]i?B|[kKMGT]b|bytes?)\b`)
	hashRe      = regexp.MustCompile(`\b[0-9a-fA-F]{7,64}\b`)
	tempRe      = regexp.MustCompile(`\b(?:tmp|temp)[-_.]?[A-Za-z0-9_]{3,}\b`)
	longIDRe    = regexp.MustCompile(`\b[A-Za-z0-9_-]{16,}\b`)
	spaceRe     = regexp.MustCompile(`[ \t]+`)
)

// MaskConfig selects the masks Mask applies; the zero value applies all.
type MaskConfig struct {
	// Disabled mask kinds (see AllMasks).
	Disabled []string `json:"disabled,omitempty" toml:"disabled"`
}

func (c MaskConfig) on(kind string) bool {
	for _, d := range c.Disabled {
		if d == kind {
			return false
		}
	}
	return true
}

// Mask replaces the volatile tokens of an error message by placeholders
// such as <path>, <num>, <hex>, <uuid>, <ts>, <dur>, <ip>, <hash>, <str>,
// so that two occurrences of the same failure read the same. It lowercases
// the result and collapses spaces. Quoted text is kept when it names
// something (a module, a key, a table: `No module named 'yaml'`), and masked
// as <str> when it is a value: when it holds spaces, when it follows value
// words (literal, input, got, want, expected, received, entry…), or
// everywhere when values is true (test assertions, lint findings).
func Mask(s string, values bool) string { return maskWith(s, values, MaskConfig{}) }

func maskWith(s string, values bool, mc MaskConfig) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s = ansiRe.ReplaceAllString(s, "")
	// suggestions vary with the tool's version and the code around
	s = didYouMean.ReplaceAllString(s, "")
	rep := func(kind string, re *regexp.Regexp, with string) {
		if mc.on(kind) {
			s = re.ReplaceAllString(s, with)
		}
	}
	rep(MaskURL, urlRe, "<url>")
	rep(MaskEmail, emailRe, "<email>")
	rep(MaskUUID, uuidRe, "<uuid>")
	rep(MaskTimestamp, isoTimeRe, "<ts>")
	rep(MaskTimestamp, clockRe, "<ts>")
	rep(MaskIP, userHostRe, "@<ip>")
	rep(MaskIP, ipv4Re, "<ip>")
	if mc.on(MaskIP) {
		s = ipv6Re.ReplaceAllStringFunc(s, func(m string) string {
			if strings.HasPrefix(m, " ") || strings.HasPrefix(m, "\t") {
				return m[:1] + "<ip>"
			}
			if strings.HasPrefix(m, "::") || strings.HasPrefix(m, "[") {
				return "<ip>"
			}
			return m[:1] + "<ip>"
		})
		s = localhostRe.ReplaceAllString(s, "<ip>")
	}
	if mc.on(MaskPath) {
		s = maskPaths(s)
	}
	rep(MaskHex, javaHashRe, "@<hex>")
	rep(MaskHex, hexRe, "<hex>")
	rep(MaskVersion, versionRe, "<ver>")
	rep(MaskDuration, durationRe, "<dur>")
	rep(MaskSize, sizeRe, "<size>")
	if mc.on(MaskHash) {
		s = hashRe.ReplaceAllStringFunc(s, func(m string) string {
			if strings.IndexFunc(m, isDigit) >= 0 && strings.IndexFunc(m, unicode.IsLetter) >= 0 {
				return "<hash>"
			}
			return m
		})
	}
	rep(MaskTemp, tempRe, "<tmp>")
	if mc.on(MaskID) {
		s = longIDRe.ReplaceAllStringFunc(s, func(m string) string {
			digits, letters := 0, 0
			for _, r := range m {
				if isDigit(r) {
					digits++
				} else if unicode.IsLetter(r) {
					letters++
				}
			}
			if digits >= 3 && letters >= 3 {
				return "<id>"
			}
			return m
		})
	}
	if mc.on(MaskNumber) {
		s = maskNumbers(s)
	}
	if mc.on(MaskString) {
		s = maskQuotes(s, values)
	}
	s = strings.ToLower(s)
	s = spaceRe.ReplaceAllString(s, " ")
	return strings.TrimSpace(s)
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isPathByte(c byte) bool {
	return isWordByte(c) || c == '.' || c == '/' || c == '-' || c == '@' || c == '+' || c == '~' || c == '%' || c == '\\'
}

// maskPaths replaces file-system paths by <path>: runs of path characters
// that start at the root, the home directory or a relative ./ or ../, or
// that contain a directory and end in a file extension, and bare file names
// with a known extension. Package paths without an extension
// (github.com/google/uuid, org/slf4j/LoggerFactory) are kept: they name
// what is missing.
func maskPaths(s string) string {
	var b strings.Builder
	n := len(s)
	for i := 0; i < n; {
		c := s[i]
		if !isPathByte(c) || (i > 0 && isPathByte(s[i-1])) {
			b.WriteByte(c)
			i++
			continue
		}
		j := i
		for j < n && isPathByte(s[j]) {
			j++
		}
		// Windows drive letter: C:\x or C:/x
		if j-i == 1 && j+1 < n && s[j] == ':' && (s[j+1] == '\\' || s[j+1] == '/') {
			k := j + 1
			for k < n && isPathByte(s[k]) {
				k++
			}
			b.WriteString("<path>")
			i = k
			continue
		}
		w := s[i:j]
		if isPathWord(w) {
			// keep sentence punctuation that ended the word
			trail := ""
			for strings.HasSuffix(w, ".") && len(w) > 1 {
				w = w[:len(w)-1]
				trail += "."
			}
			b.WriteString("<path>")
			b.WriteString(trail)
		} else {
			b.WriteString(w)
		}
		i = j
	}
	return b.String()
}

func isPathWord(w string) bool {
	w = strings.TrimRight(w, ".")
	if len(w) < 2 {
		return false
	}
	if strings.HasPrefix(w, "/") || strings.HasPrefix(w, "~/") || strings.HasPrefix(w, "./") || strings.HasPrefix(w, "../") || strings.HasPrefix(w, ".\\") {
		return len(strings.Trim(w, "/.~\\")) > 0
	}
	if strings.Contains(w, "\\") && strings.Count(w, "\\") >= 2 {
		return true
	}
	base := w
	if k := strings.LastIndexAny(w, "/\\"); k >= 0 {
		base = w[k+1:]
	}
	dot := strings.LastIndexByte(base, '.')
	if dot <= 0 || dot == len(base)-1 {
		return false
	}
	ext := strings.ToLower(base[dot+1:])
	return fileExts[ext]
}

// maskNumbers replaces numbers that stand alone (not inside identifiers
// such as E0308, utf8 or case_3) by <num>.
func maskNumbers(s string) string {
	var b strings.Builder
	n := len(s)
	for i := 0; i < n; {
		c := s[i]
		if c < '0' || c > '9' || (i > 0 && (isWordByte(s[i-1]) && s[i-1] != '_' || s[i-1] == '_' && i > 1 && isWordByte(s[i-2]))) {
			b.WriteByte(c)
			i++
			continue
		}
		// a placeholder such as <num> is not a number
		j := i
		for j < n && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' && j+1 < n && s[j+1] >= '0' && s[j+1] <= '9') {
			j++
		}
		if j < n && (isWordByte(s[j]) && s[j] != '_') {
			// digits followed by letters: part of an identifier (12a, 3rd)
			b.WriteString(s[i:j])
			i = j
			continue
		}
		b.WriteString("<num>")
		i = j
	}
	return b.String()
}

var quotePairs = map[rune]rune{'\'': '\'', '"': '"', '`': '`', '‘': '’', '“': '”', '«': '»', '「': '」'}

// valueWords right before a quoted text make it a value rather than a
// name ("got 'x'", "expected 'y'", "For input string: \"12a\"", "Duplicate
// entry '17'"); literalWords do so anywhere in the six words before
// ("invalid literal for int() with base 10: 'abc'").
var (
	valueWords = set("input", "string", "value", "values", "got", "received", "expected", "want", "wanted", "be",
		"equal", "equals", "actual", "entry", "provided", "given", "=", "==", "!=", "tobe", "toequal", "argument", "data")
	literalWords = set("literal", "literals")
)

// maskQuotes masks quoted values and keeps quoted names (see Mask).
func maskQuotes(s string, values bool) string {
	var b strings.Builder
	rs := []rune(s)
	n := len(rs)
	for i := 0; i < n; i++ {
		r := rs[i]
		closeR, ok := quotePairs[r]
		if !ok || (i > 0 && (unicode.IsLetter(rs[i-1]) || unicode.IsDigit(rs[i-1]))) {
			b.WriteRune(r)
			continue
		}
		j := i + 1
		for j < n && rs[j] != closeR && rs[j] != '\n' && j-i <= 200 {
			j++
		}
		if j >= n || rs[j] != closeR {
			b.WriteRune(r)
			continue
		}
		// a closing quote must not be followed by a letter (don't, it's)
		if j+1 < n && (unicode.IsLetter(rs[j+1]) || unicode.IsDigit(rs[j+1])) && r == '\'' {
			b.WriteRune(r)
			continue
		}
		content := string(rs[i+1 : j])
		trimmed := strings.TrimSpace(content)
		switch {
		case trimmed == "":
			b.WriteString("<str>")
		case isSinglePlaceholder(trimmed):
			b.WriteString(trimmed)
		case r == '`' && !values && !strings.ContainsAny(trimmed, "\t"):
			b.WriteString(string(rs[i : j+1]))
		case values || strings.ContainsAny(trimmed, " \t") || valueContext(string(rs[:i])):
			b.WriteString("<str>")
		default:
			b.WriteString(string(rs[i : j+1]))
		}
		i = j
	}
	return b.String()
}

func isSinglePlaceholder(s string) bool {
	return strings.HasPrefix(s, "<") && strings.HasSuffix(s, ">") && strings.Count(s, "<") == 1 && !strings.ContainsAny(s, " ")
}

// valueContext reports whether the text before a quote makes it a value.
func valueContext(before string) bool {
	if k := strings.LastIndexByte(before, '\n'); k >= 0 {
		before = before[k+1:]
	}
	words := strings.Fields(strings.ToLower(before))
	for k := len(words) - 1; k >= 0 && k >= len(words)-6; k-- {
		w := strings.Trim(words[k], "(),;:")
		if literalWords[w] || k == len(words)-1 && valueWords[w] {
			return true
		}
	}
	return false
}

// isKeyToken reports whether a token of a masked message names something
// that distinguishes failures: it holds a quoted name ('yaml', "users",
// `config`) or a qualified identifier (store.Get, github.com/x/y, a::b).
// Template mining never turns such a token into a wildcard.
func isKeyToken(t string) bool {
	rs := []rune(t)
	for i, r := range rs {
		closeR, ok := quotePairs[r]
		if !ok || (i > 0 && (unicode.IsLetter(rs[i-1]) || unicode.IsDigit(rs[i-1]))) {
			continue
		}
		for j := i + 1; j < len(rs); j++ {
			if rs[j] == closeR {
				return j > i+1
			}
		}
	}
	for i := 1; i+1 < len(t); i++ {
		c := t[i]
		if (c == '.' || c == '/' || c == ':' && t[i+1] == ':') && isLetterByte(t[i-1]) {
			k := i + 1
			if c == ':' {
				k++
			}
			if k < len(t) && isLetterByte(t[k]) && !strings.Contains(t, "<") {
				return true
			}
		}
	}
	return false
}

func isLetterByte(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
