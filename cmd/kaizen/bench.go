package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/spf13/cobra"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/bench"
	"github.com/kaizenhq/kaizen/mcp"
	"github.com/kaizenhq/kaizen/server"
	"github.com/kaizenhq/kaizen/store/postgres"
)

func init() { register(benchCommand) }

// benchReport is what `kaizen bench` measured.
type benchReport struct {
	Database string              `json:"database"`
	Backend  string              `json:"backend,omitempty"`
	Record   *bench.RecordResult `json:"record,omitempty"`
	Raw      *rawReport          `json:"raw,omitempty"`
	Guidance *guidanceReport     `json:"guidance,omitempty"`
	Decay    *decayReport        `json:"decay,omitempty"`
	MCP      *mcpReport          `json:"mcp,omitempty"`
	Recall   *recallReport       `json:"recall,omitempty"`
	RSSMiB   float64             `json:"rss_mib,omitempty"`
	PeakMiB  float64             `json:"peak_rss_mib,omitempty"`
}

type guidanceReport struct {
	Patterns   int             `json:"patterns"`
	Events     int             `json:"events"`
	PopulateS  float64         `json:"populate_seconds"`
	Cold       time.Duration   `json:"cold"`
	Warm       bench.Latencies `json:"warm"`
	RSSMiB     float64         `json:"rss_mib,omitempty"`
	PeakRSSMiB float64         `json:"peak_rss_mib,omitempty"`
}

type mcpReport struct {
	bench.MCPResult
	Stored int64 `json:"outcomes_stored"`
	Lost   int64 `json:"outcomes_lost"`
}

type recallReport struct {
	Heuristics int                `json:"heuristics"`
	Memories   int                `json:"memories"`
	Embedder   string             `json:"embedder"`
	PopulateS  float64            `json:"populate_seconds"`
	Recall     bench.RecallResult `json:"recall"`
	Merge      bench.MergeResult  `json:"merge"`
	// Restart is the first recall of a new engine on the same store: its
	// vector indexes start from the snapshots the first engine saved at
	// Close and catch up with the changes since.
	Restart    time.Duration `json:"restart_first_recall"`
	RSSMiB     float64       `json:"rss_mib,omitempty"`
	PeakRSSMiB float64       `json:"peak_rss_mib,omitempty"`
}

type decayReport struct {
	Events      int           `json:"events"`
	Incremental time.Duration `json:"incremental"`
	Recompute   time.Duration `json:"recompute"`
	MaxRelDiff  float64       `json:"max_relative_difference"`
}

func benchCommand(a *app) *cobra.Command {
	var (
		callers                  int
		duration                 time.Duration
		patterns, events, calls  int
		decayEvents, mcpClients  int
		heuristics, memories     int
		recalls, merges          int
		only, cpuProfile         string
		keep, compareRaw, noJobs bool
		rawRows, rounds          int
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure outcome throughput, plan guidance latency and decay cost",
		Long: `Run kaizen's performance scenarios on a throwaway database (or --db) and
print the results:

  record    concurrent callers record durable outcomes (4 criteria, 2 patterns each)
            for --duration, with the engine's background job runner running as in
            kaizen serve (--no-jobs: without it): outcomes per second and per-call
            latency percentiles;
            with --compare-raw, the raw driver ceiling in the same run (the same
            driver and durability inserting into a plain table, 1 row and then
            --raw-rows rows per transaction, --callers callers) and the ratios
  guidance  a store populated with --patterns patterns and --events feedback events:
            plan guidance latency, cold (first call) and warm percentiles, and memory
  decay     one pattern with --decay-events events: the O(1) decayed sum against
            recomputation, and their largest difference
  mcp       --mcp-clients MCP clients over streamable HTTP against a local server
            running the job runner as kaizen serve does, for --duration, each
            recording outcomes and asking for guidance:
            calls per second, per-tool latency percentiles, and the outcomes
            acknowledged against those stored (none may be lost)
  recall    a store of --heuristics heuristics and --memories captured memories
            (offline embedder unless one is configured): recall latency, cold and
            warm percentiles, then --merges experiences of three lessons each
            merged with dedup against them, and memory

The default database is a new SQLite file in a temporary directory, removed
afterwards (--keep keeps it). Results are approximate on a shared machine;
docs/BENCHMARKS.md lists published runs.`,
		Example: `  kaizen bench
  kaizen bench --only guidance --patterns 10000 --events 1000000
  kaizen bench --only record --callers 16 --duration 30s --json
  kaizen bench --only record --compare-raw --duration 10s
  kaizen bench --only mcp --mcp-clients 100 --duration 30s
  kaizen bench --only recall --heuristics 100000 --memories 100000`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			dir, err := os.MkdirTemp("", "kaizen-bench-")
			if err != nil {
				return err
			}
			if !keep {
				defer os.RemoveAll(dir)
			}
			cfg, err := a.config()
			if err != nil {
				return err
			}
			cfg.Home = dir
			if a.db == "" {
				cfg.DB = filepath.Join(dir, "bench.db")
			}
			now := time.Now().UTC().Truncate(time.Microsecond)
			rep := benchReport{Database: cfg.DB}
			if a.db != "" {
				rep.Database = "(--db)"
			}
			progress := func(format string, args ...any) { // on a terminal only
				if a.interactive() {
					fmt.Fprintf(a.stderr, format+"\n", args...)
				}
			}
			want := func(s string) bool { return only == "" || only == s }
			switch only {
			case "", "record", "guidance", "decay", "mcp", "recall":
			default:
				return usageError{fmt.Errorf("--only %q: want record, guidance, decay, mcp or recall", only)}
			}
			if cpuProfile != "" {
				f, err := os.Create(cpuProfile)
				if err != nil {
					return err
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return err
				}
				defer pprof.StopCPUProfile()
			}
			if want("decay") {
				inc, rec, diff := bench.Decay(decayEvents, now)
				rep.Decay = &decayReport{Events: decayEvents, Incremental: inc, Recompute: rec, MaxRelDiff: diff}
			}
			if want("record") {
				e, err := kaizen.Open(ctx, cfg)
				if err != nil {
					return err
				}
				res, raw, err := benchRecord(ctx, e, callers, duration, compareRaw, !noJobs, rawRows, rounds, progress)
				rep.Backend = e.Store().Backend()
				if cerr := e.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					return err
				}
				rep.Record, rep.Raw = res, raw
			}
			if want("mcp") {
				progress("mcp: %d clients over HTTP for %s…", mcpClients, duration)
				r, err := benchMCP(cmd, cfg, mcpClients, duration)
				if err != nil {
					return err
				}
				rep.MCP = r
			}
			if want("guidance") {
				g := &guidanceReport{Patterns: patterns, Events: events}
				gcfg := cfg
				gcfg.Now = func() time.Time { return now }
				e, err := kaizen.Open(ctx, gcfg)
				if err != nil {
					return err
				}
				defer e.Close()
				progress("guidance: populating %d patterns and %d feedback events…", patterns, events)
				t0 := time.Now()
				bar := a.newProgress("populating", patterns+events)
				err = bench.Populate(ctx, e.Store(), cfg.Learning, bench.PopulateSpec{Project: "bench-guidance",
					Patterns: patterns, Events: events, Now: now, Seed: 1}, bar.set)
				bar.done()
				if err != nil {
					return err
				}
				g.PopulateS = time.Since(t0).Seconds()
				t0 = time.Now()
				if _, err := e.PlanGuidance(ctx, kaizen.PlanInput{Project: "bench-guidance", Task: "split by feature"}); err != nil {
					return err
				}
				g.Cold = time.Since(t0)
				if g.Warm, err = bench.Guidance(ctx, e, "bench-guidance", calls); err != nil {
					return err
				}
				g.RSSMiB, g.PeakRSSMiB, _ = bench.Memory()
				rep.Guidance = g
			}
			if want("recall") {
				r, err := benchRecall(ctx, cfg, now, heuristics, memories, recalls, merges, progress)
				if err != nil {
					return err
				}
				rep.Recall = r
			}
			rep.RSSMiB, rep.PeakMiB, _ = bench.Memory()
			return a.print(rep, func(w io.Writer) error { return printBench(w, rep) })
		},
	}
	f := cmd.Flags()
	f.IntVar(&callers, "callers", 16, "concurrent callers recording outcomes")
	f.DurationVar(&duration, "duration", 10*time.Second, "how long the record and mcp scenarios run")
	f.IntVar(&patterns, "patterns", 10_000, "patterns in the guidance store")
	f.IntVar(&events, "events", 1_000_000, "feedback events in the guidance store")
	f.IntVar(&calls, "calls", 1000, "plan guidance calls to time")
	f.IntVar(&decayEvents, "decay-events", 10_000, "events of the decay comparison")
	f.StringVar(&only, "only", "", "run one scenario: record, guidance, decay, mcp or recall")
	f.IntVar(&heuristics, "heuristics", 100_000, "heuristics in the recall store")
	f.IntVar(&memories, "memories", 100_000, "captured memories in the recall store")
	f.IntVar(&recalls, "recalls", 500, "recalls to time")
	f.IntVar(&merges, "merges", 100, "experiences to merge with dedup in the recall store")
	f.IntVar(&mcpClients, "mcp-clients", 100, "concurrent MCP clients of the mcp scenario")
	f.BoolVar(&keep, "keep", false, "keep the temporary database")
	f.BoolVar(&compareRaw, "compare-raw", false, "record: also measure the raw driver (same driver and durability, one row per transaction, then --raw-rows per transaction) in the same run, and print ratios")
	f.BoolVar(&noJobs, "no-jobs", false, "record: do not run the engine's background job runner during the scenario (kaizen serve runs it)")
	f.IntVar(&rounds, "rounds", 5, "with --compare-raw: alternate the raw and record runs in this many rounds of --duration/rounds each, so that a change of load on a shared machine affects both alike")
	f.IntVar(&rawRows, "raw-rows", 0, "rows per transaction of the batched raw scenario (default: the measured outcomes per commit of the group commit, else --callers)")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof)")
	return cmd
}

func printBench(w io.Writer, r benchReport) error {
	fmt.Fprintf(w, "database: %s\n", r.Database)
	if r.Backend != "" {
		fmt.Fprintf(w, "backend: %s\n", r.Backend)
	}
	if d := r.Decay; d != nil {
		fmt.Fprintf(w, "\ndecay (%d events): O(1) sum %s per query, recomputation %s (×%.0f); max relative difference %.1e\n",
			d.Events, d.Incremental, d.Recompute, float64(d.Recompute)/float64(max(d.Incremental, 1)), d.MaxRelDiff)
	}
	if x := r.Record; x != nil {
		fmt.Fprintf(w, "\nrecord: %d outcomes in %.1fs by %d callers = %.0f outcomes/s (%d errors)\n  latency %s\n  %s\n",
			x.Outcomes, x.Seconds, x.Callers, x.PerSecond, x.Errors, x.Latency, x.Durability)
		if x.Jobs {
			fmt.Fprintf(w, "  background job runner running, as in kaizen serve\n")
		}
		if x.PerCommit > 0 {
			fmt.Fprintf(w, "  %.1f outcomes per commit (group commit)\n", x.PerCommit)
		}
		if x.RoundTripsPerOutcome > 0 {
			fmt.Fprintf(w, "  %.2f round trips per outcome (the writer's)\n", x.RoundTripsPerOutcome)
		}
		if r.Raw != nil {
			printRaw(w, r.Raw)
		}
	}
	if x := r.MCP; x != nil {
		fmt.Fprintf(w, "\nmcp: %d clients, %d calls in %.1fs (%.0f/s), %d errors; outcomes acknowledged %d, stored %d, lost %d\n",
			x.Clients, x.Calls, x.Seconds, x.PerSecond, x.Errors, x.Recorded, x.Stored, x.Lost)
		for _, tool := range []string{"record_outcome", "plan_guidance"} {
			fmt.Fprintf(w, "  %s %s\n", tool, x.PerTool[tool])
		}
		if x.FirstErr != "" {
			fmt.Fprintf(w, "  first error: %s\n", x.FirstErr)
		}
	}
	if x := r.Recall; x != nil {
		fmt.Fprintf(w, "\nrecall: %d heuristics + %d memories, embedder %s (populated in %.0fs)\n  cold (first call, loads the vector indexes) %s\n  warm %s, %.1f items injected per recall\n",
			x.Heuristics, x.Memories, x.Embedder, x.PopulateS, x.Recall.Cold.Round(time.Millisecond), x.Recall.Warm, x.Recall.Injected)
		fmt.Fprintf(w, "  merge with dedup: %d experiences, %d lessons %v\n  per experience %s\n  rss %.0f MiB (peak %.0f MiB)\n",
			x.Merge.Experiences, x.Merge.Candidates, x.Merge.Actions, x.Merge.Latency, x.RSSMiB, x.PeakRSSMiB)
		fmt.Fprintf(w, "  after a restart, first recall (indexes from snapshots) %s\n", x.Restart.Round(time.Millisecond))
	}
	if g := r.Guidance; g != nil {
		fmt.Fprintf(w, "\nguidance: %d patterns, %d feedback events (populated in %.0fs)\n  cold (first call, loads the cache) %s\n  warm %s\n  rss %.0f MiB (peak %.0f MiB)\n",
			g.Patterns, g.Events, g.PopulateS, g.Cold.Round(time.Millisecond), g.Warm, g.RSSMiB, g.PeakRSSMiB)
	}
	_, err := fmt.Fprintf(w, "\nprocess rss %.0f MiB (peak %.0f MiB)\n", r.RSSMiB, r.PeakMiB)
	return err
}

// benchMCP serves MCP over HTTP on a loopback port from a fresh engine and
// runs the load; it then counts the outcomes stored against those acknowledged.
func benchMCP(cmd *cobra.Command, cfg kaizen.Config, clients int, d time.Duration) (*mcpReport, error) {
	ctx := cmd.Context()
	e, err := kaizen.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	defer runJobs(ctx, e)() // as kaizen serve does
	srv, err := server.New(e, server.Options{Addr: "127.0.0.1:0"})
	if err != nil {
		return nil, err
	}
	if err := srv.Handle(server.Route{Pattern: "/mcp", MaxBodyBytes: mcp.DefaultMaxBodyBytes,
		Handler: mcp.HTTPHandler(e, mcp.Options{})}); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, ln) }()
	res, err := bench.MCP(ctx, "http://"+ln.Addr().String()+"/mcp", "bench-mcp", clients, d)
	stop()
	<-done
	if err != nil {
		return nil, err
	}
	list, err := e.ListOutcomes(ctx, kaizen.OutcomeQuery{Project: "bench-mcp", Limit: 1})
	if err != nil {
		return nil, err
	}
	return &mcpReport{MCPResult: res, Stored: list.Total, Lost: res.Recorded - list.Total}, nil
}

// benchRecall populates an experience store and measures recall and
// insertion with dedup.
func benchRecall(ctx context.Context, cfg kaizen.Config, now time.Time, heuristics, memories, recalls, merges int,
	progress func(string, ...any)) (*recallReport, error) {
	rcfg := cfg
	rcfg.Now = func() time.Time { return now }
	e, err := kaizen.Open(ctx, rcfg)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	const project = "bench-recall"
	r := &recallReport{Heuristics: heuristics, Memories: memories, Embedder: e.EmbedderID()}
	progress("recall: populating %d heuristics and %d memories…", heuristics, memories)
	t0, last := time.Now(), time.Now()
	err = bench.PopulateExperience(ctx, e, bench.ExperienceSpec{Project: project, Heuristics: heuristics,
		Memories: memories, Now: now, Seed: 1}, func(done, total int) {
		if time.Since(last) > 5*time.Second {
			progress("  %d/%d items", done, total)
			last = time.Now()
		}
	})
	if err != nil {
		return nil, err
	}
	r.PopulateS = time.Since(t0).Seconds()
	if pg, ok := e.Store().(*postgres.Store); ok {
		// A bulk load outruns autovacuum: gather the planner statistics it
		// would have gathered by the time a store grew that large.
		if _, err := pg.DB().ExecContext(ctx, "ANALYZE"); err != nil {
			return nil, err
		}
	}
	progress("recall: %d recalls…", recalls)
	if r.Recall, err = bench.Recall(ctx, e, project, recalls); err != nil {
		return nil, err
	}
	progress("recall: %d experiences merged with dedup…", merges)
	if r.Merge, err = bench.Merge(ctx, e, project, merges); err != nil {
		return nil, err
	}
	r.RSSMiB, r.PeakRSSMiB, _ = bench.Memory()
	progress("recall: restarting the engine…")
	e.Close()
	if e, err = kaizen.Open(ctx, rcfg); err != nil {
		return nil, err
	}
	defer e.Close()
	t0 = time.Now()
	if _, err := e.Recall(ctx, kaizen.RecallInput{Project: project, Query: "edit generated files", DryRun: true}); err != nil {
		return nil, err
	}
	r.Restart = time.Since(t0)
	return r, nil
}
