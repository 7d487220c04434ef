package storetest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/trace"
)

func exitCode(n int) *int { return &n }

// fullTrace is a closed fail → fix → succeed chain with every field set.
func fullTrace(id string, created int) trace.ExecutionTrace {
	return trace.ExecutionTrace{
		ID: id, SkillID: "cmd:go test", TaskID: "claude-s1", CreatedAt: at(created), DurationMS: 4200,
		FinalSuccess: true, SessionID: "claude-s1", Family: "go test", Strategies: []string{"split by file"},
		Attempts: []trace.Attempt{{
			Index: 1, Timestamp: at(created).In(zone), Context: map[string]string{"command": "go test ./...", "cwd": "/repo/" + mixed},
			ActivatedArtifacts: []string{"go.mod"}, Result: "FAIL " + mixed, Error: "undefined: parseConfig",
			ExitCode: exitCode(1), DurationMS: 1200, ErrorType: "go:compile", Signatures: []string{"s:abc", "l:def"},
			WarnedPatterns: []string{"fp-1"},
		}, {
			Index: 2, Timestamp: at(created + 5), Context: map[string]string{"command": "go test ./..."},
			ActivatedArtifacts: []string{}, Result: "ok", Success: true, FixApplied: "edited config.go",
			FixSource: trace.FixSelfCorrection, ExitCode: exitCode(0),
			FixActions: []trace.FixAction{{Kind: trace.ActionEdit, Detail: "config.go"}},
		}},
	}
}

func fullFailurePattern(id, skill string, freq int) trace.FailurePattern {
	return trace.FailurePattern{
		ID: id, SkillID: skill, Condition: "running `go test` " + mixed, ErrorType: "go:compile", Frequency: freq,
		LastOccurred: at(50), FirstOccurred: at(10), SuggestedFix: "Define parseConfig in config.go",
		Family: "go test", Context: map[string]string{"cwd": "/repo"}, Args: []string{"./..."},
		Template: "undefined: <*>", Signatures: []string{"s:abc", "l:def"}, GroupingVersion: 1,
		ExampleErrors: []string{"undefined: parseConfig"}, TraceIDs: []string{"t-1"},
		Fixes:  []trace.FixTally{{Fix: "Define parseConfig in config.go", Count: 2, Last: at(50)}},
		Weight: 1.25, Warnings: 3, Helped: 2, Misled: 1,
	}
}

func traceIDs(ts []trace.ExecutionTrace) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

func testTrace(t *testing.T, setup setupFunc) {
	t.Run("TraceRoundTripGrowAndShrink", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		full := fullTrace("t-1", 1)
		b.update(func(tx store.Tx) error { return tx.PutTrace(b.ctx, "p", full, at(9)) })
		got := read(b, func(tx store.Tx) (trace.ExecutionTrace, error) { return tx.GetTrace(b.ctx, "p", "t-1") })
		requireEqual(t, "GetTrace", full, got)
		// an open chain written again with one attempt fewer (replaced whole)
		open := fullTrace("t-1", 1)
		open.Attempts, open.FinalSuccess, open.Open = open.Attempts[:1], false, true
		b.update(func(tx store.Tx) error { return tx.PutTrace(b.ctx, "p", open, at(10)) })
		got = read(b, func(tx store.Tx) (trace.ExecutionTrace, error) { return tx.GetTrace(b.ctx, "p", "t-1") })
		requireEqual(t, "GetTrace after shrink", open, got)
		_, err := get(b, func(tx store.Tx) (trace.ExecutionTrace, error) { return tx.GetTrace(b.ctx, "q", "t-1") })
		requireNotFound(t, "GetTrace in another project", err)
	})

	t.Run("TraceListFilterCountEach", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		mk := func(id string, created int, skill, status string) trace.ExecutionTrace {
			tr := fullTrace(id, created)
			tr.SkillID = skill
			switch status {
			case "open":
				tr.Attempts, tr.FinalSuccess, tr.Open = tr.Attempts[:1], false, true
			case "failed":
				tr.Attempts, tr.FinalSuccess = tr.Attempts[:1], false
			}
			return tr
		}
		all := []trace.ExecutionTrace{mk("t-b", 5, "cmd:go test", "succeeded"), mk("t-a", 5, "cmd:npm run build", "failed"),
			mk("t-c", 9, "cmd:go test", "open"), mk("t-d", 1, "cmd:go test", "failed")}
		b.update(func(tx store.Tx) error {
			for _, tr := range all {
				if err := tx.PutTrace(b.ctx, "p", tr, at(20)); err != nil {
					return err
				}
			}
			return tx.PutTrace(b.ctx, "other", mk("t-z", 3, "cmd:go test", "failed"), at(20))
		})
		list := read(b, func(tx store.Tx) ([]trace.ExecutionTrace, error) {
			return tx.ListTraces(b.ctx, "p", store.TraceFilter{})
		})
		requireEqual(t, "ListTraces order", []string{"t-c", "t-b", "t-a", "t-d"}, traceIDs(list))
		if len(list[1].Attempts) != 2 || len(list[0].Attempts) != 1 {
			t.Errorf("attempts not attached: %d, %d", len(list[1].Attempts), len(list[0].Attempts))
		}
		for name, c := range map[string]struct {
			f    store.TraceFilter
			want []string
		}{
			"skill":  {store.TraceFilter{SkillID: "cmd:go test"}, []string{"t-c", "t-b", "t-d"}},
			"status": {store.TraceFilter{Status: "failed"}, []string{"t-a", "t-d"}},
			"since":  {store.TraceFilter{Since: at(5), Until: at(9)}, []string{"t-b", "t-a"}},
			"page":   {store.TraceFilter{Limit: 2, Offset: 1}, []string{"t-b", "t-a"}},
			"task":   {store.TraceFilter{TaskID: "nope"}, []string{}},
		} {
			got := read(b, func(tx store.Tx) ([]trace.ExecutionTrace, error) { return tx.ListTraces(b.ctx, "p", c.f) })
			requireEqual(t, "ListTraces "+name, c.want, traceIDs(got))
			n := read(b, func(tx store.Tx) (int64, error) {
				f := c.f
				f.Limit, f.Offset = 0, 0
				return tx.CountTraces(b.ctx, "p", f)
			})
			if name != "page" && n != int64(len(c.want)) {
				t.Errorf("CountTraces %s = %d, want %d", name, n, len(c.want))
			}
		}
		var each []string
		b.view(func(tx store.Tx) error {
			return tx.EachTrace(b.ctx, "p", store.TraceFilter{Limit: 1}, func(tr trace.ExecutionTrace) error {
				each = append(each, tr.ID)
				return nil
			})
		})
		requireEqual(t, "EachTrace oldest first", []string{"t-d", "t-a", "t-b", "t-c"}, each)
	})

	t.Run("EachTraceBatches", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		const n = 1203
		b.update(func(tx store.Tx) error {
			for i := range n {
				if err := tx.PutTrace(b.ctx, "p", fullTrace(fmt.Sprintf("t-%05d", i), i%7), at(0)); err != nil {
					return err
				}
			}
			return nil
		})
		seen := map[string]bool{}
		b.view(func(tx store.Tx) error {
			return tx.EachTrace(b.ctx, "p", store.TraceFilter{}, func(tr trace.ExecutionTrace) error {
				if seen[tr.ID] {
					return fmt.Errorf("trace %s twice", tr.ID)
				}
				seen[tr.ID] = true
				return nil
			})
		})
		if len(seen) != n {
			t.Errorf("EachTrace saw %d traces, want %d", len(seen), n)
		}
	})

	t.Run("ExecutionRecords", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		recs := []trace.ExecutionRecord{
			{Timestamp: at(2), Success: false, Error: "boom " + mixed, ContextHash: "h1", ArtifactID: "scripts/x.sh", TraceID: "t-1"},
			{Timestamp: at(1), Success: true, ContextHash: "h2", ArtifactID: "scripts/x.sh", TraceID: "t-0"},
			{Timestamp: at(3), Success: true, ContextHash: "h1", ArtifactID: "other", TraceID: "t-1"},
		}
		b.update(func(tx store.Tx) error { return tx.InsertExecutionRecords(b.ctx, "p", recs) })
		b.update(func(tx store.Tx) error { return tx.InsertExecutionRecords(b.ctx, "p", recs[:1]) }) // again: skipped
		got := read(b, func(tx store.Tx) ([]trace.ExecutionRecord, error) {
			return tx.ExecutionRecords(b.ctx, "p", "scripts/x.sh", 0)
		})
		requireEqual(t, "ExecutionRecords", []trace.ExecutionRecord{recs[1], recs[0]}, got)
	})

	t.Run("FailurePatterns", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		full := fullFailurePattern("fp-1", "cmd:go test", 3)
		requireAllSet(t, full)
		other := fullFailurePattern("fp-2", "cmd:npm run build", 7)
		other.Family = "npm run build"
		third := fullFailurePattern("fp-0", "skill:deploy", 3)
		third.Family = "go test"
		b.update(func(tx store.Tx) error {
			for _, p := range []trace.FailurePattern{full, other, third} {
				if err := tx.PutFailurePattern(b.ctx, "p", p); err != nil {
					return err
				}
			}
			return nil
		})
		requireEqual(t, "GetFailurePattern", full,
			read(b, func(tx store.Tx) (trace.FailurePattern, error) { return tx.GetFailurePattern(b.ctx, "p", "fp-1") }))
		ids := func(ps []trace.FailurePattern) []string {
			out := []string{}
			for _, p := range ps {
				out = append(out, p.ID)
			}
			return out
		}
		all := read(b, func(tx store.Tx) ([]trace.FailurePattern, error) {
			return tx.ListFailurePatterns(b.ctx, "p", store.FailurePatternFilter{})
		})
		requireEqual(t, "ListFailurePatterns (frequency, id)", []string{"fp-2", "fp-0", "fp-1"}, ids(all))
		bySkillOrFamily := read(b, func(tx store.Tx) ([]trace.FailurePattern, error) {
			return tx.ListFailurePatterns(b.ctx, "p", store.FailurePatternFilter{SkillID: "cmd:go test", Family: "go test"})
		})
		requireEqual(t, "skill or family", []string{"fp-0", "fp-1"}, ids(bySkillOrFamily))
		n := read(b, func(tx store.Tx) (int64, error) {
			return tx.CountFailurePatterns(b.ctx, "p", store.FailurePatternFilter{SkillID: "cmd:npm run build"})
		})
		if n != 1 {
			t.Errorf("CountFailurePatterns = %d, want 1", n)
		}
		next := full
		next.Frequency, next.Weight, next.SuggestedFix = 4, 0.75, "Run go generate first"
		b.update(func(tx store.Tx) error {
			if _, err := tx.LockFailurePattern(b.ctx, "p", "fp-1"); err != nil {
				return err
			}
			return tx.PutFailurePattern(b.ctx, "p", next)
		})
		requireEqual(t, "after update", next,
			read(b, func(tx store.Tx) (trace.FailurePattern, error) { return tx.GetFailurePattern(b.ctx, "p", "fp-1") }))
		err := b.s.Update(b.ctx, func(tx store.Tx) error { _, err := tx.LockFailurePattern(b.ctx, "q", "fp-1"); return err })
		requireNotFound(t, "LockFailurePattern in another project", err)
	})

	t.Run("SessionsChecksSkillsStates", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := get(b, func(tx store.Tx) (store.TraceSession, error) { return tx.GetTraceSession(b.ctx, "p", "s") })
		requireNotFound(t, "GetTraceSession", err)
		sess := store.TraceSession{Project: "p", ID: "s", State: json.RawMessage(`{"session_id":"s","seq":2}`), UpdatedAt: at(3)}
		b.update(func(tx store.Tx) error { return tx.PutTraceSession(b.ctx, sess) })
		sess.State = json.RawMessage(`{"session_id":"s","seq":3}`)
		b.update(func(tx store.Tx) error {
			if _, err := tx.LockTraceSession(b.ctx, "p", "s"); err != nil {
				return err
			}
			return tx.PutTraceSession(b.ctx, sess)
		})
		requireEqual(t, "TraceSession", sess, read(b, func(tx store.Tx) (store.TraceSession, error) {
			return tx.GetTraceSession(b.ctx, "p", "s")
		}))

		c1 := store.TraceCheck{Project: "p", ID: "c1", SessionID: "s", SkillID: "cmd:go test", Command: "go test ./...",
			At: at(4), PatternIDs: []string{"fp-1"}, Warnings: json.RawMessage(`[{"pattern_id":"fp-1"}]`)}
		c2 := store.TraceCheck{Project: "p", ID: "c2", SessionID: "s2", SkillID: "cmd:ls", Command: "ls", At: at(5),
			PatternIDs: []string{}, Warnings: json.RawMessage(`[]`)}
		for _, c := range []store.TraceCheck{c1, c2} {
			if !write(b, func(tx store.Tx) (bool, error) { return tx.InsertTraceCheck(b.ctx, c) }) {
				t.Errorf("InsertTraceCheck %s reported false", c.ID)
			}
		}
		if write(b, func(tx store.Tx) (bool, error) { return tx.InsertTraceCheck(b.ctx, c1) }) {
			t.Error("a second insert of a check reported true")
		}
		requireEqual(t, "ListTraceChecks", []store.TraceCheck{c2, c1}, read(b, func(tx store.Tx) ([]store.TraceCheck, error) {
			return tx.ListTraceChecks(b.ctx, "p", store.TraceCheckFilter{})
		}))
		requireEqual(t, "ListTraceChecks warned", []store.TraceCheck{c1}, read(b, func(tx store.Tx) ([]store.TraceCheck, error) {
			return tx.ListTraceChecks(b.ctx, "p", store.TraceCheckFilter{WarnedOnly: true})
		}))

		sk := trace.SkillStats{SkillID: "cmd:go test", Traces: 3, Succeeded: 1, GaveUp: 2, Attempts: 9, SuccessRate: 1.0 / 3,
			NeedsPerson: true, Reason: "failed all 3 attempts"}
		b.update(func(tx store.Tx) error { return tx.PutTraceSkill(b.ctx, "p", sk, at(6)) })
		sk.Traces = 4
		b.update(func(tx store.Tx) error { return tx.PutTraceSkill(b.ctx, "p", sk, at(7)) })
		requireEqual(t, "ListTraceSkills", []trace.SkillStats{sk},
			read(b, func(tx store.Tx) ([]trace.SkillStats, error) { return tx.ListTraceSkills(b.ctx, "p") }))
		_, err = get(b, func(tx store.Tx) (trace.SkillStats, error) { return tx.GetTraceSkill(b.ctx, "q", "cmd:go test") })
		requireNotFound(t, "GetTraceSkill in another project", err)

		big := strings.Repeat("g", 200<<10)
		b.update(func(tx store.Tx) error { return tx.PutTraceState(b.ctx, "p", "grouper", big, at(8)) })
		if got := write(b, func(tx store.Tx) (string, error) { return tx.LockTraceState(b.ctx, "p", "grouper") }); got != big {
			t.Errorf("trace state changed (%d bytes)", len(got))
		}
		_, err = get(b, func(tx store.Tx) (string, error) { return tx.GetTraceState(b.ctx, "p", "nope") })
		requireNotFound(t, "GetTraceState", err)
	})

	t.Run("ReviewsOncePerPeriod", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		r := store.TraceReview{Project: "p", ID: "r-1", Kind: "daily", PeriodStart: at(0), PeriodEnd: at(86400),
			CreatedAt: at(86401), Result: json.RawMessage(`{"totals":{"traces":2}}`), Report: "# Review\n" + mixed}
		if !write(b, func(tx store.Tx) (bool, error) { return tx.InsertTraceReview(b.ctx, r) }) {
			t.Fatal("InsertTraceReview reported false")
		}
		again := r
		again.ID, again.Report = "r-2", "other"
		if write(b, func(tx store.Tx) (bool, error) { return tx.InsertTraceReview(b.ctx, again) }) {
			t.Error("a second review of the same kind and period was inserted")
		}
		weekly := again
		weekly.Kind = "weekly"
		if !write(b, func(tx store.Tx) (bool, error) { return tx.InsertTraceReview(b.ctx, weekly) }) {
			t.Error("a weekly review of the same start was refused")
		}
		requireEqual(t, "GetTraceReview", r,
			read(b, func(tx store.Tx) (store.TraceReview, error) { return tx.GetTraceReview(b.ctx, "p", "r-1") }))
		list := read(b, func(tx store.Tx) ([]store.TraceReview, error) {
			return tx.ListTraceReviews(b.ctx, "p", store.TraceReviewFilter{Kind: "daily"})
		})
		requireEqual(t, "ListTraceReviews", []store.TraceReview{r}, list)
	})

	t.Run("ConcurrentPatternUpdates", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		p := fullFailurePattern("fp-1", "cmd:go test", 1)
		b.update(func(tx store.Tx) error { return tx.PutFailurePattern(b.ctx, "p", p) })
		errs := together(workers, func(i int) error {
			return b.s.Update(b.ctx, func(tx store.Tx) error {
				p, err := tx.LockFailurePattern(b.ctx, "p", "fp-1")
				if err != nil {
					return err
				}
				p.Frequency++
				return tx.PutFailurePattern(b.ctx, "p", p)
			})
		})
		requireNoErrors(t, "Update", errs)
		got := read(b, func(tx store.Tx) (trace.FailurePattern, error) { return tx.GetFailurePattern(b.ctx, "p", "fp-1") })
		if got.Frequency != 1+workers {
			t.Errorf("frequency = %d after %d concurrent increments, want %d (lost updates)", got.Frequency, workers, 1+workers)
		}
	})

	t.Run("ConcurrentSessionState", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		errs := together(workers, func(i int) error {
			return b.s.Update(b.ctx, func(tx store.Tx) error {
				s, err := tx.LockTraceState(b.ctx, "p", "counter")
				if err != nil {
					return err
				}
				n := 0
				if s != "" {
					fmt.Sscan(s, &n)
				}
				return tx.PutTraceState(b.ctx, "p", "counter", fmt.Sprint(n+1), at(i))
			})
		})
		requireNoErrors(t, "Update", errs)
		got := read(b, func(tx store.Tx) (string, error) { return tx.GetTraceState(b.ctx, "p", "counter") })
		if got != fmt.Sprint(workers) {
			t.Errorf("counter = %s after %d concurrent increments from nothing (lost updates)", got, workers)
		}
	})
}
