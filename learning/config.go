package learning

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Locale selects the language of generated texts that the seed defines in
// both languages (anti-pattern prefix and inversion reason).
type Locale string

// Supported locales.
const (
	LocaleEN Locale = "en"
	LocaleZH Locale = "zh"
)

// Config holds every threshold of the seed's learningConfig, antiPatternConfig
// and maturityConfig. Zero values are not defaults: start from DefaultConfig.
type Config struct {
	// HalfLifeDays is the half-life of criterion feedback (seed: 90).
	HalfLifeDays float64 `toml:"half_life_days" json:"half_life_days"`
	// MinFeedbackForAdjustment is the minimum number of helpful+harmful
	// events before a criterion can be deprecated (seed: 3).
	MinFeedbackForAdjustment int `toml:"min_feedback_for_adjustment" json:"min_feedback_for_adjustment"`
	// MaxHarmfulRatio: a criterion whose harmful ratio exceeds it is
	// deprecated (seed: 0.3, strict inequality).
	MaxHarmfulRatio float64 `toml:"max_harmful_ratio" json:"max_harmful_ratio"`
	// FastCompletionThresholdMs: durations strictly below are fast (seed: 300000).
	FastCompletionThresholdMs int64 `toml:"fast_completion_threshold_ms" json:"fast_completion_threshold_ms"`
	// SlowCompletionThresholdMs: durations strictly above are slow (seed: 1800000).
	SlowCompletionThresholdMs int64 `toml:"slow_completion_threshold_ms" json:"slow_completion_threshold_ms"`
	// MaxErrorsForHelpful is the upper bound of the middle error bucket
	// (seed: 2; 0 errors score 1.0, 1..2 score 0.6, more score 0.2).
	MaxErrorsForHelpful int `toml:"max_errors_for_helpful" json:"max_errors_for_helpful"`
	// HelpfulThreshold: raw scores at or above are helpful (seed: 0.7).
	HelpfulThreshold float64 `toml:"helpful_threshold" json:"helpful_threshold"`
	// HarmfulThreshold: raw scores at or below are harmful (seed: 0.4).
	HarmfulThreshold float64 `toml:"harmful_threshold" json:"harmful_threshold"`
	// DefaultCriteria are judged when an outcome names none.
	DefaultCriteria []string `toml:"default_criteria" json:"default_criteria"`
	// MaxExampleTasks bounds the example task ids kept per pattern (newest first).
	MaxExampleTasks int `toml:"max_example_tasks" json:"max_example_tasks"`
	// Locale selects the language of the anti-pattern prefix and reasons.
	Locale Locale `toml:"locale" json:"locale"`

	AntiPattern AntiPatternConfig `toml:"anti_pattern" json:"anti_pattern"`
	Maturity    MaturityConfig    `toml:"maturity" json:"maturity"`

	// Ranking is the ranking policy of plan guidance: "thompson" (the
	// default), "bayes" or "seed" (see Rankings and docs/learning.md).
	Ranking string `toml:"ranking" json:"ranking"`
	// Context tunes the task-conditioned ranking of thompson and bayes.
	Context ContextConfig `toml:"context" json:"context"`
	// HarmfulWeight is how a harmful criterion event weighs: "raw" (the
	// seed: its raw score, so a harmful event of 0.3 adds 0.3 to the
	// harmful sum) or "strength" (1 − raw: the more harmful, the more it
	// weighs).
	HarmfulWeight string `toml:"harmful_weight" json:"harmful_weight"`
	// AntiPatternRecovery, when true (the default), lets an inverted
	// pattern come back: once the uses since its inversion no longer meet
	// the seed's inversion rule, the anti-pattern is withdrawn and the
	// pattern starts a new evaluation (a new generation).
	AntiPatternRecovery bool `toml:"anti_pattern_recovery" json:"anti_pattern_recovery"`
}

// AntiPatternConfig is the seed's antiPatternConfig.
type AntiPatternConfig struct {
	// MinObservations before a pattern may be inverted (seed: 3).
	MinObservations int `toml:"min_observations" json:"min_observations"`
	// FailureRatioThreshold: failure/total at or above inverts (seed: 0.6).
	FailureRatioThreshold float64 `toml:"failure_ratio_threshold" json:"failure_ratio_threshold"`
	// Prefix of anti-pattern content. Empty means the locale's default
	// ("AVOID: " in English, "避免:" in Chinese).
	Prefix string `toml:"prefix" json:"prefix"`
}

// MaturityConfig is the seed's maturityConfig.
type MaturityConfig struct {
	// MinFeedback is the decayed helpful+harmful total needed to leave
	// candidate (seed: 3).
	MinFeedback float64 `toml:"min_feedback" json:"min_feedback"`
	// MinHelpful is the decayed helpful total needed for proven (seed: 5).
	MinHelpful float64 `toml:"min_helpful" json:"min_helpful"`
	// MaxHarmful: proven requires a harmful ratio strictly below it (seed: 0.15).
	MaxHarmful float64 `toml:"max_harmful" json:"max_harmful"`
	// DeprecationThreshold: a harmful ratio strictly above it deprecates
	// (seed: 0.3).
	DeprecationThreshold float64 `toml:"deprecation_threshold" json:"deprecation_threshold"`
	// HalfLifeDays of maturity feedback (seed: 90).
	HalfLifeDays float64 `toml:"half_life_days" json:"half_life_days"`
	// Epsilon is the tolerance applied to the count thresholds, so that a
	// few hours of decay do not keep 5 fresh helpful events from proven
	// (the peer uses 0.01: 2.99 events count as 3, 4.99 as 5).
	Epsilon float64 `toml:"epsilon" json:"epsilon"`
}

// DefaultCriteria are the criteria judged when an outcome names none.
var DefaultCriteria = []string{"type_safe", "no_bugs", "patterns", "readable"}

// DefaultConfig returns the seed's defaults.
func DefaultConfig() Config {
	return Config{
		HalfLifeDays:              90,
		MinFeedbackForAdjustment:  3,
		MaxHarmfulRatio:           0.3,
		FastCompletionThresholdMs: 300_000,
		SlowCompletionThresholdMs: 1_800_000,
		MaxErrorsForHelpful:       2,
		HelpfulThreshold:          0.7,
		HarmfulThreshold:          0.4,
		DefaultCriteria:           append([]string(nil), DefaultCriteria...),
		MaxExampleTasks:           10,
		Locale:                    LocaleEN,
		AntiPattern: AntiPatternConfig{
			MinObservations:       3,
			FailureRatioThreshold: 0.6,
		},
		Maturity: MaturityConfig{
			MinFeedback:          3,
			MinHelpful:           5,
			MaxHarmful:           0.15,
			DeprecationThreshold: 0.3,
			HalfLifeDays:         90,
			Epsilon:              0.01,
		},
		Ranking:             RankingThompson,
		Context:             DefaultContextConfig(),
		HarmfulWeight:       "raw",
		AntiPatternRecovery: true,
	}
}

// ConfigError reports an invalid configuration value.
type ConfigError struct {
	Key    string
	Value  any
	Reason string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("invalid learning config %s=%v: %s", e.Key, e.Value, e.Reason)
}

// Validate reports the first invalid value. A half-life must be positive
// (the peer silently substitutes one day for ≤ 0; we refuse it).
func (c Config) Validate() error {
	positive := func(key string, v float64) error {
		if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
			return &ConfigError{key, v, "must be a finite number > 0"}
		}
		return nil
	}
	ratio := func(key string, v float64) error {
		if math.IsNaN(v) || v < 0 || v > 1 {
			return &ConfigError{key, v, "must be a ratio in [0, 1]"}
		}
		return nil
	}
	checks := []error{
		positive("half_life_days", c.HalfLifeDays),
		positive("maturity.half_life_days", c.Maturity.HalfLifeDays),
		ratio("max_harmful_ratio", c.MaxHarmfulRatio),
		ratio("helpful_threshold", c.HelpfulThreshold),
		ratio("harmful_threshold", c.HarmfulThreshold),
		ratio("anti_pattern.failure_ratio_threshold", c.AntiPattern.FailureRatioThreshold),
		ratio("maturity.max_harmful", c.Maturity.MaxHarmful),
		ratio("maturity.deprecation_threshold", c.Maturity.DeprecationThreshold),
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	switch {
	case c.MinFeedbackForAdjustment < 0:
		return &ConfigError{"min_feedback_for_adjustment", c.MinFeedbackForAdjustment, "must be >= 0"}
	case c.FastCompletionThresholdMs < 0:
		return &ConfigError{"fast_completion_threshold_ms", c.FastCompletionThresholdMs, "must be >= 0"}
	case c.SlowCompletionThresholdMs < c.FastCompletionThresholdMs:
		return &ConfigError{"slow_completion_threshold_ms", c.SlowCompletionThresholdMs, "must be >= fast_completion_threshold_ms"}
	case c.MaxErrorsForHelpful < 0:
		return &ConfigError{"max_errors_for_helpful", c.MaxErrorsForHelpful, "must be >= 0"}
	case c.HarmfulThreshold >= c.HelpfulThreshold:
		return &ConfigError{"harmful_threshold", c.HarmfulThreshold, "must be below helpful_threshold"}
	case c.MaxExampleTasks < 0:
		return &ConfigError{"max_example_tasks", c.MaxExampleTasks, "must be >= 0"}
	case c.Locale != LocaleEN && c.Locale != LocaleZH:
		return &ConfigError{"locale", c.Locale, `must be "en" or "zh"`}
	case c.AntiPattern.MinObservations < 1:
		return &ConfigError{"anti_pattern.min_observations", c.AntiPattern.MinObservations, "must be >= 1"}
	case c.Maturity.MinFeedback < 0 || math.IsNaN(c.Maturity.MinFeedback):
		return &ConfigError{"maturity.min_feedback", c.Maturity.MinFeedback, "must be >= 0"}
	case c.Maturity.MinHelpful < 0 || math.IsNaN(c.Maturity.MinHelpful):
		return &ConfigError{"maturity.min_helpful", c.Maturity.MinHelpful, "must be >= 0"}
	case c.Maturity.Epsilon < 0 || c.Maturity.Epsilon >= 1 || math.IsNaN(c.Maturity.Epsilon):
		return &ConfigError{"maturity.epsilon", c.Maturity.Epsilon, "must be in [0, 1)"}
	case !slices.Contains(Rankings, c.Ranking):
		return &ConfigError{"ranking", c.Ranking, "must be one of " + strings.Join(Rankings, ", ")}
	case c.HarmfulWeight != "raw" && c.HarmfulWeight != "strength":
		return &ConfigError{"harmful_weight", c.HarmfulWeight, `must be "raw" (the seed) or "strength"`}
	}
	if err := c.Context.validate(); err != nil {
		return err
	}
	for _, name := range c.DefaultCriteria {
		if err := ValidateName("default_criteria", name); err != nil {
			return &ConfigError{"default_criteria", name, err.Error()}
		}
	}
	return nil
}

// AntiPatternPrefix is the prefix in effect: the configured one, else the
// locale's default.
func (c Config) AntiPatternPrefix() string {
	if c.AntiPattern.Prefix != "" {
		return c.AntiPattern.Prefix
	}
	if c.Locale == LocaleZH {
		return "避免:"
	}
	return "AVOID: "
}

// ValidateName checks an identifier-like name (criterion, tag): non-empty,
// at most 128 bytes, no control characters or surrounding spaces.
func ValidateName(field, s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%s must not be empty", field)
	case len(s) > 128:
		return fmt.Errorf("%s is longer than 128 bytes", field)
	case strings.TrimSpace(s) != s:
		return fmt.Errorf("%s %q has surrounding spaces", field, s)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%s %q contains a control character", field, s)
		}
	}
	return nil
}
