package main

import (
	"fmt"
	"strings"

	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/pseudoword"
	"github.com/lmbench/lmbench/sdk/workload"
)

// fillerCandidates are probed for one-token words to top texts up with.
var fillerCandidates = []string{"hi", "the", "a", "and", "of", "to", "is"}

// exactTexts is long-doc-permutator in the engine's tokens: each context
// and the system prompt are the original's seeded words, as many as fit,
// topped up with one-token filler to exactly their lengths; every
// permutation's request states its prompt's tokens.
type exactTexts struct {
	contexts []string
	system   string
	stated   []int // by permutation (a shard counts only those it owns)
	warmup   int   // the dummy warmup request's tokens
}

func buildExact(o Options, env workload.Env, perms [][]int, shard protocol.Shard) (*exactTexts, error) {
	ctx, tok := env.Context, env.Tokenizer
	fill, err := tok.OneTokenWords(ctx, fillerCandidates)
	if err != nil {
		return nil, err
	}
	fill = fill[:1]
	pool := pseudoword.Vocab(vocabSize, env.Seed)
	grow := make([]func(int) string, o.NumContexts)
	for i := range grow {
		grow[i] = func(k int) string { return contextText(i, k, pool, env.Seed) }
	}
	e := &exactTexts{}
	if e.contexts, err = tok.FitTexts(ctx, grow, fill, o.ContextLength); err != nil {
		return nil, fmt.Errorf("context-length %d: %w", o.ContextLength, err)
	}
	if o.SystemPromptLength > 0 {
		s, err := tok.FitTexts(ctx, []func(int) string{func(k int) string { return systemPrompt(k, env.Seed) }}, fill, o.SystemPromptLength)
		if err != nil {
			return nil, fmt.Errorf("system-prompt-length %d: %w", o.SystemPromptLength, err)
		}
		e.system = s[0]
	}
	var chats []workload.TokenChat
	for j, p := range perms {
		if !shard.Owns(j) {
			continue
		}
		var msgs []workload.TokenMessage
		if e.system != "" {
			msgs = append(msgs, workload.TokenMessage{Role: "system", Content: e.system})
		}
		parts := make([]string, len(p))
		for k, i := range p {
			parts[k] = e.contexts[i]
		}
		chats = append(chats, workload.TokenChat{Messages: append(msgs, workload.TokenMessage{Role: "user", Content: strings.Join(parts, "\n\n")})})
	}
	chats = append(chats, workload.TokenChat{Messages: []workload.TokenMessage{
		{Role: "system", Content: warmupSystem}, {Role: "user", Content: warmupUser}}})
	counts, err := tok.CountChats(ctx, chats...)
	if err != nil {
		return nil, err
	}
	e.warmup, counts = counts[len(counts)-1], counts[:len(counts)-1]
	e.stated = make([]int, len(perms))
	for j := range perms {
		if shard.Owns(j) {
			e.stated[j], counts = counts[0], counts[1:]
		}
	}
	return e, nil
}
