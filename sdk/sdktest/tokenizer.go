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
// per message plus 2), and records the queries it answered. Pass it as
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
		texts := make([]string, len(ch.Messages))
		for i, m := range ch.Messages {
			texts[i] = m.Content
		}
		c.Chats = append(c.Chats, subword.ChatTokens(texts...))
	}
	return c, nil
}

// Queries returns the queries answered so far, in order.
func (f *FakeTokenizer) Queries() []protocol.TokenQuery {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]protocol.TokenQuery(nil), f.queries...)
}
