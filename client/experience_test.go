package client_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/client"
	"github.com/kaizenhq/kaizen/server"
)

// Capture and Recall reach the engine through the daemon's REST API, with
// the engine's types both ways and engine errors intact.
func TestClientExperience(t *testing.T) {
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
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	c := client.New(ts.URL, "tok", 5*time.Second)

	prompt := "Migrate the billing service to the new payments API"
	res, err := c.Capture(ctx, kaizen.CaptureInput{TaskID: "s1", Source: "claude", Turns: []kaizen.TurnInput{
		{Role: "user", Content: prompt, TurnID: "t1"}}})
	if err != nil || res.Stored != 1 || res.Project != "web" || len(res.Turns) != 1 || res.Turns[0].Content != prompt {
		t.Fatalf("capture %+v, %v", res, err)
	}
	res, err = c.Capture(ctx, kaizen.CaptureInput{TaskID: "s1", Turns: []kaizen.TurnInput{{Role: "user", Content: prompt, TurnID: "t1"}}})
	if err != nil || res.Stored != 0 || res.Duplicates != 1 {
		t.Fatalf("recapture %+v, %v", res, err)
	}
	// Another session recalls the first one's prompt as a memory.
	rec, err := c.Recall(ctx, kaizen.RecallInput{TaskID: "s2", Query: "payments API migration of billing"})
	if err != nil || rec.ID == "" || rec.Text == "" || len(rec.Items) == 0 || rec.Items[0].Kind != "memory" {
		t.Fatalf("recall %+v, %v", rec, err)
	}
	list, err := e.ListRecalls(ctx, kaizen.RecallQuery{TaskID: "s2"})
	if err != nil || list.Total != 1 || list.Items[0].ID != rec.ID {
		t.Errorf("stored recalls %+v, %v", list, err)
	}

	_, err = c.Capture(ctx, kaizen.CaptureInput{TaskID: "s1", Turns: []kaizen.TurnInput{{Role: "robot", Content: "hi"}}})
	var ke *kaizen.Error
	if !errors.As(err, &ke) || ke.Kind != kaizen.KindInvalid || ke.Field != "turns[0].role" {
		t.Fatalf("capture error across the wire: %#v", err)
	}
	_, err = c.Recall(ctx, kaizen.RecallInput{Query: ""})
	if !errors.As(err, &ke) || ke.Field != "query" {
		t.Fatalf("recall error across the wire: %#v", err)
	}
}
