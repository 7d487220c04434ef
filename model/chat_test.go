package model

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// chatBundle is what the chat tests share: a client over the given
// providers whose retry delays are recorded instead of slept.
type chatBundle struct {
	client *ChatClient
	sleeps *sleepRecorder
}

func setupChat(t *testing.T, providers []ProviderConfig, opts ...Option) chatBundle {
	t.Helper()
	rec := &sleepRecorder{}
	opts = append([]Option{WithSleep(rec.sleep), WithJitter(func() float64 { return 0 })}, opts...)
	c, err := NewChatClient(providers, opts...)
	if err != nil {
		t.Fatalf("NewChatClient: %v", err)
	}
	return chatBundle{client: c, sleeps: rec}
}

func userAsks(text string) ChatRequest {
	return ChatRequest{Messages: []Message{{Role: RoleSystem, Content: "Answer briefly."}, {Role: RoleUser, Content: text}}}
}

func TestChatSuccess(t *testing.T) {
	t.Parallel()
	srv := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) {
		writeChat(w, "pong")
	})
	b := setupChat(t, []ProviderConfig{provider("primary", srv)})
	req := userAsks("ping")
	req.Temperature = Temperature(0)
	req.MaxTokens = 64
	req.JSON = true

	resp, err := b.client.Complete(context.Background(), req)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if resp.Content != "pong" || resp.Provider != "primary" || resp.Model != "served-model" || resp.FinishReason != "stop" {
		t.Fatalf("response = %+v", resp)
	}
	if diff := cmp.Diff(Usage{PromptTokens: 7, CompletionTokens: 3, TotalTokens: 10}, resp.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	if len(resp.Attempts) != 1 || resp.Attempts[0].Err != nil || resp.Attempts[0].Status != 200 {
		t.Errorf("attempts = %+v", resp.Attempts)
	}
	got := srv.recorded()[0]
	if got.Auth != "Bearer sk-primary-SECRETKEY-0123456789" {
		t.Errorf("Authorization = %q", got.Auth)
	}
	if got.Chat.Model != "test-model" || got.Chat.MaxTokens != 64 || got.Chat.Temperature == nil || *got.Chat.Temperature != 0 {
		t.Errorf("request = %+v", got.Chat)
	}
	if got.Chat.ResponseFormat == nil || got.Chat.ResponseFormat.Type != "json_object" {
		t.Errorf("response_format = %+v, want json_object", got.Chat.ResponseFormat)
	}
	if diff := cmp.Diff(req.Messages, got.Chat.Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

func TestChatOmitsUnsetOptions(t *testing.T) {
	t.Parallel()
	srv := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) { writeChat(w, "ok") })
	b := setupChat(t, []ProviderConfig{provider("p", srv)})
	if _, err := b.client.Complete(context.Background(), userAsks("hi")); err != nil {
		t.Fatal(err)
	}
	body := string(srv.recorded()[0].Body)
	for _, field := range []string{"temperature", "max_tokens", "response_format"} {
		if strings.Contains(body, field) {
			t.Errorf("request body sends %s although it was not set: %s", field, body)
		}
	}
}

func TestChatServerErrorFallsBackToNextProvider(t *testing.T) {
	t.Parallel()
	first := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) {
		writeError(w, http.StatusInternalServerError, "upstream exploded")
	})
	second := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) {
		writeChat(w, "from second")
	})
	p1 := provider("first", first)
	p1.MaxRetries = 1
	b := setupChat(t, []ProviderConfig{p1, provider("second", second)})

	resp, err := b.client.Complete(context.Background(), userAsks("hi"))
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if resp.Provider != "second" || resp.Content != "from second" {
		t.Fatalf("answered by %q: %q", resp.Provider, resp.Content)
	}
	if first.hits() != 2 {
		t.Errorf("first provider got %d requests, want 2 (1 + 1 retry)", first.hits())
	}
	if diff := cmp.Diff([]time.Duration{DefaultBackoffBase / 2}, b.sleeps.recorded()); diff != "" {
		t.Errorf("retry delays (-want +got):\n%s", diff)
	}
	var statuses []int
	for _, a := range resp.Attempts {
		statuses = append(statuses, a.Status)
	}
	if diff := cmp.Diff([]int{500, 500, 200}, statuses); diff != "" {
		t.Errorf("attempt statuses (-want +got):\n%s", diff)
	}
}

func TestChatSlowProviderTimesOutAndNextAnswers(t *testing.T) {
	t.Parallel()
	slow := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) {
		waitForCancel(r)
	})
	fast := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) {
		writeChat(w, "fast answer")
	})
	p1 := provider("slow", slow)
	p1.Timeout = 50 * time.Millisecond
	b := setupChat(t, []ProviderConfig{p1, provider("fast", fast)})

	// The slow provider never answers: only its per-call timeout lets the
	// call reach the fast one (the overall bound only keeps a broken timeout
	// from hanging the suite).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := b.client.Complete(ctx, userAsks("hi"))
	if err != nil {
		t.Fatalf("Complete: %v (the per-call timeout did not cut the slow provider off)", err)
	}
	if resp.Provider != "fast" {
		t.Fatalf("answered by %q, want fast", resp.Provider)
	}
	if slow.hits() != 1 {
		t.Errorf("slow provider got %d requests: a timeout is not retried on the same provider", slow.hits())
	}
	var pe *ProviderError
	if !errors.As(resp.Attempts[0].Err, &pe) || pe.Kind != FailureTimeout || !errors.Is(pe, ErrProviderTimeout) {
		t.Errorf("first attempt error = %v, want a timeout", resp.Attempts[0].Err)
	}
	if errors.Is(resp.Attempts[0].Err, context.DeadlineExceeded) {
		t.Errorf("a provider timeout must not look like the caller's deadline")
	}
}

func TestChatRetriesAfter429WithRetryAfter(t *testing.T) {
	t.Parallel()
	srv := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) {
		if n == 1 {
			w.Header().Set("Retry-After", "2")
			writeError(w, http.StatusTooManyRequests, "rate limited")
			return
		}
		writeChat(w, "after the wait")
	})
	b := setupChat(t, []ProviderConfig{provider("only", srv)})

	resp, err := b.client.Complete(context.Background(), userAsks("hi"))
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if resp.Content != "after the wait" || resp.Provider != "only" {
		t.Fatalf("response = %+v", resp)
	}
	if diff := cmp.Diff([]time.Duration{2 * time.Second}, b.sleeps.recorded()); diff != "" {
		t.Errorf("delays (-want +got): the Retry-After header must set the delay\n%s", diff)
	}
}

func TestChatRetryAfterHTTPDate(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	srv := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) {
		if n == 1 {
			w.Header().Set("Retry-After", now.Add(7*time.Second).Format(http.TimeFormat))
			writeError(w, http.StatusServiceUnavailable, "busy")
			return
		}
		writeChat(w, "ok")
	})
	b := setupChat(t, []ProviderConfig{provider("only", srv)}, WithClock(func() time.Time { return now }))
	if _, err := b.client.Complete(context.Background(), userAsks("hi")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]time.Duration{7 * time.Second}, b.sleeps.recorded()); diff != "" {
		t.Errorf("delays (-want +got):\n%s", diff)
	}
}

func TestChatRetryAfterTooLongMovesOn(t *testing.T) {
	t.Parallel()
	limited := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) {
		w.Header().Set("Retry-After", "3600")
		writeError(w, http.StatusTooManyRequests, "quota exhausted")
	})
	other := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) { writeChat(w, "ok") })
	b := setupChat(t, []ProviderConfig{provider("limited", limited), provider("other", other)})
	resp, err := b.client.Complete(context.Background(), userAsks("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Provider != "other" || limited.hits() != 1 || len(b.sleeps.recorded()) != 0 {
		t.Errorf("provider %q, limited hits %d, sleeps %v: an hour's Retry-After must not be waited for",
			resp.Provider, limited.hits(), b.sleeps.recorded())
	}
}

func TestChatExponentialBackoff(t *testing.T) {
	t.Parallel()
	srv := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) {
		if n <= 3 {
			writeError(w, http.StatusBadGateway, "bad gateway")
			return
		}
		writeChat(w, "finally")
	})
	p := provider("flaky", srv)
	p.MaxRetries = 3
	b := setupChat(t, []ProviderConfig{p}, WithBackoff(100*time.Millisecond, 300*time.Millisecond), WithJitter(func() float64 { return 0.5 }))
	resp, err := b.client.Complete(context.Background(), userAsks("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "finally" {
		t.Fatalf("content %q", resp.Content)
	}
	// d = min(300ms, 100ms·2ⁿ); delay = d/2 + 0.5·d/2.
	want := []time.Duration{75 * time.Millisecond, 150 * time.Millisecond, 225 * time.Millisecond}
	if diff := cmp.Diff(want, b.sleeps.recorded()); diff != "" {
		t.Errorf("delays (-want +got):\n%s", diff)
	}
}

func TestChatUnauthorizedIsNotRetried(t *testing.T) {
	t.Parallel()
	denied := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) {
		writeError(w, http.StatusUnauthorized, "Incorrect API key provided")
	})
	backup := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) { writeChat(w, "backup") })
	p1 := provider("denied", denied)
	p1.MaxRetries = 5
	b := setupChat(t, []ProviderConfig{p1, provider("backup", backup)})

	resp, err := b.client.Complete(context.Background(), userAsks("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Provider != "backup" {
		t.Fatalf("answered by %q", resp.Provider)
	}
	if denied.hits() != 1 || len(b.sleeps.recorded()) != 0 {
		t.Errorf("401 was retried: %d requests, delays %v", denied.hits(), b.sleeps.recorded())
	}
}

func TestChatBadRequestIsNotRetried(t *testing.T) {
	t.Parallel()
	srv := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) {
		writeError(w, http.StatusBadRequest, "response_format is not supported")
	})
	b := setupChat(t, []ProviderConfig{provider("strict", srv)})
	_, err := b.client.Complete(context.Background(), userAsks("hi"))
	var ce *ChainError
	if !errors.As(err, &ce) || len(ce.Failures) != 1 || ce.Failures[0].Status != 400 || ce.Failures[0].Attempts != 1 {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "response_format is not supported") {
		t.Errorf("error does not quote the provider's message: %v", err)
	}
}

func TestChatNetworkErrorIsRetriedThenFallsBack(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + ln.Addr().String() + "/v1"
	_ = ln.Close() // nothing listens there now: connection refused
	backup := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) { writeChat(w, "ok") })
	dead := ProviderConfig{Name: "dead", BaseURL: deadURL, Model: "m", MaxRetries: 2}
	b := setupChat(t, []ProviderConfig{dead, provider("backup", backup)})

	resp, err := b.client.Complete(context.Background(), userAsks("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Provider != "backup" || len(b.sleeps.recorded()) != 2 {
		t.Errorf("provider %q, delays %v: a refused connection is retried twice, then the next provider answers", resp.Provider, b.sleeps.recorded())
	}
	var pe *ProviderError
	if !errors.As(resp.Attempts[0].Err, &pe) || pe.Kind != FailureNetwork {
		t.Errorf("first attempt: %v", resp.Attempts[0].Err)
	}
}

func TestChatUnusableReplyFallsBack(t *testing.T) {
	t.Parallel()
	cases := map[string]func(w http.ResponseWriter){
		"not json":   func(w http.ResponseWriter) { _, _ = w.Write([]byte("<html>proxy login</html>")) },
		"no choices": func(w http.ResponseWriter) { writeJSON(w, 200, map[string]any{"choices": []any{}}) },
		"error in 200": func(w http.ResponseWriter) {
			writeJSON(w, 200, map[string]any{"error": map[string]any{"message": "model overloaded"}})
		},
		"empty content": func(w http.ResponseWriter) { writeChat(w, "   ") },
		"null content": func(w http.ResponseWriter) {
			writeJSON(w, 200, map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": nil}}}})
		},
		"truncated body": func(w http.ResponseWriter) { _, _ = w.Write([]byte(`{"choices":[{"message":{"content":"hel`)) },
	}
	for name, bad := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			broken := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) { bad(w) })
			good := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) { writeChat(w, "good") })
			b := setupChat(t, []ProviderConfig{provider("broken", broken), provider("good", good)})
			resp, err := b.client.Complete(context.Background(), userAsks("hi"))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Provider != "good" || broken.hits() != 1 {
				t.Errorf("provider %q, broken hits %d", resp.Provider, broken.hits())
			}
			var pe *ProviderError
			if !errors.As(resp.Attempts[0].Err, &pe) || pe.Kind != FailureResponse {
				t.Errorf("first attempt: %v", resp.Attempts[0].Err)
			}
		})
	}
}

func TestChatAllProvidersFail(t *testing.T) {
	t.Parallel()
	down := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) {
		writeError(w, http.StatusServiceUnavailable, "maintenance")
	})
	denied := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) {
		// Some servers echo the key they refused.
		writeError(w, http.StatusUnauthorized, "invalid key: "+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	})
	slow := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) { waitForCancel(r) })
	p1, p2, p3 := provider("down", down), provider("denied", denied), provider("slow", slow)
	p1.MaxRetries = 1
	p3.Timeout = 30 * time.Millisecond
	b := setupChat(t, []ProviderConfig{p1, p2, p3})

	_, err := b.client.Complete(context.Background(), userAsks("hi"))
	var ce *ChainError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %T %v, want *ChainError", err, err)
	}
	if ce.Cause != nil || len(ce.Failures) != 3 {
		t.Fatalf("chain error = %+v", ce)
	}
	msg := err.Error()
	for _, want := range []string{"all 3 providers failed", "down: HTTP 503", "after 2 attempts", `"maintenance"`,
		"denied: HTTP 401", "check this provider's API key", "slow: provider timed out after 30ms"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	assertNoSecret(t, msg, p1.APIKey.Reveal(), p2.APIKey.Reveal(), p3.APIKey.Reveal())
	assertNoSecret(t, fmt.Sprintf("%+v %#v", err, ce), p2.APIKey.Reveal())
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("failed providers must not look like a cancelled caller")
	}
}

func TestChatContextCancelledStopsEverything(t *testing.T) {
	t.Parallel()
	t.Run("during a request", func(t *testing.T) {
		t.Parallel()
		arrived := make(chan struct{}, 1)
		first := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) {
			arrived <- struct{}{}
			waitForCancel(r)
		})
		second := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) { writeChat(w, "too late") })
		b := setupChat(t, []ProviderConfig{provider("first", first), provider("second", second)})
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			<-arrived
			cancel()
		}()
		_, err := b.client.Complete(ctx, userAsks("hi"))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if second.hits() != 0 || first.hits() != 1 {
			t.Errorf("hits first=%d second=%d: cancellation must stop the chain", first.hits(), second.hits())
		}
		if !strings.Contains(err.Error(), "stopped") {
			t.Errorf("error %q does not say the call was stopped", err)
		}
	})
	t.Run("during a backoff", func(t *testing.T) {
		t.Parallel()
		var hits atomic.Int32
		ctx, cancel := context.WithCancel(context.Background())
		srv := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) {
			hits.Add(1)
			cancel() // the caller gives up while the client waits to retry
			writeError(w, http.StatusInternalServerError, "boom")
		})
		c, err := NewChatClient([]ProviderConfig{provider("p", srv)}, WithBackoff(time.Hour, time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { _, err := c.Complete(ctx, userAsks("hi")); done <- err }()
		select { // the backoff is an hour: only the cancelled context ends it
		case err = <-done:
		case <-time.After(time.Minute):
			t.Fatal("the backoff did not end with the context")
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
		if hits.Load() != 1 {
			t.Errorf("%d requests: the backoff must end with the context", hits.Load())
		}
	})
	t.Run("already cancelled", func(t *testing.T) {
		t.Parallel()
		srv := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) { writeChat(w, "x") })
		b := setupChat(t, []ProviderConfig{provider("p", srv)})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := b.client.Complete(ctx, userAsks("hi")); !errors.Is(err, context.Canceled) || srv.hits() != 0 {
			t.Fatalf("err = %v, hits = %d", err, srv.hits())
		}
	})
}

func TestChatDeadlineTooCloseForBackoffMovesOn(t *testing.T) {
	t.Parallel()
	flaky := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) {
		writeError(w, http.StatusInternalServerError, "boom")
	})
	other := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) { writeChat(w, "ok") })
	b := setupChat(t, []ProviderConfig{provider("flaky", flaky), provider("other", other)}, WithBackoff(time.Minute, time.Minute))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := b.client.Complete(ctx, userAsks("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Provider != "other" || len(b.sleeps.recorded()) != 0 {
		t.Errorf("provider %q, delays %v: a backoff past the deadline must give way to the next provider", resp.Provider, b.sleeps.recorded())
	}
}

func TestChatJSONFallsBackOnMalformedReply(t *testing.T) {
	t.Parallel()
	type verdict struct {
		Goal  string   `json:"goal"`
		Steps []string `json:"steps"`
	}
	sloppy := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) {
		writeChat(w, "Sure! {goal: deploy, steps: [build, ship]}")
	})
	careful := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) {
		writeChat(w, "Here you go:\n```json\n{\"goal\": \"deploy\", \"steps\": [\"build\", \"ship\"]}\n```")
	})
	b := setupChat(t, []ProviderConfig{provider("sloppy", sloppy), provider("careful", careful)})

	got, resp, err := ChatJSON[verdict](context.Background(), b.client, userAsks("plan"), DecodeOptions{DisallowUnknownFields: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(verdict{Goal: "deploy", Steps: []string{"build", "ship"}}, got); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
	if resp.Provider != "careful" || sloppy.hits() != 1 {
		t.Errorf("provider %q, sloppy hits %d", resp.Provider, sloppy.hits())
	}
	if rf := careful.recorded()[0].Chat.ResponseFormat; rf == nil || rf.Type != "json_object" {
		t.Errorf("ChatJSON did not ask for JSON mode")
	}
	var je *JSONError
	if !errors.As(resp.Attempts[0].Err, &je) {
		t.Errorf("first attempt error %v does not carry the *JSONError", resp.Attempts[0].Err)
	}
}

func TestChatJSONAllMalformed(t *testing.T) {
	t.Parallel()
	srv := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) {
		writeChat(w, "I cannot answer in JSON today.")
	})
	b := setupChat(t, []ProviderConfig{provider("p", srv)})
	_, _, err := ChatJSON[map[string]any](context.Background(), b.client, userAsks("x"), DecodeOptions{})
	var je *JSONError
	if !errors.As(err, &je) || je.Kind != JSONNotFound {
		t.Fatalf("err = %v, want a *JSONError of kind not found", err)
	}
	if srv.hits() != 1 {
		t.Errorf("a rejected reply was retried on the same provider: %d requests", srv.hits())
	}
}

// fixedChat is a Chat that is not a ChatClient and ignores Accept.
type fixedChat string

func (f fixedChat) Complete(ctx context.Context, req ChatRequest) (ChatResponse, error) {
	return ChatResponse{Content: string(f), Provider: "fixed"}, nil
}

func TestChatJSONWithOtherChatImplementations(t *testing.T) {
	t.Parallel()
	got, _, err := ChatJSON[struct{ A int }](context.Background(), fixedChat(`{"A": 3}`), userAsks("x"), DecodeOptions{})
	if err != nil || got.A != 3 {
		t.Fatalf("got %+v, %v", got, err)
	}
	if _, _, err := ChatJSON[struct{ A int }](context.Background(), fixedChat(`nope`), userAsks("x"), DecodeOptions{}); err == nil {
		t.Fatal("want an error for a reply without JSON")
	}
}

func TestChatRequestValidation(t *testing.T) {
	t.Parallel()
	srv := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) { writeChat(w, "x") })
	b := setupChat(t, []ProviderConfig{provider("p", srv)})
	if _, err := b.client.Complete(context.Background(), ChatRequest{}); err == nil {
		t.Error("want an error for a request without messages")
	}
	if _, err := NewChatClient(nil); err == nil {
		t.Error("want an error for an empty chain")
	}
	_, err := NewChatClient([]ProviderConfig{{Name: "a", BaseURL: "ftp://x", Model: "m"}})
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "scheme") {
		t.Errorf("bad base_url: %v", err)
	}
	_, err = NewChatClient([]ProviderConfig{provider("a", srv), provider("a", srv)})
	if err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate names: %v", err)
	}
	if got := b.client.Providers(); len(got) != 1 || got[0] != "p" {
		t.Errorf("Providers() = %v", got)
	}
}

func TestChatAPIKeyFromEnvironment(t *testing.T) {
	t.Parallel()
	srv := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) { writeChat(w, "x") })
	p := ProviderConfig{Name: "env", BaseURL: srv.baseURL(), Model: "m", APIKeyEnv: "TEST_MODEL_KEY"}
	env := map[string]string{"TEST_MODEL_KEY": "sk-from-env-SECRETKEY"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	c, err := NewChatClient([]ProviderConfig{p}, WithLookupEnv(lookup))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Complete(context.Background(), userAsks("hi")); err != nil {
		t.Fatal(err)
	}
	if got := srv.recorded()[0].Auth; got != "Bearer sk-from-env-SECRETKEY" {
		t.Errorf("Authorization = %q", got)
	}
	_, err = NewChatClient([]ProviderConfig{p}, WithLookupEnv(func(string) (string, bool) { return "", false }))
	if err == nil || !strings.Contains(err.Error(), "TEST_MODEL_KEY") || !strings.Contains(err.Error(), "not set") {
		t.Errorf("missing key variable: %v", err)
	}
}

func TestChatNoKeySendsNoAuthorization(t *testing.T) {
	t.Parallel()
	srv := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) { writeChat(w, "local") })
	c, err := NewChatClient([]ProviderConfig{{BaseURL: srv.baseURL() + "/", Model: "llama3"}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Complete(context.Background(), userAsks("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.recorded()[0].Auth; got != "" {
		t.Errorf("Authorization = %q, want none for a keyless local server", got)
	}
	if !strings.HasPrefix(resp.Provider, "127.0.0.1:") {
		t.Errorf("default provider name = %q, want the host", resp.Provider)
	}
}

func TestChatErrorsNeverLeakKeys(t *testing.T) {
	t.Parallel()
	const key = "sk-live-SECRETKEY-abcdefghijklmnop"
	echo := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) {
		// The worst provider: it echoes the Authorization header in a
		// retryable error, then in a non-retryable one.
		if n == 1 {
			writeError(w, http.StatusInternalServerError, "failed for "+r.Header.Get("Authorization"))
			return
		}
		http.Error(w, "bad key "+r.Header.Get("Authorization"), http.StatusForbidden)
	})
	p := ProviderConfig{Name: "echo", BaseURL: echo.baseURL() + "?api-key=" + key, Model: "m", APIKey: key, MaxRetries: 3}
	b := setupChat(t, []ProviderConfig{p})
	resp, err := b.client.Complete(context.Background(), userAsks("hi"))
	if err == nil {
		t.Fatal("want an error")
	}
	var texts []string
	texts = append(texts, err.Error(), fmt.Sprintf("%v|%+v|%#v|%s|%q", err, err, err, err, err))
	for _, a := range resp.Attempts {
		texts = append(texts, fmt.Sprintf("%v %+v", a.Err, a))
	}
	var buf strings.Builder
	slog.New(slog.NewJSONHandler(&buf, nil)).Error("chat failed", "err", err, "provider", p, "attempts", resp.Attempts)
	texts = append(texts, buf.String())
	for _, s := range texts {
		assertNoSecret(t, s, key)
	}
	if !strings.Contains(err.Error(), "[REDACTED]") {
		t.Errorf("the echoed key should read [REDACTED]: %v", err)
	}
}
