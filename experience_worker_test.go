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

func startWorker(t *testing.T, b *bundle) {
	t.Helper()
	if err := b.e.StartExperienceWorker(ctx); err != nil {
		t.Fatal(err)
	}
	if s := b.e.ExperienceWorkerStats(); !s.Running {
		t.Fatalf("worker not running: %+v", s)
	}
	// Outcomes recorded from now on reach the worker through the hook in
	// RecordOutcome, not through the rescan on start.
	testkit.Eventually(t, "the rescan on start", func() bool { return b.e.ExperienceWorkerStats().RescanDone })
}

// TestExperienceWorkerExtractsAfterOutcome: an outcome of a task with
// captured turns leads to its experience without anyone asking, with the
// mode's number of model calls; later outcomes of the task cost no call.
func TestExperienceWorkerExtractsAfterOutcome(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend string) {
		for _, tc := range []struct {
			mode  experience.Mode
			calls int64
		}{{experience.ModeBalanced, 1}, {experience.ModeFull, 2}} {
			t.Run(string(tc.mode), func(t *testing.T) {
				srv := goodChat(t)
				b := setup(t, backend, withChat(srv, 10*time.Millisecond, tc.mode))
				startWorker(t, b)
				conversation(t, b, "task-1")
				if _, err := b.e.RecordOutcome(ctx, outcome("task-1", true)); err != nil {
					t.Fatal(err)
				}
				testkit.Eventually(t, "the experience of task-1", func() bool { return hasExperience(b, "task-1") })
				exp, err := b.e.GetExperience(ctx, "", "task-1")
				if err != nil {
					t.Fatal(err)
				}
				if exp.Mode != tc.mode || exp.Extractor != experience.ExtractorLLM || exp.Calls != int(tc.calls) {
					t.Fatalf("experience: mode %s, extractor %s, %d calls", exp.Mode, exp.Extractor, exp.Calls)
				}
				hs, err := b.e.ListHeuristics(ctx, kaizen.HeuristicQuery{})
				if err != nil || hs.Total != 1 {
					t.Fatalf("heuristics from the background extraction: %+v (%v)", hs, err)
				}
				testkit.Eventually(t, "the worker's count", func() bool { return b.e.ExperienceWorkerStats().Extracted == 1 })
				if n := srv.calls.Load(); n != tc.calls {
					t.Fatalf("%s mode: %d model calls, want %d", tc.mode, n, tc.calls)
				}

				// The outcome reported again: queued again, found cached.
				if _, err := b.e.RecordOutcome(ctx, outcome("task-1", true)); err != nil {
					t.Fatal(err)
				}
				testkit.Eventually(t, "the second outcome handled", func() bool { return b.e.ExperienceWorkerStats().Cached == 1 })
				s := b.e.ExperienceWorkerStats()
				if n := srv.calls.Load(); n != tc.calls || s.ModelCalls != tc.calls || s.Extracted != 1 || s.Failed != 0 {
					t.Fatalf("after a second outcome: %d model calls (want %d), stats %+v", n, tc.calls, s)
				}
			})
		}
	})
}

// TestExperienceWorkerDebounces: an outcome is extracted only after the
// quiet delay; outcomes of one task within it queue the task once; Close
// does not wait for queued work.
func TestExperienceWorkerDebounces(t *testing.T) {
	t.Parallel()
	srv := goodChat(t)
	b := setup(t, "memory", withChat(srv, time.Hour, experience.ModeBalanced))
	startWorker(t, b)
	conversation(t, b, "task-1")
	for range 3 {
		if _, err := b.e.RecordOutcome(ctx, outcome("task-1", true)); err != nil {
			t.Fatal(err)
		}
	}
	// Due in an hour: queued once, nothing extracted (no wait needed to
	// see it: the enqueue is synchronous and the job not yet due).
	s := b.e.ExperienceWorkerStats()
	if s.Pending != 1 || s.Enqueued != 1 || s.Extracted != 0 || srv.calls.Load() != 0 || hasExperience(b, "task-1") {
		t.Fatalf("three outcomes within the delay: stats %+v, %d calls", s, srv.calls.Load())
	}
	// Close does not wait for the delay.
	closed := make(chan error, 1)
	go func() { closed <- b.e.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(testkit.Patience):
		t.Fatal("Close waited for queued work")
	}
	if s := b.e.ExperienceWorkerStats(); s.Running {
		t.Fatalf("worker still running after Close: %+v", s)
	}
}

// TestExperienceWorkerOneAtATime: extractions never overlap; a task whose
// turns were captured after its outcome (a Stop hook) is extracted with
// them when its turn comes; a task without turns is skipped without a
// model call or an error.
func TestExperienceWorkerOneAtATime(t *testing.T) {
	t.Parallel()
	good := string(lessonJSON(t, generatedLesson))
	release := make(chan struct{})
	srv := newChatServer(t, func(n int64, _ map[string]any) (int, string, time.Duration) {
		if n == 1 {
			<-release // hold the first extraction until the others are queued
		}
		return http.StatusOK, good, 0
	})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before the server's Close, should the test fail early
	var inFlight, most atomic.Int64
	inner := srv.Config.Handler
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		inner.ServeHTTP(w, r)
	})
	b := setup(t, "sqlite", withChat(srv, 0, experience.ModeBalanced))
	startWorker(t, b)
	conversation(t, b, "first")
	if _, err := b.e.RecordOutcome(ctx, outcome("first", true)); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the first extraction in flight", func() bool { return srv.calls.Load() == 1 })
	conversation(t, b, "second")
	for _, task := range []string{"late-turns", "no-turns", "second"} {
		if _, err := b.e.RecordOutcome(ctx, outcome(task, true)); err != nil {
			t.Fatal(err)
		}
	}
	conversation(t, b, "late-turns") // after its outcome
	unblock()
	testkit.Eventually(t, "every task handled", func() bool {
		s := b.e.ExperienceWorkerStats()
		return s.Extracted+s.Skipped+s.Failed+s.Retried >= 4
	})
	s := b.e.ExperienceWorkerStats()
	if s.Extracted != 3 || s.Skipped != 1 || s.Failed != 0 || s.Retried != 0 || srv.calls.Load() != 3 {
		t.Fatalf("stats %+v, %d calls", s, srv.calls.Load())
	}
	for task, want := range map[string]bool{"first": true, "late-turns": true, "second": true, "no-turns": false} {
		if hasExperience(b, task) != want {
			t.Errorf("%s: experience %t, want %t", task, !want, want)
		}
	}
	if m := most.Load(); m != 1 {
		t.Fatalf("%d model calls at once, want one at a time", m)
	}
}

// TestExperienceWorkerRescansOnStart: outcomes recorded while no worker ran
// are extracted by the next engine's worker; tasks without turns, with an
// experience already, or older than the rescan window are left alone.
func TestExperienceWorkerRescansOnStart(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	srv := goodChat(t)
	open := func(now time.Time) *bundle {
		return setup(t, "sqlite", withChat(srv, 10*time.Millisecond, experience.ModeBalanced), func(c *kaizen.Config) {
			c.Home, c.DB = home, home+"/kaizen.db"
			c.Now = func() time.Time { return now }
		})
	}
	b := open(start)
	// Older than the window when the second engine starts 8 days later.
	conversation(t, b, "old")
	if _, err := b.e.RecordOutcome(ctx, outcome("old", true)); err != nil {
		t.Fatal(err)
	}
	b.e.Close()

	later := start.Add(8 * 24 * time.Hour)
	b = open(later)
	for _, task := range []string{"task-a", "task-b", "done"} {
		conversation(t, b, task)
	}
	submit(t, b, "done", lessonJSON(t, generatedLesson)) // extracted by the agent
	for _, task := range []string{"task-a", "task-b", "done", "no-turns", "task-a"} {
		if _, err := b.e.RecordOutcome(ctx, outcome(task, true)); err != nil {
			t.Fatal(err)
		}
	}
	// Another project: the rescan covers every project.
	if _, err := b.e.Capture(ctx, kaizen.CaptureInput{Project: "other", TaskID: "task-c", Turns: []kaizen.TurnInput{
		{Role: "user", Content: "Rename the flag and keep the old one working.", TurnID: "t1"},
		{Role: "assistant", Content: "Renamed it with an alias for the old name.", TurnID: "t1"},
	}}); err != nil {
		t.Fatal(err)
	}
	in := outcome("task-c", true)
	in.Project = "other"
	if _, err := b.e.RecordOutcome(ctx, in); err != nil {
		t.Fatal(err)
	}
	if srv.calls.Load() != 0 {
		t.Fatalf("%d model calls without a worker", srv.calls.Load())
	}
	b.e.Close() // a stop (or a crash) before any extraction

	b = open(later.Add(time.Hour))
	startWorker(t, b)
	testkit.Eventually(t, "the rescanned tasks extracted", func() bool { return b.e.ExperienceWorkerStats().Extracted == 3 })
	for _, task := range []string{"task-a", "task-b"} {
		if !hasExperience(b, task) {
			t.Errorf("%s not extracted after the restart", task)
		}
	}
	if _, err := b.e.GetExperience(ctx, "other", "task-c"); err != nil {
		t.Errorf("task-c of project other not extracted: %v", err)
	}
	if hasExperience(b, "old") {
		t.Error("an outcome older than the rescan window was extracted")
	}
	s := b.e.ExperienceWorkerStats()
	if s.Rescanned != 3 || s.Skipped != 0 || s.Cached != 0 || srv.calls.Load() != 3 {
		t.Fatalf("rescan: stats %+v, %d model calls (want 3 tasks queued and 3 calls)", s, srv.calls.Load())
	}
}

// TestExperienceWorkerOff: without a chat model, with auto_extract or
// extraction disabled, or in minimal mode, starting the worker does
// nothing and says why; outcomes are recorded as before.
func TestExperienceWorkerOff(t *testing.T) {
	t.Parallel()
	srv := goodChat(t)
	for name, tc := range map[string]struct {
		tweak  func(*kaizen.Config)
		reason string
	}{
		"no chat model": {func(c *kaizen.Config) {}, "no chat model"},
		"auto_extract false": {func(c *kaizen.Config) {
			withChat(srv, 0, experience.ModeBalanced)(c)
			c.Experience.AutoExtract = false
		}, "auto_extract"},
		"extraction disabled": {func(c *kaizen.Config) {
			withChat(srv, 0, experience.ModeBalanced)(c)
			c.Experience.ExtractionEnabled = false
		}, "extraction_enabled"},
		"minimal mode": {withChat(srv, 0, experience.ModeMinimal), "minimal"},
	} {
		t.Run(name, func(t *testing.T) {
			b := setup(t, "memory", tc.tweak)
			if err := b.e.StartExperienceWorker(ctx); err != nil {
				t.Fatalf("a disabled worker must be a no-op, got %v", err)
			}
			s := b.e.ExperienceWorkerStats()
			if s.Running || !strings.Contains(s.Reason, tc.reason) {
				t.Fatalf("stats %+v: want not running because of %q", s, tc.reason)
			}
			conversation(t, b, "task-1")
			if _, err := b.e.RecordOutcome(ctx, outcome("task-1", true)); err != nil {
				t.Fatal(err)
			}
			if s := b.e.ExperienceWorkerStats(); s.Running || s.Pending != 0 || s.Enqueued != 0 {
				t.Fatalf("after an outcome: %+v", s)
			}
			// A second start is still a no-op, not a conflict.
			if err := b.e.StartExperienceWorker(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
	if n := srv.calls.Load(); n != 0 {
		t.Fatalf("%d model calls by disabled workers", n)
	}

	// Running: a second start and a start after Close are conflicts.
	b := setup(t, "memory", withChat(srv, time.Hour, experience.ModeBalanced))
	startWorker(t, b)
	var ke *kaizen.Error
	if err := b.e.StartExperienceWorker(ctx); !asError(err, &ke) || ke.Kind != kaizen.KindConflict {
		t.Fatalf("second start: %v", err)
	}
	b.e.Close()
	if err := b.e.StartExperienceWorker(ctx); !asError(err, &ke) || ke.Kind != kaizen.KindConflict {
		t.Fatalf("start after Close: %v", err)
	}
}

// TestExperienceWorkerCloseCancelsInFlight: Close during a slow model call
// returns once the call is cancelled, not when the model answers, and
// leaves nothing of the extraction behind; the next start extracts it.
func TestExperienceWorkerCloseCancelsInFlight(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	var cancelled atomic.Int64
	good := string(lessonJSON(t, generatedLesson))
	slow := newChatServer(t, func(int64, map[string]any) (int, string, time.Duration) {
		return http.StatusOK, good, 10 * time.Minute
	})
	slow.Config.Handler = countCancelled(slow.Config.Handler, &cancelled)
	open := func(srv *chatServer) *bundle {
		return setup(t, "sqlite", withChat(srv, 0, experience.ModeBalanced), func(c *kaizen.Config) {
			c.Home, c.DB = home, home+"/kaizen.db"
		})
	}
	b := open(slow)
	startWorker(t, b)
	conversation(t, b, "task-1")
	if _, err := b.e.RecordOutcome(ctx, outcome("task-1", true)); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the model call in flight", func() bool { return slow.calls.Load() == 1 })
	closed := make(chan error, 1)
	go func() { closed <- b.e.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(testkit.Patience): // the model would answer in 10 minutes
		t.Fatal("Close waited for the model instead of cancelling the extraction")
	}
	testkit.Eventually(t, "the model request cancelled", func() bool { return cancelled.Load() == 1 })

	// Nothing half written: no experience, signals or heuristics.
	fast := goodChat(t)
	b = open(fast)
	if hasExperience(b, "task-1") {
		t.Fatal("an experience was stored by a cancelled extraction")
	}
	sigs, err := b.e.ListSignals(ctx, kaizen.SignalQuery{TaskID: "task-1"})
	if err != nil || sigs.Total != 0 {
		t.Fatalf("signals after a cancelled extraction: %+v (%v)", sigs, err)
	}
	hs, err := b.e.ListHeuristics(ctx, kaizen.HeuristicQuery{})
	if err != nil || hs.Total != 0 {
		t.Fatalf("heuristics after a cancelled extraction: %+v (%v)", hs, err)
	}
	// The next start finds the task again.
	startWorker(t, b)
	testkit.Eventually(t, "the experience after the restart", func() bool { return hasExperience(b, "task-1") })
	if fast.calls.Load() != 1 || slow.calls.Load() != 1 {
		t.Fatalf("calls: slow %d, fast %d", slow.calls.Load(), fast.calls.Load())
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

// TestExperienceWorkerRetriesAndGivesUp: model failures are retried with
// backoff, then given up until the task's next outcome; the API key never
// reaches the logs.
func TestExperienceWorkerRetriesAndGivesUp(t *testing.T) {
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
	b := setup(t, "memory", withChat(srv, 10*time.Millisecond, experience.ModeBalanced), func(c *kaizen.Config) {
		c.Model.Chat[0].APIKey = key
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	startWorker(t, b)
	conversation(t, b, "task-1")
	if _, err := b.e.RecordOutcome(ctx, outcome("task-1", true)); err != nil {
		t.Fatal(err)
	}
	// Four attempts (backoff 1s, 2s, 4s), then it gives up.
	testkit.Eventually(t, "the worker giving up", func() bool { return b.e.ExperienceWorkerStats().Failed == 1 })
	s := b.e.ExperienceWorkerStats()
	if s.Retried != 3 || srv.calls.Load() != 4 || s.Pending != 0 || hasExperience(b, "task-1") {
		t.Fatalf("after giving up: stats %+v, %d calls", s, srv.calls.Load())
	}
	if _, ok := auth.Load("Bearer " + key); !ok {
		t.Fatal("the API key was not sent: the log check below would prove nothing")
	}
	if out := logs.String(); strings.Contains(out, key) || strings.Contains(out, "SECRET") {
		t.Fatalf("the API key reached the logs:\n%s", out)
	} else if !strings.Contains(out, "giving up") {
		t.Fatalf("the failure was not logged:\n%s", out)
	}

	// The model recovers; the task's next outcome gets fresh attempts.
	healthy.Store(true)
	if _, err := b.e.RecordOutcome(ctx, outcome("task-1", true)); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the experience after the model recovered", func() bool { return hasExperience(b, "task-1") })
	// the worker counts the extraction just after storing it
	testkit.Eventually(t, "the worker's count after recovery", func() bool { return b.e.ExperienceWorkerStats().Extracted == 1 })
	if s := b.e.ExperienceWorkerStats(); s.Extracted != 1 || srv.calls.Load() != 5 {
		t.Fatalf("after recovery: stats %+v, %d calls", s, srv.calls.Load())
	}
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

// TestExperienceWorkerFindsOtherProcessesOutcomes: outcomes that another
// process records in the same store (a CLI command, an MCP server over
// stdio) are found by the worker's periodic rescans; a task whose
// extraction failed for good is not queued again by them.
func TestExperienceWorkerFindsOtherProcessesOutcomes(t *testing.T) {
	rescanOften := func(c *kaizen.Config) { c.Experience.AutoExtractRescan = 20 * time.Millisecond }
	t.Run("found", func(t *testing.T) {
		t.Parallel()
		srv := goodChat(t)
		a := setup(t, "sqlite", withChat(srv, time.Millisecond, experience.ModeBalanced), rescanOften)
		startWorker(t, a)
		other := setup(t, "sqlite", func(c *kaizen.Config) { c.Home, c.DB = t.TempDir(), a.cfg.DB })
		conversation(t, other, "task-9")
		if _, err := other.e.RecordOutcome(ctx, outcome("task-9", true)); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, "the other process's task extracted", func() bool { return hasExperience(a, "task-9") })
		if n := srv.calls.Load(); n != 1 {
			t.Fatalf("%d model calls, want 1", n)
		}
	})
	t.Run("given up", func(t *testing.T) {
		t.Parallel()
		failing := newChatServer(t, func(int64, map[string]any) (int, string, time.Duration) {
			return http.StatusInternalServerError, "", 0
		})
		a := setup(t, "sqlite", withChat(failing, time.Millisecond, experience.ModeBalanced), rescanOften)
		startWorker(t, a)
		other := setup(t, "sqlite", func(c *kaizen.Config) { c.Home, c.DB = t.TempDir(), a.cfg.DB })
		conversation(t, other, "task-9")
		if _, err := other.e.RecordOutcome(ctx, outcome("task-9", true)); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, "the extraction given up", func() bool { return a.e.ExperienceWorkerStats().Failed == 1 })
		calls := failing.calls.Load()
		// Many rescan periods later, no new attempt was made.
		time.Sleep(300 * time.Millisecond)
		if s := a.e.ExperienceWorkerStats(); failing.calls.Load() != calls || s.Pending != 0 || s.Enqueued != 1 {
			t.Fatalf("after giving up: %d calls (then %d), stats %+v", failing.calls.Load(), calls, s)
		}
	})
}
