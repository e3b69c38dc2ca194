package main

import (
	"fmt"
	"math"

	"github.com/lmbench/lmbench/sdk/pyrand"
	"github.com/lmbench/lmbench/sdk/workload"
)

// fillerCandidates are probed for one-token words to top texts up with.
var fillerCandidates = []string{"hi", "the", "a", "and", "of", "to", "is"}

// exactParts is prefix-suffix-tuner in the engine's tokens: every prefix,
// the suffix and every breaker cost exactly their sizes (pseudo-words,
// then one-token filler to the exact count), the pool is sized by what a
// prefix occupies with the chat template, and each request states its
// prompt's tokens. Breakers are drawn here, in the order requests use
// them, so Step never waits for the tokenizer.
type exactParts struct {
	prefixes []string
	suffix   string
	breakers [3][]string // by pass (1, 2), for prefix i
	stated   [3][]int    // by pass: request i's prompt tokens
	template int         // what the chat template adds to a request
}

// buildExact returns the parts and the pool size in tokens.
func buildExact(o Options, cfg config, env workload.Env, vocab []string) (*exactParts, int, error) {
	ctx, tok := env.Context, env.Tokenizer
	fill, err := tok.OneTokenWords(ctx, fillerCandidates)
	if err != nil {
		return nil, 0, err
	}
	fill = fill[:1]
	e := &exactParts{}
	// What the template adds: a request's chat minus its text.
	probe := "SUFFIX hi"
	t, err := tok.Count(ctx, probe)
	if err != nil {
		return nil, 0, err
	}
	c, err := tok.CountChats(ctx, userChat(probe))
	if err != nil {
		return nil, 0, err
	}
	e.template = c[0] - t[0]
	f := o.Thrash * overflowFactor * float64(env.TokensPerGB) / float64(cfg.PrefixTokens+e.template)
	if math.IsNaN(f) || f >= maxPrefixes {
		return nil, 0, fmt.Errorf("thrash x 1.05 x tokens_per_gb / (prefix_tokens + %d of chat template) = %g prefixes, more than the %d supported", e.template, f, maxPrefixes)
	}
	n := max(int(f), 1)

	heads := make([]func(k int) string, n)
	for i := range n {
		heads[i] = func(k int) string {
			return text(fmt.Sprintf("PREFIX_%08x", i), vocab, pyrand.New(env.Seed+prefixSeedOffset+int64(i)), k)
		}
	}
	if e.prefixes, err = tok.FitTexts(ctx, heads, fill, cfg.PrefixTokens); err != nil {
		return nil, 0, fmt.Errorf("prefix of %d tokens: %w", cfg.PrefixTokens, err)
	}
	suffix, err := tok.FitTexts(ctx, []func(int) string{func(k int) string {
		return text("SUFFIX", vocab, pyrand.New(env.Seed+suffixSeedOffset), k)
	}}, fill, cfg.SuffixTokens)
	if err != nil {
		return nil, 0, fmt.Errorf("suffix of %d tokens: %w", cfg.SuffixTokens, err)
	}
	e.suffix = suffix[0]
	rng := pyrand.New(env.Seed + breakerSeedOffset)
	for _, pass := range []int{1, 2} {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprintf("BR_%08x", rng.RandRange(0, 1<<32))
		}
		if e.breakers[pass], err = tok.ExactTexts(ctx, ids, fill, cfg.BreakerTokens); err != nil {
			return nil, 0, fmt.Errorf("breaker of %d tokens: %w", cfg.BreakerTokens, err)
		}
		chats := make([]workload.TokenChat, n)
		for i := range chats {
			chats[i] = userChat(e.head(pass, i) + e.suffix)
		}
		if e.stated[pass], err = tok.CountChats(ctx, chats...); err != nil {
			return nil, 0, err
		}
	}
	return e, n, nil
}

// head is the inline part of request i of pass: prefix, breaker, a space
// before the suffix.
func (e *exactParts) head(pass, i int) string {
	return e.prefixes[i] + " " + e.breakers[pass][i] + " "
}

func userChat(s string) workload.TokenChat {
	return workload.TokenChat{Messages: []workload.TokenMessage{{Role: "user", Content: s}}}
}
