package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kaizenhq/kaizen/client"
)

// One home has one daemon: the second LockHome fails and names the first;
// the lock goes with its holder.
func TestLockHomeIsExclusive(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	release, err := client.LockHome(home)
	if err != nil {
		t.Fatal(err)
	}
	if !client.HomeLocked(home) {
		t.Error("HomeLocked is false while the lock is held")
	}
	if _, err := client.WriteServeInfo(home, client.ServeInfo{Addr: "127.0.0.1:7411", PID: 4242}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.LockHome(home); !errors.Is(err, client.ErrLocked) || !contains(err.Error(), "pid 4242") {
		t.Fatalf("a second daemon: %v, want ErrLocked naming pid 4242", err)
	}
	release()
	if client.HomeLocked(home) {
		t.Error("HomeLocked is true after the release")
	}
	again, err := client.LockHome(home)
	if err != nil {
		t.Fatalf("after the release: %v", err)
	}
	again()
}

// The socket is owner-only in a private directory; the health check carries
// no token, the other routes carry it.
func TestSocketIsPrivateAndHealthGetsNoToken(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	ln, err := client.ListenSocket(home)
	if err != nil {
		t.Fatal(err)
	}
	var healthAuth, otherAuth atomic.Value
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			healthAuth.Store(r.Header.Get("Authorization"))
		} else {
			otherAuth.Store(r.Header.Get("Authorization"))
		}
		fmt.Fprint(w, `{}`)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	for path, want := range map[string]os.FileMode{client.SocketPath(home): 0o600, filepath.Dir(client.SocketPath(home)): 0o700} {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %v", path, fi.Mode().Perm(), err, want)
		}
	}
	if _, err := client.WriteServeInfo(home, client.ServeInfo{Socket: client.SocketPath(home), PID: os.Getpid()}); err != nil {
		t.Fatal(err)
	}
	c, err := client.Discover(context.Background(), home, "secret-token-0123456789", time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Call(context.Background(), http.MethodPost, "/api/v1/x", map[string]string{}, nil); err != nil {
		t.Fatal(err)
	}
	if got := healthAuth.Load(); got != "" {
		t.Errorf("the health check sent %q", got)
	}
	if got := otherAuth.Load(); got != "Bearer secret-token-0123456789" {
		t.Errorf("a route got %q", got)
	}
	// the socket opened to others is not trusted
	if err := os.Chmod(client.SocketPath(home), 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Discover(context.Background(), home, "tok", time.Second, time.Second); !errors.Is(err, client.ErrNoDaemon) {
		t.Errorf("a socket open to others: %v", err)
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && (s[:len(sub)] == sub || contains(s[1:], sub)))
}
