package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Option configures a [ChatClient] or an [EmbeddingClient].
type Option func(*settings)

type settings struct {
	httpClient    *http.Client
	sleep         func(ctx context.Context, d time.Duration) error
	now           func() time.Time
	jitter        func() float64
	backoffBase   time.Duration
	backoffMax    time.Duration
	maxRetryAfter time.Duration
	lookupEnv     func(string) (string, bool)
}

// Defaults of the retry policy.
const (
	// DefaultBackoffBase is the first retry delay before jitter; it doubles
	// on every retry.
	DefaultBackoffBase = 500 * time.Millisecond
	// DefaultBackoffMax caps the retry delay.
	DefaultBackoffMax = 20 * time.Second
	// DefaultMaxRetryAfter is the longest Retry-After a client waits for;
	// a provider asking for more is left for the next one.
	DefaultMaxRetryAfter = 60 * time.Second
)

// Response size limits: a provider cannot make the client buffer without
// bound.
const (
	maxChatResponseBytes      = 8 << 20
	maxEmbeddingResponseBytes = 256 << 20
)

func newSettings(opts []Option) settings {
	s := settings{
		httpClient:    http.DefaultClient,
		sleep:         sleepCtx,
		now:           time.Now,
		jitter:        rand.Float64,
		backoffBase:   DefaultBackoffBase,
		backoffMax:    DefaultBackoffMax,
		maxRetryAfter: DefaultMaxRetryAfter,
		lookupEnv:     lookupOSEnv,
	}
	for _, o := range opts {
		if o != nil {
			o(&s)
		}
	}
	return s
}

// WithHTTPClient sets the HTTP client (default [http.DefaultClient]). Its
// own Timeout, if any, applies on top of the per-provider timeouts.
func WithHTTPClient(c *http.Client) Option {
	return func(s *settings) {
		if c != nil {
			s.httpClient = c
		}
	}
}

// WithSleep replaces the function that waits between retries. It must
// return ctx.Err() when ctx ends first. Tests use it to record delays
// instead of sleeping.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(s *settings) {
		if sleep != nil {
			s.sleep = sleep
		}
	}
}

// WithClock replaces time.Now, used for Retry-After dates, deadlines and
// attempt durations.
func WithClock(now func() time.Time) Option {
	return func(s *settings) {
		if now != nil {
			s.now = now
		}
	}
}

// WithJitter replaces the source of jitter: a function returning a value in
// [0, 1). The delay before retry n (from 0) is d/2 + jitter()·d/2 with
// d = min(max, base·2ⁿ).
func WithJitter(jitter func() float64) Option {
	return func(s *settings) {
		if jitter != nil {
			s.jitter = jitter
		}
	}
}

// WithBackoff sets the base and the cap of the exponential retry delay.
func WithBackoff(base, maxDelay time.Duration) Option {
	return func(s *settings) {
		if base > 0 {
			s.backoffBase = base
		}
		if maxDelay > 0 {
			s.backoffMax = maxDelay
		}
	}
}

// WithMaxRetryAfter sets the longest Retry-After the client waits for.
func WithMaxRetryAfter(d time.Duration) Option {
	return func(s *settings) {
		if d >= 0 {
			s.maxRetryAfter = d
		}
	}
}

// WithLookupEnv replaces os.LookupEnv for resolving api_key_env.
func WithLookupEnv(lookup func(string) (string, bool)) Option {
	return func(s *settings) {
		if lookup != nil {
			s.lookupEnv = lookup
		}
	}
}

var lookupOSEnv = os.LookupEnv

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// backoff is the delay before retry n (from 0), with equal jitter.
func (s *settings) backoff(n int) time.Duration {
	d := s.backoffBase
	for i := 0; i < n && d < s.backoffMax; i++ {
		d *= 2
	}
	d = min(d, s.backoffMax)
	j := s.jitter()
	if j < 0 || j >= 1 || j != j {
		j = 0.5
	}
	return d/2 + time.Duration(j*float64(d/2))
}

// FailureKind classifies why an attempt on a provider failed.
type FailureKind string

// Failure kinds.
const (
	// FailureHTTP: the provider answered with a non-2xx status.
	FailureHTTP FailureKind = "http"
	// FailureTimeout: the attempt exceeded the provider's timeout.
	FailureTimeout FailureKind = "timeout"
	// FailureNetwork: the request did not get an answer (refused, reset…).
	FailureNetwork FailureKind = "network"
	// FailureResponse: a 2xx answer the client cannot use (bad JSON, no
	// choices, wrong dimension…).
	FailureResponse FailureKind = "response"
	// FailureRejected: the reply failed the caller's [ChatRequest.Accept].
	FailureRejected FailureKind = "rejected"
	// FailureCancelled: the caller's context ended during the attempt.
	FailureCancelled FailureKind = "cancelled"
)

// ErrProviderTimeout is the cause of a [ProviderError] of kind
// [FailureTimeout]. It is distinct from context.DeadlineExceeded, which
// means the caller's own deadline passed.
var ErrProviderTimeout = errors.New("provider timed out")

// Attempt records one request to one provider.
type Attempt struct {
	// Provider is the provider's name.
	Provider string
	// Try counts the attempts on this provider, from 1.
	Try int
	// Status is the HTTP status, 0 when there was no answer.
	Status int
	// Duration of the request, by the client's clock.
	Duration time.Duration
	// Err is nil for the attempt that succeeded.
	Err error
}

// ProviderError is the failure of one provider after all its attempts.
// It never contains the API key.
type ProviderError struct {
	// Op is "chat" or "embeddings".
	Op string
	// Provider is the provider's name.
	Provider string
	// Endpoint is the request URL without user info or query.
	Endpoint string
	// Kind classifies the last failure.
	Kind FailureKind
	// Status is the last HTTP status, 0 when there was none.
	Status int
	// Attempts made on this provider.
	Attempts int
	// Message is a short excerpt of the provider's error message, if any.
	Message string
	// Hint says what to do, when the failure suggests it.
	Hint string
	// Err is the underlying cause, if any.
	Err error
}

func (e *ProviderError) Error() string {
	return fmt.Sprintf("model: %s: provider %s (POST %s): %s", e.Op, e.Provider, e.Endpoint, e.summary())
}

// summary is the part after the provider name.
func (e *ProviderError) summary() string {
	var b strings.Builder
	switch e.Kind {
	case FailureHTTP:
		fmt.Fprintf(&b, "HTTP %d %s", e.Status, http.StatusText(e.Status))
	case FailureTimeout:
		b.WriteString("timed out")
		if e.Err != nil {
			b.Reset()
			b.WriteString(e.Err.Error())
		}
	case FailureNetwork:
		b.WriteString("network error")
	case FailureResponse:
		b.WriteString("unusable response")
	case FailureRejected:
		b.WriteString("reply rejected")
	case FailureCancelled:
		b.WriteString("cancelled")
	default:
		b.WriteString(string(e.Kind))
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	if e.Err != nil && e.Kind != FailureHTTP && e.Kind != FailureTimeout {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %q", e.Message)
	}
	if e.Hint != "" {
		fmt.Fprintf(&b, " (%s)", e.Hint)
	}
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *ProviderError) Unwrap() error { return e.Err }

// ChainError is returned when no provider of a fallback chain answered:
// either all failed, or the caller's context ended (Cause is then
// ctx.Err(), so errors.Is(err, context.Canceled) holds).
type ChainError struct {
	// Op is "chat" or "embeddings".
	Op string
	// Failures lists each provider tried, in order.
	Failures []*ProviderError
	// Cause is the caller's context error, or nil when every provider failed.
	Cause error
}

func (e *ChainError) Error() string {
	parts := make([]string, len(e.Failures))
	for i, f := range e.Failures {
		parts[i] = f.Provider + ": " + f.summary()
	}
	if e.Cause != nil {
		msg := fmt.Sprintf("model: %s: stopped: %v", e.Op, e.Cause)
		if len(parts) > 0 {
			msg += " (after " + strings.Join(parts, "; ") + ")"
		}
		return msg
	}
	if len(parts) == 1 {
		return fmt.Sprintf("model: %s: the only provider failed: %s", e.Op, parts[0])
	}
	return fmt.Sprintf("model: %s: all %d providers failed: %s", e.Op, len(parts), strings.Join(parts, "; "))
}

// Unwrap returns the provider errors and the cause.
func (e *ChainError) Unwrap() []error {
	errs := make([]error, 0, len(e.Failures)+1)
	for _, f := range e.Failures {
		errs = append(errs, f)
	}
	if e.Cause != nil {
		errs = append(errs, e.Cause)
	}
	return errs
}

// endpoint is one provider, resolved and ready to call.
type endpoint struct {
	name     string
	url      string
	display  string
	model    string
	key      Secret
	timeout  time.Duration
	retries  int
	maxBytes int64
}

// chain is the fallback/timeout/retry machinery shared by the chat and
// embeddings clients.
type chain struct {
	op        string
	endpoints []endpoint
	s         settings
}

func newChain(op, path string, providers []ProviderConfig, timeout time.Duration, maxBytes int64, s settings) (*chain, error) {
	if len(providers) == 0 {
		return nil, fmt.Errorf("model: %s: no provider given", op)
	}
	c := &chain{op: op, s: s}
	seen := map[string]bool{}
	for i, p := range providers {
		p = p.withDefaults(timeout)
		if errs := p.validate(fmt.Sprintf("%s provider %d (%s)", op, i+1, p.Name)); len(errs) > 0 {
			return nil, errors.Join(errs...)
		}
		if seen[p.Name] {
			return nil, cfgErr(fmt.Sprintf("%s provider %d", op, i+1), "name %q is used twice", p.Name)
		}
		seen[p.Name] = true
		key, err := p.resolveKey(s.lookupEnv)
		if err != nil {
			return nil, err
		}
		u := joinURL(p.BaseURL, path)
		c.endpoints = append(c.endpoints, endpoint{
			name: p.Name, url: u, display: redactURL(u), model: p.Model, key: key,
			timeout: p.Timeout, retries: p.MaxRetries, maxBytes: maxBytes,
		})
	}
	return c, nil
}

// joinURL appends path to the path of base, keeping base's query (some
// gateways take a key or an API version there).
func joinURL(base, path string) string {
	u, err := url.Parse(base)
	if err != nil { // validated before; keep the plain concatenation
		return base + path
	}
	u.Path = strings.TrimRight(u.Path, "/") + path
	u.RawPath = ""
	return u.String()
}

func (c *chain) names() []string {
	out := make([]string, len(c.endpoints))
	for i, ep := range c.endpoints {
		out[i] = ep.name
	}
	return out
}

// failure is what went wrong in one attempt.
type failure struct {
	kind       FailureKind
	status     int
	retryable  bool
	retryAfter time.Duration // from the Retry-After header; -1 when absent
	message    string
	err        error
}

// call runs the fallback chain: each provider in turn, each with its own
// per-attempt timeout and retries, until parse accepts an answer. It
// returns the parsed value, the name of the provider that answered and the
// attempts made.
func call[T any](ctx context.Context, c *chain, payload func(ep *endpoint) ([]byte, error),
	parse func(ep *endpoint, body []byte) (T, *failure)) (T, string, []Attempt, error) {
	var zero T
	var attempts []Attempt
	chainErr := &ChainError{Op: c.op}
	for i := range c.endpoints {
		ep := &c.endpoints[i]
		body, err := payload(ep)
		if err != nil {
			return zero, "", attempts, fmt.Errorf("model: %s: encode request for %s: %w", c.op, ep.name, err)
		}
		for try := 0; ; try++ {
			if err := ctx.Err(); err != nil {
				chainErr.Cause = err
				return zero, "", attempts, chainErr
			}
			start := c.s.now()
			resp, f := c.post(ctx, ep, body)
			if f == nil {
				var v T
				if v, f = parse(ep, resp); f == nil {
					attempts = append(attempts, Attempt{Provider: ep.name, Try: try + 1, Status: http.StatusOK, Duration: c.s.now().Sub(start)})
					return v, ep.name, attempts, nil
				}
			}
			f.message = ep.key.scrub(f.message)
			pe := &ProviderError{Op: c.op, Provider: ep.name, Endpoint: ep.display, Kind: f.kind,
				Status: f.status, Attempts: try + 1, Message: f.message, Err: scrubErr(ep.key, f.err)}
			attempts = append(attempts, Attempt{Provider: ep.name, Try: try + 1, Status: f.status, Duration: c.s.now().Sub(start), Err: pe})
			if f.kind == FailureCancelled || ctx.Err() != nil {
				chainErr.Failures = append(chainErr.Failures, pe)
				chainErr.Cause = ctx.Err()
				if chainErr.Cause == nil {
					chainErr.Cause = context.Canceled
				}
				return zero, "", attempts, chainErr
			}
			if !f.retryable || try >= ep.retries {
				pe.Hint = hintFor(f)
				chainErr.Failures = append(chainErr.Failures, pe)
				break
			}
			wait := c.s.backoff(try)
			if f.retryAfter >= 0 {
				wait = f.retryAfter
				if wait > c.s.maxRetryAfter {
					pe.Hint = fmt.Sprintf("asked to retry after %s, more than the %s the client waits", wait, c.s.maxRetryAfter)
					chainErr.Failures = append(chainErr.Failures, pe)
					break
				}
			}
			if dl, ok := ctx.Deadline(); ok && c.s.now().Add(wait).After(dl) {
				pe.Hint = "no time left before the caller's deadline to retry"
				chainErr.Failures = append(chainErr.Failures, pe)
				break
			}
			if err := c.s.sleep(ctx, wait); err != nil {
				chainErr.Failures = append(chainErr.Failures, pe)
				chainErr.Cause = ctx.Err()
				if chainErr.Cause == nil {
					chainErr.Cause = err
				}
				return zero, "", attempts, chainErr
			}
		}
	}
	return zero, "", attempts, chainErr
}

func hintFor(f *failure) string {
	switch {
	case f.kind == FailureHTTP && (f.status == http.StatusUnauthorized || f.status == http.StatusForbidden):
		return "check this provider's API key"
	case f.kind == FailureHTTP && f.status == http.StatusNotFound:
		return "check base_url, which ends in /v1 for most servers, and the model name"
	}
	return ""
}

// post makes one request. It returns the body of a 2xx answer, or the
// failure.
func (c *chain) post(ctx context.Context, ep *endpoint, payload []byte) ([]byte, *failure) {
	actx, cancel := context.WithTimeout(ctx, ep.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, ep.url, bytes.NewReader(payload))
	if err != nil {
		return nil, &failure{kind: FailureNetwork, err: errors.New("cannot build request"), retryAfter: -1}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "kaizen-model/1")
	if ep.key.IsSet() {
		req.Header.Set("Authorization", "Bearer "+ep.key.Reveal())
	}
	resp, err := c.s.httpClient.Do(req)
	if err != nil {
		return nil, transportFailure(ctx, actx, ep, 0, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, ep.maxBytes+1))
	if err != nil {
		return nil, transportFailure(ctx, actx, ep, resp.StatusCode, err)
	}
	if int64(len(body)) > ep.maxBytes {
		return nil, &failure{kind: FailureResponse, status: resp.StatusCode, retryAfter: -1,
			err: fmt.Errorf("response larger than %d bytes", ep.maxBytes)}
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return body, nil
	}
	f := &failure{kind: FailureHTTP, status: resp.StatusCode, message: errorMessage(body), retryAfter: -1}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode == http.StatusRequestTimeout,
		resp.StatusCode >= 500:
		f.retryable = true
		f.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), c.s.now())
	}
	return nil, f
}

func transportFailure(ctx, actx context.Context, ep *endpoint, status int, err error) *failure {
	switch {
	case ctx.Err() != nil:
		return &failure{kind: FailureCancelled, status: status, err: ctx.Err(), retryAfter: -1}
	case errors.Is(actx.Err(), context.DeadlineExceeded):
		return &failure{kind: FailureTimeout, status: status, retryAfter: -1,
			err: fmt.Errorf("%w after %s", ErrProviderTimeout, ep.timeout)}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the URL is reported, redacted, by ProviderError
	}
	return &failure{kind: FailureNetwork, status: status, err: err, retryable: true, retryAfter: -1}
}

// parseRetryAfter reads delay-seconds or an HTTP date; -1 when absent or
// unreadable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return -1
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 || secs != secs {
			return -1
		}
		if secs > 86400 {
			secs = 86400
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return -1
}

// errorMessage extracts a provider's error message from an error body
// (OpenAI {"error":{"message":…}}, Ollama {"error":"…"}, or plain text) and
// shortens it.
func errorMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  any             `json:"detail"`
	}
	msg := ""
	if json.Unmarshal(body, &v) == nil {
		var nested struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &nested) == nil && nested.Message != "":
			msg = nested.Message
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			msg = s
		case v.Message != "":
			msg = v.Message
		case v.Detail != nil:
			msg = fmt.Sprint(v.Detail)
		}
	}
	if msg == "" {
		msg = string(body)
	}
	return excerpt(msg, 200)
}

// excerpt shortens s to at most n runes on one line, replacing control
// characters and invalid UTF-8.
func excerpt(s string, n int) string {
	var b strings.Builder
	count := 0
	space := false
	for _, r := range strings.TrimSpace(s) {
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.IsSpace(r) {
			if r == utf8.RuneError {
				r = '\uFFFD'
			} else {
				if space {
					continue
				}
				space = true
				r = ' '
			}
		} else {
			space = false
		}
		if count == n {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
		count++
	}
	return b.String()
}

// scrubbedError carries a cause whose text had the key removed.
type scrubbedError struct {
	msg   string
	cause error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.cause }

func scrubErr(key Secret, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if clean := key.scrub(msg); clean != msg {
		// Drop the chain too: its messages may hold the key as well.
		return &scrubbedError{msg: clean}
	}
	return err
}
