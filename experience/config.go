package experience

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// Config holds every switch and threshold of the experience system, with
// the seed's defaults (DefaultConfig). It is the [experience] section of
// kaizen.toml.
type Config struct {
	// ExtractionEnabled turns task-experience extraction on
	// (experienceExtractionEnabled, default true).
	ExtractionEnabled bool `toml:"extraction_enabled" json:"extraction_enabled"`
	// HeuristicsEnabled turns the writing of heuristics from experiences on
	// (heuristicEnabled, default true).
	HeuristicsEnabled bool `toml:"heuristics_enabled" json:"heuristics_enabled"`
	// HeuristicRecallEnabled turns heuristic recall on
	// (heuristicRecallEnabled, default true).
	HeuristicRecallEnabled bool `toml:"heuristic_recall_enabled" json:"heuristic_recall_enabled"`
	// Mode is the extraction mode (experienceMode, default balanced).
	Mode Mode `toml:"mode" json:"mode"`
	// AutoExtract lets the daemon (kaizen serve) extract a task's
	// experience in the background after its outcome is recorded, when a
	// chat model is configured, extraction is enabled and the mode is not
	// minimal (default true). One-shot commands never extract on their own.
	AutoExtract bool `toml:"auto_extract" json:"auto_extract"`
	// AutoExtractDelay is the quiet time after a task's last recorded
	// outcome before the daemon extracts its experience, so that a task
	// reporting several outcomes, or whose last turns arrive after its
	// outcome, is read once it has settled (default 30s; 0 or at least 1ms,
	// at most 24h; "30s", "2m" in kaizen.toml and KAIZEN_* variables).
	AutoExtractDelay time.Duration `toml:"auto_extract_delay" json:"auto_extract_delay"`
	// AutoExtractRescan is no longer used: extraction is a durable job
	// queued with the outcome, which every process's runner finds. It is
	// still read (and validated) so that existing configuration files load.
	AutoExtractRescan time.Duration `toml:"auto_extract_rescan" json:"auto_extract_rescan"`
	// RecallTopK is the number of heuristics recall scores for the filter
	// (heuristicRecallTopK, default 3).
	RecallTopK int `toml:"recall_top_k" json:"recall_top_k"`
	// Weights are the three factors of the heuristic recall score
	// (heuristicScoringWeights: 0.45 topic, 0.35 trigger, 0.20 quality).
	Weights Weights `toml:"weights" json:"weights"`
	// Merge holds the dedup/merge thresholds of new heuristic candidates.
	Merge MergeThresholds `toml:"merge" json:"merge"`
	// Recall holds when recall abstains (experience/abstain.go).
	Recall RecallThresholds `toml:"recall" json:"recall"`
	// Lifecycle holds the heuristic promotion and demotion rules.
	Lifecycle Lifecycle `toml:"lifecycle" json:"lifecycle"`
	// Filter holds the limits of what one recall injects.
	Filter Filter `toml:"filter" json:"filter"`
	// MinSignalConfidence drops feedback signals below it (0.5).
	MinSignalConfidence float64 `toml:"min_signal_confidence" json:"min_signal_confidence"`
	// RRFK is the k of reciprocal rank fusion of the full-text and vector
	// channels (60).
	RRFK int `toml:"rrf_k" json:"rrf_k"`
}

// Weights are the factors of the heuristic recall score:
// score = Topic·topic_similarity + Trigger·trigger_signal_similarity + Quality·quality_weight.
type Weights struct {
	Topic   float64 `toml:"topic" json:"topic"`
	Trigger float64 `toml:"trigger" json:"trigger"`
	Quality float64 `toml:"quality" json:"quality"`
}

// MergeThresholds decide what a new heuristic candidate does, by its
// highest cosine similarity s to an existing heuristic: s ≥ Update updates
// that heuristic (evidence and support), Append ≤ s < Update appends
// evidence to it, s < Append creates a new candidate. The seed's values
// (0.85, 0.60) are starting proposals; Calibrated overrides them per
// embedder id (see docs/experience.md for the calibration).
type MergeThresholds struct {
	// Method is how the writer decides: "classifier" (the default) uses
	// the merge classifier fitted for the embedder when one is shipped
	// (MergeClassifierFor; the offline embedder's) and the thresholds
	// otherwise; "threshold" always uses the thresholds
	// (docs/experience.md, "The merge classifier").
	Method string `toml:"method" json:"method,omitempty"`
	// Judge is who labels a new lesson against its nearest heuristics:
	// "classifier" (the default, also when empty) never asks the chat
	// model and decides by Method; "auto" asks the chat model when one is
	// configured (JudgeMerge, one call per lesson with a heuristic near
	// it) and decides by Method otherwise; "model" is "auto" that warns at
	// start when no chat model is configured. On a
	// model failure the writer decides by Method and counts it
	// (docs/experience.md, "The model as merge judge").
	Judge      string                      `toml:"judge" json:"judge,omitempty"`
	Update     float64                     `toml:"update" json:"update"`
	Append     float64                     `toml:"append" json:"append"`
	Calibrated map[string]MergeCalibration `toml:"calibrated" json:"calibrated,omitempty"`
}

// MergeCalibration is a pair of thresholds calibrated for one embedder.
type MergeCalibration struct {
	Update float64 `toml:"update" json:"update"`
	Append float64 `toml:"append" json:"append"`
}

// For returns the thresholds to use with an embedder: its calibration when
// there is one, else Update and Append.
func (m MergeThresholds) For(embedder string) MergeCalibration {
	if c, ok := m.Calibrated[embedder]; ok {
		return c
	}
	return MergeCalibration{Update: m.Update, Append: m.Append}
}

// Lifecycle holds the heuristic state machine's thresholds.
type Lifecycle struct {
	// PromoteSupportTasks and PromoteEvidence: a candidate becomes active
	// when it has support from at least PromoteSupportTasks tasks and at
	// least PromoteEvidence evidence records (2 and 3), or when a skill
	// adopts it.
	PromoteSupportTasks int64 `toml:"promote_support_tasks" json:"promote_support_tasks"`
	PromoteEvidence     int64 `toml:"promote_evidence" json:"promote_evidence"`
	// MisleadingStreak consecutive recalls judged "misleading" make a
	// heuristic stale (3); verdicts on one recall count once.
	MisleadingStreak int64 `toml:"misleading_streak" json:"misleading_streak"`
	// ValidatedWithinDays is the window of the quality weight's "recently
	// validated" bonus (7).
	ValidatedWithinDays float64 `toml:"validated_within_days" json:"validated_within_days"`
}

// Filter holds the limits of one recall's injection: at most MaxMemories
// memories and MaxHeuristics heuristics, MaxTotal of the two together, and
// MaxSkills skills; each kind within its character budget.
type Filter struct {
	MaxMemories    int `toml:"max_memories" json:"max_memories"`
	MaxHeuristics  int `toml:"max_heuristics" json:"max_heuristics"`
	MaxTotal       int `toml:"max_total" json:"max_total"`
	MaxSkills      int `toml:"max_skills" json:"max_skills"`
	HeuristicChars int `toml:"heuristic_chars" json:"heuristic_chars"`
	SkillChars     int `toml:"skill_chars" json:"skill_chars"`
	MemoryChars    int `toml:"memory_chars" json:"memory_chars"`
	// MinScore drops candidates scoring below it before the limits apply.
	MinScore float64 `toml:"min_score" json:"min_score"`
	// UseModel lets the chat model choose among the memory and heuristic
	// candidates (the seed's unified LLM filter, FilterWithModel) when one
	// is configured; the limits above still apply. On by default, as seed
	// 001 has every new feature (each with a switch): without a chat model
	// the rules choose, silently. The call adds the model's latency to
	// every recall, hooks included; set it false to keep recall local. On
	// a model failure the recall falls back to the rules.
	UseModel bool `toml:"use_model" json:"use_model"`
}

// DefaultConfig returns the seed's defaults.
func DefaultConfig() Config {
	return Config{
		ExtractionEnabled:      true,
		HeuristicsEnabled:      true,
		HeuristicRecallEnabled: true,
		Mode:                   ModeBalanced,
		AutoExtract:            true,
		AutoExtractDelay:       DefaultAutoExtractDelay,
		AutoExtractRescan:      DefaultAutoExtractRescan,
		RecallTopK:             3,
		Weights:                Weights{Topic: 0.45, Trigger: 0.35, Quality: 0.20},
		Merge:                  MergeThresholds{Judge: MergeJudgeClassifier, Update: 0.85, Append: 0.60, Calibrated: OfflineMergeCalibration()},
		Recall:                 RecallThresholds{MinTrigger: 0.5, Calibrated: OfflineRecallCalibration(), TopicText: TopicLesson},
		Lifecycle: Lifecycle{PromoteSupportTasks: 2, PromoteEvidence: 3, MisleadingStreak: 3,
			ValidatedWithinDays: 7},
		Filter: Filter{MaxMemories: 3, MaxHeuristics: 2, MaxTotal: 5, MaxSkills: 2,
			HeuristicChars: 900, SkillChars: 600, MemoryChars: 1200, MinScore: 0.2, UseModel: true},
		MinSignalConfidence: MinSignalConfidence,
		RRFK:                60,
	}
}

// DefaultAutoExtractDelay is the default quiet time before background
// extraction (AutoExtractDelay).
const DefaultAutoExtractDelay = 30 * time.Second

// DefaultAutoExtractRescan is the default period of the daemon's look for
// other processes' outcomes (AutoExtractRescan).
const DefaultAutoExtractRescan = time.Minute

// MaxAutoExtractDelay bounds AutoExtractDelay and AutoExtractRescan.
const MaxAutoExtractDelay = 24 * time.Hour

// ConfigError names an invalid configuration field.
type ConfigError struct {
	Field   string
	Message string
}

func (e *ConfigError) Error() string { return "experience." + e.Field + ": " + e.Message }

// Validate reports every invalid field.
func (c Config) Validate() error {
	var errs []error
	bad := func(field, format string, a ...any) {
		errs = append(errs, &ConfigError{Field: field, Message: fmt.Sprintf(format, a...)})
	}
	unit := func(field string, v float64) {
		if math.IsNaN(v) || v < 0 || v > 1 {
			bad(field, "must be between 0 and 1, got %v", v)
		}
	}
	if !slices.Contains(Modes, c.Mode) {
		bad("mode", "unknown mode %q (want minimal, balanced or full)", c.Mode)
	}
	switch d := c.AutoExtractDelay; {
	case d < 0 || d > MaxAutoExtractDelay:
		bad("auto_extract_delay", "must be between 0 and %s, got %s", MaxAutoExtractDelay, d)
	case d > 0 && d < time.Millisecond:
		// A bare TOML integer is read as nanoseconds: 30 would be 30ns.
		bad("auto_extract_delay", "%s is below 1ms: write a duration such as \"30s\" (a bare number is nanoseconds)", d)
	}
	if d := c.AutoExtractRescan; d < time.Millisecond || d > MaxAutoExtractDelay {
		bad("auto_extract_rescan", "must be between 1ms and %s, got %s (write a duration such as \"1m\")", MaxAutoExtractDelay, d)
	}
	if c.RecallTopK < 1 || c.RecallTopK > 100 {
		bad("recall_top_k", "must be between 1 and 100, got %d", c.RecallTopK)
	}
	unit("weights.topic", c.Weights.Topic)
	unit("weights.trigger", c.Weights.Trigger)
	unit("weights.quality", c.Weights.Quality)
	if s := c.Weights.Topic + c.Weights.Trigger + c.Weights.Quality; math.Abs(s-1) > 1e-9 {
		bad("weights", "must sum to 1, got %v", s)
	}
	checkMerge := func(field string, m MergeCalibration) {
		unit(field+".update", m.Update)
		unit(field+".append", m.Append)
		if m.Append > m.Update {
			bad(field, "append (%v) must not exceed update (%v)", m.Append, m.Update)
		}
	}
	checkMerge("merge", MergeCalibration{Update: c.Merge.Update, Append: c.Merge.Append})
	if !slices.Contains(MergeMethods, c.Merge.Method) {
		bad("merge.method", "unknown method %q (want classifier or threshold)", c.Merge.Method)
	}
	if !slices.Contains(MergeJudges, c.Merge.Judge) {
		bad("merge.judge", "unknown judge %q (want auto, model or classifier)", c.Merge.Judge)
	}
	unit("recall.min_topic", c.Recall.MinTopic)
	unit("recall.relative", c.Recall.Relative)
	unit("recall.min_trigger", c.Recall.MinTrigger)
	switch c.Recall.TopicText {
	case "", TopicLesson, TopicStored: // "" is the default, TopicLesson
	default:
		bad("recall.topic_text", "must be %q or %q, got %q", TopicLesson, TopicStored, c.Recall.TopicText)
	}
	for id, r := range c.Recall.Calibrated {
		unit("recall.calibrated."+id+".min_topic", r.MinTopic)
		unit("recall.calibrated."+id+".relative", r.Relative)
		unit("recall.calibrated."+id+".lead", r.Lead)
		unit("recall.calibrated."+id+".lead_floor", r.LeadFloor)
		unit("recall.calibrated."+id+".min_trigger_topic", r.MinTriggerTopic)
		unit("recall.calibrated."+id+".trigger_check_below", r.TriggerCheckBelow)
	}
	for id, m := range c.Merge.Calibrated {
		checkMerge("merge.calibrated."+id, m)
	}
	l := c.Lifecycle
	if l.PromoteSupportTasks < 1 {
		bad("lifecycle.promote_support_tasks", "must be at least 1, got %d", l.PromoteSupportTasks)
	}
	if l.PromoteEvidence < 1 {
		bad("lifecycle.promote_evidence", "must be at least 1, got %d", l.PromoteEvidence)
	}
	if l.MisleadingStreak < 1 {
		bad("lifecycle.misleading_streak", "must be at least 1, got %d", l.MisleadingStreak)
	}
	if math.IsNaN(l.ValidatedWithinDays) || l.ValidatedWithinDays < 0 {
		bad("lifecycle.validated_within_days", "must be >= 0, got %v", l.ValidatedWithinDays)
	}
	f := c.Filter
	for field, v := range map[string]int{"filter.max_memories": f.MaxMemories, "filter.max_heuristics": f.MaxHeuristics,
		"filter.max_total": f.MaxTotal, "filter.max_skills": f.MaxSkills} {
		if v < 0 || v > 50 {
			bad(field, "must be between 0 and 50, got %d", v)
		}
	}
	for field, v := range map[string]int{"filter.heuristic_chars": f.HeuristicChars, "filter.skill_chars": f.SkillChars,
		"filter.memory_chars": f.MemoryChars} {
		if v < 0 || v > 100_000 {
			bad(field, "must be between 0 and 100000, got %d", v)
		}
	}
	unit("filter.min_score", f.MinScore)
	unit("min_signal_confidence", c.MinSignalConfidence)
	if c.RRFK < 1 || c.RRFK > 10_000 {
		bad("rrf_k", "must be between 1 and 10000, got %d", c.RRFK)
	}
	return errors.Join(errs...)
}
