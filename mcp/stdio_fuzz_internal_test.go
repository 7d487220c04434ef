package mcp

import (
	"bytes"
	"testing"
)

// FuzzStdioLine: any line is either a JSON-RPC message or answered with a
// parse error (-32700) or invalid request (-32600); never a panic.
func FuzzStdioLine(f *testing.F) {
	for _, s := range []string{"not json", "{}", "null", "\x00", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":{},"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"x","result":{}}`, `{"jsonrpc":"2.0","method":"notifications/initialized"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		msg, code, why := decodeLine(line)
		if msg == nil && (code != -32700 && code != -32600 || why == "") {
			t.Fatalf("%q: no message and code %d %q", line, code, why)
		}
		if msg != nil && code != 0 {
			t.Fatalf("%q: a message and code %d", line, code)
		}
		c := &lineConn{out: &bytes.Buffer{}, closed: make(chan struct{})}
		c.reject(line, -32700, "x")
		if out := c.out.(*bytes.Buffer).Bytes(); !bytes.HasPrefix(out, []byte(`{"jsonrpc":"2.0","id":`)) || !bytes.HasSuffix(out, []byte("}\n")) {
			t.Fatalf("reply %q", out)
		}
	})
}
