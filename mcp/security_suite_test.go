package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/mcp"
)

// The security suite (go test ./... -run Security) over MCP: every tool is
// called with malformed arguments, an oversize string in each of its
// string properties and a wrong type in every other; no call may fail with
// an internal error, an HTTP 5xx or a crash, and the refused calls change
// nothing. Tools are enumerated from tools/list, so a new tool is covered.
func TestSecurityEveryToolBadInput(t *testing.T) {
	t.Parallel()
	e := openEngine(t, setupOpts{sqlite: true})
	ok, d := true, int64(1000)
	if _, err := e.RecordOutcome(context.Background(), kaizen.OutcomeInput{TaskID: "bd-1", Success: &ok, DurationMs: &d}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(mcp.HTTPHandler(e, mcp.Options{}))
	t.Cleanup(ts.Close)
	snapshot := func() string {
		var buf bytes.Buffer
		if _, err := e.Export(context.Background(), &buf, kaizen.ExportOptions{All: true}); err != nil {
			t.Fatal(err)
		}
		_, rest, _ := strings.Cut(buf.String(), "\n")
		return rest
	}
	rpc := func(body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		var m map[string]any
		_ = json.Unmarshal(data, &m)
		return resp.StatusCode, m
	}
	status, list := rpc(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if status != http.StatusOK {
		t.Fatalf("tools/list: %d %v", status, list)
	}
	tools, _ := list["result"].(map[string]any)["tools"].([]any)
	if len(tools) != len(mcp.ToolNames()) {
		t.Fatalf("tools/list gave %d tools, want %d", len(tools), len(mcp.ToolNames()))
	}
	before := snapshot()
	big := strings.Repeat("x", 100_000)
	for _, raw := range tools {
		tool := raw.(map[string]any)
		name := tool["name"].(string)
		props, _ := tool["inputSchema"].(map[string]any)["properties"].(map[string]any)
		args := map[string]string{
			"array":     `[]`,
			"string":    `"x"`,
			"number":    `1`,
			"unknown":   `{"no_such_property":1}`,
			"duplicate": `{"project":"a","project":"b"}`,
			"deep":      strings.Repeat(`{"a":`, 200) + "1" + strings.Repeat("}", 200),
		}
		for p, schema := range props {
			typ, _ := schema.(map[string]any)["type"].(string)
			if typ == "string" {
				args["oversize "+p] = `{"` + p + `":"` + big + `"}`
			} else {
				args["wrong type "+p] = `{"` + p + `":"` + big[:10] + `"}`
			}
			args["object for "+p] = `{"` + p + `":{"x":[1,2,{}]}}`
		}
		for what, a := range args {
			status, reply := rpc(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + name + `","arguments":` + a + `}}`)
			if status >= 500 {
				t.Errorf("%s %s: HTTP %d", name, what, status)
				continue
			}
			if e, ok := reply["error"].(map[string]any); ok {
				if code, _ := e["code"].(float64); code == -32603 {
					t.Errorf("%s %s: internal error %v", name, what, e)
				}
				continue
			}
			res, _ := reply["result"].(map[string]any)
			if isErr, _ := res["isError"].(bool); !isErr {
				t.Errorf("%s %s: accepted: %.300v", name, what, res)
				continue
			}
			text := ""
			if c, _ := res["content"].([]any); len(c) > 0 {
				text, _ = c[0].(map[string]any)["text"].(string)
			}
			if strings.Contains(text, "internal error") {
				t.Errorf("%s %s: %s", name, what, text)
			}
		}
	}
	if snapshot() != before {
		t.Error("refused tool calls changed the store")
	}
}
