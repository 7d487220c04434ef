// Package experiencesvc is the experience system's service (seed 001):
// capture of conversation turns, feedback signals, task experiences
// (rules, a chat model, or the agent as extractor), the heuristic writer
// with its dedup and lifecycle, hybrid recall, skills, re-embedding and the
// background extraction worker. The algorithms are package experience's;
// the vector indexes kept in memory are package veccache's.
package experiencesvc

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/internal/veccache"
	"github.com/kaizenhq/kaizen/model"
	"github.com/kaizenhq/kaizen/store"
)

// Service runs the experience system's actions (seed 001): capture,
// signals, task experiences, the heuristic writer, recall, skills and the
// background extraction worker. It holds the models, the vector indexes
// kept in memory and the per-project lock of the heuristic writer.
type Service struct {
	// keepConsidered: see Options.KeepConsidered.
	keepConsidered bool
	env            *app.Env
	cfg            experience.Config
	embedder       model.Embedder
	// chat is nil when no chat model is configured: extraction then falls
	// back to rules (signals) and the agent-as-extractor flow.
	chat model.Chat
	vecs *veccache.Cache
	// writers serialises the heuristic writer per project, so two
	// experiences extracted at once cannot both create the same lesson.
	writers keyedMutex
	// skillsDir holds the SKILL.md files: <skillsDir>/<project>/<name>/.
	skillsDir string
	// projects lists the projects holding data (for warming).
	projects func(ctx context.Context) ([]string, error)
	// recallWrites counts recall events being written behind their
	// answers (see SettleRecalls).
	recallWrites inflight
	// turnSeq is the last capture order given to a turn (nextTurnSeq).
	turnSeq atomic.Int64
	// lessons caches whole-lesson vectors for recall's topic similarity
	// (recall.topic_text = "lesson").
	lessons lessonVectors
	// judgeCalls, judgeFallbacks and judgeVetoed count the merge judge's
	// work (MergeJudgeStats).
	judgeCalls, judgeFallbacks, judgeVetoed atomic.Int64
}

// Options configure the experience service.
type Options struct {
	Config   experience.Config
	Embedder model.Embedder
	// Chat is nil without a chat model.
	Chat model.Chat
	// Snapshots saves and restores vector indexes (see package veccache).
	Snapshots veccache.Snapshots
	// SkillsDir holds the SKILL.md files.
	SkillsDir string
	// KeepConsidered stores every item a recall considered; by default a
	// stored recall keeps only the injected ones ([retention]
	// recall_items, docs/security.md).
	KeepConsidered bool
}

// embedderMetaKey stores the id of the embedder whose vectors the store holds.
const embedderMetaKey = "experience/embedder"

// New returns the experience service.
func New(env *app.Env, opts Options) *Service {
	if opts.Config.Merge.Judge == experience.MergeJudgeModel && opts.Chat == nil {
		env.Logger.Warn("experience.merge.judge is \"model\" but no chat model is configured: the heuristic writer decides without it")
	}
	return &Service{env: env, cfg: opts.Config, embedder: opts.Embedder, chat: opts.Chat,
		vecs: veccache.New(opts.Embedder, opts.Snapshots), skillsDir: opts.SkillsDir,
		projects: env.Projects, keepConsidered: opts.KeepConsidered}
}

// Close saves the vector index snapshots for the next process.
func (s *Service) Close() {
	s.SettleRecalls()
	s.vecs.Close()
}

// HasChatModel reports whether a chat model is configured for extraction.
func (s *Service) HasChatModel() bool { return s.chat != nil }

// EmbedderID names the embedder of the experience system's vectors.
func (s *Service) EmbedderID() string { return s.embedder.ID() }

// embed embeds texts, wrapping failures as engine errors.
func (s *Service) embed(ctx context.Context, op string, texts ...string) ([][]float32, error) {
	vecs, err := s.embedder.Embed(ctx, texts)
	if err != nil {
		return nil, &app.Error{Op: op, Kind: app.KindInternal, Message: "embedding failed: " + err.Error(), Err: err,
			Hint: "check [model.embedding] in kaizen.toml, or remove it to use the offline embedder"}
	}
	if len(vecs) != len(texts) {
		return nil, &app.Error{Op: op, Kind: app.KindInternal,
			Message: fmt.Sprintf("embedder returned %d vectors for %d texts", len(vecs), len(texts))}
	}
	return vecs, nil
}

// keyedMutex is a set of mutexes by key, created on demand.
type keyedMutex struct {
	mu sync.Mutex
	m  map[string]*sync.Mutex
}

func (k *keyedMutex) lock(key string) func() {
	k.mu.Lock()
	if k.m == nil {
		k.m = map[string]*sync.Mutex{}
	}
	l, ok := k.m[key]
	if !ok {
		l = new(sync.Mutex)
		k.m[key] = l
	}
	k.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// vecWriter collects the index changes of one write transaction and the
// store version before it.
type vecWriter struct {
	s       *Service
	project string
	from    int64
	changes []veccache.Change
}

// begin records the store's version before the transaction's writes.
func (s *Service) vecWriter(ctx context.Context, tx store.Tx, project string) (*vecWriter, error) {
	v, err := tx.ExperienceVersion(ctx, project)
	if err != nil {
		return nil, err
	}
	return &vecWriter{s: s, project: project, from: v}, nil
}

// put stores an item's search document and vector in tx and remembers the
// index change.
func (w *vecWriter) put(ctx context.Context, tx store.Tx, kind experience.ItemKind, id, text string, vec []float32, now time.Time) error {
	if err := tx.PutSearchDoc(ctx, w.project, kind, id, experience.SearchText(text)); err != nil {
		return err
	}
	if err := tx.PutEmbedding(ctx, store.Embedding{Project: w.project, Kind: kind, RefID: id,
		Embedder: w.s.embedder.ID(), Dim: len(vec), Vector: vec, UpdatedAt: now}); err != nil {
		return err
	}
	w.changes = append(w.changes, veccache.Change{Kind: kind, ID: id, Vec: vec})
	return nil
}

// remove drops an item from full text and vectors.
func (w *vecWriter) remove(ctx context.Context, tx store.Tx, kind experience.ItemKind, id string) error {
	if _, err := tx.DeleteSearchDoc(ctx, w.project, kind, id); err != nil {
		return err
	}
	w.changes = append(w.changes, veccache.Change{Kind: kind, ID: id, Remove: true})
	return nil
}

// finish reads the version after the writes (call last in the transaction)
// and returns the function to run after the commit.
func (w *vecWriter) finish(ctx context.Context, tx store.Tx) (func(), error) {
	if len(w.changes) == 0 {
		return func() {}, nil
	}
	to, err := tx.ExperienceVersion(ctx, w.project)
	if err != nil {
		return nil, err
	}
	return func() { w.s.vecs.Apply(w.project, w.from, to, w.changes) }, nil
}

// Embedder returns the embedder of the experience system's vectors.
func (s *Service) Embedder() model.Embedder { return s.embedder }

// VectorIndexStats reports the vector cache's loads and catch-ups since the
// engine opened.
func (s *Service) VectorIndexStats() veccache.Stats {
	return s.vecs.Stats()
}

// WarmVectorIndexes loads the vector index of every project's items of
// every kind, so that no recall pays for loading one; a daemon runs it in
// the background after opening. It stops at the first error or when ctx
// ends, and reports the number of indexes loaded.
func (s *Service) WarmVectorIndexes(ctx context.Context) (int, error) {
	const op = "warm vector indexes"
	projects, err := s.projects(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, project := range projects {
		for _, kind := range experience.ItemKinds {
			err := s.env.View(ctx, op, func(tx store.Tx) error {
				_, err := s.vecs.Index(ctx, tx, project, kind)
				return err
			})
			if err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}
