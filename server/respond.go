package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/kaizenhq/kaizen"
	"github.com/kaizenhq/kaizen/store"
)

// apiError is an error answered by the server itself (routing, auth,
// request decoding), already carrying its status.
type apiError struct {
	status                               int
	code, op, field, message, hint, next string
}

func (e apiError) Error() string { return e.op + ": " + e.message }

// invalidRequest is a 400 for a malformed request.
func invalidRequest(op, field, format string, a ...any) apiError {
	return apiError{status: http.StatusBadRequest, code: string(kaizen.KindInvalid), op: op, field: field,
		message: fmt.Sprintf(format, a...)}
}

func tooLarge(limit int64) apiError {
	return apiError{status: http.StatusRequestEntityTooLarge, code: "payload_too_large", op: "read request",
		message: fmt.Sprintf("request body is larger than %d bytes", limit),
		hint:    "split the input, or raise the server's limit"}
}

// errorBody is the JSON error format of every route:
// {"error": {"code", "op", "field", "message", "hint", "next"}}.
type errorBody struct {
	Code    string `json:"code"`
	Op      string `json:"op"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
	// Next names the action that helps (kaizen.Error.Next).
	Next string `json:"next,omitempty"`
}

// statusOf maps an engine error kind to an HTTP status.
func statusOf(k kaizen.ErrorKind) int {
	switch k {
	case kaizen.KindInvalid:
		return http.StatusBadRequest
	case kaizen.KindNotFound:
		return http.StatusNotFound
	case kaizen.KindConflict:
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

// fail answers err as JSON. Engine errors keep their operation, field,
// message and hint; internal errors are logged in full and answered with
// a generic message and the request id, so storage details never leak.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var (
		ae  apiError
		mbe *http.MaxBytesError
		ke  *kaizen.Error
	)
	switch {
	case errors.As(err, &ae):
	case errors.As(err, &mbe):
		ae = tooLarge(mbe.Limit)
	case errors.Is(err, store.ErrClosed):
		ae = apiError{status: http.StatusServiceUnavailable, code: "unavailable", op: opOf(err),
			message: "the store is closed (the server is shutting down)", hint: "retry against the restarted daemon"}
	case r.Context().Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		ae = apiError{status: http.StatusServiceUnavailable, code: "unavailable", op: opOf(err),
			message: "request cancelled"}
	case errors.As(err, &ke) && ke.Kind != kaizen.KindInternal:
		ae = apiError{status: statusOf(ke.Kind), code: string(ke.Kind), op: ke.Op, field: ke.Field,
			message: ke.Message, hint: ke.Hint, next: ke.Next}
		if ae.message == "" {
			ae.message = ke.Error()
		}
	case kaizen.KindOf(err) == kaizen.KindNotFound:
		ae = apiError{status: http.StatusNotFound, code: string(kaizen.KindNotFound), op: opOf(err), message: "not found"}
	default:
		id := w.Header().Get("X-Request-Id")
		s.log.Error("request failed", "request_id", id, "method", r.Method, "path", r.URL.Path, "err", err)
		ae = apiError{status: http.StatusInternalServerError, code: string(kaizen.KindInternal), op: opOf(err),
			message: "internal error (request id " + id + ")", hint: "see the server log"}
	}
	writeError(w, r, ae)
}

// opOf is the operation named by an engine error, else "request".
func opOf(err error) string {
	var ke *kaizen.Error
	if errors.As(err, &ke) && ke.Op != "" {
		return ke.Op
	}
	return "request"
}

func writeError(w http.ResponseWriter, _ *http.Request, e apiError) {
	_ = writeJSON(w, e.status, map[string]errorBody{"error": {Code: e.code, Op: e.op, Field: e.field,
		Message: e.message, Hint: e.hint, Next: e.next}})
}

// reply writes v as a JSON response.
func (s *Server) reply(w http.ResponseWriter, r *http.Request, status int, v any) {
	if err := writeJSON(w, status, v); err != nil {
		s.log.Error("encode response", "request_id", w.Header().Get("X-Request-Id"), "path", r.URL.Path, "err", err)
	}
}

// writeJSON writes v as a JSON response. A value that cannot be encoded
// (a NaN from a bug) is answered as a 500 and reported.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		data = []byte(`{"error":{"code":"internal","op":"encode response","message":"the response could not be encoded"}}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
	return err
}

// writeText writes a text response (markdown).
func writeText(w http.ResponseWriter, contentType string, status int, text string) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write([]byte(text))
}
