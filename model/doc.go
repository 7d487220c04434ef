// Package model gives kaizen its language models and embedders, and the
// defaults that work without them.
//
//   - [Chat] is the small interface other packages depend on; [ChatClient]
//     implements it over OpenAI-compatible /chat/completions endpoints
//     (OpenAI, Ollama, vLLM, LM Studio, llama.cpp, DeepSeek…) with a fallback
//     chain of providers, a timeout per attempt, and retries with exponential
//     backoff and jitter for 429, 5xx and network errors (Retry-After is
//     honoured; other 4xx move straight to the next provider).
//   - [ExtractJSON] and [DecodeJSON] take strict JSON out of a model's reply:
//     fenced blocks, JSON inside prose, several candidates, and output cut off
//     mid-JSON, which is closed when that yields valid JSON. Failures are
//     [*JSONError] values with a reason and an excerpt. [ChatJSON] combines
//     both and moves to the next provider when a reply does not decode.
//   - [Embedder] is implemented by [EmbeddingClient] (OpenAI-compatible
//     /embeddings, batched, dimension-checked, same fallback machinery) and by
//     [OfflineEmbedder], the default: hashed word and character n-grams,
//     CJK-aware, deterministic, no weights to download.
//   - [VectorIdentity] records the embedder id and dimension of a stored
//     vector so that a change of embedder leads to re-embedding, never to
//     comparing vectors of two spaces. [Cosine] and [Dot] refuse vectors of
//     different lengths instead of returning a silent 0.
//   - [Config] is the [model] section of kaizen.toml overlaid by
//     KAIZEN_MODEL_* environment variables. API keys are [Secret] values:
//     they never appear in formatted output, logs, JSON, or errors.
//
// Errors are returned, never logged. The package starts no goroutines and
// reads the clock and the random source only through options
// ([WithClock], [WithSleep], [WithJitter]), so tests need no real sleeps.
//
// docs/models.md describes configuration, fallback and retry behaviour, the
// offline embedder's design and limits, and the re-embedding policy.
package model
