package model

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// unitVector is a deterministic vector for a text: dimension dim, a 1 at a
// position derived from the text's length.
func unitVector(dim int) func(int, string) []float32 {
	return func(_ int, text string) []float32 {
		v := make([]float32, dim)
		v[len(text)%dim] = 2 // not unit: the client must normalise
		return v
	}
}

func embeddingConfig(s *openAIServer, dim int) EmbeddingConfig {
	return EmbeddingConfig{
		ProviderConfig: ProviderConfig{Name: "emb", BaseURL: s.baseURL(), Model: "nomic-embed-text", APIKey: "sk-emb-SECRETKEY-0123", Timeout: 5 * time.Second, MaxRetries: 1},
		Dimension:      dim,
	}
}

func TestEmbeddingsBatchingOrderAndNormalisation(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var batches []int
	srv := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) {
		mu.Lock()
		batches = append(batches, len(req.Inputs))
		mu.Unlock()
		writeEmbeddings(w, req.Inputs, unitVector(8))
	})
	cfg := embeddingConfig(srv, 8)
	cfg.BatchSize = 4
	c, err := NewEmbeddingClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"a", "bb", "", "ccc", "dddd", "  ", "eeeee", "ffffff", "g", "hh", "iii"}
	vecs, err := c.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{4, 4, 1}, batches); diff != "" {
		t.Errorf("batch sizes (-want +got): 9 non-empty texts in batches of 4\n%s", diff)
	}
	for i, text := range texts {
		v := vecs[i]
		if len(v) != 8 {
			t.Fatalf("vector %d has %d values", i, len(v))
		}
		if strings.TrimSpace(text) == "" {
			if Norm(v) != 0 {
				t.Errorf("blank text %d: want the zero vector, got %v", i, v)
			}
			continue
		}
		if v[len(text)%8] != 1 || math.Abs(float64(Norm(v))-1) > 1e-6 {
			t.Errorf("vector %d for %q = %v: wrong order or not normalised", i, text, v)
		}
	}
	for _, req := range srv.recorded() {
		for _, in := range req.Inputs {
			if strings.TrimSpace(in) == "" {
				t.Errorf("a blank text was sent to the provider")
			}
		}
	}
	if c.ID() != "openai:nomic-embed-text@8" || c.Dimension() != 8 {
		t.Errorf("ID %q, dimension %d", c.ID(), c.Dimension())
	}
}

func TestEmbeddingsDimensionMismatch(t *testing.T) {
	t.Parallel()
	srv := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) {
		writeEmbeddings(w, req.Inputs, func(i int, text string) []float32 {
			if i == 1 {
				return make([]float32, 384) // one vector of another model
			}
			return unitVector(768)(i, text)
		})
	})
	c, err := NewEmbeddingClient(embeddingConfig(srv, 768))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Embed(context.Background(), []string{"one", "two", "three"})
	var de *DimensionError
	if !errors.As(err, &de) {
		t.Fatalf("err = %v, want a *DimensionError", err)
	}
	if de.Want != 768 || de.Got != 384 || de.Index != 1 {
		t.Errorf("dimension error = %+v", de)
	}
	if !strings.Contains(err.Error(), "vector dimension 384 at index 1, expected 768") {
		t.Errorf("message: %v", err)
	}
	if srv.hits() != 1 {
		t.Errorf("a wrong dimension was retried on the same provider: %d requests", srv.hits())
	}
}

func TestEmbeddingsFallback(t *testing.T) {
	t.Parallel()
	down := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) {
		writeError(w, http.StatusBadGateway, "replica down")
	})
	wrongModel := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) {
		writeEmbeddings(w, req.Inputs, unitVector(3))
	})
	good := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) {
		writeEmbeddings(w, req.Inputs, unitVector(4))
	})
	cfg := embeddingConfig(down, 4)
	cfg.Fallback = []ProviderConfig{
		{Name: "wrong-model", BaseURL: wrongModel.baseURL()},
		{Name: "good", BaseURL: good.baseURL()},
	}
	rec := &sleepRecorder{}
	c, err := NewEmbeddingClient(cfg, WithSleep(rec.sleep))
	if err != nil {
		t.Fatal(err)
	}
	vecs, err := c.Embed(context.Background(), []string{"x", "yy"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 2 || vecs[1][2] != 1 {
		t.Errorf("vectors = %v", vecs)
	}
	if down.hits() != 2 || wrongModel.hits() != 1 || good.hits() != 1 {
		t.Errorf("hits down=%d wrong=%d good=%d", down.hits(), wrongModel.hits(), good.hits())
	}
	if got := good.recorded()[0].Body; !strings.Contains(string(got), `"model":"nomic-embed-text"`) {
		t.Errorf("a fallback replica without a model must inherit it: %s", got)
	}
	if diff := cmp.Diff([]string{"emb", "wrong-model", "good"}, c.Providers()); diff != "" {
		t.Error(diff)
	}
}

func TestEmbeddingsAllFail(t *testing.T) {
	t.Parallel()
	srv := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) {
		writeJSON(w, http.StatusOK, map[string]any{"data": []any{}})
	})
	c, err := NewEmbeddingClient(embeddingConfig(srv, 4))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Embed(context.Background(), []string{"x"})
	var ce *ChainError
	if !errors.As(err, &ce) || ce.Op != "embeddings" || !strings.Contains(err.Error(), "0 vectors for 1 inputs") {
		t.Fatalf("err = %v", err)
	}
	assertNoSecret(t, err.Error())
}

func TestEmbeddingsBadIndex(t *testing.T) {
	t.Parallel()
	srv := newOpenAIServer(t, func(n int, w http.ResponseWriter, r *http.Request, req recordedRequest) {
		writeJSON(w, http.StatusOK, map[string]any{"data": []any{
			map[string]any{"index": 0, "embedding": []float32{1, 0}},
			map[string]any{"index": 0, "embedding": []float32{0, 1}},
		}})
	})
	c, err := NewEmbeddingClient(embeddingConfig(srv, 2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Embed(context.Background(), []string{"a", "b"}); err == nil || !strings.Contains(err.Error(), "repeated") {
		t.Fatalf("err = %v", err)
	}
}

func TestEmbeddingsConfigValidation(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]EmbeddingConfig{
		"no dimension": {ProviderConfig: ProviderConfig{BaseURL: "http://127.0.0.1:1/v1", Model: "m"}},
		"no base_url":  {ProviderConfig: ProviderConfig{Model: "m"}, Dimension: 4},
		"big batch":    {ProviderConfig: ProviderConfig{BaseURL: "http://127.0.0.1:1/v1", Model: "m"}, Dimension: 4, BatchSize: 100000},
	} {
		if _, err := NewEmbeddingClient(cfg); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
	c, err := NewEmbeddingClient(EmbeddingConfig{ProviderConfig: ProviderConfig{BaseURL: "http://127.0.0.1:1/v1", Model: "m"}, Dimension: 4, ID: "bge-m3-local"})
	if err != nil || c.ID() != "bge-m3-local" {
		t.Fatalf("explicit id: %v %v", c, err)
	}
}
