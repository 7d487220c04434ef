package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxStdioLineBytes bounds one JSON-RPC message read over stdio. A longer
// line is answered with a parse error and skipped.
const MaxStdioLineBytes = 4 << 20

// lineTransport is the stdio transport of `kaizen mcp`: newline-delimited
// JSON-RPC, one message per line. Unlike the SDK's IOTransport, which ends
// the session on the first line it cannot decode, it answers each
// malformed line with a JSON-RPC error (parse error or invalid request,
// id null unless the line had a usable id) and keeps serving. Batches are
// refused: MCP since 2025-06-18 has none.
type lineTransport struct {
	in  io.ReadCloser
	out io.Writer
}

func (t *lineTransport) Connect(context.Context) (mcpsdk.Connection, error) {
	c := &lineConn{out: t.out, in: t.in, incoming: make(chan lineMsg), closed: make(chan struct{})}
	go c.readLoop()
	return c, nil
}

type lineMsg struct {
	msg jsonrpc.Message
	err error
}

type lineConn struct {
	in       io.ReadCloser
	out      io.Writer
	writeMu  sync.Mutex
	incoming chan lineMsg
	closed   chan struct{}
	once     sync.Once
}

// readLoop reads lines until the input ends, passing each valid message on
// and answering the others.
func (c *lineConn) readLoop() {
	br := bufio.NewReaderSize(c.in, 64<<10)
	for {
		line, tooLong, err := readLine(br, MaxStdioLineBytes)
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			if tooLong {
				c.reject(nil, jsonrpc.CodeParseError, "parse error: message longer than the line limit")
			} else if msg, code, why := decodeLine(line); msg != nil {
				select {
				case c.incoming <- lineMsg{msg: msg}:
				case <-c.closed:
					return
				}
			} else {
				c.reject(line, code, why)
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.EOF
			}
			select {
			case c.incoming <- lineMsg{err: err}:
			case <-c.closed:
			}
			return
		}
	}
}

// readLine reads one line without its newline. A line over limit is
// consumed to its end and reported as too long.
func readLine(br *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > limit+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), tooLong, err
	}
}

// decodeLine decodes one line as a JSON-RPC message, or says why not with
// the JSON-RPC error code to answer.
func decodeLine(line []byte) (jsonrpc.Message, int64, string) {
	line = bytes.TrimSpace(line)
	switch {
	case !utf8.Valid(line):
		return nil, jsonrpc.CodeParseError, "parse error: the message is not valid UTF-8"
	case bytes.IndexByte(line, 0) >= 0:
		return nil, jsonrpc.CodeParseError, "parse error: the message contains a NUL byte"
	case !json.Valid(line):
		return nil, jsonrpc.CodeParseError, "parse error: the message is not JSON"
	case line[0] == '[':
		return nil, jsonrpc.CodeInvalidRequest, "invalid request: batches are not supported; send one message per line"
	case line[0] != '{':
		return nil, jsonrpc.CodeInvalidRequest, "invalid request: a message must be a JSON object"
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, jsonrpc.CodeInvalidRequest, "invalid request: " + err.Error()
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "" {
		return nil, jsonrpc.CodeInvalidRequest, "invalid request: method is empty"
	}
	return msg, 0, ""
}

// reject answers a line that is not a valid message. The id is echoed when
// the line is an object with a string or number id (and it was not a
// notification), else null.
func (c *lineConn) reject(line []byte, code int64, message string) {
	id := json.RawMessage("null")
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if line != nil && json.Unmarshal(line, &probe) == nil && len(probe.ID) > 0 {
		var v any
		if json.Unmarshal(probe.ID, &v) == nil {
			switch v.(type) {
			case string, float64:
				id = probe.ID
			}
		}
	}
	resp, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}{code, message}})
	_ = c.writeLine(resp)
}

func (c *lineConn) writeLine(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	select {
	case <-c.closed:
		return io.ErrClosedPipe
	default:
	}
	_, err := c.out.Write(append(data, '\n'))
	return err
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case m := <-c.incoming:
		return m.msg, m.err
	case <-c.closed:
		return nil, io.EOF
	}
}

func (c *lineConn) Write(_ context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.writeLine(data)
}

func (c *lineConn) Close() error {
	var err error
	c.once.Do(func() {
		c.writeMu.Lock()
		close(c.closed)
		c.writeMu.Unlock()
		err = c.in.Close()
	})
	return err
}

func (c *lineConn) SessionID() string { return "" }
