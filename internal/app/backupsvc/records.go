// Package backupsvc exports projects as JSONL and imports such files:
// backups, sharing learned patterns between projects, git-friendly
// snapshots. An export holds every record kaizen keeps — the learning
// system's patterns, maturity, observations, outcomes, errors and tracked
// tasks; exploration settings and sessions; the experience system's
// turns, signals, task experiences, heuristics with their evidence,
// support and verdicts, recalls, skills and skill versions; failure
// learning's traces, failure patterns, skill statistics and reviews
// (trace.go); the team engine's teams, tasks, messages with their
// deliveries, events, pattern runs and run events (team.go). Derived data
// (aggregates, full-text documents, vectors, SKILL.md files) is rebuilt on
// import by the subsystems that own it. Imports are idempotent (records
// keep their ids) and run in one transaction.
package backupsvc

import (
	"encoding/json"
	"time"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/internal/app/experiencesvc"
	"github.com/kaizenhq/kaizen/internal/app/learningsvc"
)

// ExportFormat identifies kaizen's JSONL export.
const ExportFormat = "kaizen-export"

// exportVersion is bumped when record shapes change incompatibly. Version
// 2 added every record type after "error"; version 1 files still import.
const exportVersion = 2

// Record types of the export, in the order they are written for each
// project (dependencies first). Derived data is not exported: criterion
// feedback events are the outcomes' (learning.FeedbackEvents), and every
// aggregate (pattern counts, maturity sums, criteria) is rebuilt from the
// events on import; full-text documents and vectors are rebuilt from the
// items.
const (
	recHeader            = "header"
	recPattern           = "pattern"
	recMaturity          = "maturity"
	recMaturityFeedback  = "maturity_feedback"
	recOutcome           = "outcome"
	recError             = "error"
	recTask              = "task"
	recExploreSettings   = "explore_settings"
	recExploreSession    = "explore_session"
	recTurn              = "turn"
	recSignal            = "signal"
	recExperience        = "experience"
	recHeuristic         = "heuristic"
	recHeuristicEvidence = "heuristic_evidence"
	recHeuristicSupport  = "heuristic_support"
	recHeuristicFeedback = "heuristic_feedback"
	recRecall            = "recall"
	recSkill             = "skill"
	recSkillVersion      = "skill_version"
)

// RecordTypes lists the record types of an export in file order.
var RecordTypes = []string{recPattern, recMaturity, recMaturityFeedback, recOutcome, recError, recTask,
	recExploreSettings, recExploreSession, recTurn, recSignal, recExperience, recHeuristic, recHeuristicEvidence,
	recHeuristicSupport, recHeuristicFeedback, recRecall, recSkill, recSkillVersion}

type exportLine struct {
	Type   string          `json:"type"`
	Record json.RawMessage `json:"record"`
}

type exportHeader struct {
	Format     string    `json:"format"`
	Version    int       `json:"version"`
	ExportedAt time.Time `json:"exported_at"`
	Projects   []string  `json:"projects"`
	Kaizen     string    `json:"kaizen"`
}

// exploreSettingsRecord is a project's exploration settings.
type exploreSettingsRecord struct {
	Project  string          `json:"project"`
	Settings json.RawMessage `json:"settings"`
}

// supportRecord is one task supporting a heuristic.
type supportRecord struct {
	Project     string    `json:"project"`
	HeuristicID string    `json:"heuristic_id"`
	TaskID      string    `json:"bead_id"`
	At          time.Time `json:"at"`
}

// ExportOptions selects what to export.
type ExportOptions struct {
	// Projects to export; empty means the engine's default project.
	Projects []string `json:"projects,omitempty"`
	// All exports every project.
	All bool `json:"all,omitempty"`
	// Progress, when set, is called with the number of records written so
	// far (every 1,000 records and at the end).
	Progress func(records int) `json:"-"`
}

// ExportResult counts exported records by type.
type ExportResult struct {
	Projects []string       `json:"projects"`
	Records  map[string]int `json:"records"`
}

// ImportOptions control an import.
type ImportOptions struct {
	// Project, when set, receives every record (sharing learned patterns
	// into another project); otherwise records keep their own project.
	Project string `json:"project,omitempty"`
	// Progress, when set, is called with the number of lines read and the
	// number in the file (every 1,000 lines and at the end).
	Progress func(done, total int) `json:"-"`
}

// ImportCount is the number of records of one type inserted and skipped
// (already present).
type ImportCount struct {
	Inserted int `json:"inserted"`
	Skipped  int `json:"skipped"`
}

// ImportResult reports an import.
type ImportResult struct {
	Projects []string               `json:"projects"`
	Records  map[string]ImportCount `json:"records"`
	// Remapped counts imported patterns merged into an existing pattern of
	// the same content under another id.
	Remapped int `json:"remapped"`
}

// Service runs exports and imports.
type Service struct {
	env        *app.Env
	learning   *learningsvc.Service
	experience *experiencesvc.Service
	version    string
}

// New returns the backup service; version is written in export headers.
func New(env *app.Env, learning *learningsvc.Service, experience *experiencesvc.Service, version string) *Service {
	return &Service{env: env, learning: learning, experience: experience, version: version}
}

// progressEvery is how often progress is reported, in records.
const progressEvery = 1000
