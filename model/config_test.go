package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/google/go-cmp/cmp"
)

const fullTOML = `
[learning]
half_life_days = 90

[model]
offline = false

[[model.chat]]
name = "openai"
base_url = "https://api.openai.com/v1"
api_key_env = "OPENAI_API_KEY"
model = "gpt-4o-mini"
timeout = "30s"
max_retries = 3

[[model.chat]]
name = "local"
base_url = "http://127.0.0.1:11434/v1"
model = "qwen2.5:7b"
timeout = 120
max_retries = 0

[model.embedding]
name = "ollama"
base_url = "http://127.0.0.1:11434/v1"
model = "nomic-embed-text"
dimension = 768
batch_size = 64

[[model.embedding.fallback]]
name = "replica"
base_url = "http://10.0.0.2:11434/v1"

[model.offline_embedder]
dimension = 256
`

func noEnv(string) (string, bool) { return "", false }

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestParseTOML(t *testing.T) {
	t.Parallel()
	cfg, err := ParseTOML([]byte(fullTOML))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Chat: []ProviderConfig{
			{Name: "openai", BaseURL: "https://api.openai.com/v1", APIKeyEnv: "OPENAI_API_KEY", Model: "gpt-4o-mini", Timeout: 30 * time.Second, MaxRetries: 3},
			{Name: "local", BaseURL: "http://127.0.0.1:11434/v1", Model: "qwen2.5:7b", Timeout: 120 * time.Second, MaxRetries: 0},
		},
		Embedding: EmbeddingConfig{
			ProviderConfig: ProviderConfig{Name: "ollama", BaseURL: "http://127.0.0.1:11434/v1", Model: "nomic-embed-text", MaxRetries: DefaultMaxRetries},
			Dimension:      768, BatchSize: 64,
			Fallback: []ProviderConfig{{Name: "replica", BaseURL: "http://10.0.0.2:11434/v1", MaxRetries: DefaultMaxRetries}},
		},
		OfflineEmbedder: OfflineConfig{Dimension: 256},
	}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	if !cfg.HasChat() || !cfg.HasRemoteEmbedding() {
		t.Error("HasChat/HasRemoteEmbedding")
	}
}

func TestParseTOMLInsideALargerConfig(t *testing.T) {
	t.Parallel()
	// The root package decodes all of kaizen.toml into one struct.
	var file struct {
		Learning map[string]any `toml:"learning"`
		Model    Config         `toml:"model"`
	}
	if _, err := toml.Decode(fullTOML, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Model.Chat) != 2 || file.Model.Embedding.Dimension != 768 || file.Model.Chat[1].MaxRetries != 0 {
		t.Errorf("model section = %v", file.Model)
	}
}

func TestParseTOMLWithoutModelSection(t *testing.T) {
	t.Parallel()
	cfg, err := ParseTOML([]byte("[learning]\nhalf_life_days = 30\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.HasChat() || cfg.HasRemoteEmbedding() {
		t.Errorf("empty config enables providers: %v", cfg)
	}
	if _, err := cfg.NewChat(); !errors.Is(err, ErrNoChat) {
		t.Errorf("NewChat = %v, want ErrNoChat", err)
	}
	e, err := cfg.NewEmbedder()
	if err != nil || e.ID() != "offline-hash-v5@512" {
		t.Errorf("NewEmbedder = %v, %v; want the offline embedder", e, err)
	}
}

func TestParseTOMLErrors(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		doc  string
		want []string
	}{
		"unknown key":        {"[[model.chat]]\nbase_ur = \"x\"\n", []string{"model.chat[0].base_ur", "unknown key", "base_url"}},
		"unknown section":    {"[model.chatt]\n", []string{"model.chatt", "unknown key"}},
		"bad timeout":        {"[[model.chat]]\ntimeout = \"soon\"\n", []string{"model.chat[0].timeout", `"soon" is not a duration`}},
		"chat not an array":  {"[model.chat]\nname = \"x\"\n", []string{"model.chat", "array of tables"}},
		"retries as string":  {"[model.embedding]\nmax_retries = \"3\"\n", []string{"model.embedding.max_retries", "want an integer"}},
		"missing model":      {"[[model.chat]]\nbase_url = \"http://h/v1\"\n", []string{"model.chat[0].model", "required"}},
		"endpoint not root":  {"[[model.chat]]\nbase_url = \"https://api.openai.com/v1/chat/completions\"\nmodel = \"m\"\n", []string{"ends in /chat/completions"}},
		"both keys":          {"[[model.chat]]\nbase_url = \"http://h/v1\"\nmodel = \"m\"\napi_key = \"sk-SECRETKEY-1\"\napi_key_env = \"K\"\n", []string{"set api_key or api_key_env, not both"}},
		"dup names":          {"[[model.chat]]\nbase_url = \"http://h/v1\"\nmodel = \"m\"\n[[model.chat]]\nbase_url = \"http://h/v1\"\nmodel = \"n\"\n", []string{"model.chat[1].name", "distinct"}},
		"no dimension":       {"[model.embedding]\nbase_url = \"http://h/v1\"\nmodel = \"m\"\n", []string{"model.embedding.dimension", "required"}},
		"offline dim":        {"[model.offline_embedder]\ndimension = 3\n", []string{"model.offline_embedder.dimension", "out of range"}},
		"too many retries":   {"[[model.chat]]\nbase_url = \"http://h/v1\"\nmodel = \"m\"\nmax_retries = 99\n", []string{"max_retries", "out of range"}},
		"api key not string": {"[[model.chat]]\napi_key = 12345678901\n", []string{"model.chat[0].api_key", "want a string"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseTOML([]byte(tc.doc))
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			assertNoSecret(t, err.Error(), "12345678901")
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	t.Parallel()
	cfg := Config{Chat: []ProviderConfig{{BaseURL: "nope"}, {BaseURL: "http://h/v1", Model: "m", Timeout: -time.Second}}}
	err := cfg.Validate()
	for _, w := range []string{"model.chat[0].base_url", "model.chat[0].model", "model.chat[1].timeout"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error %v lacks %s", err, w)
		}
	}
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Errorf("errors are not *ConfigError: %T", err)
	}
}

func TestEnvOverridesFile(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"KAIZEN_MODEL_CHAT_MODEL":           "gpt-4.1-mini", // first provider, unindexed form
		"KAIZEN_MODEL_CHAT_1_TIMEOUT":       "45s",
		"KAIZEN_MODEL_CHAT_1_API_KEY":       "sk-env-SECRETKEY-999", // replaces the file's api_key_env
		"KAIZEN_MODEL_CHAT_2_MAX_RETRIES":   "1",
		"KAIZEN_MODEL_CHAT_3_NAME":          "deepseek", // a third provider, from the environment only
		"KAIZEN_MODEL_CHAT_3_BASE_URL":      "https://api.deepseek.com/v1",
		"KAIZEN_MODEL_CHAT_3_MODEL":         "deepseek-chat",
		"KAIZEN_MODEL_CHAT_3_API_KEY_ENV":   "DEEPSEEK_API_KEY",
		"KAIZEN_MODEL_EMBEDDING_DIMENSION":  "1024",
		"KAIZEN_MODEL_EMBEDDING_MODEL":      "bge-m3",
		"KAIZEN_MODEL_EMBEDDING_BATCH_SIZE": "16",
		"KAIZEN_MODEL_OFFLINE_DIMENSION":    "1024",
	}
	cfg, err := Load([]byte(fullTOML), envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	c0 := cfg.Chat[0]
	if c0.Model != "gpt-4.1-mini" || c0.Timeout != 45*time.Second || c0.APIKey.Reveal() != "sk-env-SECRETKEY-999" || c0.APIKeyEnv != "" || c0.Name != "openai" || c0.MaxRetries != 3 {
		t.Errorf("chat[0] = %v (key set: %t)", c0, c0.APIKey.IsSet())
	}
	if cfg.Chat[1].MaxRetries != 1 || cfg.Chat[1].Model != "qwen2.5:7b" {
		t.Errorf("chat[1] = %v", cfg.Chat[1])
	}
	want3 := ProviderConfig{Name: "deepseek", BaseURL: "https://api.deepseek.com/v1", Model: "deepseek-chat", APIKeyEnv: "DEEPSEEK_API_KEY", MaxRetries: DefaultMaxRetries}
	if len(cfg.Chat) != 3 || cfg.Chat[2] != want3 {
		t.Errorf("chat = %v", cfg.Chat)
	}
	if e := cfg.Embedding; e.Dimension != 1024 || e.Model != "bge-m3" || e.BatchSize != 16 || e.Name != "ollama" {
		t.Errorf("embedding = %v", e)
	}
	if cfg.OfflineEmbedder.Dimension != 1024 {
		t.Errorf("offline dimension = %d", cfg.OfflineEmbedder.Dimension)
	}
}

func TestEnvAlone(t *testing.T) {
	t.Parallel()
	cfg, err := Load(nil, envOf(map[string]string{
		"KAIZEN_MODEL_CHAT_BASE_URL":         "http://127.0.0.1:8000/v1",
		"KAIZEN_MODEL_CHAT_MODEL":            "Qwen/Qwen2.5-7B-Instruct",
		"KAIZEN_MODEL_EMBEDDING_BASE_URL":    "http://127.0.0.1:8000/v1",
		"KAIZEN_MODEL_EMBEDDING_MODEL":       "BAAI/bge-m3",
		"KAIZEN_MODEL_EMBEDDING_DIMENSION":   "1024",
		"KAIZEN_MODEL_EMBEDDING_TIMEOUT":     "10",
		"KAIZEN_MODEL_EMBEDDING_API_KEY_ENV": "VLLM_KEY",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Chat) != 1 || cfg.Chat[0].MaxRetries != DefaultMaxRetries || cfg.Embedding.MaxRetries != DefaultMaxRetries || cfg.Embedding.Timeout != 10*time.Second {
		t.Errorf("config = %v", cfg)
	}
}

func TestEnvOfflineSwitch(t *testing.T) {
	t.Parallel()
	cfg, err := Load([]byte(fullTOML), envOf(map[string]string{"KAIZEN_MODEL_OFFLINE": "true"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.HasChat() || cfg.HasRemoteEmbedding() {
		t.Error("KAIZEN_MODEL_OFFLINE must switch providers off")
	}
	if _, err := cfg.NewChat(); !errors.Is(err, ErrNoChat) {
		t.Errorf("NewChat: %v", err)
	}
	e, err := cfg.NewEmbedder()
	if err != nil || e.ID() != "offline-hash-v5@256" {
		t.Errorf("NewEmbedder: %v, %v", e, err)
	}
}

func TestEnvErrors(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		env  map[string]string
		want string
	}{
		"bad bool":    {map[string]string{"KAIZEN_MODEL_OFFLINE": "maybe"}, "KAIZEN_MODEL_OFFLINE"},
		"bad retries": {map[string]string{"KAIZEN_MODEL_CHAT_MAX_RETRIES": "lots"}, "KAIZEN_MODEL_CHAT_MAX_RETRIES"},
		"bad timeout": {map[string]string{"KAIZEN_MODEL_CHAT_2_TIMEOUT": "later"}, "KAIZEN_MODEL_CHAT_2_TIMEOUT"},
		"bad dim":     {map[string]string{"KAIZEN_MODEL_EMBEDDING_DIMENSION": "big"}, "KAIZEN_MODEL_EMBEDDING_DIMENSION"},
		"gap":         {map[string]string{"KAIZEN_MODEL_CHAT_4_MODEL": "m"}, "provider 3 is not defined"},
		"invalid":     {map[string]string{"KAIZEN_MODEL_CHAT_BASE_URL": "localhost:11434"}, "model.chat[0]"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := Load([]byte(fullTOML), envOf(tc.env))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want mention of %s", err, tc.want)
			}
		})
	}
}

func TestConfigNeverPrintsKeys(t *testing.T) {
	t.Parallel()
	const chatKey, embKey = "sk-chat-SECRETKEY-1234567890", "sk-emb-SECRETKEY-0987654321"
	cfg := Config{
		Chat: []ProviderConfig{{Name: "openai", BaseURL: "https://user:pass@api.openai.com/v1?key=" + chatKey, Model: "gpt-4o-mini", APIKey: chatKey}},
		Embedding: EmbeddingConfig{
			ProviderConfig: ProviderConfig{Name: "emb", BaseURL: "https://api.openai.com/v1", Model: "text-embedding-3-small", APIKey: embKey},
			Dimension:      1536,
			Fallback:       []ProviderConfig{{Name: "fb", BaseURL: "https://b/v1", APIKey: embKey}},
		},
	}
	var outputs []string
	for _, v := range []any{cfg, &cfg, cfg.Chat[0], &cfg.Chat[0], cfg.Embedding, cfg.Chat, cfg.Chat[0].APIKey, &cfg.Chat[0].APIKey} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10.3s", "%T"} {
			outputs = append(outputs, fmt.Sprintf(verb, v))
		}
	}
	for _, h := range []func(*bytes.Buffer) slog.Handler{
		func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
		func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
	} {
		var buf bytes.Buffer
		slog.New(h(&buf)).Info("config", "cfg", cfg, "chat", cfg.Chat[0], "key", cfg.Chat[0].APIKey, "emb", cfg.Embedding)
		outputs = append(outputs, buf.String())
	}
	js, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, string(js))
	// TOML encoding redacts the key fields (a key hidden in base_url's query
	// is only redacted by fmt, slog, JSON and errors).
	plainURL := cfg
	plainURL.Chat = []ProviderConfig{cfg.Chat[0]}
	plainURL.Chat[0].BaseURL = "https://api.openai.com/v1"
	var tb bytes.Buffer
	if err := toml.NewEncoder(&tb).Encode(plainURL); err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, tb.String())
	bad := cfg
	bad.Chat = append([]ProviderConfig{{APIKey: chatKey, APIKeyEnv: "X", BaseURL: "ftp://h?k=" + chatKey}}, cfg.Chat...)
	outputs = append(outputs, bad.Validate().Error())

	for _, out := range outputs {
		assertNoSecret(t, out, chatKey, embKey)
		if strings.Contains(out, "pass@") {
			t.Errorf("URL credentials printed: %s", out)
		}
	}
	if !strings.Contains(cfg.String(), `api_key="[REDACTED]"`) {
		t.Errorf("String() should show that a key is set: %s", cfg.String())
	}
	// Printed and read back, a redacted key does not become a key.
	var back Config
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if back.Chat[0].APIKey.IsSet() {
		t.Errorf("the redaction marker decoded as a key")
	}
}

func TestSecretReveal(t *testing.T) {
	t.Parallel()
	s := Secret("sk-abc")
	if s.Reveal() != "sk-abc" || s.String() != "[REDACTED]" || Secret("").String() != "" {
		t.Error("Secret basics")
	}
}

func TestConfigNewEmbedderRemote(t *testing.T) {
	t.Parallel()
	cfg, err := ParseTOML([]byte(fullTOML))
	if err != nil {
		t.Fatal(err)
	}
	e, err := cfg.NewEmbedder()
	if err != nil {
		t.Fatal(err)
	}
	if e.ID() != "openai:nomic-embed-text@768" || e.Dimension() != 768 {
		t.Errorf("embedder %s %d", e.ID(), e.Dimension())
	}
	c, err := cfg.NewChat(WithLookupEnv(envOf(map[string]string{"OPENAI_API_KEY": "sk-x-SECRETKEY"})))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"openai", "local"}, c.Providers()); diff != "" {
		t.Error(diff)
	}
	_, err = cfg.NewChat(WithLookupEnv(noEnv))
	if err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("missing key variable: %v", err)
	}
}
