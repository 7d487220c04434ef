package team

import (
	"math"
	"time"
)

// Config holds every number of the seed's collaboration patterns. Zero
// values are not defaults: start from DefaultConfig. A run copies the config
// it started with, so a later change never alters a run under way.
type Config struct {
	Pipeline    PipelineConfig    `json:"pipeline"`
	ReviewFix   ReviewFixConfig   `json:"review_fix"`
	FanOut      FanOutConfig      `json:"fan_out"`
	Consensus   ConsensusConfig   `json:"consensus"`
	Escalation  EscalationConfig  `json:"escalation"`
	Incremental IncrementalConfig `json:"incremental"`
	Swarm       SwarmConfig       `json:"swarm"`
	Consult     ConsultConfig     `json:"consult"`
	DualTrack   DualTrackConfig   `json:"dual_track"`
	PostMortem  PostMortemConfig  `json:"post_mortem"`
}

// PipelineConfig is CP-1's.
type PipelineConfig struct {
	// PlanMaxRejections: at this many rejected plans the coordinator plans
	// itself (seed: "Plan 拒绝 3+ 次", 3).
	PlanMaxRejections int `json:"plan_max_rejections"`
	// TestPassRate: a test run passes at or above it (seed: 95 %, 0.95).
	TestPassRate float64 `json:"test_pass_rate"`
	// MaxIterations: verification rounds (test + review) before the user is
	// asked (seed: "超过 5 次迭代", 5).
	MaxIterations int `json:"max_iterations"`
}

// ReviewFixConfig is CP-2's.
type ReviewFixConfig struct {
	// MaxRounds: reviews before escalation to the user (seed: 5).
	MaxRounds int `json:"max_rounds"`
	// NoImprovementRounds: consecutive rounds whose findings do not decrease
	// before the loop stops and asks the user (seed: 2).
	NoImprovementRounds int `json:"no_improvement_rounds"`
}

// FanOutConfig is CP-3's.
type FanOutConfig struct {
	// QuorumRatio of workers that must finish (seed: 1.0).
	QuorumRatio float64 `json:"quorum_ratio"`
	// Timeout of the fan-out, then aggregate what arrived (seed: 5 min).
	Timeout time.Duration `json:"timeout"`
	// IntersectionMin: workers that must report a finding for the
	// intersection strategy to keep it (ours: 2, capped by the results received).
	IntersectionMin int `json:"intersection_min"`
	// WeightedThreshold: share of total weight a finding needs under the
	// weighted strategy (ours: 0.5).
	WeightedThreshold float64 `json:"weighted_threshold"`
}

// ConsensusConfig is CP-4's.
type ConsensusConfig struct {
	// ApprovalRatio: approvals / votes needed (seed: 0.67; note 2 of 3 is
	// 0.667 and does not pass).
	ApprovalRatio float64 `json:"approval_ratio"`
	// MaxRounds of voting before the user decides (seed: 2).
	MaxRounds int `json:"max_rounds"`
	// Timeout of a round (seed: 5 min).
	Timeout time.Duration `json:"timeout"`
	// Extensions: extra periods granted per round when fewer than N/2 votes
	// arrived (seed: "延长截止时间 1 轮", 1).
	Extensions int `json:"extensions"`
}

// EscalationConfig is CP-5's.
type EscalationConfig struct {
	// MaxAttempts per level L0..L3 (seed: 2, 1, 1, 1).
	MaxAttempts [4]int `json:"max_attempts"`
	// UserTimeout: how long L3 waits before the most conservative option is
	// taken as a WORKAROUND (the seed gives no number; ours: 30 min; 0 waits
	// forever).
	UserTimeout time.Duration `json:"user_timeout"`
}

// IncrementalConfig is CP-6's.
type IncrementalConfig struct {
	// MaxRetries of an increment whose gate failed before it is rolled
	// back and blocked (seed: "每个增量最多 3 次重试" / "增量重试 3 次仍失败",
	// 3): an increment gets 1 + MaxRetries attempts.
	MaxRetries int `json:"max_retries"`
	// MaxBlockedRatio: more blocked increments than this share stops delivery
	// (seed: "超过半数", 0.5, strict).
	MaxBlockedRatio float64 `json:"max_blocked_ratio"`
	// TaskTimeout: per-task timeout; an increment times out after its task
	// count × TaskTimeout (seed formula; 0 disables).
	TaskTimeout time.Duration `json:"task_timeout"`
}

// SwarmConfig is CP-7's.
type SwarmConfig struct {
	// MaxRounds of diagnosis (seed: 2).
	MaxRounds int `json:"max_rounds"`
	// Timeout of a diagnosis round, then the best diagnosis is used (seed: 10 min).
	Timeout time.Duration `json:"timeout"`
}

// ConsultConfig is CP-8's.
type ConsultConfig struct {
	// ApplyConfidence: advice at or above it is applied (seed: 0.8).
	ApplyConfidence float64 `json:"apply_confidence"`
	// Timeouts by urgency (seed: blocking 2 min, normal 5 min, low none = 0).
	TimeoutBlocking time.Duration `json:"timeout_blocking"`
	TimeoutNormal   time.Duration `json:"timeout_normal"`
	TimeoutLow      time.Duration `json:"timeout_low"`
	// MaxFollowUps after the main consultation (seed: 1).
	MaxFollowUps int `json:"max_follow_ups"`
}

// DualTrackConfig is CP-9's.
type DualTrackConfig struct {
	// SyncWait: how long the first track at a sync point waits (seed: 5 min).
	SyncWait time.Duration `json:"sync_wait"`
	// MaxAlignAttempts per sync point before degrading to CP-1 (seed: 2).
	MaxAlignAttempts int `json:"max_align_attempts"`
}

// PostMortemConfig is CP-10's.
type PostMortemConfig struct {
	// RetroTimeout for retrospectives (seed: 3 min).
	RetroTimeout time.Duration `json:"retro_timeout"`
}

// DefaultConfig returns the seed's numbers.
func DefaultConfig() Config {
	return Config{
		Pipeline:    PipelineConfig{PlanMaxRejections: 3, TestPassRate: 0.95, MaxIterations: 5},
		ReviewFix:   ReviewFixConfig{MaxRounds: 5, NoImprovementRounds: 2},
		FanOut:      FanOutConfig{QuorumRatio: 1.0, Timeout: 5 * time.Minute, IntersectionMin: 2, WeightedThreshold: 0.5},
		Consensus:   ConsensusConfig{ApprovalRatio: 0.67, MaxRounds: 2, Timeout: 5 * time.Minute, Extensions: 1},
		Escalation:  EscalationConfig{MaxAttempts: [4]int{2, 1, 1, 1}, UserTimeout: 30 * time.Minute},
		Incremental: IncrementalConfig{MaxRetries: 3, MaxBlockedRatio: 0.5},
		Swarm:       SwarmConfig{MaxRounds: 2, Timeout: 10 * time.Minute},
		Consult:     ConsultConfig{ApplyConfidence: 0.8, TimeoutBlocking: 2 * time.Minute, TimeoutNormal: 5 * time.Minute, MaxFollowUps: 1},
		DualTrack:   DualTrackConfig{SyncWait: 5 * time.Minute, MaxAlignAttempts: 2},
		PostMortem:  PostMortemConfig{RetroTimeout: 3 * time.Minute},
	}
}

// Validate checks every value's range.
func (c Config) Validate() error {
	const op = "validate team config"
	counts := []struct {
		name string
		v    int
		min  int
	}{
		{"pipeline.plan_max_rejections", c.Pipeline.PlanMaxRejections, 1},
		{"pipeline.max_iterations", c.Pipeline.MaxIterations, 1},
		{"review_fix.max_rounds", c.ReviewFix.MaxRounds, 1},
		{"review_fix.no_improvement_rounds", c.ReviewFix.NoImprovementRounds, 1},
		{"fan_out.intersection_min", c.FanOut.IntersectionMin, 1},
		{"consensus.max_rounds", c.Consensus.MaxRounds, 1},
		{"consensus.extensions", c.Consensus.Extensions, 0},
		{"incremental.max_retries", c.Incremental.MaxRetries, 0},
		{"swarm.max_rounds", c.Swarm.MaxRounds, 1},
		{"consult.max_follow_ups", c.Consult.MaxFollowUps, 0},
		{"dual_track.max_align_attempts", c.DualTrack.MaxAlignAttempts, 1},
	}
	for _, x := range counts {
		if x.v < x.min || x.v > 100 {
			return invalid(op, x.name, "%d is outside %d..100", x.v, x.min)
		}
	}
	for i, a := range c.Escalation.MaxAttempts {
		if a < 1 || a > 100 {
			return invalid(op, "escalation.max_attempts", "level %d: %d is outside 1..100", i, a)
		}
	}
	ratios := []struct {
		name string
		v    float64
	}{
		{"pipeline.test_pass_rate", c.Pipeline.TestPassRate},
		{"fan_out.quorum_ratio", c.FanOut.QuorumRatio},
		{"fan_out.weighted_threshold", c.FanOut.WeightedThreshold},
		{"consensus.approval_ratio", c.Consensus.ApprovalRatio},
		{"incremental.max_blocked_ratio", c.Incremental.MaxBlockedRatio},
		{"consult.apply_confidence", c.Consult.ApplyConfidence},
	}
	for _, x := range ratios {
		if math.IsNaN(x.v) || x.v <= 0 || x.v > 1 {
			return invalid(op, x.name, "%v is outside (0, 1]", x.v)
		}
	}
	durations := []struct {
		name     string
		v        time.Duration
		required bool
	}{
		{"fan_out.timeout", c.FanOut.Timeout, true},
		{"consensus.timeout", c.Consensus.Timeout, true},
		{"escalation.user_timeout", c.Escalation.UserTimeout, false},
		{"incremental.task_timeout", c.Incremental.TaskTimeout, false},
		{"swarm.timeout", c.Swarm.Timeout, true},
		{"consult.timeout_blocking", c.Consult.TimeoutBlocking, false},
		{"consult.timeout_normal", c.Consult.TimeoutNormal, false},
		{"consult.timeout_low", c.Consult.TimeoutLow, false},
		{"dual_track.sync_wait", c.DualTrack.SyncWait, true},
		{"post_mortem.retro_timeout", c.PostMortem.RetroTimeout, true},
	}
	for _, x := range durations {
		if x.v < 0 || (x.required && x.v == 0) || x.v > 30*24*time.Hour {
			return invalid(op, x.name, "%s is outside the allowed range (positive%s, at most 30 days)", x.v, map[bool]string{true: "", false: " or 0 for none"}[x.required])
		}
	}
	return nil
}
