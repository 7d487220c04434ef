package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/bench"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/store/postgres"
	"github.com/kaizenhq/kaizen/store/sqlite"
)

// rawReport is the raw driver ceiling measured in the same run as the
// record scenario (--compare-raw), and the record rate as ratios of it.
type rawReport struct {
	Durability string          `json:"durability"`
	Rounds     int             `json:"rounds"`
	One        bench.RawResult `json:"one_row_per_tx"`
	Many       bench.RawResult `json:"rows_per_tx"`
	// RatioOne and RatioMany are outcomes/s divided by raw rows/s.
	RatioOne  float64 `json:"ratio_to_one_row_per_tx"`
	RatioMany float64 `json:"ratio_to_rows_per_tx"`
}

// rawTarget is where the raw scenario writes: a separate SQLite file in
// the store's directory opened with the store's own DSN, or the store's
// PostgreSQL pool.
type rawTarget struct {
	db       *sql.DB
	numbered bool
	close    func() error
}

// durability describes the store's acknowledgement for the report.
func durability(ctx context.Context, st store.Store) string {
	switch s := st.(type) {
	case *sqlite.Store:
		return s.Durability()
	case *postgres.Store:
		d, err := s.Durability(ctx)
		if err != nil {
			return "postgres: " + err.Error()
		}
		return d
	}
	return st.Backend()
}

func openRaw(ctx context.Context, st store.Store) (*rawTarget, error) {
	switch s := st.(type) {
	case *sqlite.Store:
		path := filepath.Join(filepath.Dir(s.Path()), fmt.Sprintf("kaizen-bench-raw-%d.db", os.Getpid()))
		db, err := sql.Open("sqlite", sqlite.DSN(path))
		if err != nil {
			return nil, err
		}
		db.SetMaxOpenConns(1) // one writer, as the store's
		if err := bench.RawSetup(ctx, db); err != nil {
			db.Close()
			return nil, err
		}
		return &rawTarget{db: db, close: func() error {
			err := db.Close()
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(path + suffix)
			}
			return err
		}}, nil
	case *postgres.Store:
		db := s.DB()
		if err := bench.RawSetup(ctx, db); err != nil {
			return nil, err
		}
		return &rawTarget{db: db, numbered: true, close: func() error { return bench.RawDrop(context.Background(), db) }}, nil
	}
	return nil, fmt.Errorf("--compare-raw: no raw scenario for the %s backend", st.Backend())
}

// rawRowsFor is the rows per transaction of the batched raw scenario: the
// flag, else the outcomes per commit the store reached (group commit),
// else the number of callers.
func rawRowsFor(flag int, perCommit float64, callers int) int {
	switch {
	case flag > 0:
		return flag
	case perCommit >= 1:
		return max(1, int(math.Round(perCommit)))
	}
	return max(1, callers)
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

func printRaw(w io.Writer, r *rawReport) {
	fmt.Fprintf(w, "  raw driver in the same run (%d alternating rounds), same durability, %d callers:\n", r.Rounds, r.One.Callers)
	for _, x := range []struct {
		res   bench.RawResult
		ratio float64
	}{{r.One, r.RatioOne}, {r.Many, r.RatioMany}} {
		fmt.Fprintf(w, "    %2d row(s)/tx: %.0f rows/s (tx latency %s) → record/raw = %.2f\n",
			x.res.RowsPerTx, x.res.PerSecond, x.res.Latency, x.ratio)
	}
}

// runJobs runs the engine's background job runner, as `kaizen serve`
// does, until the returned func is called (which waits for it to stop).
func runJobs(ctx context.Context, e *kaizen.Engine) (stop func()) {
	jobsCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = e.RunJobs(jobsCtx) // returns nil when jobsCtx ends
	}()
	return func() {
		cancel()
		<-done
	}
}

// benchRecord runs the record scenario; with compareRaw it alternates, in
// each of rounds rounds of duration/rounds: the raw driver at one row per
// transaction, the record scenario, and the raw driver at the batched size
// (the group size measured so far), so that both sides of each ratio see the
// same machine.
//
// With jobs the engine's background job runner runs during the record
// runs, as in `kaizen serve`: each outcome enqueues its task's extraction,
// and the runner's claims, looks and the jobs that come due share the
// writer with the outcomes. It does not run during the raw runs, which
// measure the driver alone (its work would slow them and flatter the
// ratio).
func benchRecord(ctx context.Context, e *kaizen.Engine, callers int, duration time.Duration, compareRaw, jobs bool,
	rawRows, rounds int, progress func(string, ...any)) (*bench.RecordResult, *rawReport, error) {
	record := func(d time.Duration, round int) (bench.RecordResult, error) {
		if jobs {
			defer runJobs(ctx, e)()
		}
		return bench.RecordRound(ctx, e, "bench-record", callers, d, round)
	}
	perCommit := func(res *bench.RecordResult) {
		switch st := e.Store().(type) {
		case *sqlite.Store:
			if ws := st.Stats(); ws.Batches > 0 {
				res.PerCommit = float64(ws.Requests) / float64(ws.Batches)
				res.GroupsBehind, res.Groups, res.IdleFlushes = ws.Behind, ws.Batches, ws.IdleFlushes
			}
		case *postgres.Store: // group commit too (issue 17)
			if ws := st.Stats(); ws.Batches > 0 {
				res.PerCommit = float64(ws.Requests) / float64(ws.Batches)
				res.RoundTripsPerOutcome = float64(ws.RoundTrips) / float64(ws.Requests)
			}
		}
	}
	if !compareRaw {
		progress("record: %d callers for %s…", callers, duration)
		res, err := record(duration, 0)
		perCommit(&res)
		res.Durability, res.Jobs = durability(ctx, e.Store()), jobs
		return &res, nil, err
	}
	raw, err := openRaw(ctx, e.Store())
	if err != nil {
		return nil, nil, err
	}
	rounds = max(1, rounds)
	slice := duration / time.Duration(rounds)
	var res bench.RecordResult
	rep := &rawReport{Durability: durability(ctx, e.Store()), Rounds: rounds}
	for round := range rounds {
		progress("round %d/%d: raw 1 row/tx, record, raw batched, %s each…", round+1, rounds, slice)
		one, err := bench.Raw(ctx, raw.db, raw.numbered, callers, 1, slice)
		if err != nil {
			return nil, nil, errors.Join(err, raw.close())
		}
		rep.One = bench.MergeRaw(rep.One, one)
		r, err := record(slice, round)
		if err != nil {
			return nil, nil, errors.Join(err, raw.close())
		}
		res = bench.MergeRecord(res, r)
		perCommit(&res)
		many, err := bench.Raw(ctx, raw.db, raw.numbered, callers, rawRowsFor(rawRows, res.PerCommit, callers), slice)
		if err != nil {
			return nil, nil, errors.Join(err, raw.close())
		}
		rep.Many = bench.MergeRaw(rep.Many, many)
	}
	res.Durability, res.Jobs = rep.Durability, jobs
	rep.RatioOne = ratio(res.PerSecond, rep.One.PerSecond)
	rep.RatioMany = ratio(res.PerSecond, rep.Many.PerSecond)
	return &res, rep, raw.close()
}
