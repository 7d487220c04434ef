package hook

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func decodeAny(t *testing.T, data []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", data, err)
	}
	return v
}

func TestJSONRoundTripKeepsOrderNumbersAndEscapes(t *testing.T) {
	t.Parallel()
	in := `{"z": 1, "a": [1e400, -0.0, 12345678901234567890123], "s": "caf\u00e9 \/ <b>", "n": null, "t": true, "o": {}, "e": []}`
	n, err := parseJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"z\": 1,\n  \"a\": [\n    1e400,\n    -0.0,\n    12345678901234567890123\n  ],\n" +
		"  \"s\": \"caf\\u00e9 \\/ <b>\",\n  \"n\": null,\n  \"t\": true,\n  \"o\": {},\n  \"e\": []\n}\n"
	if got := string(n.encode("  ")); got != want {
		t.Errorf("encode:\n%s\nwant:\n%s", got, want)
	}
}

func TestJSONErrorsSayWhere(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                     "empty",
		"{\n  \"a\": 1,\n}":    "line 3, column 1: trailing comma",
		"{\"a\": 1 \"b\": 2}":  `expected ',' or '}' after member "a"`,
		"{\"a\": 1, \"a\": 2}": `duplicate member "a"`,
		"{\"a\": tru}":         "unexpected character",
		"{\"a\": \"x\ny\"}":    "control character",
		"{\"a\": 01}":          "expected ','",
		"{} {}":                "after the JSON value",
		"/* c */ {}":           "comments are not JSON",
		"{\"a\": 1 // c\n}":    "comments are not JSON",
		"{\"a\": \"\\q\"}":     `invalid escape \q`,
		"[" + strings.Repeat("[", 1001) + strings.Repeat("]", 1002): "nested more than 1000",
	} {
		_, err := parseJSON([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
}

func TestDetectIndent(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"{\n\t\"a\": 1\n}":    "\t",
		"{\n    \"a\": 1\n}":  "    ",
		`{"a": 1}`:            "  ",
		"{\n\n  \"a\": {}\n}": "  ",
	} {
		if got := detectIndent([]byte(in)); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// Any valid JSON document parses, and encodes to the same JSON value.
func FuzzJSONDocument(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a": [1, 2.5e-3, "x\u0000"], "b": {"c": null}}`, `"\ud83d\ude00"`, `-0`, "\ufeff{}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := parseJSON(data)
		// JSON is UTF-8 (RFC 8259); encoding/json tolerates invalid bytes in strings, the parser does not
		valid := json.Valid(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))) && utf8.Valid(data)
		if err != nil {
			if valid && !strings.Contains(err.Error(), "duplicate") && !strings.Contains(err.Error(), "nested more than") {
				t.Fatalf("valid JSON %q rejected: %v", data, err)
			}
			return
		}
		if !valid {
			if !utf8.Valid(data) && json.Valid(data) {
				t.Fatalf("invalid UTF-8 %q accepted", data)
			}
			t.Fatalf("invalid JSON %q accepted", data)
		}
		out := n.encode("  ")
		if !json.Valid(out) {
			t.Fatalf("encoded %q is not JSON", out)
		}
		if !reflect.DeepEqual(decodeAny(t, bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))), decodeAny(t, out)) {
			t.Fatalf("round trip changed %q into %q", data, out)
		}
		again, err := parseJSON(out)
		if err != nil || !again.equal(n) {
			t.Fatalf("re-parse of %q: %v", out, err)
		}
	})
}

func TestCodexConfigEdgeCases(t *testing.T) {
	t.Parallel()
	srv := codexServer{Command: "/usr/bin/kaizen", Args: []string{"mcp"}}
	// no final newline, CRLF line endings
	out, _, err := codexConfigInstall([]byte("model = \"o3\"\r\n[features]\r\nweb_search_request = true"), srv)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "model = \"o3\"\n[features]\nweb_search_request = true\n\n") || strings.Contains(string(out), "codex_hooks") {
		t.Errorf("install:\n%s", out)
	}
	back, empty, err := codexConfigUninstall(out)
	if err != nil || empty || string(back) != "model = \"o3\"\n[features]\nweb_search_request = true\n" {
		t.Errorf("uninstall: %q, %v, %v", back, empty, err)
	}
	// an empty file becomes kaizen's, and uninstall empties it
	out, _, err = codexConfigInstall(nil, srv)
	if err != nil {
		t.Fatal(err)
	}
	if _, empty, err = codexConfigUninstall(out); err != nil || !empty {
		t.Errorf("uninstall of a kaizen-only file: empty %v, %v", empty, err)
	}
	// codex_hooks = false is the user's choice: kept, with a note (setup
	// writes no feature flag: hooks are on by default since Codex 0.124)
	out, notes, err := codexConfigInstall([]byte("[features]\ncodex_hooks = false\n"), srv)
	if err != nil || len(notes) != 1 || !strings.Contains(notes[0], "false") || !strings.Contains(string(out), "codex_hooks = false\n") {
		t.Errorf("disabled hooks: %s, %q, %v", out, notes, err)
	}
	// features defined inline: left alone, and the MCP server is added
	out, notes, err = codexConfigInstall([]byte("features = { web_search_request = true }\n"), srv)
	if err != nil || len(notes) != 0 || !strings.Contains(string(out), "[mcp_servers.kaizen]") {
		t.Errorf("inline features: %s, %q, %v", out, notes, err)
	}
	// quoted table names are recognised
	in := "[mcp_servers.\"kaizen\"]\ncommand = \"/old/kaizen\"\nargs = ['mcp'] # old\n"
	out, _, err = codexConfigInstall([]byte(in), srv)
	if err != nil || strings.Count(string(out), "command =") != 1 || !strings.Contains(string(out), `command = "/usr/bin/kaizen"`) {
		t.Errorf("quoted table: %s, %v", out, err)
	}
}

// For any config Codex could read, install keeps everything else and
// uninstall gives it back.
func FuzzCodexConfig(f *testing.F) {
	for _, s := range []string{
		"", "model = \"o3\"\n", "[features]\nx = 1\n", "[mcp_servers.kaizen]\ncommand = \"k\"\n",
		"a = \"\"\"\n[mcp_servers.kaizen]\n\"\"\"\n", "[mcp_servers]\n[mcp_servers.a]\ncommand = 'x'\n",
		"[[mcp_servers.kaizen.list]]\nx = 1\n", "[features]  # added by kaizen setup\ncodex_hooks = true  # added by kaizen setup\n",
	} {
		f.Add([]byte(s))
	}
	srv := codexServer{Command: "/usr/bin/kaizen", Args: []string{"--home", "/h", "mcp"}}
	f.Fuzz(func(t *testing.T, data []byte) {
		orig, err := decodeTOML(data)
		if err != nil {
			return
		}
		out, _, err := codexConfigInstall(data, srv)
		if err != nil {
			return // refused, writing nothing
		}
		if out == nil {
			out = data
		}
		after, err := decodeTOML(out)
		if err != nil {
			t.Fatalf("install of %q gives unparseable %q: %v", data, out, err)
		}
		if !srv.matches(after) {
			t.Fatalf("install of %q: no kaizen server in %q", data, out)
		}
		if !reflect.DeepEqual(withoutKaizen(after, true), withoutKaizen(orig, true)) {
			t.Fatalf("install of %q changed other keys: %q", data, out)
		}
	})
}
