package redact

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// The 28 formats of the security review: the 18 the old redactor caught
// and the 10 it let through (the AWS secret access key in four forms,
// postgres://user:pass@host, a bare JWT, sk_live_, token=…, npm_…,
// KAIZEN_TOKEN=…).
func TestSecurityReviewFormats(t *testing.T) {
	t.Parallel()
	const (
		awsID     = "AKIAQ3EGRTZ7XN5KB2PL"
		awsSecret = "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"
		jwt       = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkZha2UifQ.Xk3v9Qp2Lr8ZtW1mNc4YbH7sJd0FgA6eU5iOaTyR2wE"
	)
	tests := []struct {
		name, text, secret, rule string
	}{
		// Caught before.
		{"ghp", "push failed for ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5 today", "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5", "github-pat"},
		{"gho", `{"access_token":"gho_Zq8Wx2Ec4Rv6Tb8Yn0Um2Il4Ok6Pj8Hg0Fd2Sa"}`, "gho_Zq8Wx2Ec4Rv6Tb8Yn0Um2Il4Ok6Pj8Hg0Fd2Sa", "github-oauth"},
		{"ghu", "user token ghu_Mn3Bv5Cx7Zl9Kj1Hg3Fd5Sa7Qw9Er1Ty3Ui5Op", "ghu_Mn3Bv5Cx7Zl9Kj1Hg3Fd5Sa7Qw9Er1Ty3Ui5Op", "github-app-token"},
		{"ghs", "https://x-access-token:ghs_Qa1Ws2Ed3Rf4Tg5Yh6Uj7Ik8Ol9Pz0Xc1Vb2@github.com/o/r", "ghs_Qa1Ws2Ed3Rf4Tg5Yh6Uj7Ik8Ol9Pz0Xc1Vb2", "github-app-token"},
		{"ghr", "refresh=ghr_1qA2wS3eD4rF5tG6yH7uJ8iK9oL0pZ1xC2vB3nM4qW5eR6tY7uI8oP9aS0dF1gH2jK3lZ4xC5vB6nM7q", "ghr_1qA2wS3eD4rF5tG6yH7uJ8iK9oL0pZ1xC2vB3nM4qW5eR6tY7uI8oP9aS0dF1gH2jK3lZ4xC5vB6nM7q", "github-refresh-token"},
		{"github_pat", "GH_TOKEN=github_pat_11ABCDEFG0123456789_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVw gh pr list", "github_pat_11ABCDEFG0123456789_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVw", "github-pat"},
		{"akia", "key id " + awsID + " denied", awsID, "aws-access-key-id"},
		{"asia", "AWS_ACCESS_KEY_ID=ASIAZ7XN5KB2PLQ3EGRT", "ASIAZ7XN5KB2PLQ3EGRT", "aws-access-key-id"},
		{"xoxb", "client = WebClient(token='xoxb-123456789012-1234567890123-aB3dE5fG7hJ9kL1mN3pQ5rS7')", "xoxb-123456789012-1234567890123-aB3dE5fG7hJ9kL1mN3pQ5rS7", "slack-token"},
		{"xoxp", "Authorization: Bearer xoxp-123456789012-123456789012-1234567890123-0a1b2c3d4e5f60718293a4b5c6d7e8f9", "xoxp-123456789012-123456789012-1234567890123-0a1b2c3d4e5f60718293a4b5c6d7e8f9", "slack-token"},
		{"aiza", "maps?key=AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "google-api-key"},
		{"openai", "Incorrect API key provided: sk-proj-Ab3De5Fg7Hi9Jk1Lm3No5Pq7Rs9Tu1Vw3Xy5Za7Bc9De1Fg3Hi5", "sk-proj-Ab3De5Fg7Hi9Jk1Lm3No5Pq7Rs9Tu1Vw3Xy5Za7Bc9De1Fg3Hi5", "openai-api-key"},
		{"anthropic", "ANTHROPIC_API_KEY=sk-ant-api03-Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz1Xc3Vb5Nm7Qw9Er1Ty3Ui5Op7As9Df1Gh3Jk5Lz7Xc9Vb1Nm3Qw5Er7Ty9Ui1Op3As5Df7Gh9JkAA", "sk-ant-api03-Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz1Xc3Vb5Nm7Qw9Er1Ty3Ui5Op7As9Df1Gh3Jk5Lz7Xc9Vb1Nm3Qw5Er7Ty9Ui1Op3As5Df7Gh9JkAA", "anthropic-api-key"},
		{"bearer", "curl -H 'Authorization: Bearer 9fK2mQ7xL4pZ8wR1tV6nB3cY5hJ0dG' https://api", "9fK2mQ7xL4pZ8wR1tV6nB3cY5hJ0dG", "bearer-token"},
		{"password=", "DB_PASSWORD=Tr0ub4dor&3x ./migrate", "Tr0ub4dor", "password"},
		{"api_key:", "api_key: 7Gh2Kd9QpX4mZ1vB8nL3", "7Gh2Kd9QpX4mZ1vB8nL3", "api-key"},
		{"client_secret", `"client_secret": "Vq8Zr2Lp5Xn1Wm7Tk4Hb9Cd3"`, "Vq8Zr2Lp5Xn1Wm7Tk4Hb9Cd3", "secret"},
		{"pem", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAq3Zx8Lp2Wm5Tk7Hb9Cd3Vq8Zr2Lp5Xn1Wm7Tk4Hb9Cd3Zx8Lp2\nWm5Tk7Hb9Cd3Vq8Zr2Lp5Xn1==\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEAq3Zx8Lp2Wm5Tk7Hb9Cd3Vq8Zr2Lp5Xn1Wm7Tk4Hb9Cd3Zx8Lp2", "private-key"},
		// Missed before.
		{"aws ini", "[default]\naws_access_key_id = " + awsID + "\naws_secret_access_key = " + awsSecret + "\n", awsSecret, "aws-secret-key"},
		{"aws env", "export AWS_SECRET_ACCESS_KEY=" + awsSecret, awsSecret, "aws-secret-key"},
		{"aws json", `{"AccessKeyId": "` + awsID + `", "SecretAccessKey": "` + awsSecret + `"}`, awsSecret, "aws-secret-key"},
		{"aws bare", "ci-bot," + awsID + "," + awsSecret + ",console", awsSecret, "aws-secret-key"},
		{"postgres url", "DATABASE_URL=postgres://user:pass@host:5432/app", ":pass@", "url-password"},
		{"jwt", "token rejected: " + jwt + " (expired)", jwt, "jwt"},
		{"stripe", "STRIPE_KEY=sk_live_4eC39HqLyjWDarjtT1zdp7dcAb3De5Fg7", "sk_live_4eC39HqLyjWDarjtT1zdp7dcAb3De5Fg7", "stripe-key"},
		{"token=", "./deploy.sh token=Zp4Qx8Lm2Wn6Rt0Yv3Bk env=prod", "Zp4Qx8Lm2Wn6Rt0Yv3Bk", "token"},
		{"npm", "//registry.npmjs.org/:_authToken=npm_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5", "npm_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5", "npm-token"},
		{"KAIZEN_TOKEN", "KAIZEN_TOKEN=kz_8Qw2Er4Ty6Ui8Op0As2Df4Gh kaizen serve", "kz_8Qw2Er4Ty6Ui8Op0As2Df4Gh", "token"},
	}
	if len(tests) != 28 {
		t.Fatalf("%d formats, want the review's 28", len(tests))
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, rep := Redact(tc.text)
			if strings.Contains(out, tc.secret) {
				t.Errorf("secret survived: %q", out)
			}
			if !strings.Contains(out, Marker(tc.rule)) {
				t.Errorf("no %s marker in %q (findings %+v)", tc.rule, out, rep.Findings)
			}
			if rep.Count() == 0 {
				t.Error("empty report")
			}
		})
	}
}

// Only the secret is replaced: keys, quotes, users, hosts and every byte
// around stay as they were.
func TestMarkersKeepTheRest(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"password=Zx9Qw2Er4T next", "password=[REDACTED:password] next"},
		{`{"password": "Zx9Qw2Er4T", "user": "bob"}`, `{"password": "[REDACTED:password]", "user": "bob"}`},
		{"postgres://app:Zx9Qw2Er4T@db:5432/x?sslmode=off", "postgres://app:[REDACTED:url-password]@db:5432/x?sslmode=off"},
		{"mysql -u root -pZx9Qw2Er4T -e 'select 1'", "mysql -u root -p[REDACTED:password] -e 'select 1'"},
		{"--token Zp4Qx8Lm2Wn6Rt0Yv3Bk --verbose", "--token [REDACTED:token] --verbose"},
		{"<password>Zx9Qw2Er4T</password>", "<password>[REDACTED:password]</password>"},
		{"Server=db;User Id=sa;Password=Zx9Qw2Er4T!;Encrypt=True", "Server=db;User Id=sa;Password=[REDACTED:password];Encrypt=True"},
		{"数据库密码：Zx9Qw2Er4T，请妥善保管", "数据库密码：[REDACTED:password]，请妥善保管"},
		{"hooks.slack.com/services/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 done", "hooks.slack.com/services/[REDACTED:slack-webhook] done"},
		// Invalid UTF-8 around a secret survives byte for byte.
		{"\xff\xfetoken=Zp4Qx8Lm2Wn6Rt0Yv3Bk\xc3", "\xff\xfetoken=[REDACTED:token]\xc3"},
	}
	for _, tc := range tests {
		if got, _ := Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// Text without any secret comes back as the same string, and redacting
// redacted text changes nothing.
func TestCleanTextAndIdempotence(t *testing.T) {
	t.Parallel()
	for _, ex := range loadSet(t, "testdata/dev.jsonl") {
		once, rep := Redact(ex.Text)
		twice, rep2 := Redact(once)
		if twice != once || rep2.Count() != 0 {
			t.Errorf("%s: not idempotent: second pass found %+v\n once %q\ntwice %q", ex.ID, rep2.Findings, once, twice)
		}
		if len(ex.Secrets) == 0 && (once != ex.Text || rep.Count() != 0) {
			t.Errorf("%s: look-alike changed", ex.ID)
		}
		checkReport(t, ex.Text, once, rep)
	}
}

// fataler is what checkReport needs of *testing.T, *rapid.T and
// fuzz targets.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// checkReport verifies that the output is the input with each finding's
// span replaced by its marker, findings in order and apart.
func checkReport(t fataler, in, out string, rep Report) {
	t.Helper()
	var b strings.Builder
	last := 0
	for _, f := range rep.Findings {
		if f.Start < last || f.End <= f.Start || f.End > len(in) {
			t.Fatalf("bad finding %+v after %d in %d bytes", f, last, len(in))
		}
		b.WriteString(in[last:f.Start])
		b.WriteString(Marker(f.Rule))
		last = f.End
	}
	b.WriteString(in[last:])
	if b.String() != out {
		t.Fatalf("output is not the input with findings replaced:\n out %q\nwant %q", out, b.String())
	}
	if len(out) > len(in)+rep.Count()*MaxMarkerLen {
		t.Fatalf("output %d bytes, input %d + %d findings", len(out), len(in), rep.Count())
	}
}

func TestRuleNames(t *testing.T) {
	t.Parallel()
	names := Rules()
	if len(names) < 60 {
		t.Errorf("%d rules", len(names))
	}
	for _, n := range names {
		if n == "" || len(n) > maxRuleNameLen || !utf8.ValidString(n) || strings.ContainsAny(n, "[]: ") {
			t.Errorf("bad rule name %q", n)
		}
	}
	if got := Marker("password"); got != "[REDACTED:password]" {
		t.Errorf("Marker = %q", got)
	}
}

func TestReportByRule(t *testing.T) {
	t.Parallel()
	_, rep := Redact("a=1 password=Zx9Qw2Er4T token=Zp4Qx8Lm2Wn6Rt0Yv3Bk passwd=Qq1Ww2Ee3R")
	got := rep.ByRule()
	if got["password"] != 2 || got["token"] != 1 || rep.Count() != 3 {
		t.Errorf("ByRule = %v, Count = %d", got, rep.Count())
	}
}
