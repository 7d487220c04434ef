package model

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Chat is a language model that answers a conversation. [ChatClient]
// implements it over OpenAI-compatible HTTP endpoints; other packages
// depend on this interface only.
type Chat interface {
	// Complete sends the request and returns the first acceptable reply.
	Complete(ctx context.Context, req ChatRequest) (ChatResponse, error)
}

// Role is the author of a chat message.
type Role string

// Roles of the OpenAI chat protocol.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one chat message.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content"`
}

// ChatRequest is one chat completion request.
type ChatRequest struct {
	// Messages of the conversation, in order. At least one.
	Messages []Message
	// Temperature, when non-nil, is sent as is; nil leaves the provider's
	// default (some reasoning models accept no other value).
	Temperature *float64
	// MaxTokens bounds the reply when positive.
	MaxTokens int
	// JSON asks for a JSON object reply (response_format json_object).
	// Servers that ignore it still work: parse the reply with [ExtractJSON].
	JSON bool
	// Accept, when set, checks a reply before it is returned. A reply it
	// rejects counts as a failure of that provider (not retried there), and
	// the next provider is tried: a model that answers with malformed JSON
	// does not end the chain.
	Accept func(content string) error
}

// Temperature returns a pointer to t, for [ChatRequest.Temperature].
func Temperature(t float64) *float64 { return &t }

// Usage is the token accounting of a reply, when the provider reports it.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// ChatResponse is the reply of the provider that answered.
type ChatResponse struct {
	// Content is the assistant's reply.
	Content string
	// Provider is the name of the provider that answered.
	Provider string
	// Model is the model the provider reports (or the one requested).
	Model string
	// FinishReason is "stop", "length" (the reply was cut: JSON in it may
	// be truncated) and so on, as the provider reports it.
	FinishReason string
	// Usage is the provider's token accounting.
	Usage Usage
	// Attempts lists every request made, failed ones first, for health
	// tracking and diagnostics.
	Attempts []Attempt
}

// ChatClient is a [Chat] over a fallback chain of OpenAI-compatible
// providers (OpenAI, Ollama, vLLM, LM Studio, llama.cpp, DeepSeek…): it
// posts to {base_url}/chat/completions, retries retryable failures (429,
// 5xx, network errors) with exponential backoff and jitter, honouring
// Retry-After, and moves to the next provider on any other error or on a
// timeout. It is safe for concurrent use.
type ChatClient struct {
	chain *chain
}

var _ Chat = (*ChatClient)(nil)

// NewChatClient builds a client for the providers, tried in the order
// given. API keys named by api_key_env are read now.
func NewChatClient(providers []ProviderConfig, opts ...Option) (*ChatClient, error) {
	c, err := newChain("chat", "/chat/completions", providers, DefaultChatTimeout, maxChatResponseBytes, newSettings(opts))
	if err != nil {
		return nil, err
	}
	return &ChatClient{chain: c}, nil
}

// Providers returns the providers' names in fallback order.
func (c *ChatClient) Providers() []string { return c.chain.names() }

type chatPayload struct {
	Model          string          `json:"model"`
	Messages       []Message       `json:"messages"`
	Temperature    *float64        `json:"temperature,omitempty"`
	MaxTokens      int             `json:"max_tokens,omitempty"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
	Stream         bool            `json:"stream"`
}

type responseFormat struct {
	Type string `json:"type"`
}

type chatReply struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage Usage           `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// Complete implements [Chat].
func (c *ChatClient) Complete(ctx context.Context, req ChatRequest) (ChatResponse, error) {
	if len(req.Messages) == 0 {
		return ChatResponse{}, fmt.Errorf("model: chat: request has no messages")
	}
	payload := func(ep *endpoint) ([]byte, error) {
		p := chatPayload{Model: ep.model, Messages: req.Messages, Temperature: req.Temperature, MaxTokens: req.MaxTokens}
		if req.JSON {
			p.ResponseFormat = &responseFormat{Type: "json_object"}
		}
		return json.Marshal(p)
	}
	parse := func(ep *endpoint, body []byte) (ChatResponse, *failure) {
		var r chatReply
		if err := json.Unmarshal(body, &r); err != nil {
			return ChatResponse{}, &failure{kind: FailureResponse, retryAfter: -1,
				err: fmt.Errorf("body is not a chat completion: %v", err), message: excerpt(string(body), 120)}
		}
		if len(r.Choices) == 0 || r.Choices[0].Message.Content == nil {
			f := &failure{kind: FailureResponse, retryAfter: -1, err: fmt.Errorf("reply has no message content")}
			if len(r.Error) > 0 && string(r.Error) != "null" {
				f.message = errorMessage(body)
			}
			return ChatResponse{}, f
		}
		ch := r.Choices[0]
		content := *ch.Message.Content
		if strings.TrimSpace(content) == "" {
			return ChatResponse{}, &failure{kind: FailureResponse, retryAfter: -1,
				err: fmt.Errorf("empty reply (finish_reason %q)", ch.FinishReason)}
		}
		if req.Accept != nil {
			if err := req.Accept(content); err != nil {
				return ChatResponse{}, &failure{kind: FailureRejected, retryAfter: -1, err: err}
			}
		}
		model := r.Model
		if model == "" {
			model = ep.model
		}
		return ChatResponse{Content: content, Provider: ep.name, Model: model, FinishReason: ch.FinishReason, Usage: r.Usage}, nil
	}
	resp, _, attempts, err := call(ctx, c.chain, payload, parse)
	resp.Attempts = attempts
	return resp, err
}

// ChatJSON asks chat for a JSON object (JSON mode on) and decodes the reply
// into T with [DecodeJSON]. A reply that does not decode counts as a
// failure of the provider that sent it, so the next provider is tried.
// An Accept already set on req runs after decoding succeeds.
func ChatJSON[T any](ctx context.Context, chat Chat, req ChatRequest, opts DecodeOptions) (T, ChatResponse, error) {
	var out, zero T
	accepted := false
	accept := req.Accept
	check := func(content string) error {
		v, err := DecodeJSON[T](content, opts)
		if err != nil {
			return err
		}
		if accept != nil {
			if err := accept(content); err != nil {
				return err
			}
		}
		out, accepted = v, true
		return nil
	}
	req.JSON = true
	req.Accept = check
	resp, err := chat.Complete(ctx, req)
	if err != nil {
		return zero, resp, err
	}
	if !accepted { // a Chat implementation that does not call Accept
		if err := check(resp.Content); err != nil {
			return zero, resp, err
		}
	}
	return out, resp, nil
}
