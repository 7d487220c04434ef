package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Embedder turns texts into vectors of a fixed dimension. Vectors of
// different embedders (different ID) live in different spaces and must
// never be compared: record [IdentityOf] with every stored vector and
// re-embed when it no longer [VectorIdentity.Matches] the current embedder.
//
// Implementations return unit vectors (L2 norm 1), or the zero vector for a
// text with nothing to embed, so a dot product is a cosine.
type Embedder interface {
	// ID names the embedder and its dimension, e.g. "offline-hash-v5@512"
	// or "openai:text-embedding-3-small@1536".
	ID() string
	// Dimension is the length of every vector.
	Dimension() int
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// EmbeddingClient is an [Embedder] over OpenAI-compatible embeddings
// endpoints (POST {base_url}/embeddings). It sends texts in batches, checks
// that every vector has the configured dimension (a provider that returns
// another is a failure of that provider, never a silent mix), normalises
// vectors to unit length, and shares the fallback, timeout and retry rules
// of [ChatClient]. Empty texts are not sent: they embed to the zero vector.
// It is safe for concurrent use.
type EmbeddingClient struct {
	chain *chain
	id    string
	dim   int
	batch int
}

var _ Embedder = (*EmbeddingClient)(nil)

// NewEmbeddingClient builds a client for cfg and its fallback replicas.
func NewEmbeddingClient(cfg EmbeddingConfig, opts ...Option) (*EmbeddingClient, error) {
	if errs := cfg.validate("model.embedding"); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	providers := []ProviderConfig{cfg.ProviderConfig}
	for _, p := range cfg.Fallback {
		if p.Model == "" {
			p.Model = cfg.Model
		}
		providers = append(providers, p)
	}
	c, err := newChain("embeddings", "/embeddings", providers, DefaultEmbeddingTimeout, maxEmbeddingResponseBytes, newSettings(opts))
	if err != nil {
		return nil, err
	}
	id := strings.TrimSpace(cfg.ID)
	if id == "" {
		id = "openai:" + cfg.Model + "@" + strconv.Itoa(cfg.Dimension)
	}
	batch := cfg.BatchSize
	if batch == 0 {
		batch = DefaultBatchSize
	}
	return &EmbeddingClient{chain: c, id: id, dim: cfg.Dimension, batch: batch}, nil
}

// ID returns the configured id, or "openai:<model>@<dimension>".
func (c *EmbeddingClient) ID() string { return c.id }

// Dimension returns the configured dimension.
func (c *EmbeddingClient) Dimension() int { return c.dim }

// Providers returns the providers' names in fallback order.
func (c *EmbeddingClient) Providers() []string { return c.chain.names() }

// DimensionError reports a vector whose length is not the expected one.
type DimensionError struct {
	// Source names the provider or the operation.
	Source string
	// Want and Got are the expected and actual lengths.
	Want, Got int
	// Index is the position of the offending vector, or -1.
	Index int
}

func (e *DimensionError) Error() string {
	at := ""
	if e.Index >= 0 {
		at = fmt.Sprintf(" at index %d", e.Index)
	}
	return fmt.Sprintf("model: %s: vector dimension %d%s, expected %d (vectors of different dimensions are never mixed; check the configured dimension or re-embed)",
		e.Source, e.Got, at, e.Want)
}

type embedPayload struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type embedReply struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	Error json.RawMessage `json:"error"`
}

// Embed implements [Embedder].
func (c *EmbeddingClient) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var pending []int
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			out[i] = make([]float32, c.dim)
			continue
		}
		pending = append(pending, i)
	}
	for len(pending) > 0 {
		n := min(len(pending), c.batch)
		idx := pending[:n]
		pending = pending[n:]
		batch := make([]string, n)
		for k, i := range idx {
			batch[k] = texts[i]
		}
		vecs, err := c.embedBatch(ctx, batch)
		if err != nil {
			return nil, err
		}
		for k, i := range idx {
			out[i] = vecs[k]
		}
	}
	return out, nil
}

func (c *EmbeddingClient) embedBatch(ctx context.Context, batch []string) ([][]float32, error) {
	payload := func(ep *endpoint) ([]byte, error) {
		return json.Marshal(embedPayload{Model: ep.model, Input: batch})
	}
	parse := func(ep *endpoint, body []byte) ([][]float32, *failure) {
		bad := func(err error) *failure { return &failure{kind: FailureResponse, retryAfter: -1, err: err} }
		var r embedReply
		if err := json.Unmarshal(body, &r); err != nil {
			f := bad(fmt.Errorf("body is not an embeddings response: %v", err))
			f.message = excerpt(string(body), 120)
			return nil, f
		}
		if len(r.Data) != len(batch) {
			f := bad(fmt.Errorf("%d vectors for %d inputs", len(r.Data), len(batch)))
			if len(r.Error) > 0 && string(r.Error) != "null" {
				f.message = errorMessage(body)
			}
			return nil, f
		}
		vecs := make([][]float32, len(batch))
		for k, d := range r.Data {
			i := k
			if d.Index != nil {
				i = *d.Index
			}
			if i < 0 || i >= len(batch) || vecs[i] != nil {
				return nil, bad(fmt.Errorf("vector %d has index %d, out of range or repeated", k, i))
			}
			if len(d.Embedding) != c.dim {
				return nil, bad(&DimensionError{Source: "embeddings provider " + ep.name, Want: c.dim, Got: len(d.Embedding), Index: i})
			}
			v := d.Embedding
			for _, x := range v {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					return nil, bad(fmt.Errorf("vector %d holds a non-finite value", i))
				}
			}
			Normalize(v)
			vecs[i] = v
		}
		return vecs, nil
	}
	vecs, _, _, err := call(ctx, c.chain, payload, parse)
	return vecs, err
}
