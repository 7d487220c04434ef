package kaizen_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/testkit"
	"github.com/kaizenhq/kaizen/model"
)

// goodChat answers every call with the experience of lessonJSON, so that
// a balanced extraction makes one call and a full one two.
func goodChat(t *testing.T) *chatServer {
	good := string(lessonJSON(t, generatedLesson))
	return newChatServer(t, func(int64, map[string]any) (int, string, time.Duration) {
		return http.StatusOK, good, 0
	})
}

// withChat configures one chat provider, a short quiet delay and the mode.
func withChat(srv *chatServer, delay time.Duration, mode experience.Mode) func(*kaizen.Config) {
	return func(c *kaizen.Config) {
		c.Model.Chat = []model.ProviderConfig{{Name: "loopback", BaseURL: srv.URL + "/v1", Model: "m",
			Timeout: 2 * time.Minute}}
		c.Experience.AutoExtractDelay = delay
		c.Experience.Mode = mode
	}
}

func hasExperience(b *bundle, task string) bool {
	_, err := b.e.GetExperience(ctx, "", task)
	return err == nil
}

// runJobs runs the background jobs due at the engine's clock.
func runJobs(t *testing.T, b *bundle) int {
	t.Helper()
	res, err := b.e.RunDueJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return res.Ran
}

// extractionJob is the task's extraction job.
func extractionJob(t *testing.T, b *bundle, task string) kaizen.JobList {
	t.Helper()
	l, err := b.e.ListJobs(ctx, kaizen.JobQuery{Kind: "experience.extract"})
	if err != nil {
		t.Fatal(err)
	}
	return *l
}

// TestExtractionJobAfterOutcome: an outcome of a task with captured turns
// enqueues its extraction in the same transaction, due after the quiet
// delay; the job extracts the experience with the mode's number of model
// calls; a later outcome of the task costs no call.
func TestExtractionJobAfterOutcome(t *testing.T) {
	for _, tc := range []struct {
		mode  experience.Mode
		calls int64
	}{{experience.ModeBalanced, 1}, {experience.ModeFull, 2}} {
		t.Run(string(tc.mode), func(t *testing.T) {
			t.Parallel()
			srv := goodChat(t)
			b := setup(t, "sqlite", withChat(srv, time.Minute, tc.mode))
			conversation(t, b, "task-1")
			if _, err := b.e.RecordOutcome(ctx, outcome("task-1", true)); err != nil {
				t.Fatal(err)
			}
			if n := runJobs(t, b); n != 0 || hasExperience(b, "task-1") {
				t.Fatalf("before the quiet delay: ran %d", n)
			}
			b.clock.Advance(time.Minute)
			if n := runJobs(t, b); n != 1 {
				t.Fatalf("after the delay: ran %d jobs, want 1", n)
			}
			if !hasExperience(b, "task-1") || srv.calls.Load() != tc.calls {
				t.Fatalf("experience %v after %d model calls, want %d", hasExperience(b, "task-1"), srv.calls.Load(), tc.calls)
			}
			// A second outcome of the task: the job is done, nothing runs.
			if _, err := b.e.RecordOutcome(ctx, outcome("task-1", true)); err != nil {
				t.Fatal(err)
			}
			b.clock.Advance(time.Hour)
			runJobs(t, b)
			if srv.calls.Load() != tc.calls {
				t.Errorf("a second outcome cost %d more calls", srv.calls.Load()-tc.calls)
			}
			if l := extractionJob(t, b, "task-1"); l.Total != 1 || l.Items[0].State != "completed" {
				t.Errorf("jobs: %+v", l.Items)
			}
		})
	}
}

// TestExtractionJobDebounces: an outcome inferred by the hooks and the
// explicit report that replaces it within the quiet delay make one job
// whose due time follows the replacement; a repeated report changes
// nothing; a task without captured turns completes without a model call.
func TestExtractionJobDebounces(t *testing.T) {
	t.Parallel()
	srv := goodChat(t)
	b := setup(t, "sqlite", withChat(srv, 10*time.Minute, experience.ModeBalanced))
	conversation(t, b, "task-1")
	inferred := outcome("task-1", true)
	inferred.Inferred = true
	for i, in := range []kaizen.OutcomeInput{inferred, outcome("task-1", true), outcome("task-1", true)} {
		if i > 0 {
			b.clock.Advance(6 * time.Minute)
		}
		if _, err := b.e.RecordOutcome(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	// Due 10 minutes after the replacement (6 minutes ago).
	if l := extractionJob(t, b, "task-1"); l.Total != 1 || !l.Items[0].RunAt.Equal(b.clock.Now().Add(-6*time.Minute+10*time.Minute)) {
		t.Fatalf("after three outcomes: %+v", l.Items)
	}
	if n := runJobs(t, b); n != 0 {
		t.Fatalf("ran %d jobs within the delay of the last outcome", n)
	}
	if _, err := b.e.RecordOutcome(ctx, kaizen.OutcomeInput{TaskID: "no-turns", DurationMs: ptr(int64(1000)),
		Success: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(10 * time.Minute)
	if n := runJobs(t, b); n != 2 || srv.calls.Load() != 1 {
		t.Fatalf("ran %d jobs with %d calls, want 2 and 1 (the task without turns costs nothing)", n, srv.calls.Load())
	}
}

// TestExtractionJobFromAnotherProcess: an outcome recorded by another
// process on the same store (a CLI command, an MCP server over stdio) is
// extracted by the daemon's runner, which finds its job in the store.
func TestExtractionJobFromAnotherProcess(t *testing.T) {
	t.Parallel()
	srv := goodChat(t)
	cli := setup(t, "sqlite", withChat(srv, time.Minute, experience.ModeBalanced))
	conversation(t, cli, "task-1")
	if _, err := cli.e.RecordOutcome(ctx, outcome("task-1", true)); err != nil {
		t.Fatal(err)
	}
	cli.e.Close()
	daemon := setup(t, "sqlite", withChat(srv, time.Minute, experience.ModeBalanced), func(c *kaizen.Config) {
		c.DB, c.Home = cli.cfg.DB, cli.cfg.Home
	})
	daemon.clock.Advance(time.Minute)
	if n := runJobs(t, daemon); n != 1 || !hasExperience(daemon, "task-1") {
		t.Fatalf("the daemon ran %d jobs", n)
	}
}

// TestExtractionJobOff: with auto_extract or extraction off, or in minimal
// mode, no job is queued and AutoExtractOff says why; without a chat model
// a queued job completes without a call.
func TestExtractionJobOff(t *testing.T) {
	t.Parallel()
	srv := goodChat(t)
	for name, tc := range map[string]struct {
		tweak  func(*kaizen.Config)
		queued bool
		reason string
	}{
		"auto_extract off": {func(c *kaizen.Config) { c.Experience.AutoExtract = false }, false, "auto_extract is false"},
		"extraction off":   {func(c *kaizen.Config) { c.Experience.ExtractionEnabled = false }, false, "extraction_enabled is false"},
		"minimal":          {func(c *kaizen.Config) { c.Experience.Mode = experience.ModeMinimal }, false, "minimal"},
		"no chat model":    {func(c *kaizen.Config) { c.Model.Chat = nil }, true, "no chat model"},
	} {
		t.Run(name, func(t *testing.T) {
			b := setup(t, "sqlite", withChat(srv, 0, experience.ModeBalanced), tc.tweak)
			if why := b.e.AutoExtractOff(); !strings.Contains(why, tc.reason) {
				t.Errorf("AutoExtractOff = %q, want %q", why, tc.reason)
			}
			conversation(t, b, "task-1")
			if _, err := b.e.RecordOutcome(ctx, outcome("task-1", true)); err != nil {
				t.Fatal(err)
			}
			if l := extractionJob(t, b, "task-1"); (l.Total == 1) != tc.queued {
				t.Fatalf("queued %d jobs, want queued=%v", l.Total, tc.queued)
			}
			runJobs(t, b)
			if hasExperience(b, "task-1") {
				t.Error("an experience was extracted")
			}
		})
	}
	if srv.calls.Load() != 0 {
		t.Errorf("%d model calls", srv.calls.Load())
	}
}

// TestExtractionJobRetriesAndGivesUp: model failures are retried with
// backoff, then the job fails until the task's next outcome (the explicit
// report replacing the one the hooks inferred) revives it; the API key
// never reaches the logs.
func TestExtractionJobRetriesAndGivesUp(t *testing.T) {
	t.Parallel()
	const key = "sk-test-0123456789abcdefSECRET"
	good := string(lessonJSON(t, generatedLesson))
	var healthy atomic.Bool
	var auth sync.Map
	srv := newChatServer(t, func(n int64, _ map[string]any) (int, string, time.Duration) {
		if healthy.Load() {
			return http.StatusOK, good, 0
		}
		return http.StatusServiceUnavailable, "", 0
	})
	inner := srv.Config.Handler
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"), true)
		inner.ServeHTTP(w, r)
	})
	var logs syncBuffer
	b := setup(t, "sqlite", withChat(srv, time.Second, experience.ModeBalanced), func(c *kaizen.Config) {
		c.Model.Chat[0].APIKey = key
		c.Model.Chat[0].MaxRetries = 0
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	conversation(t, b, "task-1")
	inferred := outcome("task-1", true)
	inferred.Inferred = true
	if _, err := b.e.RecordOutcome(ctx, inferred); err != nil {
		t.Fatal(err)
	}
	// Four attempts, 1 s, 2 s and 4 s apart, then the job fails.
	for _, wait := range []time.Duration{time.Second, time.Second, 2 * time.Second, 4 * time.Second} {
		b.clock.Advance(wait)
		if n := runJobs(t, b); n != 1 {
			t.Fatalf("after %v: ran %d jobs", wait, n)
		}
	}
	calls := srv.calls.Load()
	if l := extractionJob(t, b, "task-1"); l.Items[0].State != "failed" || l.Items[0].Attempts != 4 || hasExperience(b, "task-1") {
		t.Fatalf("after four attempts: %+v", l.Items[0])
	}
	b.clock.Advance(time.Hour)
	if n := runJobs(t, b); n != 0 {
		t.Fatalf("a failed job ran again (%d)", n)
	}
	if _, ok := auth.Load("Bearer " + key); !ok {
		t.Fatal("the API key was not sent: the log check below would prove nothing")
	}
	if out := logs.String(); strings.Contains(out, key) || strings.Contains(out, "SECRET") {
		t.Fatalf("the API key reached the logs:\n%s", out)
	} else if !strings.Contains(out, "job failed") {
		t.Fatalf("the failure was not logged:\n%s", out)
	}
	// The model recovers; the task's next outcome revives the job.
	healthy.Store(true)
	if _, err := b.e.RecordOutcome(ctx, outcome("task-1", true)); err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(time.Second)
	if n := runJobs(t, b); n != 1 || !hasExperience(b, "task-1") || srv.calls.Load() != calls+1 {
		t.Fatalf("after recovery: ran %d, %d calls", n, srv.calls.Load()-calls)
	}
}

// TestExtractionJobStopCancelsInFlight: stopping the runner during a slow
// model call returns once the call is cancelled, not when the model
// answers, leaves nothing of the extraction behind and hands the job back;
// the next run extracts it.
func TestExtractionJobStopCancelsInFlight(t *testing.T) {
	t.Parallel()
	good := string(lessonJSON(t, generatedLesson))
	var slow atomic.Bool
	slow.Store(true)
	var cancelled atomic.Int64
	srv := newChatServer(t, func(int64, map[string]any) (int, string, time.Duration) {
		if slow.Load() {
			return http.StatusOK, good, 10 * time.Minute
		}
		return http.StatusOK, good, 0
	})
	srv.Config.Handler = countCancelled(srv.Config.Handler, &cancelled)
	// no periodic collection: this test counts the jobs of one run
	noGC := func(c *kaizen.Config) { c.Retention.Interval = 0 }
	b := setup(t, "sqlite", withChat(srv, 0, experience.ModeBalanced), noGC)
	conversation(t, b, "task-1")
	if _, err := b.e.RecordOutcome(ctx, outcome("task-1", true)); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- b.e.RunJobs(runCtx) }()
	testkit.Eventually(t, "the model call", func() bool { return srv.calls.Load() == 1 })
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(testkit.Patience): // the model would answer in 10 minutes
		t.Fatal("stopping waited for the model instead of cancelling the extraction")
	}
	testkit.Eventually(t, "the model request cancelled", func() bool { return cancelled.Load() == 1 })
	if hasExperience(b, "task-1") {
		t.Fatal("an experience was stored from a cancelled extraction")
	}
	if l := extractionJob(t, b, "task-1"); l.Items[0].State != "available" {
		t.Fatalf("the job in flight was not handed back: %+v", l.Items[0])
	}
	slow.Store(false)
	if n := runJobs(t, b); n != 1 || !hasExperience(b, "task-1") {
		t.Fatalf("the next run: %d jobs", n)
	}
}

// countCancelled counts requests whose client went away before the reply.
func countCancelled(h http.Handler, n *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		if errors.Is(r.Context().Err(), context.Canceled) {
			n.Add(1)
		}
	})
}

// syncBuffer is a bytes.Buffer safe for a logger and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestAutoExtractConfig checks the switches' defaults, validation, and
// their file and environment forms.
func TestAutoExtractConfig(t *testing.T) {
	d := kaizen.DefaultConfig().Experience
	if !d.AutoExtract || d.AutoExtractDelay != 30*time.Second {
		t.Fatalf("defaults: auto_extract %t, delay %s", d.AutoExtract, d.AutoExtractDelay)
	}
	home := t.TempDir()
	write := func(s string) {
		t.Helper()
		if err := writeFile(home+"/"+kaizen.ConfigFile, s); err != nil {
			t.Fatal(err)
		}
	}
	write("[experience]\nauto_extract = false\nauto_extract_delay = \"2m\"\n")
	cfg, err := kaizen.LoadConfig(home)
	if err != nil || cfg.Experience.AutoExtract || cfg.Experience.AutoExtractDelay != 2*time.Minute {
		t.Fatalf("file: %+v (%v)", cfg.Experience, err)
	}
	t.Setenv("KAIZEN_EXPERIENCE_AUTO_EXTRACT", "true")
	t.Setenv("KAIZEN_EXPERIENCE_AUTO_EXTRACT_DELAY", "45s")
	cfg, err = kaizen.LoadConfig(home)
	if err != nil || !cfg.Experience.AutoExtract || cfg.Experience.AutoExtractDelay != 45*time.Second {
		t.Fatalf("environment: %+v (%v)", cfg.Experience, err)
	}
	t.Setenv("KAIZEN_EXPERIENCE_AUTO_EXTRACT_DELAY", "soon")
	if _, err := kaizen.LoadConfig(home); kaizen.KindOf(err) != kaizen.KindInvalid ||
		!strings.Contains(err.Error(), "KAIZEN_EXPERIENCE_AUTO_EXTRACT_DELAY") {
		t.Fatalf("bad environment duration: %v", err)
	}
	t.Setenv("KAIZEN_EXPERIENCE_AUTO_EXTRACT_DELAY", "")
	for _, bad := range []string{"auto_extract_delay = 30", "auto_extract_delay = \"-1s\"",
		"auto_extract_delay = \"25h\"", "auto_extract_delay = \"thirty\"", "auto_extract = \"yes\""} {
		write("[experience]\n" + bad + "\n")
		// An empty variable is still set: unset it for the file to count.
		unsetenv(t, "KAIZEN_EXPERIENCE_AUTO_EXTRACT_DELAY")
		unsetenv(t, "KAIZEN_EXPERIENCE_AUTO_EXTRACT")
		if _, err := kaizen.LoadConfig(home); kaizen.KindOf(err) != kaizen.KindInvalid {
			t.Errorf("%s: got %v, want an invalid-config error", bad, err)
		}
	}
	write("[experience]\nauto_extract_delay = \"0s\"\n")
	if cfg, err := kaizen.LoadConfig(home); err != nil || cfg.Experience.AutoExtractDelay != 0 {
		t.Fatalf("a zero delay is valid: %v", err)
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o600) }

// unsetenv removes a variable for the rest of the test (restored after).
func unsetenv(t *testing.T, name string) {
	t.Helper()
	t.Setenv(name, "")
	os.Unsetenv(name)
}
