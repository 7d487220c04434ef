package redact

import (
	"regexp"
	"strings"
)

// keyClass is what a key in an assignment names.
type keyClass uint8

const (
	kNone keyClass = iota
	kPassword
	kPrivateKey
	kAPIKey
	kSecretKey
	kSecret
	kToken
	kCredential
	kSession
	kAuth
)

// className is the marker name of each class.
var className = [...]string{
	kPassword:   "password",
	kPrivateKey: "private-key",
	kAPIKey:     "api-key",
	kSecretKey:  "secret-key",
	kSecret:     "secret",
	kToken:      "token",
	kCredential: "credential",
	kSession:    "session-id",
	kAuth:       "auth",
}

// genericNames lists the names the generic rules can give.
func genericNames() []string { return className[kPassword:] }

// keywords that gate the generic rules (any key they accept contains one).
var genericKeywords = []string{"pass", "pwd", "secret", "token", "key", "auth", "cred", "sess", "sid", "pat"}

// keyPrefixes are the words that make "<word>_key" a secret key.
var keyPrefixes = map[string]bool{
	"access": true, "secret": true, "signing": true, "sign": true, "encryption": true, "encrypt": true,
	"master": true, "account": true, "auth": true, "app": true, "application": true, "client": true,
	"subscription": true, "shared": true, "storage": true, "service": true, "admin": true, "license": true,
	"licence": true, "webhook": true, "consumer": true, "session": true, "hmac": true, "jwt": true,
	"crypto": true, "cipher": true, "aes": true, "security": true, "root": true, "developer": true,
	"ingest": true, "ingestion": true, "project": true, "deploy": true, "live": true, "prod": true,
	"server": true, "write": true, "org": true, "personal": true, "sdk": true, "mgmt": true, "management": true,
}

// denyAny: a key containing one of these words names something public or
// a pointer, not a secret (public_key, next_page_token).
var denyAny = map[string]bool{
	"public": true, "pub": true, "publishable": true, "next": true, "page": true, "cursor": true,
	"continuation": true, "pagination": true, "sync": true, "tokenizer": true, "tokenization": true,
}

// denyLast: a key ending in one of these words describes a secret (its
// name, file, length, lifetime…) instead of holding one.
var denyLast = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`name names filename file files path dir directory folder url uri urls endpoint host
		hostname port type types kind length len min max size count policy policies prompt field fields label hint
		required require enabled enable disabled disable expiry expires expire expiration expired in ttl timeout
		duration lifetime age regex regexp pattern format hash hashed hasher hashers header headers param params
		parameter env var variable vars ref reference source location provider mode method methods strategy manager
		store helper cmd command version index limit rotation created updated at time date usage used ratio rate
		algorithm alg chars charset strength input placeholder title description desc text message msg error err
		errors valid validation validator check reset forgot last prefix suffix bytes bits encoding schema spec class
		list exists present audience issuer scope scopes window quota lock cache backend bucket mount arn ids level
		seconds secs ms minutes hours days option options config settings status state request response owner
		counter set is has provided supplied visible visibility show mask masked rules rule policy id uid
		generator factory service client handler validator store storage endpoint vault ref refs`) {
		denyLast[w] = true
	}
}

// splitKey splits an identifier into lower-case words at _ - . : and
// camel-case boundaries: "AWS_SECRET_ACCESS_KEY" and "secretAccessKey"
// both give secret, access, key (after "aws").
func splitKey(key string) []string {
	var words []string
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			words = append(words, strings.ToLower(key[start:end]))
		}
		start = -1
	}
	isUp := func(c byte) bool { return 'A' <= c && c <= 'Z' }
	isLo := func(c byte) bool { return 'a' <= c && c <= 'z' }
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(isUp(c) || isLo(c) || '0' <= c && c <= '9') {
			flush(i)
			continue
		}
		if start >= 0 && isUp(c) && (isLo(key[i-1]) || i+1 < len(key) && isLo(key[i+1]) && isUp(key[i-1])) {
			flush(i)
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(key))
	return words
}

// classifyKey says what an assignment's key names, kNone when it is not
// a secret.
func classifyKey(key string) keyClass {
	words := splitKey(key)
	if len(words) == 0 {
		return kNone
	}
	for _, w := range words {
		if denyAny[w] {
			return kNone
		}
	}
	last := words[len(words)-1]
	best := kNone
	take := func(c keyClass) {
		if best == kNone || c < best {
			best = c
		}
	}
	for i, w := range words {
		prev := ""
		if i > 0 {
			prev = words[i-1]
		}
		switch {
		case strings.Contains(w, "password") || strings.Contains(w, "passwd") || strings.Contains(w, "passphrase") ||
			w == "pass" || w == "pwd" || w == "pw" || strings.HasSuffix(w, "pwd") ||
			strings.HasSuffix(w, "pass") && len(w) <= 9 && !strings.HasSuffix(w, "ypass") && !strings.HasSuffix(w, "mpass") &&
				!strings.HasSuffix(w, "rpass"):
			take(kPassword)
		case w == "privatekey" || w == "key" && prev == "private":
			take(kPrivateKey)
		case w == "apikey" || w == "apikeys" || w == "key" && prev == "api":
			take(kAPIKey)
		case strings.Contains(w, "secret") && w != "secrets":
			take(kSecret)
		case w == "key" && keyPrefixes[prev], strings.HasSuffix(w, "key") && keyPrefixes[strings.TrimSuffix(w, "key")]:
			take(kSecretKey)
		case w == "token" || strings.HasSuffix(w, "token") || w == "pat":
			take(kToken)
		case strings.HasPrefix(w, "credential") || w == "creds" || w == "cred":
			take(kCredential)
		case w == "session" || w == "sessionid" || w == "sessid" || w == "sid" || w == "sess" ||
			strings.HasSuffix(w, "sessid") || strings.HasSuffix(w, "sessionid"):
			take(kSession)
		case w == "auth" || w == "authorization" || w == "authkey":
			take(kAuth)
		}
	}
	if best == kNone {
		return kNone
	}
	if denyLast[last] {
		// secret_id (Vault AppRole) and session_id hold secrets.
		if !(last == "id" && (best == kSecret || best == kSession)) {
			return kNone
		}
	}
	return best
}

// separator strength: a weak separator (":" or a space, as in prose,
// YAML, flags) needs a value that does not read as a word.
type sepKind uint8

const (
	sepStrong sepKind = iota // = := =>
	sepWeak                  // : or whitespace
)

// valueIsSecret decides whether a value assigned to a key of class c is
// a secret. quoted says it was in quotes; next is the byte after it.
func valueIsSecret(c keyClass, v string, quoted bool, sep sepKind, next byte) bool {
	if isPlaceholder(v) || isPathLike(v) || isEnumWord(v) {
		return false
	}
	if !quoted && isReference(v, next) {
		return false
	}
	if c == kPassword {
		if len(v) < 4 {
			return false
		}
		if sep == sepWeak && !quoted && isHumanWord(v) {
			return false
		}
		return true
	}
	if len(v) < 8 || strings.ContainsAny(v, " \t") {
		return false
	}
	if c == kSession && len(v) < 12 {
		return false
	}
	if mixedToken(v) {
		return true
	}
	l, u, d, o := charClasses(v)
	if d && !l && !u && !o {
		return false // a number
	}
	return len(v) >= 20 && entropy(v) >= 3.5 && randomLooking(v)
}

// assignFinder returns a finder for an assignment expression with groups
// k (key), and dq, sq, bq or bare (value). sepGroup, if present, says
// which separator was used; weak marks expressions whose separator is
// always weak (flags, XML, netrc).
func assignFinder(x *regexp.Regexp, weak bool, fixed keyClass) func(string, func(int, int, string)) {
	gk, gdq, gsq, gbare, gsep := x.SubexpIndex("k"), x.SubexpIndex("dq"), x.SubexpIndex("sq"), x.SubexpIndex("bare"), x.SubexpIndex("sep")
	var scan func(text string, base int, depth int, emit func(int, int, string))
	scan = func(text string, base int, depth int, emit func(int, int, string)) {
		pos := 0
		for pos < len(text) {
			m := x.FindStringSubmatchIndex(text[pos:])
			if m == nil {
				return
			}
			for i := range m {
				if m[i] >= 0 {
					m[i] += pos
				}
			}
			class := fixed
			if class == kNone && gk >= 0 {
				class = classifyKey(text[m[2*gk]:m[2*gk+1]])
				if k0 := m[2*gk]; k0 > 0 && (text[k0-1] == '{' || text[k0-1] == '$' ||
					text[k0-1] == ':' && gsep >= 0 && m[2*gsep] >= 0 && text[m[2*gsep]] == ':') {
					// ${TOKEN:-x} is shell expansion; a:b:secret:c is an ARN
					// or a URN, not an assignment.
					class = kNone
				}
			}
			v0, v1, quoted := -1, -1, false
			for _, g := range []int{gdq, gsq} {
				if g >= 0 && m[2*g] >= 0 {
					v0, v1, quoted = m[2*g], m[2*g+1], true
				}
			}
			if v0 < 0 && gbare >= 0 && m[2*gbare] >= 0 {
				v0, v1 = m[2*gbare], m[2*gbare+1]
			}
			if v0 < 0 {
				pos = max(m[1], pos+1)
				continue
			}
			sep := sepStrong
			if weak {
				sep = sepWeak
			} else if gsep >= 0 && m[2*gsep] >= 0 && !strings.Contains(text[m[2*gsep]:m[2*gsep+1]], "=") {
				sep = sepWeak
			}
			var next byte
			if v1 < len(text) {
				next = text[v1]
			}
			v := text[v0:v1]
			if !quoted {
				// Sentence punctuation after a bare value is not part of it.
				for len(v) > 0 && strings.IndexByte(".,;:!?", v[len(v)-1]) >= 0 {
					v = v[:len(v)-1]
				}
				v1 = v0 + len(v)
			}
			if class != kNone && valueIsSecret(class, v, quoted, sep, next) {
				emit(base+v0, base+v1, className[class])
			} else if depth == 0 && !quoted && strings.ContainsAny(v, "=:") {
				// A rejected bare value may hold an assignment of its own
				// (x:token=…): look inside it once.
				scan(text[v0:v1], base+v0, 1, emit)
			}
			pos = max(m[1], pos+1)
		}
	}
	return func(text string, emit func(int, int, string)) { scan(text, 0, 0, emit) }
}

// Value alternatives shared by the generic expressions: a double-quoted
// string (escapes allowed), a single-quoted one, or a bare word.
const (
	valueQuoted = `"(?P<dq>(?:[^"\\\r\n]|\\.)+)"|'(?P<sq>[^'\r\n]+)'`
	keyStems    = `(?:pass|pwd|secret|token|key|auth|cred|sess|sid|pat)`
)

func genericRules() []*rule {
	assign := regexp.MustCompile(`(?i)(?P<k>[a-z0-9_.-]*` + keyStems + `[a-z0-9_.-]*)["'` + "`" + `]?[ \t]*(?P<sep>:=|=>|=|:)[ \t]*(?:` +
		valueQuoted + `|(?P<bare>[^\s"'` + "`" + `,;&<>(){}\[\]|\\]+))`)
	flag := regexp.MustCompile(`(?i)(?:^|[\s"'])--?(?P<k>[a-z0-9_.-]*` + keyStems + `[a-z0-9_.-]*)[ \t]+(?:` +
		valueQuoted + `|(?P<bare>[^\s"'` + "`" + `;&|<>()\\-][^\s"'` + "`" + `;&|<>()\\]*))`)
	xml := regexp.MustCompile(`<(?P<k>[A-Za-z_][A-Za-z0-9_.:-]{0,64})>(?P<bare>[^<\r\n]+)</`)
	// Chinese keys (password, pass phrase, secret key, private key, token,
	// credential) before ":", "=", "是" (is) or "为" (is), up to twelve
	// other Chinese characters between key and separator.
	zh := regexp.MustCompile(`(?:密码|口令|密钥|秘钥|私钥|令牌|凭证|凭据)[^\x00-\x7f，。；、！？（）“”：]{0,12}?[ \t]*(?:[:：=]|是|为)[ \t]*(?P<bare>[!-~]+)`)
	netrc := regexp.MustCompile(`(?i)(?:^|\s)(?P<k>password)[ \t]+(?P<bare>[^\s]+)`)
	multi := genericNames()
	zhFind := assignFinder(zh, false, kPassword)
	return []*rule{
		{name: "password", multi: multi, keywords: []string{"密码", "口令", "密钥", "秘钥", "私钥", "令牌", "凭证", "凭据"},
			custom: func(text string, emit func(int, int, string)) {
				zhFind(text, func(s, e int, _ string) {
					k := zhClass(text, s)
					emit(s, e, className[k])
				})
			}},
		{name: "password", multi: multi, keywords: genericKeywords, custom: assignFinder(xml, true, kNone)},
		{name: "password", multi: multi, keywords: genericKeywords, custom: assignFinder(flag, true, kNone)},
		{name: "password", multi: multi, keywords: genericKeywords, custom: assignFinder(assign, false, kNone)},
		{name: "password", keywords: []string{"machine"}, custom: assignFinder(netrc, true, kPassword)},
	}
}

// zhClass names a Chinese key found before the value at s.
func zhClass(text string, s int) keyClass {
	i := max(0, s-64)
	before := text[i:s]
	best, at := kPassword, -1
	for _, kv := range []struct {
		k string
		c keyClass
	}{{"密码", kPassword}, {"口令", kPassword}, {"密钥", kSecret}, {"秘钥", kSecret}, {"私钥", kPrivateKey},
		{"令牌", kToken}, {"凭证", kCredential}, {"凭据", kCredential}} {
		if j := strings.LastIndex(before, kv.k); j > at {
			best, at = kv.c, j
		}
	}
	return best
}
