package viewer_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNoTrustedTemplateTypes: the viewer never marks a value as safe
// markup, script, style or URL, so html/template escapes everything —
// above all the text agents wrote.
func TestNoTrustedTemplateTypes(t *testing.T) {
	t.Parallel()
	trusted := regexp.MustCompile(`template\.(HTML|HTMLAttr|JS|JSStr|CSS|URL|Srcset)\b`)
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			if m := trusted.FindString(line); m != "" {
				t.Errorf("%s:%d uses %s", f, i+1, m)
			}
		}
	}
}

// TestTemplatesFitTheCSP: no inline script, style element, style
// attribute or event-handler attribute, which the Content-Security-Policy
// would block (and log as console errors).
func TestTemplatesFitTheCSP(t *testing.T) {
	t.Parallel()
	bad := map[string]*regexp.Regexp{
		"inline script":   regexp.MustCompile(`<script(\s[^>]*)?>\s*[^<\s]`),
		"style element":   regexp.MustCompile(`<style`),
		"style attribute": regexp.MustCompile(`\sstyle=`),
		"event handler":   regexp.MustCompile(`\son[a-z]+=`),
		"hx-on":           regexp.MustCompile(`hx-on|hx-vars|js:`),
		"external URL":    regexp.MustCompile(`(src|href|action)="(https?:)?//`),
	}
	scriptTag := regexp.MustCompile(`<script[^>]*>`)
	files, _ := filepath.Glob("templates/*.html")
	if len(files) == 0 {
		t.Fatal("no templates")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, tag := range scriptTag.FindAll(data, -1) {
			if !strings.Contains(string(tag), ` src="/static/`) {
				t.Errorf("%s: script not loaded from /static/: %s", f, tag)
			}
		}
		for what, re := range bad {
			if m := re.Find(data); m != nil {
				t.Errorf("%s: %s: %q", f, what, m)
			}
		}
	}
}

// TestVendoredHTMX: the vendored htmx is the file recorded in VENDORED.md.
func TestVendoredHTMX(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("static/htmx.min.js")
	if err != nil {
		t.Fatal(err)
	}
	notes, err := os.ReadFile("static/VENDORED.md")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if !strings.Contains(string(notes), hex.EncodeToString(sum[:])) {
		t.Errorf("static/htmx.min.js has SHA-256 %x, not the one recorded in static/VENDORED.md", sum)
	}
	if !strings.Contains(string(data), `version:"2.`) {
		t.Error("static/htmx.min.js is not htmx 2")
	}
}
