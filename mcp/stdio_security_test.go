package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen/mcp"
)

// stdioPeer drives ServeStdio line by line.
type stdioPeer struct {
	t    *testing.T
	w    io.WriteCloser
	sc   *bufio.Scanner
	done chan error
}

func newStdioPeer(t *testing.T) *stdioPeer {
	t.Helper()
	e := openEngine(t, setupOpts{})
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	p := &stdioPeer{t: t, w: cw, sc: bufio.NewScanner(cr), done: make(chan error, 1)}
	p.sc.Buffer(make([]byte, 1<<20), 8<<20)
	go func() {
		p.done <- mcp.ServeStdio(context.Background(), e, sr, sw, mcp.Options{})
		sw.Close()
	}()
	t.Cleanup(func() { cw.Close(); <-p.done })
	return p
}

type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (p *stdioPeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.w, line+"\n"); err != nil {
		p.t.Fatalf("write %q: %v", line, err)
	}
}

func (p *stdioPeer) reply() rpcReply {
	p.t.Helper()
	if !p.sc.Scan() {
		p.t.Fatalf("no reply: the server stopped (%v)", p.sc.Err())
	}
	var r rpcReply
	if err := json.Unmarshal(p.sc.Bytes(), &r); err != nil {
		p.t.Fatalf("reply is not JSON: %q", p.sc.Text())
	}
	return r
}

// Finding 4 of issue 12: `kaizen mcp` exited on one malformed line. Each
// one is now answered with a JSON-RPC error and the session goes on.
func TestSecurityStdioMalformedLines(t *testing.T) {
	t.Parallel()
	p := newStdioPeer(t)
	for _, c := range []struct {
		line string
		code int
		id   string
	}{
		{"not json", -32700, "null"},
		{"{}", -32600, "null"},
		{"null", -32600, "null"},
		{"\x00", -32700, "null"},
		{"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}\x00", -32700, "null"},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, -32600, "null"},
		{`[]`, -32600, "null"},
		{`{"jsonrpc":"2.0","id":{},"method":"ping"}`, -32600, "null"},
		{`{"jsonrpc":"2.0","id":[1],"method":"ping"}`, -32600, "null"},
		{`{"jsonrpc":"1.0","id":3,"method":"ping"}`, -32600, "3"},
		{`{"jsonrpc":"2.0","id":"a","method":""}`, -32600, `"a"`},
		{"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"\xff\"}", -32700, "4"},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"`, -32700, "null"},
		{`42`, -32600, "null"},
	} {
		p.send(c.line)
		r := p.reply()
		if r.Error == nil || r.Error.Code != c.code || string(r.ID) != c.id {
			t.Errorf("%q: reply %+v id %s, want code %d id %s", c.line, r.Error, r.ID, c.code, c.id)
		}
	}
	// The session still works: initialize, then a tool call.
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if r := p.reply(); r.Error != nil || string(r.ID) != "1" {
		t.Fatalf("initialize after malformed lines: %+v", r.Error)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send("garbage after initialize")
	if r := p.reply(); r.Error == nil || r.Error.Code != -32700 {
		t.Fatalf("garbage: %+v", r)
	}
	// A search string of 50,000 bytes is an invalid argument, not an
	// internal error.
	long := strings.Repeat("a", 50_000)
	for i, tool := range []string{"list_patterns", "list_errors"} {
		p.send(`{"jsonrpc":"2.0","id":` + string(rune('2'+i)) + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"search":"` + long + `"}}}`)
		r := p.reply()
		if r.Error != nil && r.Error.Code != -32602 {
			t.Fatalf("%s: %+v", tool, r.Error)
		}
		if r.Error == nil {
			var res struct {
				IsError bool `json:"isError"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			}
			_ = json.Unmarshal(r.Result, &res)
			if !res.IsError || len(res.Content) == 0 || strings.Contains(res.Content[0].Text, "internal") ||
				!strings.Contains(res.Content[0].Text, "search") {
				t.Errorf("%s with a 50,000-byte search: %s", tool, r.Result)
			}
		}
	}
	p.send(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`)
	if r := p.reply(); r.Error != nil || string(r.ID) != "9" || !strings.Contains(string(r.Result), "list_patterns") {
		t.Fatalf("tools/list: %+v %s", r.Error, r.Result)
	}
	// A line longer than the limit is answered and skipped.
	p.send(`{"jsonrpc":"2.0","id":10,"method":"ping","params":{"x":"` + strings.Repeat("b", mcp.MaxStdioLineBytes) + `"}}`)
	if r := p.reply(); r.Error == nil || r.Error.Code != -32700 {
		t.Fatalf("over-long line: %+v", r)
	}
	p.send(`{"jsonrpc":"2.0","id":11,"method":"ping"}`)
	if r := p.reply(); r.Error != nil || string(r.ID) != "11" {
		t.Fatalf("ping after an over-long line: %+v", r.Error)
	}
}
