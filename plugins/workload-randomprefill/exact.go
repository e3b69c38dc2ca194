package main

import (
	"fmt"
	"strconv"

	"github.com/lmbench/lmbench/sdk/workload"
)

// fillerCandidates are probed for one-token words, the original's "hi" first.
var fillerCandidates = []string{"hi", "the", "a", "and", "of", "to", "is"}

// exactPrompts makes every prompt exactly request-length tokens by the
// host's tokenizer, its distinct header included, and records what each
// request's prompt costs (the chat template included) to state with it.
// Headers differ in how their numbers tokenize, so every prompt is built
// and counted: two or three counts per prompt, batched, while preparing.
// A sharded run builds and counts only its own prompts (see ownedPos).
type exactPrompts struct {
	shard workload.Shard
	texts []string
	chat  []int
}

func buildExact(o Options, env workload.Env) (*exactPrompts, error) {
	ctx, tok := env.Context, env.Tokenizer
	vocab, err := tok.OneTokenWords(ctx, fillerCandidates)
	if err != nil {
		return nil, err
	}
	// Each prompt is built from its own header alone, so the shard's
	// prompts are the unsharded run's.
	var prefixes []string
	for i := range o.NumRequests {
		if env.Shard.Owns(i) {
			prefixes = append(prefixes, "Request "+strconv.Itoa(i)+":")
		}
	}
	e := &exactPrompts{shard: env.Shard}
	if e.texts, err = tok.ExactTexts(ctx, prefixes, vocab[:1], o.RequestLength); err != nil {
		return nil, fmt.Errorf("request-length %d: %w", o.RequestLength, err)
	}
	chats := make([]workload.TokenChat, len(e.texts))
	for i, t := range e.texts {
		chats[i] = workload.TokenChat{Messages: []workload.TokenMessage{{Role: "user", Content: t}}}
	}
	if e.chat, err = tok.CountChats(ctx, chats...); err != nil {
		return nil, err
	}
	return e, nil
}

// prompt is prompt i (one the shard owns) and its stated tokens.
func (e *exactPrompts) prompt(i int) (string, int) {
	p := ownedPos(e.shard, i)
	return e.texts[p], e.chat[p]
}
