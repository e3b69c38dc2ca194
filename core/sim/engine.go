package sim

import (
	"context"
	"strings"
	"sync/atomic"
	"time"
)

// Tokens are whitespace-separated words: tokenize is the simulator's whole
// tokenizer. A chat prompt is the words of every message's text, in order.
func tokenize(text string) []string { return strings.Fields(text) }

// vocabulary is what the simulated model says, word k%len for output token k.
var vocabulary = [...]string{
	"the", "quick", "brown", "fox", "jumps", "over", "a", "lazy",
	"dog", "while", "simulated", "engines", "stream", "tokens", "very", "fast",
}

// outputToken returns the text of output token k: a word, with a leading
// space except for the first, so the concatenation reads as a sentence and
// splits back into exactly k+1 tokens.
func outputToken(k int) string {
	w := vocabulary[k%len(vocabulary)]
	if k == 0 {
		return w
	}
	return " " + w
}

// engine is the simulated GPU. Prefills run one at a time, holding the
// single gpu slot, so simultaneous requests queue; decodes run concurrently
// (a batch), each request pacing its own tokens.
type engine struct {
	cfg   Config
	cache *prefixCache
	gpu   chan struct{} // capacity 1: a value in it is a prefill running
	stats engineStats
}

// engineStats backs /metrics; counts are in tokens unless named otherwise.
type engineStats struct {
	waiting          atomic.Int64 // requests queued for the GPU
	running          atomic.Int64 // requests prefilling or decoding
	cacheQueries     atomic.Int64
	cacheHits        atomic.Int64
	promptTokens     atomic.Int64
	generationTokens atomic.Int64
	requestsDone     atomic.Int64 // requests that produced all their tokens
}

func newEngine(cfg Config) *engine {
	return &engine{
		cfg:   cfg,
		cache: newPrefixCache(cfg.CacheTokens, cfg.BlockSize),
		gpu:   make(chan struct{}, 1),
	}
}

// generation is what one request cost and produced.
type generation struct {
	promptTokens     int
	cachedTokens     int
	completionTokens int
	queued           time.Duration // waiting for the GPU
	firstToken       time.Duration // from arrival to the first output token
}

// generate runs one request: queue for the GPU, prefill the prompt tokens
// the cache does not hold, then produce maxTokens tokens, calling emit for
// each at its simulated time (the first right after the prefill, then one
// every DecodePerToken). It stops early, returning the error, when ctx ends
// or emit fails; the GPU is released either way.
func (e *engine) generate(ctx context.Context, prompt []string, maxTokens int, emit func(k int, text string) error) (generation, error) {
	arrived := time.Now()
	g := generation{promptTokens: len(prompt)}
	hashes := blockHashes(prompt, e.cfg.BlockSize) // tokenizer work, off the GPU

	e.stats.waiting.Add(1)
	select {
	case e.gpu <- struct{}{}:
		e.stats.waiting.Add(-1)
	case <-ctx.Done():
		e.stats.waiting.Add(-1)
		return g, ctx.Err()
	}
	e.stats.running.Add(1)
	defer e.stats.running.Add(-1)
	g.queued = time.Since(arrived)

	cached, err := e.prefill(ctx, prompt, hashes)
	<-e.gpu
	if err != nil {
		return g, err
	}
	g.cachedTokens = cached

	start := time.Now()
	step := e.cfg.scaled(e.cfg.DecodePerToken)
	for k := range maxTokens {
		if k > 0 {
			if err := sleepUntil(ctx, start.Add(time.Duration(k)*step)); err != nil {
				return g, err
			}
		} else {
			g.firstToken = time.Since(arrived)
		}
		if err := emit(k, outputToken(k)); err != nil {
			return g, err
		}
		g.completionTokens++
		e.stats.generationTokens.Add(1)
	}
	e.stats.requestsDone.Add(1)
	return g, nil
}

// prefill models the GPU computing the prompt's KV cache; the caller holds
// the GPU. It returns the number of prompt tokens found in the cache.
func (e *engine) prefill(ctx context.Context, prompt []string, hashes []blockHash) (int, error) {
	// The last prompt token is always computed, as in vLLM: its logits give
	// the first output token. So a block holding it cannot be a hit.
	matchable := 0
	if len(prompt) > 0 {
		matchable = min((len(prompt)-1)/e.cfg.BlockSize, len(hashes))
	}
	cached := e.cache.match(hashes[:matchable]) * e.cfg.BlockSize
	if e.cache != nil {
		e.stats.cacheQueries.Add(int64(len(prompt)))
		e.stats.cacheHits.Add(int64(cached))
	}

	cost := e.cfg.scaled(time.Duration(len(prompt)-cached) * e.cfg.PrefillPerToken)
	if err := sleepUntil(ctx, time.Now().Add(cost)); err != nil {
		return 0, err
	}
	e.cache.store(hashes)
	e.stats.promptTokens.Add(int64(len(prompt)))
	return cached, nil
}

// sleepUntil waits until deadline or until ctx ends, whichever is first;
// pacing against deadlines rather than sleeping a step at a time keeps long
// outputs from drifting late.
func sleepUntil(ctx context.Context, deadline time.Time) error {
	d := time.Until(deadline)
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
