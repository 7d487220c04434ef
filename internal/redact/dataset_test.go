package redact

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// example is one labelled text of a data set in testdata/*.jsonl.
type example struct {
	ID      string   `json:"id"`
	Text    string   `json:"text"`
	Secrets []string `json:"secrets"`
	Format  string   `json:"format"`
}

func loadSet(t testing.TB, path string) []example {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []example
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var ex example
		if err := json.Unmarshal(sc.Bytes(), &ex); err != nil {
			t.Fatalf("%s:%d: %v", path, line, err)
		}
		for _, s := range ex.Secrets {
			if s == "" || !strings.Contains(ex.Text, s) {
				t.Fatalf("%s:%d (%s): listed secret %q is not in the text", path, line, ex.ID, s)
			}
		}
		out = append(out, ex)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// setScore is how Redact does on one data set.
type setScore struct {
	secrets, caught     int // listed secrets, and those gone from the output
	texts, clean        int // secret-bearing texts, and those with every secret gone
	lookalikes, mangled int
	misses, mangles     []string
}

func score(set []example) setScore {
	var s setScore
	for _, ex := range set {
		out, _ := Redact(ex.Text)
		if len(ex.Secrets) == 0 {
			s.lookalikes++
			if out != ex.Text {
				s.mangled++
				s.mangles = append(s.mangles, ex.ID+" "+ex.Format+": "+diffSnippet(ex.Text, out))
			}
			continue
		}
		s.texts++
		all := true
		for _, sec := range ex.Secrets {
			s.secrets++
			if strings.Contains(out, sec) {
				all = false
				s.misses = append(s.misses, ex.ID+" "+ex.Format+": "+abbreviate(sec))
			} else {
				s.caught++
			}
		}
		if all {
			s.clean++
		}
	}
	return s
}

// abbreviate shows the start of a missed secret without printing it all.
func abbreviate(s string) string {
	if len(s) > 12 {
		return s[:12] + "…"
	}
	return s
}

// diffSnippet shows where a look-alike was changed.
func diffSnippet(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-30)
	return strings.ReplaceAll(b[lo:min(len(b), i+50)], "\n", `\n`)
}

// TestDataSets scores every labelled set in testdata (the dev set and
// any held-out set beside it) and reports, per file, secrets caught,
// look-alikes mangled and texts fully cleaned. The dev set must be
// perfect; other sets are reported, not enforced, so that they stay
// held out from tuning.
func TestDataSets(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no testdata/*.jsonl")
	}
	for _, f := range files {
		set := loadSet(t, f)
		s := score(set)
		t.Logf("%s: secrets caught %d/%d, texts fully clean %d/%d, look-alikes mangled %d/%d",
			filepath.Base(f), s.caught, s.secrets, s.clean, s.texts, s.mangled, s.lookalikes)
		for _, m := range s.misses {
			t.Logf("  missed  %s", m)
		}
		for _, m := range s.mangles {
			t.Logf("  mangled %s", m)
		}
		if filepath.Base(f) == "dev.jsonl" {
			if s.caught != s.secrets || s.mangled != 0 {
				t.Errorf("dev set: caught %d/%d secrets, mangled %d/%d look-alikes; want all and none",
					s.caught, s.secrets, s.mangled, s.lookalikes)
			}
			formats := map[string]bool{}
			for _, ex := range set {
				if len(ex.Secrets) > 0 {
					formats[ex.Format] = true
				}
			}
			if s.texts < 80 || len(formats) < 50 || s.lookalikes < 60 {
				t.Errorf("dev set too small: %d secret texts, %d formats, %d look-alikes", s.texts, len(formats), s.lookalikes)
			}
		}
	}
}
