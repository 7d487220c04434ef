package kaizen

import (
	"io"

	"github.com/kaizenhq/kaizen/explore"
	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/internal/app/backupsvc"
	"github.com/kaizenhq/kaizen/internal/app/digestsvc"
	"github.com/kaizenhq/kaizen/internal/app/experiencesvc"
	"github.com/kaizenhq/kaizen/internal/app/exploresvc"
	"github.com/kaizenhq/kaizen/internal/app/jobsvc"
	"github.com/kaizenhq/kaizen/internal/app/learningsvc"
	"github.com/kaizenhq/kaizen/internal/jobs"
	"github.com/kaizenhq/kaizen/internal/veccache"
	"github.com/kaizenhq/kaizen/learning"
)

// The facade's public types are the services' types: the inputs and
// results of every Engine method. They are aliases, so a value built
// here is the value a service takes.

// Types of learningsvc.
type (
	ErrorInput         = learningsvc.ErrorInput
	ErrorContextResult = learningsvc.ErrorContextResult
	ErrorQuery         = learningsvc.ErrorQuery
	ErrorList          = learningsvc.ErrorList
	OutcomeInput       = learningsvc.OutcomeInput
	OutcomeResult      = learningsvc.OutcomeResult
	OutcomeQuery       = learningsvc.OutcomeQuery
	OutcomeList        = learningsvc.OutcomeList
	ObserveInput       = learningsvc.ObserveInput
	ObservationResult  = learningsvc.ObservationResult
	PatternInfo        = learningsvc.PatternInfo
	PatternQuery       = learningsvc.PatternQuery
	PatternList        = learningsvc.PatternList
	PatternDetail      = learningsvc.PatternDetail
	ManualInput        = learningsvc.ManualInput
	ManualResult       = learningsvc.ManualResult
	CriterionList      = learningsvc.CriterionList
	PatternUpdate      = learningsvc.PatternUpdate
	AntiPatternRef     = learningsvc.AntiPatternRef
	PlanInput          = learningsvc.PlanInput
	RebuildResult      = learningsvc.RebuildResult
	DayCount           = learningsvc.DayCount
	TaskEventInput     = learningsvc.TaskEventInput
	CloseTaskInput     = learningsvc.CloseTaskInput
	CloseTaskResult    = learningsvc.CloseTaskResult
	CloseIdleInput     = learningsvc.CloseIdleInput
	CloseIdleResult    = learningsvc.CloseIdleResult
	TaskInfo           = learningsvc.TaskInfo
	TaskEventResult    = learningsvc.TaskEventResult
	TaskQuery          = learningsvc.TaskQuery
	TaskList           = learningsvc.TaskList
)

// Types of experiencesvc.
type (
	TurnInput              = experiencesvc.TurnInput
	CaptureInput           = experiencesvc.CaptureInput
	CaptureResult          = experiencesvc.CaptureResult
	TurnQuery              = experiencesvc.TurnQuery
	TurnList               = experiencesvc.TurnList
	SignalsInput           = experiencesvc.SignalsInput
	SignalsResult          = experiencesvc.SignalsResult
	SignalQuery            = experiencesvc.SignalQuery
	SignalList             = experiencesvc.SignalList
	ExperienceInput        = experiencesvc.ExperienceInput
	ExperienceResult       = experiencesvc.ExperienceResult
	HeuristicChange        = experiencesvc.HeuristicChange
	MergeJudgeStats        = experiencesvc.MergeJudgeStats
	ExtractionRequestInput = experiencesvc.ExtractionRequestInput
	ExtractionSubmitInput  = experiencesvc.ExtractionSubmitInput
	ExtractionSubmitResult = experiencesvc.ExtractionSubmitResult
	ExperienceQuery        = experiencesvc.ExperienceQuery
	ExperienceList         = experiencesvc.ExperienceList
	HeuristicQuery         = experiencesvc.HeuristicQuery
	HeuristicList          = experiencesvc.HeuristicList
	HeuristicDetail        = experiencesvc.HeuristicDetail
	HeuristicFeedbackInput = experiencesvc.HeuristicFeedbackInput
	HeuristicActionResult  = experiencesvc.HeuristicActionResult
	HeuristicActionInput   = experiencesvc.HeuristicActionInput
	RecallInput            = experiencesvc.RecallInput
	RecalledItem           = experiencesvc.RecalledItem
	RecallResult           = experiencesvc.RecallResult
	ReembedResult          = experiencesvc.ReembedResult
	RecallQuery            = experiencesvc.RecallQuery
	RecallList             = experiencesvc.RecallList
	SkillResult            = experiencesvc.SkillResult
	SkillGenerateInput     = experiencesvc.SkillGenerateInput
	SkillStatusInput       = experiencesvc.SkillStatusInput
	SkillQuery             = experiencesvc.SkillQuery
	SkillList              = experiencesvc.SkillList
	SkillDetail            = experiencesvc.SkillDetail
	SkillExportInput       = experiencesvc.SkillExportInput
	SkillExportResult      = experiencesvc.SkillExportResult
	SkillImportInput       = experiencesvc.SkillImportInput
	SkillImportResult      = experiencesvc.SkillImportResult
)

// Types of exploresvc.
type (
	ExploreSettings    = exploresvc.ExploreSettings
	ExploreInfo        = exploresvc.ExploreInfo
	ExploreStartInput  = exploresvc.ExploreStartInput
	ExploreEventInput  = exploresvc.ExploreEventInput
	ExploreEventResult = exploresvc.ExploreEventResult
	ExploreQuery       = exploresvc.ExploreQuery
	ExploreList        = exploresvc.ExploreList
)

// Types of backupsvc.
type (
	ExportOptions = backupsvc.ExportOptions
	ExportResult  = backupsvc.ExportResult
	ImportOptions = backupsvc.ImportOptions
	ImportCount   = backupsvc.ImportCount
	ImportResult  = backupsvc.ImportResult
)

// Error is the engine's error type: what was being done, what went wrong,
// which input field is concerned, and a hint about how to fix it.
type Error = app.Error

// ErrorKind classifies an engine error so every surface can render it the
// same way (CLI exit code, HTTP status, MCP isError).
type ErrorKind = app.ErrorKind

// Error kinds (see app.ErrorKind).
const (
	KindInvalid  = app.KindInvalid
	KindNotFound = app.KindNotFound
	KindConflict = app.KindConflict
	KindInternal = app.KindInternal
)

// Input limits (see package app).
const (
	MaxInputBytes = app.MaxInputBytes
	MaxDurationMs = app.MaxDurationMs
	MaxCount      = app.MaxCount
)

// Defaults of the exploration tracker and the export format.
const (
	DefaultExploreStrategy = exploresvc.DefaultExploreStrategy
	ExportFormat           = backupsvc.ExportFormat
)

// Types of jobsvc (background jobs).
type (
	JobQuery  = jobsvc.JobQuery
	JobList   = jobsvc.JobList
	JobResult = jobsvc.RunResult
	JobStats  = jobs.Stats
)

// HeuristicActions lists the actions HeuristicAction takes.
var HeuristicActions = experiencesvc.HeuristicActions

// VectorIndexStats counts how the cached vector indexes were kept current.
type VectorIndexStats = veccache.Stats

// KindOf returns the kind of an engine error (see app.KindOf).
func KindOf(err error) ErrorKind { return app.KindOf(err) }

// DecodeStrict decodes exactly one JSON value from r into v, rejecting
// unknown fields, trailing data and input over MaxInputBytes.
func DecodeStrict(r io.Reader, v any, op string) error { return app.DecodeStrict(r, v, op) }

// ParseOutcomeInput decodes one outcome input strictly (see
// learningsvc.ParseOutcomeInput).
func ParseOutcomeInput(r io.Reader) (OutcomeInput, error) { return learningsvc.ParseOutcomeInput(r) }

// ExtractPatterns detects the seed's decomposition strategies in a
// description, in English or Chinese. It needs no engine or store.
func ExtractPatterns(description string) ([]learning.Extracted, error) {
	return learningsvc.ExtractPatterns(description)
}

// ExploreReplay runs a recorded agent log through a strategy and returns
// the timeline (nothing is stored).
func ExploreReplay(settings ExploreSettings, events []explore.Event) (*explore.Timeline, error) {
	return exploresvc.ExploreReplay(settings, events)
}

// Types of the data a user owns (forget and edit; see engine_data.go).
type (
	ForgetInput         = app.ForgetInput
	ForgetResult        = experiencesvc.ForgetResult
	HeuristicEditInput  = experiencesvc.HeuristicEditInput
	DeleteOutcomeResult = learningsvc.DeleteOutcomeResult
	ReembedOptions      = experiencesvc.ReembedOptions
	RebuildOptions      = learningsvc.RebuildOptions
)

// Types of digestsvc: what was learned lately, and the projects.
type (
	LearnedQuery       = digestsvc.LearnedQuery
	Learned            = digestsvc.Learned
	PatternChange      = learningsvc.PatternChange
	AntiPatternChange  = learningsvc.AntiPatternChange
	LearnedObservation = learningsvc.Observation
	RateInterval       = learningsvc.RateInterval
	HeuristicLearned   = experiencesvc.HeuristicLearned
	SkillLearned       = experiencesvc.SkillLearned
	ProjectQuery       = digestsvc.ProjectQuery
	ProjectSummary     = digestsvc.ProjectSummary
)
