package kaizen

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"time"

	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/internal/app/backupsvc"
	"github.com/kaizenhq/kaizen/internal/app/digestsvc"
	"github.com/kaizenhq/kaizen/internal/app/experiencesvc"
	"github.com/kaizenhq/kaizen/internal/app/exploresvc"
	"github.com/kaizenhq/kaizen/internal/app/gcsvc"
	"github.com/kaizenhq/kaizen/internal/app/jobsvc"
	"github.com/kaizenhq/kaizen/internal/app/learningsvc"
	"github.com/kaizenhq/kaizen/internal/app/teamsvc"
	"github.com/kaizenhq/kaizen/internal/app/tracesvc"
	"github.com/kaizenhq/kaizen/internal/jobs"
	"github.com/kaizenhq/kaizen/internal/veccache"
	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/model"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/trace"
)

// Version is the kaizen release, set at build time with -ldflags.
var Version = "0.1.0-dev"

// Engine is kaizen's single entry point: one method per user action, each
// delegating to the service of its subsystem (internal/app/…svc). Every
// surface (CLI, REST, MCP) is a thin adapter over these methods.
type Engine struct {
	cfg   Config
	env   *app.Env
	owned bool

	learning   *learningsvc.Service
	experience *experiencesvc.Service
	explore    *exploresvc.Service
	backup     *backupsvc.Service
	jobs       *jobsvc.Service
	digest     *digestsvc.Service
	gc         *gcsvc.Service
	trace      *tracesvc.Service
	team       *teamsvc.Service

	periodicOnce sync.Once // RunJobs registers the periodic jobs once
}

// Open opens the store named by cfg (see Config.DB), applies migrations,
// rebuilds aggregates if the decay half-lives changed, re-embeds when the
// embedder changed, and returns the engine. The store's driver must be
// linked into the program: import github.com/kaizenhq/kaizen/store/all
// (or store/sqlite, store/postgres), or set Config.Store.
func Open(ctx context.Context, cfg Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	st, owned := cfg.Store, false
	if st == nil {
		var err error
		if st, err = OpenStore(ctx, cfg); err != nil {
			return nil, err
		}
		owned = true
	}
	env := app.NewEnv(st, cfg.Now, cfg.Logger, cfg.Project)
	e := &Engine{cfg: cfg, env: env, owned: owned}
	embedder, chat, err := models(cfg)
	if err != nil {
		e.closeStore()
		return nil, err
	}
	e.experience = experiencesvc.New(env, experiencesvc.Options{
		Config: cfg.Experience, Embedder: embedder, Chat: chat, SkillsDir: filepath.Join(cfg.Home, "skills"),
		Snapshots:      veccache.NewSnapshots(cfg.Home, cfg.DB, cfg.Store != nil, env.Logger),
		KeepConsidered: cfg.Retention.RecallItems == "all",
	})
	runner := jobs.New(st, jobs.Options{Now: env.Now, Logger: env.Logger})
	runner.Register(e.experience.ExtractJob())
	runner.Register(e.experience.ExtractGroupJob())
	// Retention: a job kind of the durable runner, scheduled every
	// [retention] interval by the process that runs the job loop (RunJobs),
	// so that several daemons on one database collect once per interval.
	e.gc = newGC(e, cfg)
	runner.Register(e.gc.Job())
	e.trace = tracesvc.New(env, tracesvc.Options{Config: cfg.Trace, Wake: runner.Wake,
		// a task-end review's heuristics go to the experience system as a
		// submitted experience of the review (once per task)
		Heuristics: func(ctx context.Context, project, taskID string, hs []trace.HeuristicProposal) error {
			doc, err := tracesvc.ExperienceDocument(taskID, hs)
			if err == nil {
				_, err = e.experience.SubmitExtraction(ctx, experiencesvc.ExtractionSubmitInput{Project: project,
					TaskID: "trace-review-" + taskID, Kind: "experience", Result: doc})
			}
			return err
		}})
	e.trace.Register(runner)
	e.jobs = jobsvc.New(env, runner)
	e.learning = learningsvc.New(env, cfg.Learning, learningsvc.Hooks{
		Sections: e.experience.GuidanceSections,
		OutcomeTx: func(ctx context.Context, tx store.Tx, o learning.Outcome, replaced string, now time.Time) error {
			return e.experience.EnqueueExtraction(ctx, tx, o.Project, o.TaskID, o.ID, replaced == "", now)
		},
		// the runner wakes when the extraction is due before it would look
		OutcomeRecorded: func(string, string) {
			if at, ok := e.experience.ExtractionDue(env.Now()); ok {
				runner.WakeAt(at)
			}
		},
	})
	if r, ok := st.(interface{ SetAggregateReplay(store.AggregateReplay) }); ok {
		r.SetAggregateReplay(e.learning.ReplayAggregates) // config_store.go
	}
	e.learning.UsePatternSnapshots(cfg.Home, cfg.DB, cfg.Store != nil, env.Logger)
	e.explore = exploresvc.New(env)
	e.team = teamsvc.New(env)
	e.team.Wake = runner.Wake
	runner.Register(e.team.TimerJob())
	runner.Register(teamsvc.OutcomeJob(e.recordRunOutcome))
	runner.Register(teamsvc.LessonsJob(e.recordRunLessons))
	e.backup = backupsvc.New(env, e.learning, e.experience, Version)
	e.digest = digestsvc.New(env, e.learning, e.experience)
	if err := e.learning.CheckHalfLives(ctx); err != nil {
		e.Close()
		return nil, err
	}
	if err := e.experience.CheckEmbedder(ctx); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// models builds the embedder and the chat model of cfg (chat is nil when
// none is configured), unless the program gave its own.
func models(cfg Config) (model.Embedder, model.Chat, error) {
	embedder, chat := cfg.Embedder, cfg.Chat
	if embedder == nil {
		emb, err := cfg.Model.NewEmbedder()
		if err != nil {
			return nil, nil, &Error{Op: "open", Kind: KindInvalid, Field: "model.embedding", Message: err.Error(), Err: err}
		}
		embedder = emb
	}
	if chat == nil && cfg.Model.HasChat() {
		c, err := cfg.Model.NewChat()
		if err != nil {
			return nil, nil, &Error{Op: "open", Kind: KindInvalid, Field: "model.chat", Message: err.Error(), Err: err}
		}
		chat = c
	}
	return embedder, chat, nil
}

// OpenStore opens the backend selected by cfg.DB through the registered
// store drivers (see store.Open).
func OpenStore(ctx context.Context, cfg Config) (store.Store, error) {
	st, err := store.Open(store.WithOpenOptions(ctx, cfg.StoreOptions.open()), cfg.DB, cfg.Home)
	if errors.Is(err, store.ErrMisconfigured) || errors.Is(err, store.ErrNoDriver) {
		return nil, &Error{Op: "open store", Kind: KindInvalid, Message: err.Error(), Err: err,
			Hint: "correct --db / KAIZEN_DB (see docs/storage.md)"}
	}
	if err != nil {
		return nil, &Error{Op: "open store", Kind: KindInternal, Message: err.Error(), Err: err,
			Hint: "check --db / KAIZEN_DB and that the database is reachable"}
	}
	return st, nil
}

// Close waits for the pattern snapshots being saved, stops the background
// experience worker, if it runs, and waits for it (an extraction in flight
// is cancelled), saves the vector index snapshots, then closes the store if
// the engine opened it.
func (e *Engine) Close() error {
	if e.learning != nil {
		e.learning.Close() // the pattern snapshots being saved
	}
	if e.experience != nil {
		e.experience.Close()
	}
	if e.team != nil {
		e.team.Close() // its PostgreSQL listener, if it runs
	}
	return e.closeStore()
}

func (e *Engine) closeStore() error {
	if e.owned {
		return e.env.Store.Close()
	}
	return nil
}

// Store exposes the underlying store (for tools such as benchmarks).
func (e *Engine) Store() store.Store { return e.env.Store }

// Config returns the engine's configuration.
func (e *Engine) Config() Config { return e.cfg }

// Now is the engine's current time, truncated to storage precision.
func (e *Engine) Now() time.Time { return e.env.Now() }

// VersionInfo describes the running kaizen.
type VersionInfo struct {
	Version string `json:"version"`
	Backend string `json:"backend"`
}

// Version reports the release and the storage backend.
func (e *Engine) Version() VersionInfo {
	return VersionInfo{Version: Version, Backend: e.env.Store.Backend()}
}

// Projects lists the projects holding data, sorted.
func (e *Engine) Projects(ctx context.Context) ([]string, error) { return e.env.Projects(ctx) }

// ProjectSignature is a short string that changes whenever the project's
// learned state changes; cheap, for pollers such as the viewer's live
// updates.
func (e *Engine) ProjectSignature(ctx context.Context, project string) (string, error) {
	e.experience.SettleRecalls()
	return e.env.Signature(ctx, project)
}

// Health reports whether the store serves a read transaction (for health
// checks: nil when it does).
func (e *Engine) Health(ctx context.Context) error { return e.env.Health(ctx) }
