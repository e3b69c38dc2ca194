package sdktest

import (
	"context"
	"sync"

	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/subword"
)

// FakeTokenizer is a host tokenizer for tests: it counts with package
// subword's rule, the one `lmbench sim --tokenizer-mode subword` uses (a
// word of more than 3 characters costs 1 to 6 tokens, the chat template 3
// per message plus 2, tools and tool calls as package subword says), and
// records the queries it answered. Pass it as
// Options.Tokens, or to workload.NewTokenizer in a unit test.
type FakeTokenizer struct {
	mu      sync.Mutex
	queries []protocol.TokenQuery
}

// CountTokens answers q by the subword rule.
func (f *FakeTokenizer) CountTokens(_ context.Context, q protocol.TokenQuery) (protocol.TokenCounts, error) {
	f.mu.Lock()
	f.queries = append(f.queries, q)
	f.mu.Unlock()
	var c protocol.TokenCounts
	for _, t := range q.Texts {
		c.Texts = append(c.Texts, subword.TextTokens(t))
	}
	for _, ch := range q.Chats {
		c.Chats = append(c.Chats, chatTokens(ch))
	}
	return c, nil
}

// chatTokens counts a chat by the subword rule, its tools and tool calls
// included.
func chatTokens(ch protocol.Chat) int {
	texts := make([]string, len(ch.Messages))
	n := 0
	for i, m := range ch.Messages {
		texts[i] = m.Content
		for _, tc := range m.ToolCalls {
			n += subword.ToolCallTokens(tc.Name, tc.Arguments)
		}
	}
	if len(ch.Tools) > 0 {
		n += subword.PerMessage
		for _, t := range ch.Tools {
			n += subword.ToolTokens(t.Name, t.Description, t.Parameters)
		}
	}
	return n + subword.ChatTokens(texts...)
}

// Queries returns the queries answered so far, in order.
func (f *FakeTokenizer) Queries() []protocol.TokenQuery {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]protocol.TokenQuery(nil), f.queries...)
}
