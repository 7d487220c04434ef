package redact

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The adversary sets (testdata/adversary-*.jsonl) were written after the
// rules of dev.jsonl, as an attacker would probe them: the formats issue
// 12 found missed (the AWS secret access key in INI, env, JSON and bare
// forms, postgres://user:pass@, a bare JWT, sk_live_, token=, npm_,
// KAIZEN_TOKEN=) and ~90 others, plus look-alikes that must survive. Each
// example's id is a hash of its content, and the split was fixed before
// any rule was tuned: an id whose first hash byte is below 0x80 is in the
// dev half, the rest in the holdout half. Rules were tuned on the dev half
// only; the holdout half is scored, not enforced.

// scoreFunc scores a redaction function on a set (score uses Redact).
func scoreWith(set []example, redactFn func(string) string) setScore {
	var s setScore
	for _, ex := range set {
		out := redactFn(ex.Text)
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

func redactText(s string) string { out, _ := Redact(s); return out }

func legacyText(s string) string { out, _ := legacyRedact(s); return out }

// TestAdversarySplit checks that every example is in the half its id
// names, so that the split cannot have been rearranged after tuning.
func TestAdversarySplit(t *testing.T) {
	t.Parallel()
	for file, dev := range map[string]bool{"adversary-dev.jsonl": true, "adversary-holdout.jsonl": false} {
		for _, ex := range loadSet(t, filepath.Join("testdata", file)) {
			b, err := strconv.ParseUint(strings.TrimPrefix(ex.ID, "adv-")[:2], 16, 8)
			if err != nil || !strings.HasPrefix(ex.ID, "adv-") {
				t.Fatalf("%s: bad id %q", file, ex.ID)
			}
			if (b < 0x80) != dev {
				t.Errorf("%s: %s belongs to the other half", file, ex.ID)
			}
		}
	}
}

// TestAdversaryScores reports recall and false positives of Redact and of
// the pass experience.RedactSecrets used before (legacyRedact) on both
// halves, and enforces a perfect dev half:
//
//	go test ./internal/redact -run TestAdversaryScores -v
func TestAdversaryScores(t *testing.T) {
	t.Parallel()
	dev := loadSet(t, "testdata/adversary-dev.jsonl")
	hold := loadSet(t, "testdata/adversary-holdout.jsonl")
	formats := map[string]bool{}
	looks := 0
	for _, ex := range append(append([]example{}, dev...), hold...) {
		if len(ex.Secrets) > 0 {
			formats[ex.Format] = true
		} else {
			looks++
		}
	}
	if len(formats) < 50 || looks < 40 {
		t.Errorf("adversary sets too small: %d secret formats, %d look-alikes", len(formats), looks)
	}
	for _, c := range []struct {
		name string
		fn   func(string) string
	}{{"Redact", redactText}, {"legacy experience.RedactSecrets", legacyText}} {
		for _, h := range []struct {
			name string
			set  []example
		}{{"dev", dev}, {"holdout", hold}} {
			s := scoreWith(h.set, c.fn)
			t.Logf("%s on %s: recall %d/%d secrets (%.1f%%), texts fully clean %d/%d, false positives %d/%d look-alikes changed (%.1f%%)",
				c.name, h.name, s.caught, s.secrets, pct(s.caught, s.secrets), s.clean, s.texts, s.mangled, s.lookalikes, pct(s.mangled, s.lookalikes))
			if c.name == "Redact" {
				for _, m := range s.misses {
					t.Logf("  missed  %s", m)
				}
				for _, m := range s.mangles {
					t.Logf("  mangled %s", m)
				}
			}
			if c.name == "Redact" && h.name == "dev" && (s.caught != s.secrets || s.mangled != 0) {
				t.Errorf("adversary dev half: caught %d/%d, mangled %d/%d; want all and none", s.caught, s.secrets, s.mangled, s.lookalikes)
			}
		}
	}
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

func TestURLPasswordWithHash(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://__token__:pa#ss1@pypi.example.com/simple": "https://__token__:[REDACTED:url-password]@pypi.example.com/simple",
		"http://host:8080#frag":                            "http://host:8080#frag",
		"http://host:8080/docs#a@b":                        "http://host:8080/docs#a@b",
		"see https://example.com:443#top then mail a@b.io": "see https://example.com:443#top then mail a@b.io",
	} {
		if got, _ := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestCompleteShortKeyBlock(t *testing.T) {
	t.Parallel()
	in := "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY-----\nb"
	if got, _ := Redact(in); got != "a\n[REDACTED:private-key]\nb" {
		t.Errorf("got %q", got)
	}
	prose := "a file that starts with -----BEGIN RSA PRIVATE KEY----- and ends with -----END RSA PRIVATE KEY----- is a key"
	if got, _ := Redact(prose); got != prose {
		t.Errorf("prose changed: %q", got)
	}
}

// adversaryCorpus repeats the adversary sets' texts (both halves, secrets
// and look-alikes in file order) until n bytes: text shaped like what the
// engine scrubs, with a secret every ~150 bytes.
func adversaryCorpus(tb testing.TB, n int) string {
	var b strings.Builder
	sets := append(loadSet(tb, "testdata/adversary-dev.jsonl"), loadSet(tb, "testdata/adversary-holdout.jsonl")...)
	for b.Len() < n {
		for _, ex := range sets {
			b.WriteString(ex.Text)
			b.WriteByte('\n')
		}
	}
	return b.String()[:n]
}

// BenchmarkScrubThroughput compares, in one run on the same inputs, Redact
// with two baselines: strings.Clone (the cost of touching every byte) and
// the regular-expression pass experience.RedactSecrets used before
// (legacyRedact). Inputs: 64 KB of keyword-free log lines (most of what
// agents send) and 64 KB of the adversary sets (a secret every ~150
// bytes, the worst realistic case).
//
//	go test ./internal/redact -run XXX -bench ScrubThroughput -benchtime 200x
func BenchmarkScrubThroughput(b *testing.B) {
	inputs := []struct {
		name string
		text string
	}{{"logs-64KB", prose(64 << 10)}, {"secrets-64KB", adversaryCorpus(b, 64<<10)}}
	for _, in := range inputs {
		for _, f := range []struct {
			name string
			fn   func(string) string
		}{{"clone", strings.Clone}, {"legacy", legacyText}, {"redact", redactText}} {
			b.Run(in.name+"/"+f.name, func(b *testing.B) {
				b.SetBytes(int64(len(in.text)))
				for b.Loop() {
					f.fn(in.text)
				}
			})
		}
	}
}

// TestHoldoutMissesFixed covers the three holdout misses, fixed after the
// holdout half was scored (so the holdout no longer measures them), and
// the look-alikes next to them that must stay.
func TestHoldoutMissesFixed(t *testing.T) {
	t.Parallel()
	secrets := map[string]string{
		"aws configure set aws_secret_access_key 9iEcdTH63GUWq1/Pm2Nx+L0vZkRb8sYt4uJ7wFaC --profile ci": "9iEcdTH63GUWq1/Pm2Nx+L0vZkRb8sYt4uJ7wFaC",
		`sql.Open("mysql", "app:LPX0y9sYlJ_3qT@tcp(127.0.0.1:3306)/app")`:                               "LPX0y9sYlJ_3qT",
		"数据库密码是 %!nC18LLYTvp9，请不要外传":                                                                    "%!nC18LLYTvp9",
		"password=$ecr3t!Pa55": "$ecr3t!Pa55",
	}
	for in, sec := range secrets {
		if got, _ := Redact(in); strings.Contains(got, sec) {
			t.Errorf("Redact(%q) = %q: secret kept", in, got)
		}
	}
	for _, in := range []string{
		"aws_secret_access_key is required for the default profile",
		`sql.Open("mysql", "app@tcp(127.0.0.1:3306)/app")`,
		`dsn := fmt.Sprintf("%s:%s@tcp(%s)/%s", user, pass, host, db)`,
		"password=%s", "password=%-10v", "password=%(pw)s", "password=%DB_PASSWORD%", "password=$DB_PASSWORD",
		"password=${DB_PASSWORD}", "password=$(cat /run/secrets/db)", "password=@secrets/db.txt",
	} {
		if got, _ := Redact(in); got != in {
			t.Errorf("Redact(%q) = %q; want it unchanged", in, got)
		}
	}
}
