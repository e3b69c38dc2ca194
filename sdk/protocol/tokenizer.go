package protocol

import "context"

// TokenCounter counts tokens with the served model's tokenizer (capability
// Tokenizer). The host answers through the engine's /tokenize or a local
// tokenizer and caches the answers; a workload uses it while it prepares
// (Configure), not on the hot path.
type TokenCounter interface {
	// CountTokens answers every text and chat of q, in order: len(Texts)
	// text counts and len(Chats) chat counts.
	CountTokens(ctx context.Context, q TokenQuery) (TokenCounts, error)
}

// TokenQuery is one batch of things to count.
type TokenQuery struct {
	// Texts are counted as plain text, without special tokens (no BOS):
	// what the text adds to a prompt it is part of.
	Texts []string
	// Chats are counted as the engine renders a chat request: the chat
	// template with the generation prompt, the whole prompt.
	Chats []Chat
}

// Chat is the messages of one chat request, as text, and the tools it
// offers (capability TokenizeTools).
type Chat struct {
	Messages []ChatMessage
	Tools    []Tool
}

// ChatMessage is one message's role and text; an assistant message's tool
// calls and the call a tool message answers (capability TokenizeTools).
type ChatMessage struct {
	Role, Content string
	ToolCalls     []ToolCall
	ToolCallID    string
}

// HasTools reports whether c has tools, tool calls or tool call ids: what
// only a host with TokenizeTools counts.
func (c Chat) HasTools() bool {
	if len(c.Tools) > 0 {
		return true
	}
	for _, m := range c.Messages {
		if len(m.ToolCalls) > 0 || m.ToolCallID != "" {
			return true
		}
	}
	return false
}

// TokenCounts answers a TokenQuery.
type TokenCounts struct {
	Texts []int
	Chats []int
}
