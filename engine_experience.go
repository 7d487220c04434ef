package kaizen

import (
	"context"
	"io"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/veccache"
	"github.com/kaizenhq/kaizen/model"
)

// Engine actions of the experience system (seed 001): capture, signals, experiences, heuristics, recall, skills: each delegates to its service.

// HasChatModel reports whether a chat model is configured for extraction.
func (e *Engine) HasChatModel() bool {
	return e.experience.HasChatModel()
}

// EmbedderID names the embedder of the experience system's vectors.
func (e *Engine) EmbedderID() string {
	return e.experience.EmbedderID()
}

// MergeJudgeStats counts the model calls of the heuristic writer's merge
// judge ([experience.merge] judge), its fallbacks to the classifier and
// the verdicts the vetoes overruled, since the engine opened.
func (e *Engine) MergeJudgeStats() MergeJudgeStats {
	return e.experience.MergeJudgeStats()
}

// Embedder returns the embedder of the experience system's vectors.
func (e *Engine) Embedder() model.Embedder {
	return e.experience.Embedder()
}

// VectorIndexStats reports the vector cache's loads and catch-ups since the
// engine opened.
func (e *Engine) VectorIndexStats() veccache.Stats {
	return e.experience.VectorIndexStats()
}

// WarmVectorIndexes loads the vector index of every project's items of
// every kind, so that no recall pays for loading one; a daemon runs it in
// the background after opening. It stops at the first error or when ctx
// ends, and reports the number of indexes loaded.
func (e *Engine) WarmVectorIndexes(ctx context.Context) (int, error) {
	return e.experience.WarmVectorIndexes(ctx)
}

// GenerateSkill writes (or upgrades) a skill from a task's experience with
// the chat model. Without one, the agent can do it: ExtractionRequest with
// kind "skill".
func (e *Engine) GenerateSkill(ctx context.Context, in SkillGenerateInput) (*SkillResult, error) {
	return e.experience.GenerateSkill(ctx, in)
}

// SetSkillStatus moves a skill through draft → active → archived (an
// archived skill may be reactivated). Only active skills are recalled.
func (e *Engine) SetSkillStatus(ctx context.Context, in SkillStatusInput) (*SkillResult, error) {
	return e.experience.SetSkillStatus(ctx, in)
}

// ListSkills lists skills by name.
func (e *Engine) ListSkills(ctx context.Context, q SkillQuery) (*SkillList, error) {
	return e.experience.ListSkills(ctx, q)
}

// GetSkill returns a skill (by id or name) with its versions and the
// heuristics it adopted.
func (e *Engine) GetSkill(ctx context.Context, project, ref string) (*SkillDetail, error) {
	return e.experience.GetSkill(ctx, project, ref)
}

// ExportSkills writes a skill bundle (kaizen-skill-bundle v1): the skills
// with their versions and adopted heuristics.
func (e *Engine) ExportSkills(ctx context.Context, w io.Writer, in SkillExportInput) (*SkillExportResult, error) {
	return e.experience.ExportSkills(ctx, w, in)
}

// ImportSkills imports a skill bundle: skills whose name the project
// already has are skipped (import is idempotent), heuristics are added
// when their id is new, and every imported item is indexed for recall.
func (e *Engine) ImportSkills(ctx context.Context, r io.Reader, in SkillImportInput) (*SkillImportResult, error) {
	return e.experience.ImportSkills(ctx, r, in)
}

// Capture stores turns of a task's conversation: the material feedback
// signals, task experiences and memories are made of. User and assistant
// turns become recallable memories (full text and vector).
func (e *Engine) Capture(ctx context.Context, in CaptureInput) (*CaptureResult, error) {
	return e.experience.Capture(ctx, in)
}

// ListTurns lists captured turns, oldest first.
func (e *Engine) ListTurns(ctx context.Context, q TurnQuery) (*TurnList, error) {
	return e.experience.ListTurns(ctx, q)
}

// ExtractSignals finds the feedback signals of a task's captured
// conversation, by the chat model or by the bilingual rules, and stores
// them (replacing the task's earlier signals of that extractor).
func (e *Engine) ExtractSignals(ctx context.Context, in SignalsInput) (*SignalsResult, error) {
	return e.experience.ExtractSignals(ctx, in)
}

// ListSignals lists stored feedback signals.
func (e *Engine) ListSignals(ctx context.Context, q SignalQuery) (*SignalList, error) {
	return e.experience.ListSignals(ctx, q)
}

// ExtractExperience extracts what a finished task teaches: goal, success
// criteria, failed attempts, the working approach, and transferable
// heuristics, which are merged into the heuristic store. Extraction is
// cached per task: asking again returns the stored experience without a
// model call. Without a chat model (or in minimal mode) only rule-based
// signals are extracted; the calling agent can still provide the
// experience through ExtractionRequest and SubmitExtraction.
func (e *Engine) ExtractExperience(ctx context.Context, in ExperienceInput) (*ExperienceResult, error) {
	return e.experience.ExtractExperience(ctx, in)
}

// ExtractionRequest returns what the calling agent needs to extract a
// task's signals, experience or skill itself: instructions, the JSON
// schema, and the transcript. The agent then calls SubmitExtraction.
func (e *Engine) ExtractionRequest(ctx context.Context, in ExtractionRequestInput) (*experience.AgentTask, error) {
	return e.experience.ExtractionRequest(ctx, in)
}

// SubmitExtraction validates and stores what the calling agent extracted
// (signals, an experience with its heuristics, or a skill).
func (e *Engine) SubmitExtraction(ctx context.Context, in ExtractionSubmitInput) (*ExtractionSubmitResult, error) {
	return e.experience.SubmitExtraction(ctx, in)
}

// GetExperience returns a task's stored experience.
func (e *Engine) GetExperience(ctx context.Context, project, taskID string) (*experience.TaskExperience, error) {
	return e.experience.GetExperience(ctx, project, taskID)
}

// ListExperiences lists stored task experiences, newest first.
func (e *Engine) ListExperiences(ctx context.Context, q ExperienceQuery) (*ExperienceList, error) {
	return e.experience.ListExperiences(ctx, q)
}

// ListHeuristics lists heuristics.
func (e *Engine) ListHeuristics(ctx context.Context, q HeuristicQuery) (*HeuristicList, error) {
	return e.experience.ListHeuristics(ctx, q)
}

// GetHeuristic returns a heuristic with its evidence, supporting tasks,
// verdicts and recent recalls.
func (e *Engine) GetHeuristic(ctx context.Context, project, id string) (*HeuristicDetail, error) {
	return e.experience.GetHeuristic(ctx, project, id)
}

// HeuristicFeedback records a verdict on a heuristic (usually on a recall
// that showed it). Verdicts drive the lifecycle: a run of misleading
// verdicts makes a heuristic stale; a helpful one revalidates it.
func (e *Engine) HeuristicFeedback(ctx context.Context, in HeuristicFeedbackInput) (*HeuristicActionResult, error) {
	return e.experience.HeuristicFeedback(ctx, in)
}

// HeuristicAction archives, marks outdated, supersedes or restores a
// heuristic.
func (e *Engine) HeuristicAction(ctx context.Context, in HeuristicActionInput) (*HeuristicActionResult, error) {
	return e.experience.HeuristicAction(ctx, in)
}

// Recall retrieves heuristics, skills and memories for a query: full text
// and vectors fused by reciprocal rank; heuristics scored by the seed's
// three factors (topic similarity, trigger match with the live signals of
// the task's recent turns, quality weight); then the unified filter and
// the context budget. The rendered text frames everything as evidence to
// weigh, not instructions. The recall is stored (for feedback) unless
// DryRun.
func (e *Engine) Recall(ctx context.Context, in RecallInput) (*RecallResult, error) {
	return e.experience.Recall(ctx, in)
}

// Reembed computes the vectors every recallable item lacks for the current
// embedder (all of them after a change of embedder), in every project or
// in one. It is resumable: an interrupted run continues where it stopped.
func (e *Engine) Reembed(ctx context.Context, project string) (*ReembedResult, error) {
	return e.experience.Reembed(ctx, project)
}

// ListRecalls lists stored recalls, newest first.
func (e *Engine) ListRecalls(ctx context.Context, q RecallQuery) (*RecallList, error) {
	return e.experience.ListRecalls(ctx, q)
}

// GetRecall returns a stored recall.
func (e *Engine) GetRecall(ctx context.Context, project, id string) (*experience.RecallEvent, error) {
	return e.experience.GetRecall(ctx, project, id)
}

// SettleRecalls waits until every recall event written behind its answer
// (recall.sync_writes off, the default) is stored. The engine's own reads
// of recalls do it; call it before reading them from Store directly.
func (e *Engine) SettleRecalls() { e.experience.SettleRecalls() }
