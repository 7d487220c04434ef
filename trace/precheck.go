package trace

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// CheckConfig configures the pre-execution check and its effectiveness
// learning.
type CheckConfig struct {
	// MinConfidence a match needs to warn (default 0.6).
	MinConfidence float64 `toml:"min_confidence" json:"min_confidence"`
	// MaxWarningsPerSession (default 3).
	MaxWarningsPerSession int `toml:"max_warnings_per_session" json:"max_warnings_per_session"`
	// MaxWarningsPerCheck: warnings returned by one check (default 1).
	MaxWarningsPerCheck int `toml:"max_warnings_per_check" json:"max_warnings_per_check"`
	// NoRepeat: a pattern warns at most once per session (default true).
	NoRepeat bool `toml:"no_repeat" json:"no_repeat"`
	// WeightFloor: a pattern whose weight fell below it stops warning
	// (default 0.3).
	WeightFloor float64 `toml:"weight_floor" json:"weight_floor"`
	// WeightMax caps the weight (default 2).
	WeightMax float64 `toml:"weight_max" json:"weight_max"`
	// HelpedDelta is added when a warned attempt succeeds (default 0.1).
	HelpedDelta float64 `toml:"helped_delta" json:"helped_delta"`
	// MisledDelta is subtracted when a warned attempt fails with the
	// pattern's error (default 0.25; a misleading warning costs more than
	// a helpful one earns).
	MisledDelta float64 `toml:"misled_delta" json:"misled_delta"`
	// OtherErrorFactor scales MisledDelta when the warned attempt failed
	// with a different error (default 0.5: the warning may have helped).
	OtherErrorFactor float64 `toml:"other_error_factor" json:"other_error_factor"`
}

// DefaultCheckConfig returns the defaults documented on CheckConfig.
func DefaultCheckConfig() CheckConfig {
	return CheckConfig{MinConfidence: 0.6, MaxWarningsPerSession: 3, MaxWarningsPerCheck: 1, NoRepeat: true,
		WeightFloor: 0.3, WeightMax: 2, HelpedDelta: 0.1, MisledDelta: 0.25, OtherErrorFactor: 0.5}
}

// Validate checks the ranges.
func (c CheckConfig) Validate() error {
	const obj = "check"
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) || v < 0 }
	switch {
	case bad(c.MinConfidence) || c.MinConfidence > 1:
		return invalid(ErrInvalidConfig, obj, "min_confidence", "is %v, want 0..1", c.MinConfidence)
	case c.MaxWarningsPerSession < 0:
		return invalid(ErrInvalidConfig, obj, "max_warnings_per_session", "is negative")
	case c.MaxWarningsPerCheck < 1:
		return invalid(ErrInvalidConfig, obj, "max_warnings_per_check", "is %d, want ≥ 1", c.MaxWarningsPerCheck)
	case bad(c.WeightFloor) || bad(c.WeightMax) || c.WeightMax < c.WeightFloor:
		return invalid(ErrInvalidConfig, obj, "weight_floor", "floor %v and max %v must be finite, ≥ 0, floor ≤ max", c.WeightFloor, c.WeightMax)
	case bad(c.HelpedDelta) || bad(c.MisledDelta) || bad(c.OtherErrorFactor) || c.OtherErrorFactor > 1:
		return invalid(ErrInvalidConfig, obj, "helped_delta", "deltas must be finite and ≥ 0, other_error_factor in 0..1")
	}
	return nil
}

// CheckQuery is an attempt about to run.
type CheckQuery struct {
	// SkillID of the attempt ("cmd:<family>" for plain commands; derived
	// from Command when empty).
	SkillID string `json:"skill_id,omitempty"`
	// Command about to run.
	Command string `json:"command"`
	// Context of the attempt (cwd, …).
	Context map[string]string `json:"context,omitempty"`
	// RecentSignatures are the error signatures of the skill's last failed
	// attempt in this session, if any (an open chain's last attempt): a
	// pattern with that error is a confident match.
	RecentSignatures []string `json:"recent_signatures,omitempty"`
}

// Warning is one known failure pattern that matches the attempt, with its
// fix. It is advice: the caller never blocks on it.
type Warning struct {
	PatternID  string  `json:"pattern_id"`
	SkillID    string  `json:"skill_id"`
	ErrorType  string  `json:"error_type"`
	Condition  string  `json:"condition"`
	Fix        string  `json:"fix"`
	Confidence float64 `json:"confidence"`
	// Message is the text to show the agent.
	Message string `json:"message"`
	// Reasons list why it matched.
	Reasons []string `json:"reasons"`
}

// SessionWarnings is the per-session rate-limit state of the check: a plain
// value to persist between hook calls.
type SessionWarnings struct {
	Count  int      `json:"count"`
	Warned []string `json:"warned,omitempty"`
}

// PatternIndex indexes failure patterns for the check; build it once per
// set of patterns (NewPatternIndex) and reuse it across checks.
type PatternIndex struct {
	patterns []FailurePattern
	args     []map[string]bool // per pattern, its argument set
	bySkill  map[string][]int
	byFamily map[string][]int
	bySig    map[string][]int
}

// NewPatternIndex indexes patterns by skill, command family and signature.
// Invalid patterns are skipped.
func NewPatternIndex(patterns []FailurePattern) *PatternIndex {
	ix := &PatternIndex{bySkill: map[string][]int{}, byFamily: map[string][]int{}, bySig: map[string][]int{}}
	for _, p := range patterns {
		if p.Validate() != nil {
			continue
		}
		i := len(ix.patterns)
		ix.patterns = append(ix.patterns, clonePattern(p))
		args := make(map[string]bool, len(p.Args))
		for _, a := range p.Args {
			args[a] = true
		}
		ix.args = append(ix.args, args)
		ix.bySkill[p.SkillID] = append(ix.bySkill[p.SkillID], i)
		if p.Family != "" {
			ix.byFamily[p.Family] = append(ix.byFamily[p.Family], i)
		}
		for _, s := range p.Signatures {
			ix.bySig[s] = append(ix.bySig[s], i)
		}
	}
	return ix
}

// Len returns the number of indexed patterns.
func (ix *PatternIndex) Len() int { return len(ix.patterns) }

// BySignature returns the patterns whose signatures include any of sigs.
func (ix *PatternIndex) BySignature(sigs []string) []FailurePattern {
	seen := map[int]bool{}
	var out []FailurePattern
	for _, s := range sigs {
		for _, i := range ix.bySig[s] {
			if !seen[i] {
				seen[i] = true
				out = append(out, clonePattern(ix.patterns[i]))
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Check matches an attempt against the known failure patterns of its
// skill and command family and returns the warnings to show, with the new
// session state. It warns only on a confident match, always with a fix:
//
//	confidence = (0.5 + 0.3·args + 0.2·context) · f/(f+1)
//
// where args is the Jaccard similarity of the command's arguments with the
// pattern's (1 when both have none, 0.5 when one side has none), context
// the share of the pattern's condition context the attempt shares, and f
// the pattern's frequency; a pattern whose error is the one the attempt's
// chain just failed with has confidence 0.95. A pattern needs a suggested
// fix, a weight at or above WeightFloor and confidence at or above
// MinConfidence. At most MaxWarningsPerCheck warnings (highest
// confidence × weight first), at most MaxWarningsPerSession per session,
// and with NoRepeat never the same pattern twice in a session.
func (ix *PatternIndex) Check(q CheckQuery, sess SessionWarnings, cfg CheckConfig) ([]Warning, SessionWarnings) {
	if ix == nil || sess.Count >= cfg.MaxWarningsPerSession {
		return nil, sess
	}
	cmd, err := ParseCommand(q.Command)
	if err != nil {
		return nil, sess
	}
	skill := q.SkillID
	if skill == "" {
		skill = "cmd:" + cmd.Family
	}
	type cand struct {
		i              int
		conf, score    float64
		errMatch       bool
		argSim, ctxSim float64
	}
	var cands []cand
	qargs := make(map[string]bool, len(cmd.Args))
	for _, a := range cmd.Args {
		qargs[a] = true
	}
	seen := make([]bool, len(ix.patterns))
	consider := func(i int) {
		if seen[i] {
			return
		}
		seen[i] = true
		p := &ix.patterns[i]
		if p.SuggestedFix == "" || p.Weight < cfg.WeightFloor {
			return
		}
		if cfg.NoRepeat && contains(sess.Warned, p.ID) {
			return
		}
		c := cand{i: i}
		for _, s := range q.RecentSignatures {
			if contains(p.Signatures, s) {
				c.errMatch = true
				break
			}
		}
		if c.errMatch {
			c.conf = 0.95
		} else {
			c.argSim = setSimilarity(qargs, ix.args[i])
			c.ctxSim = contextShare(q.Context, p.Context)
			f := float64(p.Frequency)
			c.conf = (0.5 + 0.3*c.argSim + 0.2*c.ctxSim) * f / (f + 1)
			c.conf = math.Round(c.conf*1e9) / 1e9 // exact at the thresholds
		}
		if c.conf < cfg.MinConfidence {
			return
		}
		c.score = c.conf * p.Weight
		cands = append(cands, c)
	}
	for _, i := range ix.bySkill[skill] {
		consider(i)
	}
	for _, i := range ix.byFamily[cmd.Family] {
		consider(i)
	}
	sort.Slice(cands, func(a, b int) bool {
		if cands[a].score != cands[b].score {
			return cands[a].score > cands[b].score
		}
		return ix.patterns[cands[a].i].ID < ix.patterns[cands[b].i].ID
	})
	var out []Warning
	next := SessionWarnings{Count: sess.Count, Warned: append([]string(nil), sess.Warned...)}
	for _, c := range cands {
		if len(out) >= cfg.MaxWarningsPerCheck || next.Count >= cfg.MaxWarningsPerSession {
			break
		}
		p := &ix.patterns[c.i]
		why := "the last attempt failed with this pattern's error"
		if !c.errMatch {
			why = fmt.Sprintf("same %s; arguments %.2f, context %.2f, seen %d time(s)", skillOrFamily(p), c.argSim, c.ctxSim, p.Frequency)
		}
		out = append(out, Warning{
			PatternID: p.ID, SkillID: p.SkillID, ErrorType: p.ErrorType, Condition: p.Condition, Fix: p.SuggestedFix,
			Confidence: math.Round(c.conf*1000) / 1000, Reasons: []string{why},
			Message: fmt.Sprintf("Known failure (seen %d×, last %s): %s. Known fix: %s",
				p.Frequency, p.LastOccurred.UTC().Format("2006-01-02"), p.Condition, p.SuggestedFix),
		})
		next.Count++
		next.Warned = append(next.Warned, p.ID)
	}
	sort.Strings(next.Warned)
	return out, next
}

func skillOrFamily(p *FailurePattern) string {
	if p.Family != "" {
		return "command family `" + p.Family + "`"
	}
	return "skill " + p.SkillID
}

// setSimilarity is the Jaccard similarity of two argument sets, 1 when
// both are empty and 0.5 when only one is.
func setSimilarity(a, b map[string]bool) float64 {
	switch {
	case len(a) == 0 && len(b) == 0:
		return 1
	case len(a) == 0 || len(b) == 0:
		return 0.5
	}
	return jaccard(a, b)
}

func contextShare(q, p map[string]string) float64 {
	if len(p) == 0 {
		return 1
	}
	n := 0
	for k, v := range p {
		if qv, ok := q[k]; ok && strings.TrimSuffix(qv, "/") == strings.TrimSuffix(v, "/") {
			n++
		}
	}
	return float64(n) / float64(len(p))
}

// Warns reports whether the pattern's weight still lets it warn.
func (p *FailurePattern) Warns(cfg CheckConfig) bool { return p.Weight >= cfg.WeightFloor }

// LearnFromWarnedAttempt updates a pattern after an attempt it warned
// about: success raises its weight by HelpedDelta (up to WeightMax); a
// failure with the pattern's error lowers it by MisledDelta, a failure with
// another error by MisledDelta·OtherErrorFactor (not below 0), like a
// heuristic that misled. Below WeightFloor the pattern stops warning.
func LearnFromWarnedAttempt(p FailurePattern, a Attempt, cfg CheckConfig) FailurePattern {
	p = clonePattern(p)
	p.Warnings++
	if a.Success {
		p.Helped++
		p.Weight = math.Round(math.Min(cfg.WeightMax, p.Weight+cfg.HelpedDelta)*1e9) / 1e9
		return p
	}
	p.Misled++
	same := false
	for _, s := range a.Signatures {
		if contains(p.Signatures, s) {
			same = true
			break
		}
	}
	d := cfg.MisledDelta
	if !same {
		d *= cfg.OtherErrorFactor
	}
	p.Weight = math.Max(0, p.Weight-d)
	// round away float noise so repeated updates stay comparable
	p.Weight = math.Round(p.Weight*1e9) / 1e9
	return p
}
