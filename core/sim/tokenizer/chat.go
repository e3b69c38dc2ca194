package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The chat request's parts Chat reads, in the JSON shape of vLLM's
// OpenAI-compatible server.

// Message is one of a chat request's messages.
type Message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"` // a string, text parts, or null
	// An assistant message's calls; the call a tool message answers
	// (accepted, not rendered: ChatML templates leave it out).
	ToolCalls  []ToolCall `json:"tool_calls"`
	ToolCallID string     `json:"tool_call_id"`
}

// ToolCall is OpenAI's tool_calls entry; arguments are a string holding
// JSON (or, leniently, the JSON itself).
type ToolCall struct {
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// Tool is OpenAI's tools entry; parameters are rendered as sent.
type Tool struct {
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// arguments is a call's arguments text: the string's value, or the raw
// JSON when they came as an object.
func (c ToolCall) arguments() string {
	var s string
	if json.Unmarshal(c.Function.Arguments, &s) == nil {
		return s
	}
	return string(c.Function.Arguments)
}

// messageText flattens a message's content: a string, null, or a list of
// {"type":"text","text":...} parts.
func messageText(raw json.RawMessage) (string, error) {
	trimmed := strings.TrimSpace(string(raw))
	if trimmed == "" || trimmed == "null" {
		return "", nil
	}
	var s string
	if trimmed[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("must be a string or a list of text parts")
	}
	texts := make([]string, 0, len(parts))
	for j, p := range parts {
		if p.Type != "text" {
			return "", fmt.Errorf("part %d: type must be \"text\" (the simulator has no other modalities), got %q", j, p.Type)
		}
		texts = append(texts, p.Text)
	}
	return strings.Join(texts, " "), nil
}
