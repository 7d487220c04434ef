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

// denyAny: a key containing one of these words names something public,
// a pointer or a condition, not a secret (public_key, next_page_token,
// ERR_INVALID_PASSWORD).
var denyAny = map[string]bool{
	"public": true, "pub": true, "publishable": true, "next": true, "page": true, "cursor": true,
	"continuation": true, "pagination": true, "sync": true, "tokenizer": true, "tokenization": true,
	"invalid": true, "wrong": true, "bad": true, "errcode": true, "err": true, "error": true, "missing": true,
	"expired": true, "empty": true, "no": true, "forgot": true, "forgotten": true, "reset": true,
}

// trailingOK are the words that may follow the class word in a key and
// keep it a secret: db_password_prod, SECRET_KEY_BASE, api_token_v2.
var trailingOK = map[string]bool{}

// passPrefixes make "<word>pass" a password key: dbpass, rootpass.
var passPrefixes = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`key value val base data b64 base64 hex raw enc encoded plain plaintext secret
		token password id v1 v2 v3 prod production dev development test testing staging stage live sandbox main
		primary secondary backup old new current default local remote global override admin root user bot app ci
		string str confirmation confirm repeat again retype`) {
		trailingOK[w] = true
	}
	for _, w := range strings.Fields(`db pg my mysql root admin user usr smtp ftp sftp mail email redis ldap bind
		proxy http basic sql ssh sudo login auth sys master super app srv server vnc wifi ap psk`) {
		passPrefixes[w] = true
	}
}

// classifyWordOnly classifies one word alone (a trailing "secret" in
// access_token_secret keeps the key a secret).
func classifyWordOnly(w string) keyClass {
	switch {
	case strings.Contains(w, "password") || strings.Contains(w, "passwd") || w == "pass" || w == "pwd":
		return kPassword
	case strings.Contains(w, "secret") && w != "secrets":
		return kSecret
	case w == "token" || w == "key" || w == "apikey":
		return kToken
	}
	return kNone
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
		generator factory service client handler validator store storage endpoint vault ref refs
		ts tsx js jsx mjs cjs go py rb rs java kt php cs swift c h cc cpp vue json yaml yml toml ini txt md html
		css sh log lock mod sum xml conn connection dsn connstr`) {
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
	at := -1 // index of the word that decided the class
	for i, w := range words {
		prev := ""
		if i > 0 {
			prev = words[i-1]
		}
		c := kNone
		switch {
		case strings.Contains(w, "password") || strings.Contains(w, "passwd") || strings.Contains(w, "passphrase") ||
			w == "pass" || w == "pwd" || strings.HasSuffix(w, "pwd") || strings.HasSuffix(w, "pass") && passPrefixes[strings.TrimSuffix(w, "pass")]:
			c = kPassword
		case w == "privatekey" || w == "key" && prev == "private":
			c = kPrivateKey
		case w == "apikey" || w == "apikeys" || w == "key" && prev == "api":
			c = kAPIKey
		case strings.Contains(w, "secret") && w != "secrets":
			c = kSecret
		case w == "key" && keyPrefixes[prev], strings.HasSuffix(w, "key") && keyPrefixes[strings.TrimSuffix(w, "key")]:
			c = kSecretKey
		case w == "token" || strings.HasSuffix(w, "token") || w == "pat":
			c = kToken
		case strings.HasPrefix(w, "credential") || w == "creds" || w == "cred":
			c = kCredential
		case w == "session" || w == "sessionid" || w == "sessid" || w == "sid" || w == "sess" ||
			strings.HasSuffix(w, "sessid") || strings.HasSuffix(w, "sessionid"):
			c = kSession
		case w == "auth" || w == "authorization" || w == "authkey":
			c = kAuth
		}
		if c != kNone && (best == kNone || c < best) {
			best, at = c, i
		}
	}
	if best == kNone {
		return kNone
	}
	// Words after the deciding one must qualify it (db_password_prod,
	// secret_key_base), not make it something else (token_style,
	// PasswordCallback, ONEPASS_OFF).
	for _, w := range words[at+1:] {
		if !trailingOK[w] && !isNumberLiteral(w) && classifyWordOnly(w) == kNone {
			return kNone
		}
	}
	if denyLast[last] {
		// secret_id (Vault AppRole) holds a secret; session_id in agent
		// and tool payloads is an identifier (cookie names are one word:
		// sessionid, JSESSIONID).
		if !(last == "id" && best == kSecret && at < len(words)-1) {
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

// assignment is a candidate value and how it was written.
type assignment struct {
	v        string
	quoted   bool    // in quotes
	sep      sepKind // separator strength
	next     byte    // the byte after the value (0 at the end)
	codeLike bool    // "x = y" with spaces around the separator
}

// holdsAssignment reports whether a bare value starts with a key that
// names a secret followed by = or : (password=token=…).
func holdsAssignment(v string) bool {
	k := strings.IndexAny(v, "=:")
	if k <= 0 || k+1 >= len(v) || v[k+1] == '=' {
		return false
	}
	j := k
	for j > 0 && keyByte[v[j-1]] {
		j--
	}
	return j < k && classifyKey(v[j:k]) != kNone
}

// probeLen bounds the bytes of a value that valueIsSecret examines.
const probeLen = 256

// valueIsSecret decides whether a value assigned to a key of class c is
// a secret.
func valueIsSecret(c keyClass, a assignment) bool {
	quoted, sep := a.quoted, a.sep
	// The checks read at most the first probeLen bytes, so a long value
	// costs no more than a short one; its length still counts.
	full := len(a.v)
	v := a.v[:min(full, probeLen)]
	if !quoted && holdsAssignment(v) {
		return false // token=x:token=y… is a chain of assignments, judged one by one
	}
	if isPlaceholder(v) || isPathLike(v) || isEnumWord(v) || isNumberLiteral(v) && (c != kPassword || a.codeLike || strings.Contains(v, "x")) {
		return false
	}
	if isIdent(v) && !strings.ContainsAny(v, "0123456789") {
		// "PGSSLPASSWORD": "sslpassword" maps a name to a name.
		lv := strings.ToLower(v)
		for _, stem := range []string{"password", "passwd", "secret", "token"} {
			if strings.Contains(lv, stem) {
				return false
			}
		}
	}
	if !quoted && isReference(v, a.next, a.codeLike) {
		return false
	}
	if c == kPassword {
		if full < 4 || full <= 5 && isNumberLiteral(v) {
			return false
		}
		if sep == sepWeak && !quoted && isHumanWord(v) {
			return false
		}
		return true
	}
	if full < 8 || strings.ContainsAny(v, " \t") {
		return false
	}
	if l, u, d, o := charClasses(v); !d && !o && (l || u) {
		// Letters only: a word or an identifier (Property,
		// ValidationError) unless long and random.
		return len(v) >= 24 && entropy(v) >= 4.0
	}
	if c == kSession && (full < 12 || isUUID(v) || strings.HasPrefix(v, "ses_")) {
		// Coding agents' session ids (UUIDs, opencode's ses_…) name a
		// conversation; they grant nothing.
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

// judge decides whether text[v0:v1], assigned to the key text[k0:k1]
// with separator text[s0:s1] (empty for flags and XML), is a secret. It
// returns the key's class (kNone when it is not a secret) and the end
// of the value without trailing sentence punctuation. fixed, when set,
// is the class of the key; weak says the separator is always weak.
func judge(text string, k0, k1, s0, s1, v0, v1 int, quoted, weak bool, fixed keyClass) (keyClass, int) {
	sepText := text[s0:s1]
	class := fixed
	if class == kNone {
		key := text[k0:k1]
		class = classifyKey(key)
		switch {
		case class == kNone:
		case singleDash(text, k0, k1):
			class = kNone // -ppassword is 7-Zip's -p<password>, not a -password flag
		case strings.EqualFold(strings.Trim(key, "-"), "pass") && (weak || sepText == ":"):
			class = kNone // "--- PASS: TestX", "pass: 12" are test results
		case k0 > 0 && (text[k0-1] == '{' || text[k0-1] == '$' || text[k0-1] == ':' && sepText == ":"):
			// ${TOKEN:-x} is shell expansion; a:b:secret:c is an ARN or
			// a URN, not an assignment.
			class = kNone
		case quoted && concatenated(text, k0, v0):
			// "TOKEN=" + value: the quote after "=" closes a string that
			// started before the key.
			class = kNone
		}
	}
	if class == kNone {
		return kNone, v1
	}
	sep := sepStrong
	if weak || !strings.Contains(sepText, "=") {
		sep = sepWeak
	}
	var next byte
	if v1 < len(text) {
		next = text[v1]
	}
	v := text[v0:v1]
	if !quoted {
		// Sentence punctuation after a bare value is not part of it.
		for len(v) > 0 && strings.IndexByte(".,;:", v[len(v)-1]) >= 0 {
			v = v[:len(v)-1]
		}
		v1 = v0 + len(v)
	}
	codeLike := s0 > 0 && s1 < len(text) && s1 > s0 && text[s0-1] == ' ' && text[s1] == ' ' && strings.Contains(sepText, "=")
	if !valueIsSecret(class, assignment{v: v, quoted: quoted, sep: sep, next: next, codeLike: codeLike}) {
		return kNone, v1
	}
	return class, v1
}

// assignFinder returns a finder for an expression with a value group (dq,
// sq or bare), an optional key group k and an optional separator group
// sep; fixed is the class when there is no key group.
func assignFinder(x *regexp.Regexp, weak bool, fixed keyClass) func(string, int, int, func(int, int, string)) {
	gk, gsep := x.SubexpIndex("k"), x.SubexpIndex("sep")
	gv := []int{x.SubexpIndex("dq"), x.SubexpIndex("sq"), x.SubexpIndex("bare")}
	return func(text string, lo, hi int, emit func(int, int, string)) {
		for _, m := range x.FindAllStringSubmatchIndex(text[lo:hi], -1) {
			for i := range m {
				if m[i] >= 0 {
					m[i] += lo
				}
			}
			k0, k1, s0, s1 := m[0], m[0], m[0], m[0]
			if gk >= 0 && m[2*gk] >= 0 {
				k0, k1 = m[2*gk], m[2*gk+1]
			}
			if gsep >= 0 && m[2*gsep] >= 0 {
				s0, s1 = m[2*gsep], m[2*gsep+1]
			}
			for j, g := range gv {
				if g < 0 || m[2*g] < 0 {
					continue
				}
				if c, end := judge(text, k0, k1, s0, s1, m[2*g], m[2*g+1], j < 2, weak, fixed); c != kNone {
					emit(m[2*g], end, className[c])
				}
			}
		}
	}
}

// singleDash reports a key written as a single-dash flag whose name
// does not start with a secret word: -ppassword, -psecret.
func singleDash(text string, k0, k1 int) bool {
	for k0 > 0 && text[k0-1] == '-' {
		k0--
	}
	n := 0
	for k0+n < k1 && text[k0+n] == '-' {
		n++
	}
	return n == 1 && !stemWord(text[k0+1:k1])
}

// stemWord reports whether a single-dash flag name starts with a secret
// word of its own (-password, -token, -api-key), not glued to a letter.
func stemWord(key string) bool {
	words := splitKey(key)
	if len(words) == 0 {
		return false
	}
	switch words[0] {
	case "password", "passwd", "pass", "pwd", "passphrase", "token", "secret", "apikey", "api", "auth", "access", "client", "private":
		return true
	}
	return false
}

// concatenated reports whether the quote opening a value at v0 closes a
// string literal that opened just before the key at k0: "TOKEN=" + x.
func concatenated(text string, k0, v0 int) bool {
	if k0 == 0 || v0 == 0 {
		return false
	}
	q := text[k0-1]
	if q != '"' && q != '\'' && q != '`' {
		return false
	}
	// No quote between the key and the value's opening quote.
	return text[v0-1] == q && strings.IndexByte(text[k0:v0-1], q) < 0
}

func genericRules() []*rule {
	// Chinese keys (password, pass phrase, secret key, private key, token,
	// credential) before ":", "=", "是" (is) or "为" (is), up to twelve
	// other Chinese characters between key and separator.
	zh := regexp.MustCompile(`(?:密码|口令|密钥|秘钥|私钥|令牌|凭证|凭据)[^\x00-\x7f，。；、！？（）“”：]{0,12}?[ \t]*(?:[:：=]|是|为)[ \t]*(?P<bare>[!-~]+)`)
	// .netrc: "login NAME password SECRET", on one line or several.
	netrc := regexp.MustCompile(`(?i)(?:^|\s)login[ \t]+[^\s]+\s+password[ \t]+(?P<bare>[^\s]+)`)
	multi := genericNames()
	zhFind := assignFinder(zh, false, kPassword)
	return []*rule{
		{name: "password", multi: multi, keywords: []string{"密码", "口令", "密钥", "秘钥", "私钥", "令牌", "凭证", "凭据"},
			custom: func(text string, lo, hi int, emit func(int, int, string)) {
				zhFind(text, lo, hi, func(s, e int, _ string) {
					k := zhClass(text, s)
					emit(s, e, className[k])
				})
			}},
		{name: "password", multi: multi, keywords: genericKeywords, onHits: scanAssignments},
		{name: "password", keywords: []string{"login"}, custom: assignFinder(netrc, true, kPassword), back: 16, fwd: 1024, multiLine: true},
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
