// Package client talks to a running `kaizen serve` over its REST API, with
// the engine's own input and result types, so that short-lived processes
// (client hooks, the CLI) use the daemon that owns the database instead of
// opening it themselves. Discover finds the daemon of a kaizen home.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/learning"
)

// Client calls the REST API of one daemon. It is safe for concurrent use.
type Client struct {
	base  string
	token string
	http  *http.Client
}

// New returns a client for the daemon at baseURL (e.g. http://127.0.0.1:7411).
// timeout bounds every request (0: 10 seconds).
func New(baseURL, token string, timeout time.Duration) *Client {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	return &Client{base: baseURL, token: token, http: &http.Client{Timeout: timeout}}
}

// BaseURL is the daemon's address.
func (c *Client) BaseURL() string { return c.base }

// ServeFile is the file `kaizen serve` writes in its home while it runs.
const ServeFile = "serve.json"

// ServeInfo is what a running daemon records about itself.
type ServeInfo struct {
	// Addr is the TCP address of the REST API, MCP and the viewer.
	Addr string `json:"addr"`
	// Socket is the Unix socket hooks and the CLI use (SocketPath).
	Socket    string    `json:"socket,omitempty"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"started_at"`
	Version   string    `json:"version"`
	// Project is the daemon's default project (what the viewer shows
	// first).
	Project string `json:"project,omitempty"`
}

// WriteServeInfo records a running daemon in home (atomically); the
// returned function removes the record.
func WriteServeInfo(home string, info ServeInfo) (remove func(), err error) {
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, err
	}
	data, err := json.Marshal(info)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(home, ServeFile)
	tmp := path + ".tmp-" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return nil, err
	}
	return func() {
		// only remove our own record (another daemon may have replaced it)
		if cur, err := ReadServeInfo(home); err == nil && cur.PID == info.PID {
			os.Remove(path)
		}
	}, nil
}

// ReadServeInfo reads the record of the daemon of home.
func ReadServeInfo(home string) (ServeInfo, error) {
	var info ServeInfo
	data, err := os.ReadFile(filepath.Join(home, ServeFile))
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(data, &info); err != nil {
		return info, fmt.Errorf("read %s: %w", ServeFile, err)
	}
	return info, nil
}

// ErrNoDaemon: no daemon answers for this home.
var ErrNoDaemon = errors.New("no kaizen daemon is running")

// Discover returns a client for the daemon running for home, reached over
// the home's Unix socket, never over TCP: the socket must be owned by this
// user and closed to others, and (on Linux) the process at its other end
// must be this user's and the one serve.json names. Only then is anything
// sent, and the token only after a health check that carries none.
// ErrNoDaemon when there is no record, the recorded daemon is gone (a
// stale record of a killed daemon), or anything about the socket is off;
// the error says which.
func Discover(ctx context.Context, home, token string, probe, timeout time.Duration) (*Client, error) {
	info, err := ReadServeInfo(home)
	if err != nil {
		return nil, fmt.Errorf("%w (%v)", ErrNoDaemon, err)
	}
	path := SocketPath(home)
	if info.Socket != path {
		return nil, fmt.Errorf("%w (%s names no socket in this home: a daemon older than the socket, or a stale record)", ErrNoDaemon, ServeFile)
	}
	if err := checkSocket(path); err != nil {
		return nil, fmt.Errorf("%w (%v)", ErrNoDaemon, err)
	}
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	dialer := &net.Dialer{}
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		conn, err := dialer.DialContext(ctx, "unix", path)
		if err != nil {
			return nil, err
		}
		if err := checkPeer(conn, info.PID); err != nil {
			conn.Close()
			return nil, err
		}
		return conn, nil
	}
	c := &Client{base: "http://localhost", token: token,
		http: &http.Client{Timeout: timeout, Transport: &http.Transport{DialContext: dial, MaxIdleConns: 4}}}
	pctx, cancel := context.WithTimeout(ctx, probe)
	defer cancel()
	if err := c.Health(pctx); err != nil {
		return nil, fmt.Errorf("%w (the daemon recorded in %s does not answer on %s: %v)", ErrNoDaemon, ServeFile, path, err)
	}
	return c, nil
}

// Health checks that the daemon answers and its store works.
func (c *Client) Health(ctx context.Context) error {
	return c.call(ctx, http.MethodGet, "/healthz", nil, nil, nil)
}

// call sends a request and decodes the JSON answer into out; an error
// answer becomes a *kaizen.Error with the server's code, field and hint.
func (c *Client) call(ctx context.Context, method, path string, query url.Values, body, out any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(data)
	}
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" && path != "/healthz" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("kaizen daemon at %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return fmt.Errorf("kaizen daemon at %s: %w", c.base, err)
	}
	if resp.StatusCode >= 400 {
		var e struct {
			Error *kaizen.Error `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil && e.Error != nil {
			return e.Error
		}
		return &kaizen.Error{Op: method + " " + path, Kind: kaizen.KindInternal,
			Message: fmt.Sprintf("HTTP %d from the kaizen daemon", resp.StatusCode)}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decode answer of %s %s: %w", method, path, err)
	}
	return nil
}

func with(project string) url.Values {
	q := url.Values{}
	if project != "" {
		q.Set("project", project)
	}
	return q
}

// Call sends a JSON request to a route of the daemon and decodes the JSON
// answer into out (nil: ignore it); an error answer becomes a
// *kaizen.Error.
func (c *Client) Call(ctx context.Context, method, path string, body, out any) error {
	return c.call(ctx, method, path, nil, body, out)
}

// RecordTaskEvent is Engine.RecordTaskEvent.
func (c *Client) RecordTaskEvent(ctx context.Context, in kaizen.TaskEventInput) (*kaizen.TaskEventResult, error) {
	var out kaizen.TaskEventResult
	return &out, c.call(ctx, http.MethodPost, "/api/v1/tasks/events", nil, in, &out)
}

// GetTask is Engine.GetTask.
func (c *Client) GetTask(ctx context.Context, project, id string) (*kaizen.TaskInfo, error) {
	var out kaizen.TaskInfo
	return &out, c.call(ctx, http.MethodGet, "/api/v1/tasks/"+url.PathEscape(id), with(project), nil, &out)
}

// RecordOutcome is Engine.RecordOutcome.
func (c *Client) RecordOutcome(ctx context.Context, in kaizen.OutcomeInput) (*kaizen.OutcomeResult, error) {
	var out kaizen.OutcomeResult
	return &out, c.call(ctx, http.MethodPost, "/api/v1/outcomes", nil, in, &out)
}

// RecordError is Engine.RecordError.
func (c *Client) RecordError(ctx context.Context, in kaizen.ErrorInput) (*learning.ErrorEntry, error) {
	var out learning.ErrorEntry
	return &out, c.call(ctx, http.MethodPost, "/api/v1/errors", nil, in, &out)
}

// PlanGuidance is Engine.PlanGuidance.
func (c *Client) PlanGuidance(ctx context.Context, in kaizen.PlanInput) (*learning.Guidance, error) {
	var out learning.Guidance
	return &out, c.call(ctx, http.MethodPost, "/api/v1/plan", nil, in, &out)
}

// ExploreEvent is Engine.ExploreEvent.
func (c *Client) ExploreEvent(ctx context.Context, in kaizen.ExploreEventInput) (*kaizen.ExploreEventResult, error) {
	var out kaizen.ExploreEventResult
	return &out, c.call(ctx, http.MethodPost, "/api/v1/explore/events", nil, in, &out)
}

// ErrorContext is Engine.ErrorContext.
func (c *Client) ErrorContext(ctx context.Context, project, taskID string, includeResolved bool) (*kaizen.ErrorContextResult, error) {
	q := with(project)
	if includeResolved {
		q.Set("include_resolved", "true")
	}
	var out kaizen.ErrorContextResult
	return &out, c.call(ctx, http.MethodGet, "/api/v1/tasks/"+url.PathEscape(taskID)+"/error-context", q, nil, &out)
}
