package model

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// UnmarshalTOML implements toml.Unmarshaler for the [model] section, so that
// a kaizen.toml decoded into a struct holding a Config gets the same
// defaults and strict key checking as [ParseTOML].
func (c *Config) UnmarshalTOML(data any) error {
	m, ok := data.(map[string]any)
	if !ok {
		return cfgErr("model", "want a table")
	}
	var cfg Config
	d := tomlTable{path: "model", m: m}
	if err := d.only("offline", "chat", "embedding", "offline_embedder"); err != nil {
		return err
	}
	if err := d.boolean("offline", &cfg.Offline); err != nil {
		return err
	}
	chat, err := d.tables("chat")
	if err != nil {
		return err
	}
	for _, t := range chat {
		p, err := t.provider()
		if err != nil {
			return err
		}
		cfg.Chat = append(cfg.Chat, p)
	}
	if t, ok, err := d.table("embedding"); err != nil {
		return err
	} else if ok {
		if cfg.Embedding, err = t.embedding(); err != nil {
			return err
		}
	}
	if t, ok, err := d.table("offline_embedder"); err != nil {
		return err
	} else if ok {
		if err := t.only("dimension"); err != nil {
			return err
		}
		if err := t.integer("dimension", &cfg.OfflineEmbedder.Dimension); err != nil {
			return err
		}
	}
	*c = cfg
	return nil
}

var providerKeys = []string{"name", "base_url", "api_key", "api_key_env", "model", "timeout", "max_retries"}

// tomlTable decodes one TOML table by hand: strict keys, typed errors that
// name the key and never echo a secret.
type tomlTable struct {
	path string
	m    map[string]any
}

func (t tomlTable) field(key string) string { return t.path + "." + key }

func (t tomlTable) only(keys ...string) error {
	var unknown []string
	for k := range t.m {
		if !slices.Contains(keys, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return cfgErr(t.field(unknown[0]), "unknown key (known keys: %s)", strings.Join(keys, ", "))
}

func (t tomlTable) str(key string, dst *string) error {
	v, ok := t.m[key]
	if !ok {
		return nil
	}
	s, ok := v.(string)
	if !ok {
		return cfgErr(t.field(key), "want a string")
	}
	*dst = s
	return nil
}

func (t tomlTable) boolean(key string, dst *bool) error {
	v, ok := t.m[key]
	if !ok {
		return nil
	}
	b, ok := v.(bool)
	if !ok {
		return cfgErr(t.field(key), "want true or false")
	}
	*dst = b
	return nil
}

func (t tomlTable) integer(key string, dst *int) error {
	v, ok := t.m[key]
	if !ok {
		return nil
	}
	n, ok := v.(int64)
	if !ok || int64(int(n)) != n {
		return cfgErr(t.field(key), "want an integer")
	}
	*dst = int(n)
	return nil
}

func (t tomlTable) duration(key string, dst *time.Duration) error {
	v, ok := t.m[key]
	if !ok {
		return nil
	}
	switch v := v.(type) {
	case string:
		d, err := time.ParseDuration(v)
		if err != nil {
			return cfgErr(t.field(key), "%q is not a duration (use e.g. \"30s\" or \"2m\")", v)
		}
		*dst = d
	case int64: // whole seconds
		if v < 0 || v > int64(24*time.Hour/time.Second) {
			return cfgErr(t.field(key), "%d seconds is out of range", v)
		}
		*dst = time.Duration(v) * time.Second
	default:
		return cfgErr(t.field(key), "want a duration string like \"30s\" or a number of seconds")
	}
	return nil
}

func (t tomlTable) table(key string) (tomlTable, bool, error) {
	v, ok := t.m[key]
	if !ok {
		return tomlTable{}, false, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return tomlTable{}, false, cfgErr(t.field(key), "want a table ([%s])", t.field(key))
	}
	return tomlTable{path: t.field(key), m: m}, true, nil
}

func (t tomlTable) tables(key string) ([]tomlTable, error) {
	v, ok := t.m[key]
	if !ok {
		return nil, nil
	}
	var ms []map[string]any
	switch v := v.(type) {
	case []map[string]any:
		ms = v
	case []any:
		for _, e := range v {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, cfgErr(t.field(key), "want an array of tables ([[%s]])", t.field(key))
			}
			ms = append(ms, m)
		}
	default:
		return nil, cfgErr(t.field(key), "want an array of tables ([[%s]])", t.field(key))
	}
	out := make([]tomlTable, len(ms))
	for i, m := range ms {
		out[i] = tomlTable{path: fmt.Sprintf("%s[%d]", t.field(key), i), m: m}
	}
	return out, nil
}

// providerFields decodes the provider keys, defaulting max_retries.
func (t tomlTable) providerFields(p *ProviderConfig) error {
	var key string
	for _, f := range []func() error{
		func() error { return t.str("name", &p.Name) },
		func() error { return t.str("base_url", &p.BaseURL) },
		func() error {
			err := t.str("api_key", &key)
			p.APIKey = Secret(strings.TrimSpace(key))
			return err
		},
		func() error { return t.str("api_key_env", &p.APIKeyEnv) },
		func() error { return t.str("model", &p.Model) },
		func() error { return t.duration("timeout", &p.Timeout) },
		func() error {
			p.MaxRetries = DefaultMaxRetries
			return t.integer("max_retries", &p.MaxRetries)
		},
	} {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

func (t tomlTable) provider() (ProviderConfig, error) {
	var p ProviderConfig
	if err := t.only(providerKeys...); err != nil {
		return p, err
	}
	return p, t.providerFields(&p)
}

func (t tomlTable) embedding() (EmbeddingConfig, error) {
	var e EmbeddingConfig
	if err := t.only(append(slices.Clone(providerKeys), "dimension", "batch_size", "id", "fallback")...); err != nil {
		return e, err
	}
	if err := t.providerFields(&e.ProviderConfig); err != nil {
		return e, err
	}
	if err := t.integer("dimension", &e.Dimension); err != nil {
		return e, err
	}
	if err := t.integer("batch_size", &e.BatchSize); err != nil {
		return e, err
	}
	if err := t.str("id", &e.ID); err != nil {
		return e, err
	}
	fallback, err := t.tables("fallback")
	if err != nil {
		return e, err
	}
	for _, ft := range fallback {
		p, err := ft.provider()
		if err != nil {
			return e, err
		}
		e.Fallback = append(e.Fallback, p)
	}
	return e, nil
}

// Environment variables read by [Config.ApplyEnv].
const (
	envPrefix           = "KAIZEN_MODEL_"
	envOffline          = envPrefix + "OFFLINE"
	envOfflineDimension = envPrefix + "OFFLINE_DIMENSION"
	envChat             = envPrefix + "CHAT_"
	envEmbedding        = envPrefix + "EMBEDDING_"
	maxEnvProviders     = 16
)

// ApplyEnv overlays KAIZEN_MODEL_* environment variables, read through
// lookup (os.LookupEnv in production), on the configuration. The
// environment wins over the file, field by field:
//
//	KAIZEN_MODEL_OFFLINE=true             ignore all providers (no LLM, offline embedder)
//	KAIZEN_MODEL_OFFLINE_DIMENSION=512    offline embedder dimension
//	KAIZEN_MODEL_CHAT_<FIELD>             first chat provider
//	KAIZEN_MODEL_CHAT_<N>_<FIELD>         N-th chat provider (N from 1; N = len+1 appends)
//	KAIZEN_MODEL_EMBEDDING_<FIELD>        embeddings provider
//
// where FIELD is NAME, BASE_URL, API_KEY, API_KEY_ENV, MODEL, TIMEOUT,
// MAX_RETRIES, and for the embeddings provider also DIMENSION, BATCH_SIZE
// and ID. Setting API_KEY clears a file's api_key_env and the reverse.
// Errors name the variable; they never repeat a key.
func (c *Config) ApplyEnv(lookup func(string) (string, bool)) error {
	get := func(key string) (string, bool) {
		v, ok := lookup(key)
		return strings.TrimSpace(v), ok && strings.TrimSpace(v) != ""
	}
	if v, ok := get(envOffline); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return cfgErr(envOffline, "%q is not a boolean", v)
		}
		c.Offline = b
	}
	if v, ok := get(envOfflineDimension); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return cfgErr(envOfflineDimension, "%q is not an integer", v)
		}
		c.OfflineEmbedder.Dimension = n
	}
	for n := 1; n <= maxEnvProviders; n++ {
		prefixes := []string{fmt.Sprintf("%s%d_", envChat, n)}
		if n == 1 {
			prefixes = append([]string{envChat}, prefixes...)
		}
		var p ProviderConfig
		exists := n <= len(c.Chat)
		if exists {
			p = c.Chat[n-1]
		} else {
			p.MaxRetries = DefaultMaxRetries
		}
		touched := false
		for _, prefix := range prefixes {
			t, err := envProvider(get, prefix, &p)
			if err != nil {
				return err
			}
			touched = touched || t
		}
		switch {
		case !touched:
			continue
		case exists:
			c.Chat[n-1] = p
		case n == len(c.Chat)+1:
			c.Chat = append(c.Chat, p)
		default:
			return cfgErr(fmt.Sprintf("%s%d_*", envChat, n), "chat provider %d is set but provider %d is not defined in the file or the environment", n, len(c.Chat)+1)
		}
	}
	e := &c.Embedding
	p := e.ProviderConfig
	if !e.Enabled() {
		p.MaxRetries = DefaultMaxRetries // a provider defined only by the environment
	}
	touched, err := envProvider(get, envEmbedding, &p)
	if err != nil {
		return err
	}
	if touched {
		e.ProviderConfig = p
	}
	for _, f := range []struct {
		key string
		dst *int
	}{{"DIMENSION", &e.Dimension}, {"BATCH_SIZE", &e.BatchSize}} {
		key, dst := f.key, f.dst
		if v, ok := get(envEmbedding + key); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return cfgErr(envEmbedding+key, "%q is not an integer", v)
			}
			*dst = n
		}
	}
	if v, ok := get(envEmbedding + "ID"); ok {
		e.ID = v
	}
	return nil
}

// envProvider overlays prefix+FIELD variables on p and reports whether any
// was set.
func envProvider(get func(string) (string, bool), prefix string, p *ProviderConfig) (bool, error) {
	touched := false
	str := func(field string, dst *string) {
		if v, ok := get(prefix + field); ok {
			*dst = v
			touched = true
		}
	}
	str("NAME", &p.Name)
	str("BASE_URL", &p.BaseURL)
	str("MODEL", &p.Model)
	if v, ok := get(prefix + "API_KEY"); ok {
		p.APIKey, p.APIKeyEnv, touched = Secret(v), "", true
	}
	if v, ok := get(prefix + "API_KEY_ENV"); ok {
		p.APIKey, p.APIKeyEnv, touched = "", v, true
	}
	if v, ok := get(prefix + "TIMEOUT"); ok {
		d, err := time.ParseDuration(v)
		if err != nil {
			if secs, aerr := strconv.Atoi(v); aerr == nil && secs >= 0 {
				d, err = time.Duration(secs)*time.Second, nil
			}
		}
		if err != nil {
			return false, cfgErr(prefix+"TIMEOUT", "%q is not a duration (use e.g. 30s)", v)
		}
		p.Timeout, touched = d, true
	}
	if v, ok := get(prefix + "MAX_RETRIES"); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return false, cfgErr(prefix+"MAX_RETRIES", "%q is not an integer", v)
		}
		p.MaxRetries, touched = n, true
	}
	return touched, nil
}
