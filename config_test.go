package kaizen_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/learning"
)

// Configuration precedence: defaults < kaizen.toml < KAIZEN_* environment.
func TestLoadConfig(t *testing.T) {
	home := t.TempDir()
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(home, kaizen.ConfigFile), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := kaizen.LoadConfig(home)
	if err != nil || cfg.Learning.HalfLifeDays != 90 || cfg.Server.Addr != kaizen.DefaultAddr || cfg.Home != home {
		t.Fatalf("defaults: %+v %v", cfg, err)
	}
	write("project = \"web\"\n[learning]\nlocale = \"zh\"\nhalf_life_days = 30\n[learning.maturity]\nmin_helpful = 8\n")
	t.Setenv("KAIZEN_LEARNING_HALF_LIFE_DAYS", "45")
	t.Setenv("KAIZEN_LEARNING_DEFAULT_CRITERIA", "a, b")
	t.Setenv("KAIZEN_TOKEN", "secret")
	cfg, err = kaizen.LoadConfig(home)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Project != "web" || cfg.Learning.Locale != learning.LocaleZH || cfg.Learning.Maturity.MinHelpful != 8 {
		t.Errorf("file values not applied: %+v", cfg)
	}
	if cfg.Learning.HalfLifeDays != 45 || len(cfg.Learning.DefaultCriteria) != 2 || cfg.Server.Token != "secret" {
		t.Errorf("environment must override the file: %+v", cfg)
	}
	for name, body := range map[string]string{
		"unknown key":       "[learning]\nhalf_life = 3\n",
		"wrong type":        "[learning]\nhalf_life_days = \"ninety\"\n",
		"zero half-life":    "[learning]\nhalf_life_days = 0\n",
		"bad locale":        "[learning]\nlocale = \"fr\"\n",
		"malformed toml":    "[learning\n",
		"unsafe project":    "project = \"../etc\"\n",
		"harmful > helpful": "[learning]\nharmful_threshold = 0.8\n",
	} {
		t.Setenv("KAIZEN_LEARNING_HALF_LIFE_DAYS", "")
		os.Unsetenv("KAIZEN_LEARNING_HALF_LIFE_DAYS")
		write(body)
		if _, err := kaizen.LoadConfig(home); kaizen.KindOf(err) != kaizen.KindInvalid {
			t.Errorf("%s: got %v, want an invalid-config error", name, err)
		}
	}
	write("")
	t.Setenv("KAIZEN_LEARNING_MATURITY_MIN_HELPFUL", "many")
	if _, err := kaizen.LoadConfig(home); kaizen.KindOf(err) != kaizen.KindInvalid {
		t.Errorf("bad environment value: %v", err)
	}
}
