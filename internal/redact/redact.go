package redact

import (
	"slices"
	"strings"
	"sync"
)

// MarkerPrefix starts every marker Redact writes; a marker is
// MarkerPrefix + rule name + "]", e.g. "[REDACTED:aws-secret-key]".
const MarkerPrefix = "[REDACTED:"

// MaxMarkerLen is the length in bytes of the longest marker Redact can
// write. Redacted text is never longer than the input plus MaxMarkerLen
// bytes per finding.
const MaxMarkerLen = len(MarkerPrefix) + maxRuleNameLen + 1

// maxRuleNameLen bounds rule names; a test checks every rule against it.
const maxRuleNameLen = 32

// Marker returns the text that replaces a secret found by the named rule.
func Marker(rule string) string { return MarkerPrefix + rule + "]" }

// Finding is one secret that Redact replaced: the rule that named it and
// the byte offsets [Start, End) it occupied in the input. It never holds
// the secret itself.
type Finding struct {
	Rule  string `json:"rule"`
	Start int    `json:"start"`
	End   int    `json:"end"`
}

// Report says what Redact replaced, in input order. Overlapping matches
// of several rules are merged into one finding named after the most
// specific rule.
type Report struct {
	Findings []Finding `json:"findings,omitempty"`
}

// Count returns the number of secrets replaced.
func (r Report) Count() int { return len(r.Findings) }

// ByRule returns the number of replacements per rule name.
func (r Report) ByRule() map[string]int {
	m := make(map[string]int, len(r.Findings))
	for _, f := range r.Findings {
		m[f.Rule]++
	}
	return m
}

// Rules returns the names of all rules, in priority order (when matches
// of two rules overlap, the earlier rule names the merged finding).
func Rules() []string {
	rs := compiled()
	names := make([]string, 0, len(rs.rules))
	seen := map[string]bool{}
	for _, r := range rs.rules {
		for _, n := range r.names() {
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	return names
}

// Redact returns text with every secret it recognises replaced by a
// marker naming the rule ([Marker]), and a report of the replacements.
// Only the secret is replaced: in an assignment the key and separator
// stay (password=[REDACTED:password]), in a URL the scheme, user and host
// stay, and every byte outside the findings is kept as it was, including
// invalid UTF-8. Redacting redacted text changes nothing. Time is linear
// in the length of text; text without any rule's keyword costs one scan.
func Redact(text string) (string, Report) {
	rs := compiled()
	found := rs.find(text)
	if len(found) == 0 {
		return text, Report{}
	}
	merged := merge(found)
	var b strings.Builder
	b.Grow(len(text) + len(merged)*16)
	rep := Report{Findings: make([]Finding, 0, len(merged))}
	last := 0
	for _, f := range merged {
		b.WriteString(text[last:f.start])
		name := rs.rules[f.rule].nameOf(f)
		b.WriteString(Marker(name))
		rep.Findings = append(rep.Findings, Finding{Rule: name, Start: f.start, End: f.end})
		last = f.end
	}
	b.WriteString(text[last:])
	return b.String(), rep
}

// span is one match of one rule: the byte range of the secret, the rule's
// index (its priority) and, for rules with several names, which name.
type span struct {
	start, end int
	rule       int
	name       string
}

// merge sorts spans and unites overlapping or touching ones; a united
// span takes the name of its highest-priority (lowest index) rule.
func merge(spans []span) []span {
	slices.SortFunc(spans, func(a, b span) int {
		if a.start != b.start {
			return a.start - b.start
		}
		if a.end != b.end {
			return b.end - a.end
		}
		return a.rule - b.rule
	})
	out := spans[:0]
	for _, s := range spans {
		if n := len(out); n > 0 && s.start < out[n-1].end {
			last := &out[n-1]
			if s.end > last.end {
				last.end = s.end
			}
			if s.rule < last.rule {
				last.rule, last.name = s.rule, s.name
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

// ruleSet is the compiled rules and the keyword scanner that picks which
// of them run on a text.
type ruleSet struct {
	rules []*rule
	pre   *prefilter
}

// compiled builds the rule set once, on first use, so that importing the
// package costs nothing on paths that never redact.
var compiled = sync.OnceValue(func() *ruleSet {
	rules := buildRules()
	var kws [][]string
	for _, r := range rules {
		kws = append(kws, r.keywords)
	}
	return &ruleSet{rules: rules, pre: newPrefilter(kws)}
})

// find runs every rule whose keywords occur in text, on windows around
// the occurrences, and returns the spans they report.
func (rs *ruleSet) find(text string) []span {
	h := rs.pre.scan(text)
	if h == nil {
		return nil
	}
	var out []span
	for i, r := range rs.rules {
		if len(h[i]) == 0 {
			continue
		}
		if r.requires != "" && !containsFold(text, r.requires) {
			continue
		}
		emit := func(start, end int, name string) {
			if start < end {
				out = append(out, span{start: start, end: end, rule: i, name: name})
			}
		}
		if r.onHits != nil {
			r.onHits(text, h[i], emit)
			continue
		}
		if r.wholeText {
			r.find(text, 0, len(text), emit)
			continue
		}
		windows(text, h[i], r, func(lo, hi int) { r.find(text, lo, hi, emit) })
	}
	return out
}

// windows calls f with the merged windows around a rule's hits: from
// r.back bytes before a hit to r.fwd bytes after it, cut at the line
// breaks around the hit unless the rule spans lines. Its cost is linear
// in the text, however dense the hits.
func windows(text string, hits []int32, r *rule, f func(lo, hi int)) {
	back, fwd := r.back, r.fwd
	if back == 0 {
		back = 256
	}
	if fwd == 0 {
		fwd = 4096
	}
	lo, hi := -1, -1
	hiAtBreak := false // hi stopped at a line break (not at fwd)
	for _, h32 := range hits {
		p := int(h32)
		if lo >= 0 && p <= hi {
			// Same window; extend it unless it already ends at the line
			// break that also ends this hit's line.
			if !hiAtBreak {
				limit := min(len(text), p+fwd)
				if limit > hi {
					if k := strings.IndexByte(text[hi:limit], '\n'); k >= 0 && !r.multiLine {
						hi, hiAtBreak = hi+k, true
					} else {
						hi = limit
					}
				}
			}
			continue
		}
		if lo >= 0 {
			f(lo, hi)
		}
		lo = max(0, p-back)
		if !r.multiLine {
			if k := strings.LastIndexByte(text[lo:p], '\n'); k >= 0 {
				lo += k + 1 // keywords hold no line break
			}
		}
		hi, hiAtBreak = min(len(text), p+fwd), false
		if !r.multiLine {
			if k := strings.IndexByte(text[p:hi], '\n'); k >= 0 {
				hi, hiAtBreak = p+k, true
			}
		}
	}
	if lo >= 0 {
		f(lo, hi)
	}
}

// containsFold reports whether text contains the lower-case ASCII word w,
// ignoring ASCII case.
func containsFold(text, w string) bool {
	for i := 0; i+len(w) <= len(text); i++ {
		j := 0
		for j < len(w) && lower(text[i+j]) == w[j] {
			j++
		}
		if j == len(w) {
			return true
		}
	}
	return false
}
