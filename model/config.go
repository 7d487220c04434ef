package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Defaults applied when the configuration leaves a value out.
const (
	// DefaultChatTimeout bounds one chat request to one provider.
	DefaultChatTimeout = 60 * time.Second
	// DefaultEmbeddingTimeout bounds one embeddings request (one batch) to
	// one provider.
	DefaultEmbeddingTimeout = 30 * time.Second
	// DefaultMaxRetries is the number of retries of a retryable failure on
	// one provider when a config file or the environment does not say.
	DefaultMaxRetries = 2
	// DefaultBatchSize is the number of texts sent in one embeddings request.
	DefaultBatchSize = 32
	// DefaultOfflineDimension is the dimension of the offline embedder.
	DefaultOfflineDimension = 512
)

// Limits enforced by [Config.Validate].
const (
	maxRetriesLimit     = 10
	maxBatchSize        = 2048
	minOfflineDimension = 64
	maxOfflineDimension = 8192
	maxEmbedDimension   = 65536
)

// Config selects the language models and the embedder. It is the [model]
// section of kaizen.toml, overlaid by KAIZEN_MODEL_* environment variables
// (see [Config.ApplyEnv] and docs/models.md).
//
// With no chat provider (or Offline set) there is no LLM: callers use their
// rule-based extractors. With no embedding provider (or Offline set) the
// [OfflineEmbedder] is used.
//
// Config prints, logs and marshals with every API key redacted.
type Config struct {
	// Offline ignores every configured provider: no LLM, offline embedder.
	Offline bool `toml:"offline" json:"offline"`
	// Chat is the fallback chain of chat providers, tried in order.
	Chat []ProviderConfig `toml:"chat" json:"chat,omitempty"`
	// Embedding is the remote embeddings provider; zero means none.
	Embedding EmbeddingConfig `toml:"embedding" json:"embedding"`
	// OfflineEmbedder configures the built-in embedder.
	OfflineEmbedder OfflineConfig `toml:"offline_embedder" json:"offline_embedder"`
}

// ProviderConfig is one OpenAI-compatible endpoint.
type ProviderConfig struct {
	// Name identifies the provider in errors and in [ChatResponse.Provider].
	// Empty means the host of BaseURL.
	Name string `toml:"name" json:"name,omitempty"`
	// BaseURL is the API root, e.g. https://api.openai.com/v1 or
	// http://127.0.0.1:11434/v1; "/chat/completions" or "/embeddings" is
	// appended.
	BaseURL string `toml:"base_url" json:"base_url"`
	// APIKey is sent as a bearer token. Prefer APIKeyEnv. Set at most one.
	APIKey Secret `toml:"api_key" json:"api_key,omitempty"`
	// APIKeyEnv names the environment variable that holds the key; it is
	// read when the client is built.
	APIKeyEnv string `toml:"api_key_env" json:"api_key_env,omitempty"`
	// Model is the model name sent in every request.
	Model string `toml:"model" json:"model"`
	// Timeout bounds one request (one attempt) to this provider. Zero means
	// the default of the client kind ([DefaultChatTimeout] or
	// [DefaultEmbeddingTimeout]).
	Timeout time.Duration `toml:"timeout" json:"timeout,omitempty"`
	// MaxRetries is how many times a retryable failure (429, 5xx, network
	// error) is retried on this provider before the next one is tried. It is
	// taken as given: 0 means no retry. Config files and the environment
	// default it to [DefaultMaxRetries] when they leave it out.
	MaxRetries int `toml:"max_retries" json:"max_retries"`
}

// EmbeddingConfig is the remote embeddings provider. Fallback providers
// must serve the same model: vectors of different models live in different
// spaces even when their dimensions agree.
type EmbeddingConfig struct {
	ProviderConfig
	// Dimension every returned vector must have. Required.
	Dimension int `toml:"dimension" json:"dimension"`
	// BatchSize is the number of texts per request; zero means
	// [DefaultBatchSize].
	BatchSize int `toml:"batch_size" json:"batch_size,omitempty"`
	// ID overrides the embedder id recorded with stored vectors (default
	// "openai:<model>@<dimension>"). Set it to keep vectors when the same
	// model moves to a server that names it differently.
	ID string `toml:"id" json:"id,omitempty"`
	// Fallback lists replicas of the same model, tried in order.
	Fallback []ProviderConfig `toml:"fallback" json:"fallback,omitempty"`
}

// OfflineConfig configures the [OfflineEmbedder].
type OfflineConfig struct {
	// Dimension of the hashed vectors; zero means [DefaultOfflineDimension].
	// Changing it changes the embedder id, so stored vectors are re-embedded.
	Dimension int `toml:"dimension" json:"dimension,omitempty"`
}

// Enabled reports whether a remote embeddings provider is configured.
func (e EmbeddingConfig) Enabled() bool { return e.BaseURL != "" || e.Model != "" }

// HasChat reports whether an LLM is configured and not switched off.
func (c Config) HasChat() bool { return !c.Offline && len(c.Chat) > 0 }

// HasRemoteEmbedding reports whether a remote embedder is configured and not
// switched off.
func (c Config) HasRemoteEmbedding() bool { return !c.Offline && c.Embedding.Enabled() }

// ErrNoChat is returned by [Config.NewChat] when no chat provider is
// configured (or Offline is set): callers fall back to rule-based extraction.
var ErrNoChat = errors.New("model: no chat provider configured")

// NewChat builds the chat client of the configured fallback chain, or returns
// [ErrNoChat].
func (c Config) NewChat(opts ...Option) (*ChatClient, error) {
	if !c.HasChat() {
		return nil, ErrNoChat
	}
	return NewChatClient(c.Chat, opts...)
}

// NewEmbedder builds the remote embeddings client when one is configured,
// else the offline embedder.
func (c Config) NewEmbedder(opts ...Option) (Embedder, error) {
	if c.HasRemoteEmbedding() {
		return NewEmbeddingClient(c.Embedding, opts...)
	}
	if err := c.OfflineEmbedder.validate(); err != nil {
		return nil, err
	}
	return NewOfflineEmbedder(c.OfflineEmbedder.Dimension), nil
}

// String describes the configuration with API keys redacted.
func (c Config) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "model.Config{offline=%t chat=[", c.Offline)
	for i, p := range c.Chat {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(p.String())
	}
	b.WriteString("] embedding=")
	if c.Embedding.Enabled() {
		b.WriteString(c.Embedding.String())
	} else {
		b.WriteString("none")
	}
	fmt.Fprintf(&b, " offline_dimension=%d}", c.OfflineEmbedder.Dimension)
	return b.String()
}

// LogValue implements [slog.LogValuer] with API keys redacted.
func (c Config) LogValue() slog.Value {
	chat := make([]any, len(c.Chat))
	for i, p := range c.Chat {
		chat[i] = p.LogValue()
	}
	return slog.GroupValue(
		slog.Bool("offline", c.Offline),
		slog.Any("chat", chat),
		slog.Any("embedding", c.Embedding.LogValue()),
		slog.Int("offline_dimension", c.OfflineEmbedder.Dimension),
	)
}

// String describes the provider with its API key redacted.
func (p ProviderConfig) String() string {
	return fmt.Sprintf("{name=%q base_url=%q model=%q api_key=%q api_key_env=%q timeout=%s max_retries=%d}",
		p.Name, redactURL(p.BaseURL), p.Model, p.APIKey.String(), p.APIKeyEnv, p.Timeout, p.MaxRetries)
}

// LogValue implements [slog.LogValuer] with the API key redacted.
func (p ProviderConfig) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("name", p.Name),
		slog.String("base_url", redactURL(p.BaseURL)),
		slog.String("model", p.Model),
		slog.String("api_key", p.APIKey.String()),
		slog.String("api_key_env", p.APIKeyEnv),
		slog.Duration("timeout", p.Timeout),
		slog.Int("max_retries", p.MaxRetries),
	)
}

// String describes the embeddings provider with API keys redacted.
func (e EmbeddingConfig) String() string {
	var fb strings.Builder
	for i, p := range e.Fallback {
		if i > 0 {
			fb.WriteString(" ")
		}
		fb.WriteString(p.String())
	}
	return fmt.Sprintf("{%s dimension=%d batch_size=%d id=%q fallback=[%s]}",
		strings.TrimSuffix(strings.TrimPrefix(e.ProviderConfig.String(), "{"), "}"),
		e.Dimension, e.BatchSize, e.ID, fb.String())
}

// LogValue implements [slog.LogValuer] with API keys redacted.
func (e EmbeddingConfig) LogValue() slog.Value {
	if !e.Enabled() {
		return slog.StringValue("none")
	}
	fb := make([]any, len(e.Fallback))
	for i, p := range e.Fallback {
		fb[i] = p.LogValue()
	}
	return slog.GroupValue(
		slog.Any("provider", e.ProviderConfig.LogValue()),
		slog.Int("dimension", e.Dimension),
		slog.Int("batch_size", e.BatchSize),
		slog.String("id", e.ID),
		slog.Any("fallback", fb),
	)
}

// ConfigError is a validation error of the model configuration. It names
// the field; it never contains an API key.
type ConfigError struct {
	// Field is the dotted path, e.g. "model.chat[1].base_url" or an
	// environment variable name.
	Field string
	// Problem says what is wrong and, where useful, what to do.
	Problem string
}

func (e *ConfigError) Error() string {
	return "model config: " + e.Field + ": " + e.Problem
}

func cfgErr(field, format string, args ...any) error {
	return &ConfigError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

// Validate checks the configuration and returns every problem found,
// joined. Providers are checked even when Offline is set, so a typo does not
// hide until the switch is turned off.
func (c Config) Validate() error {
	var errs []error
	names := map[string]string{}
	for i, p := range c.Chat {
		field := fmt.Sprintf("model.chat[%d]", i)
		errs = append(errs, p.validate(field)...)
		name := p.withDefaults(0).Name
		if prev, dup := names[name]; dup && name != "" {
			errs = append(errs, cfgErr(field+".name", "%q is also the name of %s; give each provider a distinct name", name, prev))
		}
		names[name] = field
	}
	if c.Embedding.Enabled() {
		errs = append(errs, c.Embedding.validate("model.embedding")...)
	} else if c.Embedding.Dimension != 0 || len(c.Embedding.Fallback) > 0 || c.Embedding.APIKey.IsSet() || c.Embedding.APIKeyEnv != "" {
		errs = append(errs, cfgErr("model.embedding", "base_url and model are required when other embedding settings are given"))
	}
	if err := c.OfflineEmbedder.validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (o OfflineConfig) validate() error {
	if o.Dimension != 0 && (o.Dimension < minOfflineDimension || o.Dimension > maxOfflineDimension) {
		return cfgErr("model.offline_embedder.dimension", "%d is out of range [%d, %d]", o.Dimension, minOfflineDimension, maxOfflineDimension)
	}
	return nil
}

func (e EmbeddingConfig) validate(field string) []error {
	errs := e.ProviderConfig.validate(field)
	switch {
	case e.Dimension <= 0:
		errs = append(errs, cfgErr(field+".dimension", "required: the dimension of the model's vectors (e.g. 1536 for text-embedding-3-small, 768 for nomic-embed-text)"))
	case e.Dimension > maxEmbedDimension:
		errs = append(errs, cfgErr(field+".dimension", "%d is larger than %d", e.Dimension, maxEmbedDimension))
	}
	if e.BatchSize < 0 || e.BatchSize > maxBatchSize {
		errs = append(errs, cfgErr(field+".batch_size", "%d is out of range [0, %d] (0 means %d)", e.BatchSize, maxBatchSize, DefaultBatchSize))
	}
	names := map[string]bool{e.ProviderConfig.withDefaults(0).Name: true}
	for i, p := range e.Fallback {
		f := fmt.Sprintf("%s.fallback[%d]", field, i)
		if p.Model == "" {
			p.Model = e.Model // replicas inherit the model
		}
		errs = append(errs, p.validate(f)...)
		name := p.withDefaults(0).Name
		if names[name] {
			errs = append(errs, cfgErr(f+".name", "%q is used twice; give each provider a distinct name", name))
		}
		names[name] = true
	}
	return errs
}

func (p ProviderConfig) validate(field string) []error {
	var errs []error
	if err := checkBaseURL(p.BaseURL); err != nil {
		errs = append(errs, cfgErr(field+".base_url", "%v", err))
	}
	if strings.TrimSpace(p.Model) == "" {
		errs = append(errs, cfgErr(field+".model", "required: the model name the server expects"))
	}
	if p.APIKey.IsSet() && p.APIKeyEnv != "" {
		errs = append(errs, cfgErr(field, "set api_key or api_key_env, not both"))
	}
	if p.APIKeyEnv != "" && !validEnvName(p.APIKeyEnv) {
		errs = append(errs, cfgErr(field+".api_key_env", "%q is not an environment variable name", p.APIKeyEnv))
	}
	if p.Timeout < 0 {
		errs = append(errs, cfgErr(field+".timeout", "%s is negative", p.Timeout))
	}
	if p.MaxRetries < 0 || p.MaxRetries > maxRetriesLimit {
		errs = append(errs, cfgErr(field+".max_retries", "%d is out of range [0, %d]", p.MaxRetries, maxRetriesLimit))
	}
	return errs
}

func checkBaseURL(raw string) error {
	if strings.TrimSpace(raw) == "" {
		return errors.New("required, e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL", redactURL(raw))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q: scheme must be http or https", redactURL(raw))
	}
	if u.Host == "" {
		return fmt.Errorf("%q has no host", redactURL(raw))
	}
	p := strings.TrimSuffix(u.Path, "/")
	for _, suffix := range []string{"/chat/completions", "/embeddings", "/completions"} {
		if strings.HasSuffix(p, suffix) {
			return fmt.Errorf("%q ends in %s: give the API root (e.g. …/v1); the path is appended", redactURL(raw), suffix)
		}
	}
	return nil
}

func validEnvName(s string) bool {
	for i, r := range s {
		ok := r == '_' || (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z') || (i > 0 && r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	return s != ""
}

// withDefaults fills the name and, when timeout is non-zero, a zero Timeout.
func (p ProviderConfig) withDefaults(timeout time.Duration) ProviderConfig {
	p.BaseURL = strings.TrimRight(strings.TrimSpace(p.BaseURL), "/")
	if p.Name == "" {
		if u, err := url.Parse(p.BaseURL); err == nil && u.Host != "" {
			p.Name = u.Host
		}
	}
	if p.Timeout == 0 {
		p.Timeout = timeout
	}
	return p
}

// resolveKey returns the key to send: APIKey, or the value of APIKeyEnv.
func (p ProviderConfig) resolveKey(lookup func(string) (string, bool)) (Secret, error) {
	if p.APIKeyEnv == "" {
		return p.APIKey, nil
	}
	v, ok := lookup(p.APIKeyEnv)
	if !ok || strings.TrimSpace(v) == "" {
		return "", cfgErr("provider "+p.Name, "api_key_env names %s, which is not set", p.APIKeyEnv)
	}
	return Secret(strings.TrimSpace(v)), nil
}

// redactURL drops the user info, query and fragment of a URL, which is
// where keys hide when a server takes them in the URL.
func redactURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		// Keep at most the part before any '?' or '@'.
		if i := strings.IndexAny(raw, "?@#"); i >= 0 {
			return raw[:i] + "…"
		}
		return raw
	}
	u.User = nil
	u.RawQuery = ""
	u.ForceQuery = false
	u.Fragment = ""
	u.RawFragment = ""
	return u.String()
}

// ParseTOML reads the [model] section of a kaizen.toml document, applies the
// defaults for keys it leaves out, and validates the result. A document
// without a [model] section yields the zero configuration (no LLM, offline
// embedder). Unknown keys in the section are errors, so a typo is not
// silently ignored.
func ParseTOML(doc []byte) (Config, error) {
	return Load(doc, func(string) (string, bool) { return "", false })
}

// Load builds the configuration from a kaizen.toml document (nil for none)
// overlaid by the environment, seen through lookup (os.LookupEnv in
// production), and validates it.
func Load(doc []byte, lookup func(string) (string, bool)) (Config, error) {
	var cfg Config
	if len(doc) > 0 {
		var file struct {
			Model Config `toml:"model"`
		}
		if _, err := toml.Decode(string(doc), &file); err != nil {
			return Config{}, fmt.Errorf("model config: %w", err)
		}
		cfg = file.Model
	}
	if err := cfg.ApplyEnv(lookup); err != nil {
		return Config{}, err
	}
	return cfg, cfg.Validate()
}

// Format implements [fmt.Formatter]: every verb prints the redacted
// [Config.String], so no verb (%#v, %d, %x…) reaches a field holding a key
// or a URL with credentials.
func (c Config) Format(f fmt.State, verb rune) { formatRedacted(f, verb, c.String()) }

// Format implements [fmt.Formatter] with the redacted [ProviderConfig.String].
func (p ProviderConfig) Format(f fmt.State, verb rune) { formatRedacted(f, verb, p.String()) }

// Format implements [fmt.Formatter] with the redacted [EmbeddingConfig.String].
func (e EmbeddingConfig) Format(f fmt.State, verb rune) { formatRedacted(f, verb, e.String()) }

func formatRedacted(f fmt.State, verb rune, s string) {
	if verb == 'q' {
		s = strconv.Quote(s)
	}
	_, _ = io.WriteString(f, s)
}

// MarshalJSON encodes the provider for display: the key redacted and the
// base URL without user info or query, where keys sometimes hide.
func (p ProviderConfig) MarshalJSON() ([]byte, error) {
	type plain ProviderConfig // without methods
	q := plain(p)
	q.BaseURL = redactURL(p.BaseURL)
	return json.Marshal(q)
}

// MarshalJSON encodes the embeddings provider for display, like
// [ProviderConfig.MarshalJSON].
func (e EmbeddingConfig) MarshalJSON() ([]byte, error) {
	type plainProvider ProviderConfig
	type plain struct {
		plainProvider
		Dimension int              `json:"dimension"`
		BatchSize int              `json:"batch_size,omitempty"`
		ID        string           `json:"id,omitempty"`
		Fallback  []ProviderConfig `json:"fallback,omitempty"`
	}
	q := plain{plainProvider: plainProvider(e.ProviderConfig), Dimension: e.Dimension, BatchSize: e.BatchSize, ID: e.ID, Fallback: e.Fallback}
	q.BaseURL = redactURL(e.BaseURL)
	return json.Marshal(q)
}
