package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/internal/testkit"
	"github.com/kaizenhq/kaizen/server"
)

func openEngine(t *testing.T) *kaizen.Engine {
	t.Helper()
	cfg := kaizen.DefaultConfig()
	cfg.Home = t.TempDir()
	cfg.DB = filepath.Join(cfg.Home, "kaizen.db")
	cfg.Project = "proj"
	e, err := kaizen.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// serve runs srv on a loopback listener; the returned channel yields
// Serve's result.
func serve(t *testing.T, srv *server.Server, ctx context.Context) (string, <-chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	return "http://" + ln.Addr().String(), done
}

func waitServe(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(testkit.Patience):
		t.Fatal("Serve did not return")
		return nil
	}
}

func TestServeOnRealListener(t *testing.T) {
	t.Parallel()
	e := openEngine(t)
	srv, err := server.New(e, server.Options{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, done := serve(t, srv, ctx)

	resp, err := http.Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz %d", resp.StatusCode)
	}
	rq, _ := http.NewRequest("POST", url+"/api/v1/outcomes",
		strings.NewReader(`{"bead_id": "bd-1", "duration_ms": 1000, "success": true}`))
	rq.Header.Set("Authorization", "Bearer "+testToken)
	rq.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(rq)
	if err != nil {
		t.Fatal(err)
	}
	var res kaizen.OutcomeResult
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("record: %d %v", resp.StatusCode, err)
	}
	resp.Body.Close()

	cancel()
	if err := waitServe(t, done); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if _, err := http.Get(url + "/healthz"); err == nil {
		t.Error("still serving after shutdown")
	}
	if err := srv.Serve(context.Background(), mustListen(t)); err == nil {
		t.Error("second Serve accepted")
	}
}

func mustListen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// Cancelling the context while a request is in flight stops new
// connections, lets the request complete (its outcome is stored), and
// Serve returns nil.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	e := openEngine(t)
	srv, err := server.New(e, server.Options{ShutdownTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	// A slow action: it blocks until released, then records an outcome.
	err = srv.Handle(server.Route{Pattern: "POST /test/slow", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
		ok := true
		d := int64(1000)
		if _, err := e.RecordOutcome(r.Context(), kaizen.OutcomeInput{TaskID: "bd-slow", DurationMs: &d, Success: &ok}); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, "done")
	})})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, done := serve(t, srv, ctx)

	type result struct {
		status int
		body   string
		err    error
	}
	resc := make(chan result, 1)
	go func() {
		resp, err := http.Post(url+"/test/slow", "application/json", nil)
		if err != nil {
			resc <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		resc <- result{status: resp.StatusCode, body: string(b), err: err}
	}()
	<-started
	cancel()
	// The listener closes: new connections are refused while the request
	// is still in flight.
	host := strings.TrimPrefix(url, "http://")
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", host, time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("listener still accepting after cancel")
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-done:
		t.Fatalf("Serve returned while a request was in flight: %v", err)
	default:
	}
	close(release)
	res := <-resc
	if res.err != nil || res.status != http.StatusOK || res.body != "done" {
		t.Fatalf("in-flight request: %+v", res)
	}
	if err := waitServe(t, done); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	list, err := e.ListOutcomes(context.Background(), kaizen.OutcomeQuery{TaskID: "bd-slow"})
	if err != nil || list.Total != 1 {
		t.Fatalf("outcome of the in-flight request: %+v %v", list, err)
	}
}

// A request that outlives the shutdown timeout is cut off and Serve
// reports it.
func TestShutdownTimeout(t *testing.T) {
	t.Parallel()
	e := openEngine(t)
	srv, err := server.New(e, server.Options{ShutdownTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	if err := srv.Handle(server.Route{Pattern: "GET /test/stuck", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
	})}); err != nil {
		t.Fatal(err)
	}
	var hooked = make(chan struct{})
	srv.RegisterOnShutdown(func() { close(hooked) })
	ctx, cancel := context.WithCancel(context.Background())
	url, done := serve(t, srv, ctx)
	clientErr := make(chan error, 1)
	go func() {
		resp, err := http.Get(url + "/test/stuck")
		if err == nil {
			resp.Body.Close()
		}
		clientErr <- err
	}()
	<-started
	cancel()
	err = waitServe(t, done)
	if err == nil || !strings.Contains(err.Error(), "did not finish") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Serve: %v", err)
	}
	<-hooked
	if err := <-clientErr; err == nil {
		t.Error("the stuck request completed")
	}
}

func TestListenAndServe(t *testing.T) {
	t.Parallel()
	e := openEngine(t)
	srv, err := server.New(e, server.Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // already cancelled: starts and drains at once
	if err := srv.ListenAndServe(ctx); err != nil {
		t.Fatalf("ListenAndServe: %v", err)
	}
	srv2, _ := server.New(e, server.Options{Addr: "127.0.0.1:99999"})
	if err := srv2.ListenAndServe(context.Background()); err == nil {
		t.Error("listen on an invalid port succeeded")
	}
}
