package kaizen_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/app/tracesvc"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/trace"
)

const goFail = "# example.com/app\n./config.go:12:5: undefined: parseConfig\nFAIL\texample.com/app [build failed]\n"

func cmdEvent(at time.Time, command string, exit int, output string) trace.Event {
	return trace.Event{Kind: trace.EventCommand, Time: at, Command: command, ExitCode: &exit, Output: output,
		Context: map[string]string{"cwd": "/repo"}}
}

func editEvent(at time.Time, path string) trace.Event {
	return trace.Event{Kind: trace.EventEdit, Time: at, Path: path}
}

// feed records events one call each, as the hooks do, a second apart.
func feed(t *testing.T, b *bundle, session string, evs ...trace.Event) []*kaizen.TraceEventResult {
	t.Helper()
	var out []*kaizen.TraceEventResult
	for _, ev := range evs {
		b.clock.Advance(time.Second)
		if ev.Time.IsZero() {
			ev.Time = b.clock.Now()
		}
		res, err := b.e.RecordTraceEvents(ctx, kaizen.TraceEventInput{SessionID: session, Events: []trace.Event{ev}})
		if err != nil {
			t.Fatalf("RecordTraceEvents(%s %q): %v", ev.Kind, ev.Command, err)
		}
		out = append(out, res)
	}
	return out
}

func traces(t *testing.T, b *bundle, q kaizen.TraceQuery) []kaizen.ExecutionTrace {
	t.Helper()
	l, err := b.e.ListTraces(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// The seed's three scenarios, assembled from session events.
func TestTraceSeedScenarios(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		// 1. one success
		feed(t, b, "s-one", cmdEvent(time.Time{}, "npm run build", 0, "built in 2s"))
		one := traces(t, b, kaizen.TraceQuery{SessionID: "s-one"})
		if len(one) != 1 || len(one[0].Attempts) != 1 || !one[0].FinalSuccess || one[0].Open {
			t.Fatalf("one success: %+v", one)
		}
		// 2. fail → retry → success
		feed(t, b, "s-two", cmdEvent(time.Time{}, "go test ./...", 1, goFail), editEvent(time.Time{}, "config.go"),
			cmdEvent(time.Time{}, "go test ./...", 0, "ok  \texample.com/app\t0.2s"))
		two := traces(t, b, kaizen.TraceQuery{SessionID: "s-two"})
		if len(two) != 1 || len(two[0].Attempts) != 2 || !two[0].Recovered() {
			t.Fatalf("fail → success: %+v", two)
		}
		a2 := two[0].Attempts[1]
		if a2.FixSource != trace.FixSelfCorrection || !strings.Contains(a2.FixApplied, "config.go") {
			t.Errorf("the retry's fix: %q (%s)", a2.FixApplied, a2.FixSource)
		}
		pats, err := b.e.ListFailurePatterns(ctx, kaizen.FailurePatternQuery{SkillID: "cmd:go test"})
		if err != nil || len(pats.Items) != 1 {
			t.Fatalf("patterns: %v %+v", err, pats)
		}
		if p := pats.Items[0]; p.Frequency != 1 || !strings.Contains(p.SuggestedFix, "config.go") || p.ErrorType == "" {
			t.Errorf("pattern: %+v", p)
		}
		// 3. fail ×3 → give up (the session ends)
		fail := "Error: Cannot find module 'left-pad'\n    at Module._resolveFilename (node:internal/modules/cjs/loader:1039:15)"
		feed(t, b, "s-three", cmdEvent(time.Time{}, "node scripts/build.js", 1, fail), editEvent(time.Time{}, "package.json"),
			cmdEvent(time.Time{}, "node scripts/build.js", 1, fail), cmdEvent(time.Time{}, "node scripts/build.js", 1, fail),
			trace.Event{Kind: trace.EventSessionEnd})
		three := traces(t, b, kaizen.TraceQuery{SessionID: "s-three"})
		if len(three) != 1 || len(three[0].Attempts) != 3 || !three[0].GaveUp() {
			t.Fatalf("fail ×3: %+v", three)
		}
		skills, err := b.e.ListTraceSkills(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		byID := map[string]trace.SkillStats{}
		for _, s := range skills.Items {
			byID[s.SkillID] = s
		}
		if s := byID[three[0].SkillID]; !s.NeedsPerson || s.GaveUp != 1 || s.SuccessRate != 0 {
			t.Errorf("gave-up skill: %+v", s)
		}
		if s := byID["cmd:go test"]; s.Recovered != 1 || s.SuccessRate != 1 || s.NeedsPerson {
			t.Errorf("recovered skill: %+v", s)
		}
		// the artifact's execution history (the script the command ran)
		h, err := b.e.ArtifactHistory(ctx, "", "scripts/build.js")
		if err != nil || len(h.Records) != 3 || len(h.ByContext) != 1 || h.ByContext[0].Rate.Rate != 0 {
			t.Errorf("artifact history: %v %+v", err, h)
		}
	})
}

// The "done when": a session fails, edits, fails, edits and passes
// the same test command; the next session is warned before that command,
// with the fix; its passing run makes the warning count as helpful.
func TestTraceWarnsTheNextSessionWithTheFix(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		feed(t, b, "claude-a",
			cmdEvent(time.Time{}, "go test ./...", 1, goFail), editEvent(time.Time{}, "config.go"),
			cmdEvent(time.Time{}, "go test ./...", 1, goFail), editEvent(time.Time{}, "config_loader.go"),
			cmdEvent(time.Time{}, "go test ./...", 0, "ok  \texample.com/app\t0.3s"))
		got := traces(t, b, kaizen.TraceQuery{SessionID: "claude-a"})
		if len(got) != 1 || len(got[0].Attempts) != 3 || !got[0].FinalSuccess {
			t.Fatalf("want one trace of 3 attempts: %+v", got)
		}
		pats, _ := b.e.ListFailurePatterns(ctx, kaizen.FailurePatternQuery{})
		if len(pats.Items) != 1 || pats.Items[0].SuggestedFix == "" {
			t.Fatalf("want one pattern with a fix: %+v", pats.Items)
		}
		fix := pats.Items[0].SuggestedFix
		// next session, before the same command
		chk, err := b.e.CheckCommand(ctx, kaizen.TraceCheckInput{SessionID: "claude-b", Command: "go test ./...",
			Context: map[string]string{"cwd": "/repo"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(chk.Warnings) != 1 || chk.Warnings[0].Fix != fix || !strings.Contains(chk.Context, "not instructions") ||
			!strings.Contains(chk.Context, "config") {
			t.Fatalf("check: %+v", chk)
		}
		// at most once per pattern per session
		again, err := b.e.CheckCommand(ctx, kaizen.TraceCheckInput{SessionID: "claude-b", Command: "go test ./..."})
		if err != nil || len(again.Warnings) != 0 {
			t.Errorf("a second check in the session warned again: %v %+v", err, again)
		}
		// a different command does not warn
		other, err := b.e.CheckCommand(ctx, kaizen.TraceCheckInput{SessionID: "claude-c", Command: "npm test"})
		if err != nil || len(other.Warnings) != 0 {
			t.Errorf("npm test warned: %v %+v", err, other)
		}
		// the warned run passes: the pattern's weight rises
		feed(t, b, "claude-b", cmdEvent(time.Time{}, "go test ./...", 0, "ok"))
		p, err := b.e.GetFailurePattern(ctx, "", pats.Items[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if p.Warnings != 1 || p.Helped != 1 || p.Weight <= pats.Items[0].Weight {
			t.Errorf("after a helped warning: warnings %d helped %d weight %v (was %v)", p.Warnings, p.Helped, p.Weight, pats.Items[0].Weight)
		}
		bt := traces(t, b, kaizen.TraceQuery{SessionID: "claude-b"})
		if len(bt) != 1 || len(bt[0].Attempts[0].WarnedPatterns) != 1 {
			t.Errorf("the warned attempt must name the pattern: %+v", bt)
		}
	})
}

// A session end queues the task-end review; the job runner runs it, and
// running it again changes no pattern.
func TestTraceTaskEndReviewJob(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		res := feed(t, b, "claude-r", cmdEvent(time.Time{}, "pytest -q", 1, "E   KeyError: 'user_id'\nFAILED tests/test_api.py::test_get - KeyError"),
			editEvent(time.Time{}, "app/api.py"), cmdEvent(time.Time{}, "pytest -q", 0, "3 passed in 0.2s"),
			trace.Event{Kind: trace.EventSessionEnd})
		if !res[len(res)-1].ReviewQueued {
			t.Fatal("session end did not queue the task-end review")
		}
		if _, err := b.e.RunDueJobs(ctx); err != nil {
			t.Fatal(err)
		}
		revs, err := b.e.ListTraceReviews(ctx, kaizen.TraceReviewQuery{Kind: "task"})
		if err != nil || len(revs.Items) != 1 {
			t.Fatalf("task reviews: %v %+v", err, revs)
		}
		// the learned fix reached the experience system as a heuristic
		hs, err := b.e.ListHeuristics(ctx, kaizen.HeuristicQuery{})
		if err != nil || hs.Total != 1 || !strings.Contains(hs.Items[0].Rule, "api.py") ||
			!strings.Contains(hs.Items[0].Trigger, "pytest") {
			t.Fatalf("heuristics from the review: %v %+v", err, hs)
		}
		before, _ := b.e.ListFailurePatterns(ctx, kaizen.FailurePatternQuery{})
		again, err := b.e.ReviewTask(ctx, "", "claude-r")
		if err != nil {
			t.Fatal(err)
		}
		if len(again.Review.Patterns) != 0 {
			t.Errorf("a second review changed patterns: %+v", again.Review.Patterns)
		}
		if hs2, _ := b.e.ListHeuristics(ctx, kaizen.HeuristicQuery{}); hs2.Total != 1 {
			t.Errorf("a second review added heuristics: %d", hs2.Total)
		}
		after, _ := b.e.ListFailurePatterns(ctx, kaizen.FailurePatternQuery{})
		if len(before.Items) != 1 || after.Items[0].Frequency != before.Items[0].Frequency {
			t.Errorf("frequency changed by a re-review: %+v → %+v", before.Items, after.Items)
		}
		if _, err := b.e.ReviewTask(ctx, "", "no-such-task"); kaizen.KindOf(err) != kaizen.KindNotFound {
			t.Errorf("review of a task without traces: %v", err)
		}
	})
}

// The scheduled reviews run once per period from the job runner, with an
// injected clock, and a run interrupted by a crash (its lease held by a
// dead runner) is finished by the next one, without a second review.
func TestTraceScheduledReviews(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		// a recovered chain and a failing one on the first day
		feed(t, b, "s1", cmdEvent(time.Time{}, "go test ./...", 1, goFail), editEvent(time.Time{}, "config.go"),
			cmdEvent(time.Time{}, "go test ./...", 0, "ok"))
		feed(t, b, "s2", cmdEvent(time.Time{}, "go vet ./...", 1, "./x.go:3:2: unreachable code"), trace.Event{Kind: trace.EventSessionEnd})
		// the next day: the daily job of that day reviews the day before
		day := 24 * time.Hour
		b.clock.Set(start.Truncate(day).Add(day + time.Hour))
		if _, err := b.e.RunDueJobs(ctx); err != nil {
			t.Fatal(err)
		}
		revs, err := b.e.ListTraceReviews(ctx, kaizen.TraceReviewQuery{Kind: "daily"})
		if err != nil || len(revs.Items) != 1 {
			t.Fatalf("daily reviews: %v %+v", err, revs)
		}
		r := revs.Items[0]
		if !r.PeriodEnd.Equal(start.Truncate(day).Add(day)) || !strings.Contains(r.Report, "# kaizen daily review") {
			t.Errorf("review period %s – %s, report:\n%s", r.PeriodStart, r.PeriodEnd, r.Report)
		}
		var res trace.ScheduledReviewResult
		if err := json.Unmarshal(r.Result, &res); err != nil || res.Totals.Traces != 2 || res.Totals.Recovered != 1 {
			t.Errorf("review result: %v %+v", err, res.Totals)
		}
		// running the jobs again, or the review by hand, adds nothing
		if _, err := b.e.RunDueJobs(ctx); err != nil {
			t.Fatal(err)
		}
		out, err := b.e.RunTraceReview(ctx, kaizen.ScheduledReviewInput{Kind: "daily"})
		if err != nil || out.Created || out.Review.ID != r.ID {
			t.Errorf("manual re-run: %v %+v", err, out)
		}
		// crash in the middle: a trace of the second day queues that day's
		// review; the job is claimed by a runner that dies; after its
		// lease the next runner finishes it, once.
		feed(t, b, "s3", cmdEvent(time.Time{}, "go test ./...", 0, "ok"))
		b.clock.Set(start.Truncate(day).Add(2*day + time.Minute))
		st := b.e.Store()
		now := b.clock.Now()
		var claimed []store.Job
		if err := st.Update(ctx, func(tx store.Tx) error {
			var err error
			claimed, err = tx.ClaimJobs(ctx, []string{tracesvc.KindReviewDaily}, "dead-runner", now, time.Minute, 10)
			return err
		}); err != nil || len(claimed) != 1 {
			t.Fatalf("claim as the dead runner: %v %d", err, len(claimed))
		}
		if _, err := b.e.RunDueJobs(ctx); err != nil { // lease still held: nothing
			t.Fatal(err)
		}
		if n := len(dailyReviews(t, b)); n != 1 {
			t.Fatalf("a job leased by another runner ran: %d reviews", n)
		}
		b.clock.Advance(2 * time.Minute)
		if _, err := b.e.RunDueJobs(ctx); err != nil {
			t.Fatal(err)
		}
		if n := len(dailyReviews(t, b)); n != 2 {
			t.Errorf("after the dead runner's lease: %d daily reviews, want 2", n)
		}
		j, err := getJob(b, claimed[0].ID)
		if err != nil || j.State != store.JobCompleted {
			t.Errorf("the interrupted job: %v %+v", err, j)
		}
	})
}

func dailyReviews(t *testing.T, b *bundle) []kaizen.TraceReview {
	t.Helper()
	revs, err := b.e.ListTraceReviews(ctx, kaizen.TraceReviewQuery{Kind: "daily"})
	if err != nil {
		t.Fatal(err)
	}
	return revs.Items
}

func getJob(b *bundle, id string) (store.Job, error) {
	var j store.Job
	err := b.e.Store().View(ctx, func(tx store.Tx) error {
		var err error
		j, err = tx.GetJob(ctx, id)
		return err
	})
	return j, err
}

// An open chain survives a restart: the engine is closed between the
// failing and the passing run.
func TestTraceSessionSurvivesReopen(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			dsn := dsnFor(t, backend)
			tweak := func(c *kaizen.Config) { c.DB = dsn }
			b := setup(t, backend, tweak)
			feed(t, b, "s", cmdEvent(time.Time{}, "cargo test", 101, "error[E0425]: cannot find value `cfg` in this scope\n --> src/main.rs:4:5"),
				editEvent(time.Time{}, "src/main.rs"))
			now := b.clock.Now()
			b.e.Close()
			b2 := setup(t, backend, tweak)
			b2.clock.Set(now)
			feed(t, b2, "s", cmdEvent(time.Time{}, "cargo test", 0, "test result: ok. 3 passed"))
			got := traces(t, b2, kaizen.TraceQuery{SessionID: "s"})
			if len(got) != 1 || len(got[0].Attempts) != 2 || !got[0].FinalSuccess ||
				!strings.Contains(got[0].Attempts[1].FixApplied, "main.rs") {
				t.Fatalf("after reopen: %+v", got)
			}
		})
	}
}

// Secrets in commands and outputs never reach the store; bad input is a
// typed error that writes nothing.
func TestTraceRedactsAndRejects(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		secret := "ghp_" + strings.Repeat("aB3dE5fG7h", 4)[:36]
		feed(t, b, "s", cmdEvent(time.Time{}, "curl -H 'Authorization: token "+secret+"' https://api.example.com/x", 22,
			"curl: (22) The requested URL returned error: 401 for token "+secret))
		tr := traces(t, b, kaizen.TraceQuery{SessionID: "s"})
		raw, _ := json.Marshal(tr)
		if len(tr) != 1 || strings.Contains(string(raw), secret) {
			t.Fatalf("the secret was stored: %s", raw)
		}
		bad := []kaizen.TraceEventInput{
			{SessionID: "", Events: []trace.Event{cmdEvent(start, "ls", 0, "")}},
			{SessionID: "s", Events: nil},
			{SessionID: "s", Events: []trace.Event{{Kind: "nope", Time: b.clock.Now().Add(time.Hour)}}},
			{SessionID: "s", Events: []trace.Event{cmdEvent(start.Add(-time.Hour), "go test", 1, "x")}}, // back in time
		}
		for i, in := range bad {
			if _, err := b.e.RecordTraceEvents(ctx, in); kaizen.KindOf(err) != kaizen.KindInvalid {
				t.Errorf("bad input %d: %v", i, err)
			}
		}
		if n := len(traces(t, b, kaizen.TraceQuery{})); n != 1 {
			t.Errorf("bad input wrote traces: %d", n)
		}
		if _, err := b.e.CheckCommand(ctx, kaizen.TraceCheckInput{Command: "   "}); kaizen.KindOf(err) != kaizen.KindInvalid {
			t.Errorf("empty command: %v", err)
		}
		if _, err := b.e.RecordTrace(ctx, kaizen.RecordTraceInput{Trace: trace.ExecutionTrace{SkillID: "x"}}); kaizen.KindOf(err) != kaizen.KindInvalid {
			t.Errorf("trace without attempts: %v", err)
		}
		if _, err := b.e.GetTrace(ctx, "", "nope"); kaizen.KindOf(err) != kaizen.KindNotFound {
			t.Errorf("missing trace: %v", err)
		}
	})
}

// A trace recorded whole teaches the same pattern as one assembled from
// hook events, and recording it twice counts it once.
func TestRecordTraceWhole(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		t0 := b.clock.Now()
		in := kaizen.RecordTraceInput{Trace: trace.ExecutionTrace{ID: "tr-1", SkillID: "skill:csv-import", TaskID: "task-9",
			Attempts: []trace.Attempt{
				{Timestamp: t0, Context: map[string]string{"command": "python import.py data.csv"},
					Error: "UnicodeDecodeError: 'ascii' codec can't decode byte 0xe4 in position 12: ordinal not in range(128)"},
				{Timestamp: t0.Add(time.Minute), Success: true, FixApplied: "添加 encoding='utf-8'", FixSource: trace.FixSelfCorrection},
			}}}
		for range 2 {
			res, err := b.e.RecordTrace(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Trace.FinalSuccess || len(res.Trace.Attempts[0].Signatures) < 3 {
				t.Errorf("recorded: %+v", res.Trace)
			}
		}
		pats, _ := b.e.ListFailurePatterns(ctx, kaizen.FailurePatternQuery{SkillID: "skill:csv-import"})
		if len(pats.Items) != 1 || pats.Items[0].Frequency != 1 || !strings.Contains(pats.Items[0].SuggestedFix, "encoding") {
			t.Fatalf("patterns: %+v", pats.Items)
		}
		// self-verification sees the pattern's fix for the same error
		v, err := b.e.VerifyResult(ctx, kaizen.TraceVerifyInput{SkillID: "skill:csv-import", Command: "python import.py data.csv",
			Observation: trace.Observation{ExitCode: 1, Output: "UnicodeDecodeError: 'ascii' codec can't decode byte 0xc3 in position 40: ordinal not in range(128)"}})
		if err != nil || v.Action != trace.ActionCorrect || len(v.Fixes) == 0 {
			t.Errorf("verify: %v %+v", err, v)
		}
	})
}

// Concurrent sessions record their traces without losing any.
func TestTraceConcurrentSessions(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		const sessions = 8
		var wg sync.WaitGroup
		errs := make(chan error, sessions)
		base := b.clock.Now()
		for i := range sessions {
			wg.Go(func() {
				sid := sprintf("cs-%d", i)
				for k, ev := range []trace.Event{cmdEvent(base.Add(time.Second), "go test ./...", 1, goFail),
					editEvent(base.Add(2*time.Second), "config.go"), cmdEvent(base.Add(3*time.Second), "go test ./...", 0, "ok")} {
					ev.ID = sprintf("%s-%d", sid, k)
					if _, err := b.e.RecordTraceEvents(context.Background(), kaizen.TraceEventInput{SessionID: sid, Events: []trace.Event{ev}}); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if n := len(traces(t, b, kaizen.TraceQuery{Status: "succeeded", Limit: 100})); n != sessions {
			t.Errorf("%d succeeded traces, want %d", n, sessions)
		}
		pats, _ := b.e.ListFailurePatterns(ctx, kaizen.FailurePatternQuery{})
		if len(pats.Items) != 1 || pats.Items[0].Frequency != sessions {
			t.Errorf("one pattern seen %d times expected: %+v", sessions, pats.Items)
		}
	})
}

// The [trace] section loads from kaizen.toml and KAIZEN_TRACE_* variables,
// and a value out of range is a configuration error.
func TestTraceConfig(t *testing.T) {
	home := t.TempDir()
	toml := "[trace.assembly]\nidle_timeout = \"30m\"\n[trace.check]\nmax_warnings_per_session = 5\n"
	if err := os.WriteFile(filepath.Join(home, kaizen.ConfigFile), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KAIZEN_TRACE_CHECK_MIN_CONFIDENCE", "0.8")
	cfg, err := kaizen.LoadConfig(home)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Trace.Assembly.IdleTimeout != 30*time.Minute || cfg.Trace.Check.MaxWarningsPerSession != 5 ||
		cfg.Trace.Check.MinConfidence != 0.8 || cfg.Trace.Verify.MaxCorrections != 3 {
		t.Errorf("trace config %+v", cfg.Trace)
	}
	t.Setenv("KAIZEN_TRACE_CHECK_MIN_CONFIDENCE", "1.5")
	if _, err := kaizen.LoadConfig(home); kaizen.KindOf(err) != kaizen.KindInvalid {
		t.Errorf("min_confidence 1.5: %v", err)
	}
}

// Traces, failure patterns, skills and reviews travel in an export; an
// import into another project warns there too, and importing twice
// inserts nothing more.
func TestTraceExportImport(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		b := setup(t, backend)
		feed(t, b, "s", cmdEvent(time.Time{}, "go test ./...", 1, goFail), editEvent(time.Time{}, "config.go"),
			cmdEvent(time.Time{}, "go test ./...", 1, goFail), editEvent(time.Time{}, "parse.go"),
			cmdEvent(time.Time{}, "go test ./...", 0, "ok"))
		if _, err := b.e.ReviewTask(ctx, "", "s"); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		exp, err := b.e.Export(ctx, &buf, kaizen.ExportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if exp.Records["trace"] != 1 || exp.Records["failure_pattern"] != 1 || exp.Records["trace_skill"] != 1 || exp.Records["trace_review"] != 1 {
			t.Fatalf("export counts %v", exp.Records)
		}
		for range 2 {
			res, err := b.e.Import(ctx, bytes.NewReader(buf.Bytes()), kaizen.ImportOptions{Project: "copy"})
			if err != nil {
				t.Fatal(err)
			}
			_ = res
		}
		l, _ := b.e.ListTraces(ctx, kaizen.TraceQuery{Project: "copy"})
		if l.Total != 1 {
			t.Errorf("traces in the copy: %d", l.Total)
		}
		chk, err := b.e.CheckCommand(ctx, kaizen.TraceCheckInput{Project: "copy", Command: "go test ./...", Context: map[string]string{"cwd": "/repo"}})
		if err != nil || len(chk.Warnings) != 1 {
			t.Errorf("check in the copy: %v %+v", err, chk)
		}
	})
}
