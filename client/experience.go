package client

import (
	"context"
	"net/http"

	"github.com/kaizenhq/kaizen"
)

// The experience system's calls a client hook makes: capturing the turns
// of a session and recalling what past tasks teach about a prompt.

// Capture is Engine.Capture.
func (c *Client) Capture(ctx context.Context, in kaizen.CaptureInput) (*kaizen.CaptureResult, error) {
	var out kaizen.CaptureResult
	return &out, c.call(ctx, http.MethodPost, "/api/v1/turns", nil, in, &out)
}

// Recall is Engine.Recall.
func (c *Client) Recall(ctx context.Context, in kaizen.RecallInput) (*kaizen.RecallResult, error) {
	var out kaizen.RecallResult
	return &out, c.call(ctx, http.MethodPost, "/api/v1/recall", nil, in, &out)
}
