package model

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// openAIServer is a real HTTP server on loopback that speaks the OpenAI
// chat and embeddings protocol. Each test scripts it with a handler that
// sees the 1-based number of the request.
type openAIServer struct {
	*httptest.Server
	t *testing.T

	mu       sync.Mutex
	requests []recordedRequest
}

type recordedRequest struct {
	Path   string
	Auth   string
	Body   []byte
	Chat   chatRequestBody
	Inputs []string
}

// chatRequestBody is the request as a server decodes it, independent of
// the client's own types.
type chatRequestBody struct {
	Model          string    `json:"model"`
	Messages       []Message `json:"messages"`
	Temperature    *float64  `json:"temperature"`
	MaxTokens      int       `json:"max_tokens"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format"`
}

func newOpenAIServer(t *testing.T, handle func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest)) *openAIServer {
	t.Helper()
	s := &openAIServer{t: t}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		rec := recordedRequest{Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Body: body}
		switch r.URL.Path {
		case "/v1/chat/completions":
			if err := json.Unmarshal(body, &rec.Chat); err != nil {
				writeError(w, http.StatusBadRequest, "bad json")
				return
			}
		case "/v1/embeddings":
			var in struct {
				Input []string `json:"input"`
			}
			if err := json.Unmarshal(body, &in); err != nil {
				writeError(w, http.StatusBadRequest, "bad json")
				return
			}
			rec.Inputs = in.Input
		default:
			writeError(w, http.StatusNotFound, "no route "+r.URL.Path)
			return
		}
		s.mu.Lock()
		s.requests = append(s.requests, rec)
		n := len(s.requests)
		s.mu.Unlock()
		handle(n, w, r, rec)
	}))
	t.Cleanup(s.Close)
	return s
}

// baseURL is the API root a client is configured with.
func (s *openAIServer) baseURL() string { return s.URL + "/v1" }

func (s *openAIServer) hits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

func (s *openAIServer) recorded() []recordedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recordedRequest(nil), s.requests...)
}

func writeChat(w http.ResponseWriter, content string) {
	writeJSON(w, http.StatusOK, map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "served-model",
		"choices": []any{map[string]any{
			"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop",
		}},
		"usage": map[string]any{"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
	})
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error"}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeEmbeddings answers with one vector per input, in reverse order (the
// index field says which is which), each made by vec.
func writeEmbeddings(w http.ResponseWriter, inputs []string, vec func(i int, text string) []float32) {
	data := make([]any, 0, len(inputs))
	for i := len(inputs) - 1; i >= 0; i-- {
		data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": vec(i, inputs[i])})
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "model": "served-embedder", "data": data})
}

// waitForCancel blocks a handler until the client goes away (or a long
// safety timeout), like a provider that is too slow.
func waitForCancel(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(time.Minute):
	}
}

// sleepRecorder replaces time.Sleep in clients: it records the delays and
// returns at once (or with ctx's error when ctx has ended).
type sleepRecorder struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (s *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.delays = append(s.delays, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleepRecorder) recorded() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.delays...)
}

// provider is a chat provider config pointing at s.
func provider(name string, s *openAIServer) ProviderConfig {
	return ProviderConfig{Name: name, BaseURL: s.baseURL(), Model: "test-model", APIKey: Secret("sk-" + name + "-SECRETKEY-0123456789"), Timeout: 5 * time.Second, MaxRetries: 2}
}

func assertNoSecret(t *testing.T, text string, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if k != "" && strings.Contains(text, k) {
			t.Fatalf("text leaks API key %q:\n%s", k, text)
		}
	}
	if strings.Contains(text, "SECRETKEY") {
		t.Fatalf("text leaks an API key:\n%s", text)
	}
}
