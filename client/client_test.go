package client_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/client"
	"github.com/kaizenhq/kaizen/server"
	_ "github.com/kaizenhq/kaizen/store/all" // the tests open SQLite and PostgreSQL stores
)

func TestClientAgainstServer(t *testing.T) {
	ctx := context.Background()
	cfg := kaizen.DefaultConfig()
	cfg.DB, cfg.Home, cfg.Project = filepath.Join(t.TempDir(), "k.db"), t.TempDir(), "web"
	e, err := kaizen.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	srv, err := server.New(e, server.Options{Addr: "127.0.0.1:0", Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	if _, err := client.Discover(ctx, home, "tok", time.Second, time.Second); !errors.Is(err, client.ErrNoDaemon) {
		t.Fatalf("no record: %v", err)
	}
	ln, err := client.ListenSocket(home)
	if err != nil {
		t.Fatal(err)
	}
	ts := &http.Server{Handler: srv.Handler()}
	go ts.Serve(ln)
	defer ts.Close()
	// a record without the socket (an older daemon's): not used
	if _, err := client.WriteServeInfo(home, client.ServeInfo{Addr: "127.0.0.1:1", PID: os.Getpid()}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Discover(ctx, home, "tok", time.Second, time.Second); !errors.Is(err, client.ErrNoDaemon) {
		t.Fatalf("a record without socket: %v", err)
	}
	remove, err := client.WriteServeInfo(home, client.ServeInfo{Addr: "127.0.0.1:1", Socket: client.SocketPath(home), PID: os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.Discover(ctx, home, "tok", time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.RecordTaskEvent(ctx, kaizen.TaskEventInput{TaskID: "s1", Kind: "prompt", Text: "build it"}); err != nil {
		t.Fatal(err)
	}
	res, err := c.RecordTaskEvent(ctx, kaizen.TaskEventInput{TaskID: "s1", Kind: "tool_failure", ToolName: "Bash", Message: "boom"})
	if err != nil || res.Error == nil || res.Task.ToolFailures != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	cx, err := c.ErrorContext(ctx, "", "s1", false)
	if err != nil || len(cx.Errors) != 1 {
		t.Fatalf("%+v %v", cx, err)
	}
	g, err := c.PlanGuidance(ctx, kaizen.PlanInput{Task: "split by file type", TaskID: "s1"})
	if err != nil || len(g.OpenErrors) != 1 {
		t.Fatalf("%+v %v", g, err)
	}
	out, err := c.RecordOutcome(ctx, kaizen.OutcomeInput{TaskID: "s1", Success: new(bool)})
	if err != nil || out.Task == nil || out.Outcome.ErrorCount != 1 {
		t.Fatalf("%+v %v", out, err)
	}
	// Engine errors keep their kind and field across the wire.
	_, err = c.RecordTaskEvent(ctx, kaizen.TaskEventInput{TaskID: "s1", Kind: "nope"})
	var ke *kaizen.Error
	if !errors.As(err, &ke) || ke.Kind != kaizen.KindInvalid || ke.Field != "kind" {
		t.Fatalf("error across the wire: %#v", err)
	}
	// A wrong token is refused; a dead daemon is not discovered.
	if _, err := client.Discover(ctx, home, "wrong", time.Second, time.Second); err == nil {
		t.Log("health is public: discovery succeeds, calls fail")
	}
	bad := client.New(c.BaseURL(), "wrong", time.Second)
	if _, err := bad.GetTask(ctx, "", "s1"); err == nil {
		t.Fatal("a wrong token must be refused")
	}
	ts.Close()
	if _, err := client.Discover(ctx, home, "tok", 200*time.Millisecond, time.Second); !errors.Is(err, client.ErrNoDaemon) {
		t.Fatalf("stale record: %v", err)
	}
	remove()
}
