package testkit

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
)

// Secret is a secret-bearing text an agent might send, and the secret in
// it that must never be stored.
type Secret struct {
	Format, Text, Value string
}

// Secrets are the formats issue 12 found stored verbatim (the AWS secret
// access key in four forms, postgres://user:pass@, a bare JWT, sk_live_,
// token=, npm_, KAIZEN_TOKEN=) and a few more. The values are made up
// and appear nowhere else.
var Secrets = []Secret{
	{"aws-secret-ini", "[default]\naws_secret_access_key = Q8vTz1kP4mN7rW2sX5yB9cD3fG6hJ0lA1eR4tY7u\n", "Q8vTz1kP4mN7rW2sX5yB9cD3fG6hJ0lA1eR4tY7u"},
	{"aws-secret-env", "export AWS_SECRET_ACCESS_KEY=Zp3Lm8Nq1Rs6Tv0Wx4Yz7Ab2Cd5Ef9Gh3Ij6Kl1M", "Zp3Lm8Nq1Rs6Tv0Wx4Yz7Ab2Cd5Ef9Gh3Ij6Kl1M"},
	{"aws-secret-json", `{"AccessKeyId": "AKIAQX7ZK3M2RT5VWN4P", "SecretAccessKey": "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"}`, "hT6/kW9+pZ2mQ5rV8sY1bE4gJ7nL0cF3xA6dU9iO"},
	{"aws-secret-bare", "keys: AKIAJ4TQ8WZ2XN6VR3KM PtYgjmUhBel31iEl2hpChYgCfrL1spNxnyVmihA/", "PtYgjmUhBel31iEl2hpChYgCfrL1spNxnyVmihA/"},
	{"aws-access-key-id", "keys: AKIAJ4TQ8WZ2XN6VR3KM are live", "AKIAJ4TQ8WZ2XN6VR3KM"},
	{"postgres-url", "dial postgres://app:Hunter2Pass9x@db.internal:5432/orders failed", "Hunter2Pass9x"},
	{"jwt", "auth ok eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0MjQyIiwibmFtZSI6ImNpIn0.Qm9ndXNTaWduYXR1cmVfRm9yVGVzdHNfMTIzNDU2Nzg5", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0MjQyIiwibmFtZSI6ImNpIn0.Qm9ndXNTaWduYXR1cmVfRm9yVGVzdHNfMTIzNDU2Nzg5"},
	{"stripe-live", "stripe key sk_live_51HqTzK8mPq3XvR7yW2bN6cD9", "sk_live_51HqTzK8mPq3XvR7yW2bN6cD9"},
	{"token-assignment", "curl 'https://api.example.com/v1/items?token=Tk7fQ2pL9mZ4xR8vB3nW6yC1'", "Tk7fQ2pL9mZ4xR8vB3nW6yC1"},
	{"npm-token", "//registry.npmjs.org/:_authToken=npm_Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi6", "npm_Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi6"},
	{"kaizen-token", "KAIZEN_TOKEN=4f9a2c7e1b8d3f6a0c5e9b2d7f1a4c8e6b3d0f5a kaizen serve", "4f9a2c7e1b8d3f6a0c5e9b2d7f1a4c8e6b3d0f5a"},
	{"github-pat", "git push https://ghp_Xy7Zk2Lm9Np4Qr1St6Uv3Wx8Yz5Ab0Cd2Ef4G@github.com/acme/app.git", "ghp_Xy7Zk2Lm9Np4Qr1St6Uv3Wx8Yz5Ab0Cd2Ef4G"},
	{"password", "DB_PASSWORD=c0rrect-H0rse-Battery!", "c0rrect-H0rse-Battery!"},
	{"private-key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACBqPYy2kLeK3vN8mQ1rT4sW7xZ0cF3gH6jK9lM2nP5qRAAAAJgAAAAAAAAAAA\n-----END OPENSSH PRIVATE KEY-----", "QyNTUxOQAAACBqPYy2kLeK3vN8mQ1rT4sW7xZ0cF3gH6jK9lM2nP5qRAAAAJgAAAAAAAAAAA"},
}

// SecretText is every secret-bearing text of Secrets joined by new lines,
// framed by the words around them that must survive.
func SecretText() string {
	var b strings.Builder
	b.WriteString("the build failed; here is what I ran:\n")
	for _, s := range Secrets {
		b.WriteString(s.Text)
		b.WriteString("\n")
	}
	b.WriteString("please fix it\n")
	return b.String()
}

// AssertNoSecret fails the test for every secret value of Secrets found in
// content, naming where it was found.
func AssertNoSecret(t testing.TB, where, content string) {
	t.Helper()
	for _, s := range Secrets {
		if strings.Contains(content, s.Value) {
			i := strings.Index(content, s.Value)
			lo, hi := max(0, i-60), min(len(content), i+len(s.Value)+20)
			t.Errorf("%s holds the %s secret: …%q…", where, s.Format, content[lo:hi])
		}
	}
}

// AssertNothingStored reads everything an engine keeps (every row of
// every table of its database, read with a separate connection, and every
// file under its home directory) and fails the test if a secret of
// Secrets is in any of it. It returns the database dump so that a test
// can check that the text around the secrets was kept.
func AssertNothingStored(t testing.TB, cfg kaizen.Config) string {
	t.Helper()
	dump := DumpDatabase(t, cfg.DB)
	AssertNoSecret(t, "the database", dump)
	if cfg.Home != "" {
		_ = filepath.WalkDir(cfg.Home, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return nil
			}
			rel, _ := filepath.Rel(cfg.Home, path)
			AssertNoSecret(t, "file "+rel, string(data))
			return nil
		})
	}
	return dump
}

// DumpDatabase returns every value of every row of every table of the
// database at dsn (a SQLite file or a PostgreSQL DSN, as testkit.DSN
// makes them), read directly with database/sql: what is at rest.
func DumpDatabase(t testing.TB, dsn string) string {
	t.Helper()
	driver, list := "sqlite", `SELECT name FROM sqlite_master WHERE type = 'table'`
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		driver, list = "pgx", `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`
	} else if dsn == "memory" || dsn == "" {
		t.Fatalf("DumpDatabase: %q is not a database that can be read from outside", dsn)
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	rows, err := db.QueryContext(ctx, list)
	if err != nil {
		t.Fatalf("list tables: %v", err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	if len(tables) == 0 {
		t.Fatal("DumpDatabase: no tables")
	}
	var out bytes.Buffer
	for _, table := range tables {
		rows, err := db.QueryContext(ctx, `SELECT * FROM "`+table+`"`)
		if err != nil {
			t.Fatalf("read %s: %v", table, err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatalf("scan %s: %v", table, err)
			}
			fmt.Fprintf(&out, "%s:", table)
			for _, v := range vals {
				switch x := v.(type) {
				case []byte:
					out.Write(x)
				case string:
					out.WriteString(x)
				default:
					fmt.Fprint(&out, x)
				}
				out.WriteByte('\t')
			}
			out.WriteByte('\n')
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("read %s: %v", table, err)
		}
		rows.Close()
	}
	return out.String()
}

// CraftedExport returns an export file (kaizen export's JSONL) whose
// outcome, error and turn carry SecretText: what an export written by an
// older kaizen, or by hand, may hold. Its records are in project "src".
func CraftedExport(t testing.TB) string {
	t.Helper()
	const mark = "PLACEHOLDER-FOR-SECRET-TEXT"
	src := Open(t, "memory", func(c *kaizen.Config) { c.Project = "src" })
	ctx := context.Background()
	ptr := func(v bool) *bool { return &v }
	dur := int64(60_000)
	if _, err := src.E.RecordOutcome(ctx, kaizen.OutcomeInput{TaskID: "bd-9", Success: ptr(false), DurationMs: &dur, Description: mark, FailureDetails: mark, Task: mark}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.E.RecordError(ctx, kaizen.ErrorInput{TaskID: "bd-9", Message: mark, StackTrace: mark}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.E.Capture(ctx, kaizen.CaptureInput{TaskID: "bd-9", Turns: []kaizen.TurnInput{{Role: "user", Content: mark}}}); err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	if _, err := src.E.Export(ctx, &file, kaizen.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	q, err := json.Marshal(SecretText())
	if err != nil {
		t.Fatal(err)
	}
	out := strings.ReplaceAll(file.String(), mark, string(q[1:len(q)-1]))
	if out == file.String() || !strings.Contains(out, Secrets[0].Value) {
		t.Fatal("CraftedExport: the export holds no placeholder")
	}
	return out
}
