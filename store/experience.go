package store

import (
	"context"
	"errors"
	"math"
	"strings"
	"time"
	"unicode"

	"github.com/kaizenhq/kaizen/experience"
)

// Errors of the experience storage (possibly wrapped; test with errors.Is).
var (
	// ErrInvalid: a record the store refuses, such as an embedding whose
	// Dim is not the length of its vector.
	ErrInvalid = errors.New("invalid record")
	// ErrNameTaken: UpdateSkill would give a skill the name another skill
	// of the project has.
	ErrNameTaken = errors.New("name already taken")
)

// ExperienceStorage persists the experience system (seed 001): captured
// turns, feedback signals, cached task experiences, heuristics with their
// evidence, support and recall feedback, skills with versions, embeddings,
// full-text documents and recall events. Every method is scoped to a
// project. The engine keeps every algorithm (lifecycle, merge decisions,
// scoring); the store persists and retrieves faithfully.
//
// Ids are unique per project: the same id in two projects names two
// records. Listings return non-nil slices (empty when nothing matches), and
// string lists stored nil read back empty. Count* ignore Limit and Offset.
// Any project holding experience data is listed by MetaStorage.Projects.
type ExperienceStorage interface {
	// Turns.

	// InsertTurn stores a captured turn; false when its id exists.
	InsertTurn(ctx context.Context, t experience.Turn) (bool, error)
	GetTurn(ctx context.Context, project, id string) (experience.Turn, error)
	// GetTurns reads the turns of ids that exist, in one batch; missing
	// ids are left out, the order is unspecified.
	GetTurns(ctx context.Context, project string, ids []string) ([]experience.Turn, error)
	// ListTurns returns turns oldest first (Time, then id), or newest first
	// with f.NewestFirst.
	ListTurns(ctx context.Context, project string, f TurnFilter) ([]experience.Turn, error)
	CountTurns(ctx context.Context, project string, f TurnFilter) (int64, error)

	// Feedback signals.

	// InsertSignal stores a signal; false when its id exists.
	InsertSignal(ctx context.Context, s experience.FeedbackSignal) (bool, error)
	// ListSignals returns signals oldest first (CreatedAt, then id).
	ListSignals(ctx context.Context, project string, f SignalFilter) ([]experience.FeedbackSignal, error)
	CountSignals(ctx context.Context, project string, f SignalFilter) (int64, error)
	// DeleteSignals removes a task's signals of one extractor (a
	// re-extraction replaces them) and returns how many it removed.
	DeleteSignals(ctx context.Context, project, taskID string, by experience.Extractor) (int64, error)

	// Task experiences (the per-task extraction cache).

	// InsertExperience stores a task's experience; false (and no change)
	// when the task already has one: extraction is idempotent.
	InsertExperience(ctx context.Context, e experience.TaskExperience) (bool, error)
	GetExperience(ctx context.Context, project, taskID string) (experience.TaskExperience, error)
	// ListExperiences returns experiences newest first (CreatedAt, then
	// task id, descending).
	ListExperiences(ctx context.Context, project string, f PageFilter) ([]experience.TaskExperience, error)
	CountExperiences(ctx context.Context, project string) (int64, error)

	// Heuristics.

	// InsertHeuristic creates a heuristic; false when its id exists.
	InsertHeuristic(ctx context.Context, h experience.Heuristic) (bool, error)
	GetHeuristic(ctx context.Context, project, id string) (experience.Heuristic, error)
	// GetHeuristics reads the heuristics of ids that exist, in one batch;
	// missing ids are left out, the order is unspecified.
	GetHeuristics(ctx context.Context, project string, ids []string) ([]experience.Heuristic, error)
	// LockHeuristic returns a heuristic for update; concurrent transactions
	// locking it are serialised until commit.
	LockHeuristic(ctx context.Context, project, id string) (experience.Heuristic, error)
	// UpdateHeuristic replaces an existing heuristic (ErrNotFound otherwise).
	UpdateHeuristic(ctx context.Context, h experience.Heuristic) error
	// ListHeuristics returns heuristics most recently updated first
	// (UpdatedAt, then id, descending).
	ListHeuristics(ctx context.Context, project string, f HeuristicFilter) ([]experience.Heuristic, error)
	CountHeuristics(ctx context.Context, project string, f HeuristicFilter) (int64, error)
	// EachHeuristic calls fn for every heuristic of the project whose
	// status is in statuses (all when empty), in id order.
	EachHeuristic(ctx context.Context, project string, statuses []experience.HeuristicStatus, fn func(experience.Heuristic) error) error

	// InsertEvidence stores an evidence record; false when its id exists.
	InsertEvidence(ctx context.Context, ev experience.HeuristicEvidence) (bool, error)
	// ListEvidence returns a heuristic's evidence oldest first (CreatedAt,
	// then id).
	ListEvidence(ctx context.Context, project, heuristicID string) ([]experience.HeuristicEvidence, error)
	// AddSupport records that a task supports a heuristic; false when it
	// already did (support counts distinct tasks).
	AddSupport(ctx context.Context, project, heuristicID, taskID string, at time.Time) (bool, error)
	// ListSupport lists the tasks supporting a heuristic with the time
	// given to AddSupport, oldest first (by that time, then task id).
	ListSupport(ctx context.Context, project, heuristicID string) ([]Support, error)

	// InsertHeuristicFeedback stores a verdict; false when its id exists.
	InsertHeuristicFeedback(ctx context.Context, fb experience.HeuristicFeedback) (bool, error)
	// ListHeuristicFeedback returns a heuristic's verdicts oldest first
	// (CreatedAt, then id).
	ListHeuristicFeedback(ctx context.Context, project, heuristicID string) ([]experience.HeuristicFeedback, error)

	// Recall events.

	// InsertRecall stores a recall event; false when its id exists.
	InsertRecall(ctx context.Context, r experience.RecallEvent) (bool, error)
	GetRecall(ctx context.Context, project, id string) (experience.RecallEvent, error)
	// ListRecalls returns recalls newest first (CreatedAt, then id,
	// descending); with f.RefID only those that considered that item.
	ListRecalls(ctx context.Context, project string, f RecallFilter) ([]experience.RecallEvent, error)
	CountRecalls(ctx context.Context, project string, f RecallFilter) (int64, error)

	// Skills.

	// InsertSkill creates a skill; false when its id or its name exists
	// in the project.
	InsertSkill(ctx context.Context, s experience.Skill) (bool, error)
	GetSkill(ctx context.Context, project, id string) (experience.Skill, error)
	// GetSkills reads the skills of ids that exist, in one batch; missing
	// ids are left out, the order is unspecified.
	GetSkills(ctx context.Context, project string, ids []string) ([]experience.Skill, error)
	GetSkillByName(ctx context.Context, project, name string) (experience.Skill, error)
	// LockSkill returns a skill for update; concurrent transactions
	// locking it are serialised until commit.
	LockSkill(ctx context.Context, project, id string) (experience.Skill, error)
	// UpdateSkill replaces an existing skill (ErrNotFound otherwise); the
	// name may not change to one another skill of the project has
	// (ErrNameTaken).
	UpdateSkill(ctx context.Context, s experience.Skill) error
	// ListSkills returns skills ordered by name (bytewise).
	ListSkills(ctx context.Context, project string, f SkillFilter) ([]experience.Skill, error)
	CountSkills(ctx context.Context, project string, f SkillFilter) (int64, error)
	// InsertSkillVersion stores a version; false when that version of the
	// skill exists.
	InsertSkillVersion(ctx context.Context, v experience.SkillVersion) (bool, error)
	// ListSkillVersions returns a skill's versions, oldest first (by
	// version number).
	ListSkillVersions(ctx context.Context, project, skillID string) ([]experience.SkillVersion, error)

	// Embeddings.

	// PutEmbedding stores (or replaces) the vector of an item. Dim must be
	// positive and equal len(Vector) (ErrInvalid otherwise).
	PutEmbedding(ctx context.Context, e Embedding) error
	// GetEmbedding returns an item's vector (ErrNotFound when it has none).
	GetEmbedding(ctx context.Context, project string, kind experience.ItemKind, refID string) (Embedding, error)
	// EachEmbedding calls fn for every vector of one kind in the project
	// made by embedder, in ref id order.
	EachEmbedding(ctx context.Context, project string, kind experience.ItemKind, embedder string, fn func(Embedding) error) error
	// EmbeddingChanges calls fn for every vector of one kind in the project
	// written after the project's experience version since (whatever its
	// embedder), and returns the ref ids whose vectors were removed after
	// since (and not written again): what a cache of the vectors as of
	// version since must apply to become current.
	EmbeddingChanges(ctx context.Context, project string, kind experience.ItemKind, since int64, fn func(Embedding) error) ([]string, error)
	// StaleEmbeddings lists up to limit items of one kind that need an
	// embedding by embedder: a search document without a vector, or with a
	// vector by another embedder or of another dimension. Ref id order;
	// limit <= 0 means no limit.
	StaleEmbeddings(ctx context.Context, project string, kind experience.ItemKind, embedder string, dim int, limit int) ([]string, error)

	// Full text.

	// PutSearchDoc stores (or replaces) the searchable text of an item.
	// Text is already tokenized by the engine: lower-case tokens separated
	// by single spaces (CJK text as character bigrams), so every backend
	// indexes the same terms. Every backend reads it through TextTerms.
	PutSearchDoc(ctx context.Context, project string, kind experience.ItemKind, refID, text string) error
	// DeleteSearchDoc removes an item from the full-text index and its
	// embedding; false (and no change) when it was neither indexed nor
	// embedded.
	DeleteSearchDoc(ctx context.Context, project string, kind experience.ItemKind, refID string) (bool, error)
	// SearchText returns up to limit items of one kind matching any of the
	// tokens, best first by the backend's relevance ranking (BM25 or the
	// closest it has; ties by ref id). Scores are comparable within one
	// call only; a higher score is a better match. The tokens are read
	// through TextTerms, so quotes and operator words are plain terms;
	// no usable token gives no hit. limit <= 0 means no limit.
	SearchText(ctx context.Context, project string, kind experience.ItemKind, tokens []string, limit int) ([]TextHit, error)

	// StoreID identifies the database: a random id fixed when it was
	// created, so that files derived from one database (vector index
	// snapshots) are never applied to another.
	StoreID(ctx context.Context) (string, error)
	// ExperienceVersion is a counter of the project's changes to
	// embeddings and search documents, for caches of vector indexes: every
	// PutEmbedding and PutSearchDoc, and every DeleteSearchDoc that removed
	// something, increases it (within the writing transaction). Zero for a
	// project without any.
	ExperienceVersion(ctx context.Context, project string) (int64, error)
}

// TurnFilter narrows turn listings. Zero values mean no filter.
type TurnFilter struct {
	TaskID string
	Roles  []experience.Role
	// Since bounds Time (inclusive).
	Since       time.Time
	NewestFirst bool
	Limit       int
	Offset      int
}

// SignalFilter narrows signal listings.
type SignalFilter struct {
	TaskID string
	Type   experience.SignalType
	Limit  int
	Offset int
}

// PageFilter is a page of a listing.
type PageFilter struct {
	Limit  int
	Offset int
}

// HeuristicFilter narrows heuristic listings.
type HeuristicFilter struct {
	Statuses []experience.HeuristicStatus
	Kind     experience.HeuristicKind
	// Search keeps heuristics whose trigger, rule or why contains it
	// (case-insensitive).
	Search string
	Limit  int
	Offset int
}

// RecallFilter narrows recall listings.
type RecallFilter struct {
	TaskID string
	// RefID keeps recalls that considered this item.
	RefID  string
	Limit  int
	Offset int
}

// SkillFilter narrows skill listings.
type SkillFilter struct {
	Status experience.SkillStatus
	// Search keeps skills whose name or description contains it
	// (case-insensitive).
	Search string
	Limit  int
	Offset int
}

// Embedding is the vector of an item, with the identity of the embedder
// that made it: vectors of different embedders are never compared.
type Embedding struct {
	Project  string              `json:"project"`
	Kind     experience.ItemKind `json:"kind"`
	RefID    string              `json:"ref_id"`
	Embedder string              `json:"embedder"`
	Dim      int                 `json:"dim"`
	Vector   []float32           `json:"vector"`
	// UpdatedAt is when the vector was stored.
	UpdatedAt time.Time `json:"updated_at"`
}

// Support records that a task supports a heuristic.
type Support struct {
	TaskID string    `json:"bead_id"`
	At     time.Time `json:"at"`
}

// TextHit is a full-text match.
type TextHit struct {
	RefID string  `json:"ref_id"`
	Score float64 `json:"score"`
}

// TextTerms splits full-text input (a search document's text or one query
// token) into the terms every backend indexes and matches: the maximal runs
// of letters and digits, lower-cased, in order, duplicates kept. Anything
// else separates terms, so quotes, "*", parentheses and the like never
// reach a full-text engine as syntax; words such as AND or NEAR are plain
// terms ("and", "near").
func TextTerms(text string) []string {
	terms := []string{}
	start := -1
	for i, r := range text {
		word := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			terms = append(terms, strings.ToLower(text[start:i]))
			start = -1
		}
	}
	if start >= 0 {
		terms = append(terms, strings.ToLower(text[start:]))
	}
	return terms
}

// QueryTerms is the distinct terms of full-text query tokens (TextTerms of
// each), in order of first appearance.
func QueryTerms(tokens []string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, tok := range tokens {
		for _, term := range TextTerms(tok) {
			if !seen[term] {
				seen[term] = true
				out = append(out, term)
			}
		}
	}
	return out
}

// Okapi BM25 parameters shared by the backends that rank with it.
const (
	BM25K1 = 1.2
	BM25B  = 0.75
)

// BM25IDF is the inverse document frequency of a term found in df of n
// documents (the non-negative form, log(1 + (n-df+0.5)/(df+0.5))).
func BM25IDF(n, df float64) float64 {
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// BM25Term is one term's contribution to a document's BM25 score: idf
// weighted by the term's frequency tf in a document of dl terms, where
// documents have avgdl terms on average.
func BM25Term(idf, tf, dl, avgdl float64) float64 {
	return idf * tf * (BM25K1 + 1) / (tf + BM25K1*(1-BM25B+BM25B*dl/max(avgdl, 1e-9)))
}
