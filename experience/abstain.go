package experience

import (
	"math"
	"strconv"

	"github.com/kaizenhq/kaizen/model"
)

// RecallThresholds decide when recall abstains: what it injects must be
// about the query, or nothing is injected.
//
//   - An item (heuristic, skill or memory) is injected only when its topic
//     similarity (the cosine of the query and the item) reaches MinTopic,
//     or, for a heuristic, when its trigger matches the task's live
//     signals at least as much as MinTrigger.
//   - An item whose topic is below Relative × the best topic of the
//     recall is not injected either: the second-best lesson must be
//     nearly as close as the best, not merely above the floor.
//
// When no item passes, the recall abstains (RecallResult.Abstained) and
// injects nothing. Calibrated overrides MinTopic and Relative per
// embedder id; the values for the offline embedder were learned on the
// dev splits of testdata/recall-eval and testdata/eval
// (internal/recalleval, docs/experience.md). For an embedder without a
// calibration, MinTopic (default 0: no floor) applies, so configure
// recall.min_topic when you switch to a neural embedder.
type RecallThresholds struct {
	MinTopic   float64                      `toml:"min_topic" json:"min_topic"`
	Relative   float64                      `toml:"relative" json:"relative"`
	MinTrigger float64                      `toml:"min_trigger" json:"min_trigger"`
	Calibrated map[string]RecallCalibration `toml:"calibrated" json:"calibrated,omitempty"`
	// ScaleTopic restores the earlier topic scale for embedders with a
	// merge calibration: topic = min(1, cosine / merge update threshold).
	// Off by default: the seed's topic similarity is the cosine.
	ScaleTopic bool `toml:"scale_topic" json:"scale_topic"`
	// SyncWrites stores each recall event (and the recall counts of the
	// heuristics it injected) before the recall answers. Off by default:
	// the event is written right after the answer, off the agent's
	// latency path (a durable commit cost more than the recall itself);
	// the engine's reads of recalls, heuristic feedback and Close wait
	// for the writes in flight.
	SyncWrites bool `toml:"sync_writes" json:"sync_writes"`
	// TopicText is what a heuristic's topic similarity is measured on:
	// TopicLesson ("lesson", the default: the larger of the cosines on
	// trigger, rule and why, embedded at recall time by an in-process
	// embedder, and on the stored vector) or TopicStored
	// ("trigger_rule": the stored vector deduplication uses). With a
	// remote embedder "lesson" falls back to "trigger_rule".
	TopicText string `toml:"topic_text" json:"topic_text"`
}

// RecallCalibration is an abstention calibrated for one embedder.
type RecallCalibration struct {
	MinTopic float64 `toml:"min_topic" json:"min_topic"`
	Relative float64 `toml:"relative" json:"relative"`
	// Lead and LeadFloor let the best item of a recall pass below
	// MinTopic when it stands out: its topic is at least LeadFloor and
	// exceeds the second best topic by at least Lead. A relevant lesson
	// usually stands out from the rest of the store; the best match of a
	// question no lesson answers sits among near-equals. Lead 0 turns the
	// rule off.
	Lead      float64 `toml:"lead" json:"lead,omitempty"`
	LeadFloor float64 `toml:"lead_floor" json:"lead_floor,omitempty"`
	// MinTriggerTopic, when above 0, is a second check for heuristics:
	// the cosine of the query and the heuristic's trigger alone must
	// reach it, whatever the topic (which is measured on the whole
	// lesson). A lesson is relevant when its trigger is the situation the
	// query is about; a same-domain lesson usually reaches the topic floor
	// through words of its rule or why ("copy a file out of a running
	// docker container" and a lesson on image size whose rule runs
	// "docker history"). Live signals matching the trigger (MinTrigger)
	// still inject it. It needs an embedder that runs in process (the
	// trigger is embedded at recall time); with another one it is not
	// applied.
	MinTriggerTopic float64 `toml:"min_trigger_topic" json:"min_trigger_topic,omitempty"`
	// TriggerCheckBelow, when above 0, limits the trigger check to
	// heuristics whose topic is below it: a lesson the query matches
	// strongly as a whole passes (a query restating a lesson in the
	// other language meets its rule through the lexicon even when the
	// trigger's words are missing from it); the check is for the
	// borderline ones.
	TriggerCheckBelow float64 `toml:"trigger_check_below" json:"trigger_check_below,omitempty"`
}

// TriggerPasses reports whether a heuristic of topic similarity topic,
// whose trigger has cosine triggerTopic with the query, passes the
// trigger check (MinTriggerTopic, TriggerCheckBelow).
func (c RecallCalibration) TriggerPasses(topic, triggerTopic float64) bool {
	if c.MinTriggerTopic <= 0 || (c.TriggerCheckBelow > 0 && topic >= c.TriggerCheckBelow) {
		return true
	}
	return triggerTopic >= c.MinTriggerTopic
}

// For returns the abstention to use with an embedder.
func (r RecallThresholds) For(embedder string) RecallCalibration {
	if c, ok := r.Calibrated[embedder]; ok {
		return c
	}
	return RecallCalibration{MinTopic: r.MinTopic, Relative: r.Relative}
}

// Passes reports whether an item of topic similarity topic (and trigger
// similarity trigger, 0 for skills and memories) may be injected in a
// recall whose best and second best topics are best and second.
func (c RecallCalibration) Passes(topic, trigger, best, second, minTrigger float64) bool {
	if math.IsNaN(topic) {
		return false
	}
	if minTrigger > 0 && trigger >= minTrigger {
		return true
	}
	if topic >= c.MinTopic && topic >= c.Relative*best {
		return true
	}
	return c.Lead > 0 && topic >= best && topic >= c.LeadFloor && topic-second >= c.Lead
}

// OfflineRecallCalibration returns the abstention calibrated for the
// offline embedder at its default dimension.
func OfflineRecallCalibration() map[string]RecallCalibration {
	return map[string]RecallCalibration{
		model.OfflineEmbedderName + "@" + strconv.Itoa(model.DefaultOfflineDimension): {MinTopic: 0.55, Relative: 0.5, MinTriggerTopic: 0.5, TriggerCheckBelow: 0.65},
	}
}
