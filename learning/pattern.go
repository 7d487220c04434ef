package learning

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
)

// PatternKind distinguishes a pattern from an anti-pattern.
type PatternKind string

// Pattern kinds of the seed.
const (
	KindPattern     PatternKind = "pattern"
	KindAntiPattern PatternKind = "anti_pattern"
)

// Pattern is a decomposition pattern (the seed's DecompositionPattern).
// SuccessCount and FailureCount count its uses (MaturityFeedback.Success)
// of the current generation. An inverted pattern points to its anti-pattern; an
// anti-pattern points back to its source.
type Pattern struct {
	ID            string      `json:"id"`
	Project       string      `json:"project"`
	Content       string      `json:"content"`
	Kind          PatternKind `json:"kind"`
	IsNegative    bool        `json:"is_negative"`
	SuccessCount  int64       `json:"success_count"`
	FailureCount  int64       `json:"failure_count"`
	Tags          []string    `json:"tags"`
	ExampleTasks  []string    `json:"example_beads"`
	Reason        string      `json:"reason,omitempty"`
	SourceID      string      `json:"source_id,omitempty"`
	AntiPatternID string      `json:"anti_pattern_id,omitempty"`
	Generation    int64       `json:"generation"`
	CreatedAt     time.Time   `json:"created_at"`
	UpdatedAt     time.Time   `json:"updated_at"`
}

// Observations is the number of observations of the current generation.
func (p Pattern) Observations() int64 { return p.SuccessCount + p.FailureCount }

// ContentKey normalises pattern content for exact lookups: case-folded,
// inner whitespace collapsed, surrounding spaces and trailing periods removed.
func ContentKey(content string) string {
	s := strings.Join(strings.FieldsFunc(strings.ToLower(content), unicode.IsSpace), " ")
	return strings.TrimRight(s, ".。")
}

// Observe folds a use of the pattern of the current generation into it:
// success and failure counts and the newest-first list of example task ids
// (unique, at most limit).
func (p *Pattern) Observe(o MaturityFeedback, limit int) {
	if o.Generation != p.Generation {
		return
	}
	if o.Success {
		p.SuccessCount++
	} else {
		p.FailureCount++
	}
	if o.TaskID != "" && limit > 0 {
		ex := slices.DeleteFunc(slices.Clone(p.ExampleTasks), func(s string) bool { return s == o.TaskID })
		ex = append([]string{o.TaskID}, ex...)
		if len(ex) > limit {
			ex = ex[:limit]
		}
		p.ExampleTasks = ex
	}
}

// ShouldInvert is the seed's inversion rule: not already an anti-pattern, at
// least MinObservations observations, and failure/total at or above the
// threshold.
func (c Config) ShouldInvert(p Pattern) bool {
	total := p.Observations()
	if p.Kind == KindAntiPattern || total == 0 || total < int64(c.AntiPattern.MinObservations) {
		return false
	}
	return float64(p.FailureCount)/float64(total) >= c.AntiPattern.FailureRatioThreshold
}

// InversionReason is the seed's reason text, "Failed 5/7 times (71% failure
// rate)", or its Chinese form under LocaleZH.
func (c Config) InversionReason(failures, total int64) string {
	pct := 0.0
	if total > 0 {
		pct = math.Round(float64(failures) / float64(total) * 100)
	}
	if c.Locale == LocaleZH {
		return fmt.Sprintf("失败%d/%d次(%.0f%%失败率)", failures, total, pct)
	}
	return fmt.Sprintf("Failed %d/%d times (%.0f%% failure rate)", failures, total, pct)
}

// AntiPatternID derives the anti-pattern id of a pattern id in the seed's
// shape: "pattern-123" becomes "anti-pattern-123".
func AntiPatternID(id string) string { return "anti-" + id }

var negativePrefixes = []string{"avoid:", "do not:", "never:", "避免:", "避免："}

// stripNegative removes a leading negative marker and trailing periods.
func stripNegative(content string) string {
	s := strings.TrimSpace(content)
	for changed := true; changed; {
		changed = false
		for _, p := range negativePrefixes {
			if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
				s, changed = strings.TrimSpace(s[len(p):]), true
			}
		}
	}
	return strings.TrimRight(s, ".。 ")
}

// AntiPatternContent is "<prefix><content>. <reason>" (or "。" in Chinese),
// without the peer's double period when the content already ends in one.
func (c Config) AntiPatternContent(content, reason string) string {
	sep := ". "
	if c.Locale == LocaleZH {
		sep = "。"
	}
	return c.AntiPatternPrefix() + stripNegative(content) + sep + reason
}

// Inversion describes a pattern turned into an anti-pattern.
type Inversion struct {
	Original Pattern `json:"original"`
	Inverted Pattern `json:"inverted"`
	Reason   string  `json:"reason"`
	// New is false when an existing anti-pattern was refreshed.
	New bool `json:"new"`
}

// Invert builds (or refreshes) the anti-pattern of p at now. existing is the
// current anti-pattern, or nil. It does not check ShouldInvert.
func (c Config) Invert(p Pattern, existing *Pattern, now time.Time) Inversion {
	reason := c.InversionReason(p.FailureCount, p.Observations())
	anti := Pattern{
		ID:         AntiPatternID(p.ID),
		Project:    p.Project,
		CreatedAt:  now,
		Generation: p.Generation,
	}
	if existing != nil {
		anti = *existing
	}
	anti.Content = c.AntiPatternContent(p.Content, reason)
	anti.Kind = KindAntiPattern
	anti.IsNegative = true
	anti.SuccessCount, anti.FailureCount = p.SuccessCount, p.FailureCount
	anti.Tags = slices.Clone(p.Tags)
	anti.ExampleTasks = slices.Clone(p.ExampleTasks)
	anti.Reason = reason
	anti.SourceID = p.ID
	anti.UpdatedAt = now
	orig := p
	orig.AntiPatternID = anti.ID
	return Inversion{Original: orig, Inverted: anti, Reason: reason, New: existing == nil}
}
