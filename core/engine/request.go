package engine

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/lmbench/lmbench/core/internal/jsonenc"
)

// Message is one chat message.
type Message struct {
	Role    string
	Content string
	// ToolCalls are an assistant message's function calls; ToolCallID is
	// the call a tool message answers.
	ToolCalls  []ToolCall
	ToolCallID string
}

// ToolCall is a function call (OpenAI's tool_calls entry, type "function").
type ToolCall struct {
	ID        string
	Name      string
	Arguments string // JSON text
}

// Tool is a function the model may call (OpenAI's tools entry).
type Tool struct {
	Name        string
	Description string
	Parameters  string // JSON Schema text; "" = none
}

// Request is one generation request.
type Request struct {
	ID       string
	Messages []Message // chat mode
	// Prompt is the completions-mode prompt. When it is empty in completions
	// mode, the first message's content is sent instead, as the original
	// tool does.
	Prompt     string
	Completion bool // POST {base}/completions instead of {base}/chat/completions
	// MaxTokens is sent as "max_tokens"; when <= 0 the field is left out and
	// the engine's own limit applies.
	MaxTokens int
	// IgnoreEOS asks for exactly MaxTokens output tokens: the body gets
	// vLLM's and SGLang's extra fields "ignore_eos":true and (with
	// MaxTokens set) "min_tokens" equal to it, so the engine does not stop
	// at the end-of-sequence token.
	IgnoreEOS bool
	// Seed, with HasSeed, is sent as "seed": deterministic decoding where
	// the engine takes one (vLLM, SGLang), besides temperature 0.
	Seed    int64
	HasSeed bool
	// TopLogprobs, when > 0, asks for the log-probabilities of the answer's
	// tokens with that many alternatives each (chat: "logprobs":true,
	// "top_logprobs":K; completions: "logprobs":K), and keeps those of
	// its first TopLogprobs tokens (Result.Logprobs).
	TopLogprobs int
	// Tools the model may call (chat only).
	Tools []Tool
	// Header holds extra headers (e.g. traceparent); they replace defaults
	// of the same name. May be nil.
	Header http.Header
}

func (r Request) prompt() string {
	if r.Prompt == "" && len(r.Messages) > 0 {
		return r.Messages[0].Content
	}
	return r.Prompt
}

// bodyTail closes every request body; temperature is written as 0.0 like
// the original (Python's json.dumps).
const bodyTail = `,"temperature":0.0,"stream_options":{"include_usage":true}}`

// appendBody appends the JSON request body, fields in the order model,
// messages|prompt, tools (chat, when there are any), stream, max_tokens,
// ignore_eos and min_tokens (with IgnoreEOS), seed (with HasSeed), temperature, stream_options. prefix is the pre-encoded `{"model":"…",` of
// the Sender. It fails only on a tool whose parameters are not JSON: they
// are copied raw, and an invalid body must never reach the engine.
func appendBody(dst, prefix []byte, r Request) ([]byte, error) {
	dst = append(dst, prefix...)
	if r.Completion {
		dst = append(dst, `"prompt":`...)
		dst = jsonenc.AppendString(dst, r.prompt())
	} else {
		dst = append(dst, `"messages":[`...)
		for i := range r.Messages {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendMessage(dst, &r.Messages[i])
		}
		dst = append(dst, ']')
		if len(r.Tools) > 0 {
			var err error
			if dst, err = appendTools(dst, r.Tools); err != nil {
				return nil, err
			}
		}
	}
	dst = append(dst, `,"stream":true`...)
	if r.MaxTokens > 0 {
		dst = append(dst, `,"max_tokens":`...)
		dst = strconv.AppendInt(dst, int64(r.MaxTokens), 10)
	}
	if r.IgnoreEOS {
		dst = append(dst, `,"ignore_eos":true`...)
		if r.MaxTokens > 0 {
			dst = append(dst, `,"min_tokens":`...)
			dst = strconv.AppendInt(dst, int64(r.MaxTokens), 10)
		}
	}
	if r.HasSeed {
		dst = append(dst, `,"seed":`...)
		dst = strconv.AppendInt(dst, r.Seed, 10)
	}
	if r.TopLogprobs > 0 {
		if r.Completion {
			dst = append(dst, `,"logprobs":`...)
		} else {
			dst = append(dst, `,"logprobs":true,"top_logprobs":`...)
		}
		dst = strconv.AppendInt(dst, int64(r.TopLogprobs), 10)
	}
	return append(dst, bodyTail...), nil
}

// appendMessage appends one chat message in OpenAI's shape: a tool reply
// names its call before the content; an assistant's calls follow it, and
// its content is null when it only calls tools.
func appendMessage(dst []byte, m *Message) []byte {
	dst = append(dst, `{"role":`...)
	dst = jsonenc.AppendString(dst, m.Role)
	if m.ToolCallID != "" {
		dst = append(dst, `,"tool_call_id":`...)
		dst = jsonenc.AppendString(dst, m.ToolCallID)
	}
	dst = append(dst, `,"content":`...)
	if m.Content == "" && len(m.ToolCalls) > 0 {
		dst = append(dst, "null"...)
	} else {
		dst = jsonenc.AppendString(dst, m.Content)
	}
	if len(m.ToolCalls) > 0 {
		dst = append(dst, `,"tool_calls":[`...)
		for i, tc := range m.ToolCalls {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"id":`...)
			dst = jsonenc.AppendString(dst, tc.ID)
			dst = append(dst, `,"type":"function","function":{"name":`...)
			dst = jsonenc.AppendString(dst, tc.Name)
			// Arguments travel as a string holding the JSON text, as
			// OpenAI's API has them.
			dst = append(dst, `,"arguments":`...)
			dst = jsonenc.AppendString(dst, tc.Arguments)
			dst = append(dst, "}}"...)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

// appendTools appends `,"tools":[…]`. An empty description or parameters
// is left out (both are optional in OpenAI's API).
func appendTools(dst []byte, tools []Tool) ([]byte, error) {
	dst = append(dst, `,"tools":[`...)
	for i, t := range tools {
		if t.Parameters != "" && !json.Valid([]byte(t.Parameters)) {
			return nil, fmt.Errorf("tools[%d] (%q): parameters are not valid JSON: %s", i, t.Name, excerpt([]byte(t.Parameters), 80))
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"type":"function","function":{"name":`...)
		dst = jsonenc.AppendString(dst, t.Name)
		if t.Description != "" {
			dst = append(dst, `,"description":`...)
			dst = jsonenc.AppendString(dst, t.Description)
		}
		if t.Parameters != "" {
			dst = append(dst, `,"parameters":`...)
			dst = append(dst, t.Parameters...)
		}
		dst = append(dst, "}}"...)
	}
	return append(dst, ']'), nil
}

// bodySize estimates the encoded body size so appendBody rarely grows its
// buffer: raw text plus a little for escapes and JSON punctuation.
func bodySize(prefix []byte, r Request) int {
	n := len(prefix) + len(bodyTail) + 64
	if r.Completion {
		n += len(r.prompt())
	} else {
		for _, m := range r.Messages {
			n += len(m.Role) + len(m.Content) + 32
			if m.ToolCallID != "" {
				n += len(m.ToolCallID) + 20
			}
			for _, tc := range m.ToolCalls {
				// Arguments are JSON inside a string: its quotes get escaped.
				n += len(tc.ID) + len(tc.Name) + len(tc.Arguments)*3/2 + 64
			}
		}
		for _, t := range r.Tools {
			n += len(t.Name) + len(t.Description) + len(t.Parameters) + 80
		}
	}
	return n + n/8
}
