package redact

import (
	"strings"
	"testing"
)

// fuzzSecrets are self-contained secrets the fuzz target plants in
// arbitrary text, each on a line of its own.
var fuzzSecrets = []string{
	"ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5",
	"AKIAQ3EGRTZ7XN5KB2PL",
	"sk-proj-Ab3De5Fg7Hi9Jk1Lm3No5Pq7Rs9Tu1Vw3Xy5Za7Bc9De1Fg3Hi5",
	"xoxb-123456789012-1234567890123-aB3dE5fG7hJ9kL1mN3pQ5rS7",
	"npm_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5",
	"glpat-Zq8Wx2Ec4Rv6Tb8Yn0Um",
	"sk_live_4eC39HqLyjWDarjtT1zdp7dcAb3De5Fg7",
	"AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
	"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.Xk3v9Qp2Lr8ZtW1mNc4YbH7sJd0FgA6eU5iOaTyR2wE",
	"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",
	"SG.Ab3De5Fg7Hi9Jk1Lm3No5P.q7Rs9Tu1Vw3Xy5Za7Bc9De1Fg3Hi5Jk7Lm9No1Pq3Rs5",
}

// plantedSecret is the part of a planted line that must disappear.
func plantedSecret(i int) (line, secret string) {
	switch n := len(fuzzSecrets); {
	case i%(n+2) < n:
		s := fuzzSecrets[i%(n+2)]
		return s, s
	case i%(n+2) == n:
		return "postgres://app:Pw9xZ2qLm4@db:5432/app", "Pw9xZ2qLm4"
	default:
		body := "MIIEowIBAAKCAQEAq3Zx8Lp2Wm5Tk7Hb9Cd3Vq8Zr2Lp5Xn1Wm7Tk4Hb9Cd3Zx8Lp2"
		return "-----BEGIN RSA PRIVATE KEY-----\n" + body + "\n-----END RSA PRIVATE KEY-----", body
	}
}

// FuzzRedact checks, on arbitrary text with a known secret planted on a
// line of its own: no panic, the secret is gone, the output is the input
// with each reported span replaced by its marker (so it is never longer
// than the input plus one marker per finding), and redacting again
// changes nothing.
func FuzzRedact(f *testing.F) {
	for i, ex := range loadSet(f, "testdata/dev.jsonl") {
		if i%3 == 0 {
			f.Add(ex.Text, uint8(i), "")
		}
	}
	f.Add("", uint8(0), "")
	f.Add("password=", uint8(1), "=token=")
	f.Add("-----BEGIN PRIVATE KEY-----", uint8(13), "\\n")
	f.Add("\xff\xfe\xc3", uint8(5), "\x00")
	f.Fuzz(func(t *testing.T, prefix string, pick uint8, suffix string) {
		line, secret := plantedSecret(int(pick))
		in := prefix + "\n" + line + "\n" + suffix
		out, rep := Redact(in)
		if strings.Contains(out, secret) {
			t.Fatalf("planted secret survived:\n in %q\nout %q", in, out)
		}
		checkReport(t, in, out, rep)
		again, rep2 := Redact(out)
		if again != out || rep2.Count() != 0 {
			t.Fatalf("not idempotent (%+v):\n once %q\ntwice %q", rep2.Findings, out, again)
		}
		// Arbitrary text alone: the same invariants.
		out, rep = Redact(prefix)
		checkReport(t, prefix, out, rep)
		if again, _ := Redact(out); again != out {
			t.Fatalf("not idempotent:\n once %q\ntwice %q", out, again)
		}
	})
}
