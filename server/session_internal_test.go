package server

import (
	"context"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen"
)

func TestSessionExpiry(t *testing.T) {
	t.Parallel()
	e, err := kaizen.Open(context.Background(), kaizen.Config{DB: "memory", Learning: kaizen.DefaultConfig().Learning,
		Experience: kaizen.DefaultConfig().Experience})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	s, err := New(e, Options{Token: "tok-0123456789", SessionTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	v := s.sessionValue(now.Add(time.Hour))
	if !s.checkSession(v, now) || !s.checkSession(v, now.Add(59*time.Minute)) {
		t.Error("a fresh session is refused")
	}
	if s.checkSession(v, now.Add(time.Hour+time.Second)) {
		t.Error("an expired session is accepted")
	}
	if s.checkSession("v0"+v[2:], now) {
		t.Error("another format version is accepted")
	}
}
