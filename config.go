package kaizen

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/kaizenhq/kaizen/experience"
	"github.com/kaizenhq/kaizen/internal/app"
	"github.com/kaizenhq/kaizen/learning"
	"github.com/kaizenhq/kaizen/model"
	"github.com/kaizenhq/kaizen/store"
	"github.com/kaizenhq/kaizen/trace"
)

// ConfigFile is the name of the configuration file in the home directory.
const ConfigFile = "kaizen.toml"

// DefaultProject is the project used when none is given or derivable.
const DefaultProject = app.DefaultProject

// Config configures an engine. Precedence: kaizen.toml < KAIZEN_*
// environment variables < flags (applied by the caller after LoadConfig).
type Config struct {
	// Home is the data directory (KAIZEN_HOME, default ~/.local/share/kaizen).
	Home string `toml:"-"`
	// DB selects the store: "" for SQLite at Home/kaizen.db, a file path
	// (optionally prefixed "sqlite:"), "postgres://…" for PostgreSQL, or
	// "memory" for a volatile in-memory store.
	DB string `toml:"db"`
	// Project is the default project of requests that name none.
	Project string `toml:"project"`
	// Learning holds every threshold of the learning system.
	Learning learning.Config `toml:"learning"`
	// Experience holds the switches and thresholds of the experience
	// system (seed 001).
	Experience experience.Config `toml:"experience"`
	// Model selects the chat models and the embedder (package model); its
	// environment variables (KAIZEN_MODEL_*) are read by model.Config.ApplyEnv.
	Model model.Config `toml:"model"`
	// Server configures `kaizen serve`.
	Server ServerConfig `toml:"server"`
	// Retention bounds stored recalls and the write-ahead log
	// (config_retention.go).
	Retention RetentionConfig `toml:"retention"`
	// StoreOptions tune the storage backend ([store], config_store.go).
	StoreOptions StoreConfig `toml:"store"`
	// Hooks configures the client hooks (kaizen hook) and the closing of
	// the sessions they track.
	Hooks HooksConfig `toml:"hooks"`
	// Trace holds the thresholds of the failure-learning system (seed
	// 003, package trace; docs/trace.md).
	Trace trace.Config `toml:"trace"`

	// Now is the engine's clock (default time.Now). A fixed clock evaluates
	// every time-dependent result at that instant.
	Now func() time.Time `toml:"-"`
	// Logger receives operational logs (default: discard).
	Logger *slog.Logger `toml:"-"`
	// Store, when set, is used instead of opening DB. The engine does not
	// close a store it was given.
	Store store.Store `toml:"-"`
	// Chat and Embedder, when set, replace the models built from Model
	// (tests and embedding programs).
	Chat     model.Chat     `toml:"-"`
	Embedder model.Embedder `toml:"-"`
}

// ServerConfig configures the daemon.
type ServerConfig struct {
	// Addr is the listen address (default 127.0.0.1:7411).
	Addr string `toml:"addr"`
	// Token is required by every request when Addr is not loopback.
	Token string `toml:"token"`
	// AllowedHosts are extra names the Host and Origin headers of a
	// request may carry, besides the loopback names and Addr's host (DNS
	// rebinding protection, docs/security.md). "*" turns the check off.
	AllowedHosts []string `toml:"allowed_hosts"`
}

// HooksConfig configures the client hooks.
type HooksConfig struct {
	// IdleTimeout closes a tracked session that had no activity for this
	// long, recording its inferred outcome (0: only an ending session is
	// closed). The daemon sweeps every minute; without a daemon, a new
	// session of the project closes the idle ones.
	IdleTimeout time.Duration `toml:"idle_timeout"`
	// Timeout is a hook's budget: it answers (or gives up, printing
	// nothing) within it. Its event is spooled first, so it is never lost.
	Timeout time.Duration `toml:"timeout"`
}

// Defaults of HooksConfig.
const (
	DefaultIdleTimeout = time.Hour
	DefaultHookTimeout = 2 * time.Second
)

// DefaultAddr is the daemon's default listen address.
const DefaultAddr = "127.0.0.1:7411"

// DefaultConfig returns the defaults: the seed's thresholds, SQLite in the
// default home.
func DefaultConfig() Config {
	return Config{
		Home:       DefaultHome(),
		Learning:   learning.DefaultConfig(),
		Experience: experience.DefaultConfig(),
		Server:     ServerConfig{Addr: DefaultAddr},
		Hooks:      HooksConfig{IdleTimeout: DefaultIdleTimeout, Timeout: DefaultHookTimeout},
		Retention:  DefaultRetention(),
		Trace:      trace.DefaultConfig(),
	}
}

// DefaultHome is $KAIZEN_HOME, else $XDG_DATA_HOME/kaizen, else
// ~/.local/share/kaizen.
func DefaultHome() string {
	if h := os.Getenv("KAIZEN_HOME"); h != "" {
		return h
	}
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "kaizen")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "share", "kaizen")
	}
	return ".kaizen"
}

// LoadConfig reads home/kaizen.toml when it exists (unknown keys are an
// error), then applies KAIZEN_* environment variables, and validates.
func LoadConfig(home string) (Config, error) {
	cfg := DefaultConfig()
	if home != "" {
		cfg.Home = home
	}
	path := filepath.Join(cfg.Home, ConfigFile)
	md, err := toml.DecodeFile(path, &cfg)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return cfg, &Error{Op: "load config", Kind: KindInvalid, Field: path, Message: err.Error(), Err: err}
	default:
		if und := md.Undecoded(); len(und) > 0 {
			return cfg, &Error{Op: "load config", Kind: KindInvalid, Field: path,
				Message: fmt.Sprintf("unknown key %q", und[0].String()), Hint: "see docs/configuration.md for the keys"}
		}
	}
	if err := applyEnv(&cfg, os.LookupEnv); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if c.Hooks.IdleTimeout < 0 || c.Hooks.Timeout < 0 {
		return &Error{Op: "validate config", Kind: KindInvalid, Field: "hooks", Message: "idle_timeout and timeout must not be negative"}
	}
	if err := c.Retention.Validate(); err != nil {
		return err
	}
	if err := c.StoreOptions.Validate(); err != nil {
		return err
	}
	if err := c.Learning.Validate(); err != nil {
		return &Error{Op: "validate config", Kind: KindInvalid, Message: err.Error(), Err: err}
	}
	if err := c.Experience.Validate(); err != nil {
		return &Error{Op: "validate config", Kind: KindInvalid, Message: err.Error(), Err: err}
	}
	if !reflect.ValueOf(c.Trace).IsZero() { // zero: the defaults
		if err := c.Trace.Validate(); err != nil {
			return &Error{Op: "validate config", Kind: KindInvalid, Field: "trace", Message: err.Error(), Err: err}
		}
	}
	if err := c.Model.Validate(); err != nil {
		return &Error{Op: "validate config", Kind: KindInvalid, Message: err.Error(), Err: err}
	}
	if c.Project != "" {
		if err := app.ValidProject(c.Project); err != nil {
			return &Error{Op: "validate config", Kind: KindInvalid, Field: "project", Message: err.Error()}
		}
	}
	return nil
}

// EnvVars lists the environment variables that override configuration
// keys, derived from the toml keys: KAIZEN_ + path joined by "_".
func EnvVars() []string {
	var out []string
	walkEnv(reflect.ValueOf(&Config{}).Elem(), "KAIZEN", func(name string, _ reflect.Value) error {
		out = append(out, name)
		return nil
	})
	return append(out, "KAIZEN_HOME", "KAIZEN_TOKEN")
}

// applyEnv overrides configuration from environment variables.
func applyEnv(cfg *Config, lookup func(string) (string, bool)) error {
	err := walkEnv(reflect.ValueOf(cfg).Elem(), "KAIZEN", func(name string, v reflect.Value) error {
		s, ok := lookup(name)
		if !ok {
			return nil
		}
		if err := setFromString(v, s); err != nil {
			return &Error{Op: "load config", Kind: KindInvalid, Field: name, Message: err.Error()}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if t, ok := lookup("KAIZEN_TOKEN"); ok && t != "" {
		cfg.Server.Token = t
	}
	if err := cfg.Model.ApplyEnv(lookup); err != nil {
		return &Error{Op: "load config", Kind: KindInvalid, Message: err.Error(), Err: err}
	}
	return nil
}

func walkEnv(v reflect.Value, prefix string, fn func(string, reflect.Value) error) error {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("toml"), ",")[0]
		if tag == "" || tag == "-" || !f.IsExported() {
			continue
		}
		name := prefix + "_" + strings.ToUpper(tag)
		fv := v.Field(i)
		switch {
		case f.Type == reflect.TypeFor[model.Config](), fv.Kind() == reflect.Map:
			// model.Config reads its own variables (KAIZEN_MODEL_*);
			// tables keyed by name have no environment form.
			continue
		case fv.Kind() == reflect.Struct:
			if err := walkEnv(fv, name, fn); err != nil {
				return err
			}
			continue
		}
		if err := fn(name, fv); err != nil {
			return err
		}
	}
	return nil
}

func setFromString(v reflect.Value, s string) error {
	if v.Type() == reflect.TypeFor[time.Duration]() {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("%q is not a duration (use e.g. \"30s\" or \"2m\")", s)
		}
		v.SetInt(int64(d))
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("%q is not a boolean", s)
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not an integer", s)
		}
		v.SetInt(n)
	case reflect.Float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", s)
		}
		v.SetFloat(f)
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.String {
			return fmt.Errorf("unsupported list type %s", v.Type())
		}
		var items []string
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				items = append(items, p)
			}
		}
		v.Set(reflect.ValueOf(items).Convert(v.Type()))
	default:
		return fmt.Errorf("unsupported type %s", v.Type())
	}
	return nil
}
