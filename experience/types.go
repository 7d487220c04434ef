package experience

import "time"

// Role is who produced a captured turn.
type Role string

// Roles of captured turns.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
	RoleSystem    Role = "system"
)

// Roles lists the valid roles.
var Roles = []Role{RoleUser, RoleAssistant, RoleTool, RoleSystem}

// Turn is one captured message of an agent conversation, in a task.
type Turn struct {
	// ID is kaizen's id of the turn (turn-<ulid>).
	ID      string `json:"id"`
	Project string `json:"project"`
	// TaskID is the task (bead id, or the client session's task id) the
	// turn belongs to.
	TaskID string `json:"bead_id"`
	// TurnID is the client's id of the exchange the message belongs to
	// (a user prompt and its answer share it); signals cite it.
	TurnID  string `json:"turn_id"`
	Role    Role   `json:"role"`
	Content string `json:"content"`
	// Source names the reporting client (claude, codex, cli, mcp…).
	Source string    `json:"source,omitempty"`
	Time   time.Time `json:"time"`
	// Seq orders turns of the same Time in capture order (increasing
	// across the captures of an engine); 0 for turns stored before it
	// existed. Listings order by Time, Seq, ID.
	Seq int64 `json:"seq,omitempty"`
}

// SignalType is the kind of a feedback signal (seed 001).
type SignalType string

// Feedback signal types.
const (
	SignalReject     SignalType = "reject"     // the user rejects the approach or output
	SignalCorrection SignalType = "correction" // the user corrects the agent's work
	SignalConstraint SignalType = "constraint" // the user adds a requirement
	SignalSuccess    SignalType = "success"    // the user confirms it works
	SignalConfusion  SignalType = "confusion"  // the user is confused or asks why
	SignalPreference SignalType = "preference" // the user states a preference
)

// SignalTypes lists the signal types in the seed's order.
var SignalTypes = []SignalType{SignalReject, SignalCorrection, SignalConstraint, SignalSuccess, SignalConfusion, SignalPreference}

// SignalSource is where a feedback signal comes from.
type SignalSource string

// Feedback signal sources.
const (
	SourceUser      SignalSource = "user"                 // a user message
	SourceExecution SignalSource = "execution"            // errors, test failures, runtime output
	SourceSelfCheck SignalSource = "assistant_self_check" // the assistant finds a problem in its own work
)

// SignalSources lists the signal sources.
var SignalSources = []SignalSource{SourceUser, SourceExecution, SourceSelfCheck}

// Extractor names what produced an extraction.
type Extractor string

// Extractors.
const (
	ExtractorRules Extractor = "rules" // the bilingual rule-based detectors (no model)
	ExtractorLLM   Extractor = "llm"   // a configured chat model
	ExtractorAgent Extractor = "agent" // the calling agent (agent-as-extractor MCP flow)
	// ExtractorPostMortem: a team's post-mortem (CP-10): the improvement
	// actions its members agreed on, as heuristics.
	ExtractorPostMortem Extractor = "post-mortem"
)

// MinSignalConfidence is the seed's floor: signals below it are dropped.
const MinSignalConfidence = 0.5

// FeedbackSignal is a supervision signal found in a task's conversation.
type FeedbackSignal struct {
	ID       string       `json:"id"`
	Project  string       `json:"project"`
	TaskID   string       `json:"bead_id"`
	Type     SignalType   `json:"type"`
	Source   SignalSource `json:"source"`
	Evidence string       `json:"evidence"`
	// TurnID is the turn the signal appears in ("" when unknown).
	TurnID     string    `json:"turn_id"`
	Confidence float64   `json:"confidence"`
	Extractor  Extractor `json:"extractor"`
	CreatedAt  time.Time `json:"created_at"`
}

// HeuristicKind is what a heuristic asks of the agent.
type HeuristicKind string

// Heuristic kinds.
const (
	KindAvoid   HeuristicKind = "avoid"   // something not to do, backed by a real failure
	KindPrefer  HeuristicKind = "prefer"  // a better approach found by trial and error
	KindVerify  HeuristicKind = "verify"  // a check that prevents a known failure
	KindClarify HeuristicKind = "clarify" // a question to ask early
)

// HeuristicKinds lists the kinds.
var HeuristicKinds = []HeuristicKind{KindAvoid, KindPrefer, KindVerify, KindClarify}

// TransferableHeuristic is a lesson an experience proposes, before it is
// merged into the heuristic store.
type TransferableHeuristic struct {
	Kind     HeuristicKind `json:"kind"`
	Trigger  string        `json:"trigger"`
	Rule     string        `json:"rule"`
	Why      string        `json:"why"`
	Evidence string        `json:"evidence"`
}

// FailedAttempt is an approach of a task that did not work.
type FailedAttempt struct {
	Label         string `json:"attempt_label"`
	Approach      string `json:"approach_summary"`
	FailureReason string `json:"failure_reason"`
	// ReplacedBy is what replaced it ("" when nothing did).
	ReplacedBy string `json:"replaced_by,omitempty"`
}

// Mode is how much model work experience extraction may spend.
type Mode string

// Experience extraction modes (seed 001): the number of LLM calls per task.
const (
	ModeMinimal  Mode = "minimal"  // 0 calls: no experience; rule-based signals only
	ModeBalanced Mode = "balanced" // 1 call: the experience with inline signals (default)
	ModeFull     Mode = "full"     // 2 calls: signals first, then the experience
)

// Modes lists the modes.
var Modes = []Mode{ModeMinimal, ModeBalanced, ModeFull}

// LLMCalls is the number of model calls a mode makes per task.
func (m Mode) LLMCalls() int {
	switch m {
	case ModeBalanced:
		return 1
	case ModeFull:
		return 2
	}
	return 0
}

// TaskExperience is what a finished task teaches. It is extracted once per
// task and cached: extracting again returns the cached one.
type TaskExperience struct {
	Project         string                  `json:"project"`
	TaskID          string                  `json:"bead_id"`
	Goal            string                  `json:"goal"`
	SuccessCriteria []string                `json:"success_criteria"`
	FailedAttempts  []FailedAttempt         `json:"failed_attempts"`
	WorkingApproach string                  `json:"working_approach"`
	Heuristics      []TransferableHeuristic `json:"transferable_heuristics"`
	// Signals are the feedback signals the extraction used or produced.
	Signals   []FeedbackSignal `json:"feedback_signals"`
	Mode      Mode             `json:"mode"`
	Extractor Extractor        `json:"extractor"`
	// Calls is the number of model calls the extraction made.
	Calls     int       `json:"llm_calls"`
	CreatedAt time.Time `json:"created_at"`
}

// HeuristicStatus is a heuristic's lifecycle state:
// candidate → active → refined → stale → archived.
type HeuristicStatus string

// Heuristic states.
const (
	StatusCandidate HeuristicStatus = "candidate" // newly extracted, not yet supported enough
	StatusActive    HeuristicStatus = "active"    // supported by several tasks and evidence
	StatusRefined   HeuristicStatus = "refined"   // active and confirmed again by later experience
	StatusStale     HeuristicStatus = "stale"     // misleading, superseded or outdated: not recalled
	StatusArchived  HeuristicStatus = "archived"  // retired; kept for history
)

// HeuristicStatuses lists the states in lifecycle order.
var HeuristicStatuses = []HeuristicStatus{StatusCandidate, StatusActive, StatusRefined, StatusStale, StatusArchived}

// Heuristic is a stored, deduplicated lesson with its own lifecycle.
type Heuristic struct {
	ID      string          `json:"id"` // heur-<ulid>
	Project string          `json:"project"`
	Kind    HeuristicKind   `json:"kind"`
	Trigger string          `json:"trigger"`
	Rule    string          `json:"rule"`
	Why     string          `json:"why"`
	Status  HeuristicStatus `json:"status"`
	// StatusReason says why the status last changed (promotion rule,
	// misleading feedback, superseded by …, outdated, manual …).
	StatusReason string `json:"status_reason,omitempty"`
	// SupportTasks counts the distinct tasks whose experience produced or
	// confirmed the heuristic; EvidenceCount counts its evidence records.
	SupportTasks  int64 `json:"support_task_count"`
	EvidenceCount int64 `json:"evidence_count"`
	// Recall feedback: verdicts on recalls, and the current run of
	// consecutive "misleading" verdicts.
	HelpfulCount     int64 `json:"helpful_count"`
	MisleadingCount  int64 `json:"misleading_count"`
	MisleadingStreak int64 `json:"misleading_streak"`
	RecallCount      int64 `json:"recall_count"`
	// SupersededBy is the heuristic that replaced this one.
	SupersededBy string `json:"superseded_by,omitempty"`
	// SourceTaskID is the task whose experience created it.
	SourceTaskID    string     `json:"source_task_id,omitempty"`
	LastRecalledAt  *time.Time `json:"last_recalled_at,omitempty"`
	LastValidatedAt *time.Time `json:"last_validated_at,omitempty"`
	CreatedAt       time.Time  `json:"created_at"`
	UpdatedAt       time.Time  `json:"updated_at"`
}

// EvidenceAction is how an evidence record joined a heuristic.
type EvidenceAction string

// Evidence actions (the merge decision of a new candidate).
const (
	EvidenceCreated EvidenceAction = "created"  // the candidate created the heuristic
	EvidenceUpdated EvidenceAction = "updated"  // a near duplicate (≥ update threshold) updated it
	EvidenceAppend  EvidenceAction = "appended" // a related candidate (≥ append threshold) added evidence
	EvidenceManual  EvidenceAction = "manual"   // added by a user
)

// HeuristicEvidence is one piece of evidence of a heuristic.
type HeuristicEvidence struct {
	ID          string         `json:"id"`
	Project     string         `json:"project"`
	HeuristicID string         `json:"heuristic_id"`
	TaskID      string         `json:"bead_id,omitempty"`
	Action      EvidenceAction `json:"action"`
	// Text is the candidate's evidence (a quote), with its rule when the
	// candidate's wording differed.
	Text string `json:"text"`
	// Similarity is the candidate's cosine similarity to the heuristic
	// (1 for created and manual).
	Similarity float64   `json:"similarity"`
	CreatedAt  time.Time `json:"created_at"`
}

// Verdict is a judgement of a recalled heuristic.
type Verdict string

// Verdicts.
const (
	VerdictHelpful    Verdict = "helpful"
	VerdictMisleading Verdict = "misleading"
)

// HeuristicFeedback is a verdict on a heuristic, usually on one recall.
type HeuristicFeedback struct {
	ID          string  `json:"id"`
	Project     string  `json:"project"`
	HeuristicID string  `json:"heuristic_id"`
	RecallID    string  `json:"recall_id,omitempty"`
	TaskID      string  `json:"bead_id,omitempty"`
	Verdict     Verdict `json:"verdict"`
	Note        string  `json:"note,omitempty"`
	// Source names who judged (agent, user, cli…).
	Source    string    `json:"source,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// LiveSignal is a sign, in the recent turns of a conversation, that a
// heuristic may apply now (seed 001).
type LiveSignal string

// Live interaction signals.
const (
	LiveUserDissatisfaction   LiveSignal = "userDissatisfaction"
	LiveConstraintRestatement LiveSignal = "constraintRestatement"
	LiveRepeatedFailure       LiveSignal = "repeatedFailure"
	LiveAcceptanceUnclear     LiveSignal = "acceptanceUnclear"
	LiveSameErrorRepeated     LiveSignal = "sameErrorRepeated"
)

// LiveSignals lists the live signals in the seed's order.
var LiveSignals = []LiveSignal{LiveUserDissatisfaction, LiveConstraintRestatement, LiveRepeatedFailure,
	LiveAcceptanceUnclear, LiveSameErrorRepeated}

// SkillStatus is a skill's lifecycle state: draft → active → archived.
type SkillStatus string

// Skill states.
const (
	SkillDraft    SkillStatus = "draft"
	SkillActive   SkillStatus = "active"
	SkillArchived SkillStatus = "archived"
)

// SkillStatuses lists the skill states.
var SkillStatuses = []SkillStatus{SkillDraft, SkillActive, SkillArchived}

// Skill is a verified, reusable way of doing something: a SKILL.md
// document (name, description, when to use, steps) with versions.
type Skill struct {
	ID      string `json:"id"` // skill-<ulid>
	Project string `json:"project"`
	// Name is the sanitised, unique (per project) kebab-case name; it is
	// also the skill's directory name under the data directory.
	Name        string      `json:"name"`
	Description string      `json:"description"`
	WhenToUse   string      `json:"when_to_use"`
	Steps       []string    `json:"steps"`
	Status      SkillStatus `json:"status"`
	Version     int         `json:"version"`
	// Content is the current SKILL.md document.
	Content      string    `json:"content"`
	SourceTaskID string    `json:"source_task_id,omitempty"`
	HeuristicIDs []string  `json:"heuristic_ids"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// SkillVersion is one stored version of a skill's document.
type SkillVersion struct {
	Project      string    `json:"project"`
	SkillID      string    `json:"skill_id"`
	Version      int       `json:"version"`
	Content      string    `json:"content"`
	Changelog    string    `json:"changelog,omitempty"`
	SourceTaskID string    `json:"source_task_id,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
}

// ItemKind is the kind of a recallable item.
type ItemKind string

// Recallable item kinds.
const (
	ItemHeuristic ItemKind = "heuristic"
	ItemSkill     ItemKind = "skill"
	ItemMemory    ItemKind = "memory" // a captured turn
)

// ItemKinds lists the recallable kinds in injection order.
var ItemKinds = []ItemKind{ItemHeuristic, ItemSkill, ItemMemory}

// RecallItem is one candidate of a recall, scored.
type RecallItem struct {
	Kind  ItemKind `json:"kind"`
	RefID string   `json:"ref_id"`
	// Score is the item's final score; for heuristics the seed's three
	// factors are given too.
	Score   float64 `json:"score"`
	Topic   float64 `json:"topic,omitempty"`
	Trigger float64 `json:"trigger,omitempty"`
	Quality float64 `json:"quality,omitempty"`
	// Injected is true for the items that passed the filter and the
	// context budget.
	Injected bool `json:"injected"`
}

// RecallEvent is a stored recall: what was asked, in which live
// situation, and what was considered and injected.
type RecallEvent struct {
	ID          string       `json:"id"` // recall-<ulid>
	Project     string       `json:"project"`
	TaskID      string       `json:"bead_id,omitempty"`
	Query       string       `json:"query"`
	LiveSignals []LiveSignal `json:"live_signals"`
	Items       []RecallItem `json:"items"`
	CreatedAt   time.Time    `json:"created_at"`
}
