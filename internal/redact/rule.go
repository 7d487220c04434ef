package redact

import (
	"regexp"
)

// rule is one kind of secret. It reports spans through find; most rules
// are a regular expression whose group "s" (or the whole match) is the
// secret, an optional check of the candidate, and a boundary class the
// secret must not continue into.
type rule struct {
	// name names the marker; rules with several names (the generic
	// assignment rules) set names and pass the name with each span.
	name  string
	multi []string
	// keywords gate the rule: it runs only on text containing one of
	// them (lower case, matched ignoring ASCII case).
	keywords []string
	re       *regexp.Regexp
	group    int // submatch index of the secret; 0 is the whole match
	// tokenChars: the secret must not be preceded or followed by one of
	// these bytes (a longer token is some other thing).
	tokenChars *byteSet
	// leftChars, when set, replaces tokenChars before the secret.
	leftChars *byteSet
	// check, when set, vets a candidate secret.
	check func(secret string) bool
	// custom finders replace the regexp; they look for secrets in
	// text[lo:hi] and may read the text around it.
	custom func(text string, lo, hi int, emit func(start, end int, name string))
	// The rule runs on windows around its keyword hits: from back bytes
	// before a hit to fwd bytes after it (defaults 256 and 4096), cut at
	// line breaks unless multiLine. wholeText rules run on all the text.
	back, fwd int
	multiLine bool
	wholeText bool
	// requires, when set, must also occur in the text (any case).
	requires string
	// onHits, when set, replaces windows: it gets the keyword hits.
	onHits func(text string, hits []int32, emit func(start, end int, name string))
}

func (r *rule) names() []string {
	if len(r.multi) > 0 {
		return r.multi
	}
	return []string{r.name}
}

func (r *rule) nameOf(s span) string {
	if s.name != "" {
		return s.name
	}
	return r.name
}

// find reports the rule's secrets in text[lo:hi].
func (r *rule) find(text string, lo, hi int, emit func(start, end int, name string)) {
	if r.custom != nil {
		r.custom(text, lo, hi, emit)
		return
	}
	for _, m := range r.re.FindAllStringSubmatchIndex(text[lo:hi], -1) {
		if m[2*r.group] < 0 {
			continue
		}
		start, end := lo+m[2*r.group], lo+m[2*r.group+1]
		if r.tokenChars != nil && !r.tokenChars.bounded(text, start, end) && r.leftChars == nil {
			continue
		}
		if r.leftChars != nil && (start > 0 && r.leftChars[text[start-1]] || end < len(text) && r.tokenChars[text[end]]) {
			continue
		}
		if r.check != nil && !r.check(text[start:end]) {
			continue
		}
		emit(start, end, "")
	}
}

// byteSet is a set of bytes.
type byteSet [256]bool

// newByteSet returns the set of bytes listed in spec, where "a-z" is a
// range.
func newByteSet(spec string) *byteSet {
	var s byteSet
	for i := 0; i < len(spec); i++ {
		if i+2 < len(spec) && spec[i+1] == '-' {
			for c := int(spec[i]); c <= int(spec[i+2]); c++ {
				s[c] = true
			}
			i += 2
			continue
		}
		s[spec[i]] = true
	}
	return &s
}

// bounded reports whether text[start:end] is neither preceded nor
// followed by a byte of the set.
func (s *byteSet) bounded(text string, start, end int) bool {
	if start > 0 && s[text[start-1]] {
		return false
	}
	if end < len(text) && s[text[end]] {
		return false
	}
	return true
}

var (
	alnum     = newByteSet("A-Za-z0-9")
	word      = newByteSet("A-Za-z0-9_")
	wordDash  = newByteSet("A-Za-z0-9_-")
	b64Chars  = newByteSet("A-Za-z0-9+/=")
	b64Body   = newByteSet("A-Za-z0-9+/")
	b64URL    = newByteSet("A-Za-z0-9_=-")
	wordDot   = newByteSet("A-Za-z0-9_.-")
	azureChar = newByteSet("A-Za-z0-9_~.-")
	digits    = newByteSet("0-9")
)

// re compiles a rule's expression and finds its "s" group.
func re(name string, keywords []string, expr string, tokenChars *byteSet, check func(string) bool) *rule {
	x := regexp.MustCompile(expr)
	g := x.SubexpIndex("s")
	if g < 0 {
		g = 0
	}
	return &rule{name: name, keywords: keywords, re: x, group: g, tokenChars: tokenChars, check: check}
}
