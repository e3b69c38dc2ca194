package sim

import (
	"container/list"
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lmbench/lmbench/core/sim/prefixcache"
)

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

// gpuQueue is the one GPU's prefill slot (or, with size above 1, that
// many places), granted in arrival order.
type gpuQueue struct {
	mu      sync.Mutex
	size    int // places; 0 is 1
	held    int
	waiters list.List // of chan struct{}, closed when the slot is handed over
}

// acquire waits for the slot, first come first served, or until ctx ends.
func (q *gpuQueue) acquire(ctx context.Context) error {
	q.mu.Lock()
	if q.held < max(q.size, 1) && q.waiters.Len() == 0 {
		q.held++
		q.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	el := q.waiters.PushBack(ch)
	q.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		q.mu.Lock()
		select {
		case <-ch: // handed over just as ctx ended: pass it on
			q.mu.Unlock()
			q.release()
		default:
			q.waiters.Remove(el)
			q.mu.Unlock()
		}
		return ctx.Err()
	}
}

// release hands the slot to the longest waiter, or frees it.
func (q *gpuQueue) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if front := q.waiters.Front(); front != nil {
		q.waiters.Remove(front)
		close(front.Value.(chan struct{}))
		return
	}
	q.held--
}

// engine is the simulated GPU. Prefills run one at a time, in arrival
// order; decodes run concurrently (a batch), each request pacing its own
// tokens.
type engine struct {
	cfg   Config
	cache *prefixcache.Cache
	gpu   gpuQueue
	// seqs are the Config.MaxNumSeqs places, granted in arrival order;
	// nil without a cap.
	seqs  *gpuQueue
	stats engineStats
	// decoding counts the requests past their prefill and not yet done:
	// the running batch a decode step's cost grows with.
	decoding atomic.Int64

	// decodeGate, when set (tests only), holds every request before its
	// second output token until it is closed.
	decodeGate chan struct{}
}

// engineStats backs /metrics; counts are in tokens unless named otherwise.
type engineStats struct {
	waiting          atomic.Int64 // requests queued for the GPU
	running          atomic.Int64 // requests prefilling or decoding
	cacheQueries     atomic.Int64 // prompt tokens looked up in the GPU tier
	cacheHits        atomic.Int64 // of those, found in the GPU tier
	promptTokens     atomic.Int64
	generationTokens atomic.Int64
	computedTokens   atomic.Int64 // prompt tokens prefilled (not found in any tier)
	blendRecomputed  atomic.Int64 // blended tokens recomputed anyway
	blendCorrupted   atomic.Int64 // blended chunks that lost their content (Faults.BlendCorrupt)
	requestsDone     atomic.Int64 // requests that produced all their tokens
	requestsStopped  atomic.Int64 // of those, ended at the EOS token before max_tokens (Config.EOSAfter)
	// Prompt tokens looked up in the CPU and disk tiers (what a KV
	// connector is asked for), and the requests that looked them up.
	externalQueries  atomic.Int64
	externalRequests atomic.Int64
	resets           atomic.Int64 // POST /reset_prefix_cache calls answered
	latency          latencies
	faults           [numFaults]atomic.Int64
}

func newEngine(cfg Config) *engine {
	e := &engine{cfg: cfg, cache: newCache(cfg), stats: engineStats{latency: newLatencies(cfg.Model)}}
	if cfg.MaxNumSeqs > 0 {
		e.seqs = &gpuQueue{size: cfg.MaxNumSeqs}
	}
	return e
}

// admit waits, first come first served, for one of the MaxNumSeqs places
// (at once without a cap); release gives it back.
func (e *engine) admit(ctx context.Context) (release func(), err error) {
	if e.seqs == nil {
		return func() {}, nil
	}
	if err := e.seqs.acquire(ctx); err != nil {
		return nil, err
	}
	return e.seqs.release, nil
}

// newCache returns the KV cache cfg's tiers describe.
func newCache(cfg Config) *prefixcache.Cache {
	return prefixcache.New(cfg.BlockSize, [prefixcache.NumTiers]int{cfg.tierBlocks(cfg.GPUGB), cfg.tierBlocks(cfg.CPUGB), cfg.tierBlocks(cfg.DiskGB)})
}

// generation is what one request cost and produced.
type generation struct {
	promptTokens     int
	cachedTokens     int // prefix tokens found in any tier
	cachedBy         [prefixcache.NumTiers]int
	blendTokens      int               // tokens reused by blending (not in cachedTokens)
	blend            []prefixcache.Hit // the blended chunks, where they sit in the prompt
	prefillCost      time.Duration     // modelled GPU time of the prefill, before TimeScale
	completionTokens int
	queued           time.Duration // waiting for the GPU
	firstToken       time.Duration // from arrival to the first output token
}

// enter queues a request, counted waiting, for one of the MaxNumSeqs
// places and then for the GPU; leave gives the place back.
func (e *engine) enter(ctx context.Context) (leave func(), err error) {
	e.stats.waiting.Add(1)
	defer e.stats.waiting.Add(-1)
	leave, err = e.admit(ctx)
	if err != nil {
		return nil, err
	}
	if err := e.gpu.acquire(ctx); err != nil {
		leave()
		return nil, err
	}
	return leave, nil
}

// generate runs one request: queue for the GPU, prefill what no tier holds
// and load what lower tiers hold, then produce maxTokens tokens, calling
// emit for each at its simulated time (the first right after the prefill,
// or after slowFirst more, then one every DecodePerToken). With answer
// set, the tokens are what it returns once the prefill knows which chunks
// were blended (at most maxTokens of them), not the vocabulary's. It stops
// early, returning the error, when ctx ends or emit fails; the GPU is
// released either way.
func (e *engine) generate(ctx context.Context, prompt []string, maxTokens int, slowFirst time.Duration,
	answer func(blend []prefixcache.Hit) []string, emit func(k int, text string) error) (generation, error) {
	arrived := time.Now()
	g := generation{promptTokens: len(prompt)}
	// Tokenizer work, off the GPU.
	hashes := prefixcache.BlockHashes(prompt, e.cfg.BlockSize)
	var windows, chunks []uint64
	if e.cfg.Blend {
		windows = prefixcache.WindowHashes(prompt, e.cfg.BlockSize)
		chunks = prefixcache.AlignedChunks(windows, e.cfg.BlockSize)
	}
	leave, err := e.enter(ctx)
	if err != nil {
		return g, err
	}
	defer leave()
	e.stats.running.Add(1)
	defer e.stats.running.Add(-1)
	g.queued = time.Since(arrived)

	err = e.prefill(ctx, &g, prompt, hashes, windows, chunks)
	e.gpu.release()
	if err != nil {
		return g, err
	}
	var words []string
	if answer != nil {
		words = answer(g.blend)
		maxTokens = min(maxTokens, len(words))
	}

	start := time.Now()
	if slowFirst > 0 {
		start = start.Add(e.cfg.scaled(slowFirst))
		if err := sleepUntil(ctx, start); err != nil {
			return g, err
		}
	}
	e.decoding.Add(1)
	defer e.decoding.Add(-1)
	var last time.Time    // when the previous token was emitted
	var due time.Duration // the next token's time after start
	for k := range maxTokens {
		if k > 0 {
			step := e.decodeStep()
			if k == 1 && e.decodeGate != nil {
				select {
				case <-e.decodeGate:
				case <-ctx.Done():
					return g, ctx.Err()
				}
				start = time.Now().Add(-step)
			}
			due += step
			if err := sleepUntil(ctx, start.Add(due)); err != nil {
				return g, err
			}
		} else {
			g.firstToken = time.Since(arrived)
			e.stats.latency.ttft.Observe(g.firstToken.Seconds())
		}
		now := time.Now()
		if k > 0 {
			e.stats.latency.itl.Observe(now.Sub(last).Seconds())
		}
		last = now
		text := outputToken(k)
		if words != nil {
			text = words[k]
		}
		if err := emit(k, text); err != nil {
			return g, err
		}
		g.completionTokens++
		e.stats.generationTokens.Add(1)
	}
	e.stats.requestsDone.Add(1)
	e.stats.latency.e2e.Observe(time.Since(arrived).Seconds())
	return g, nil
}

// decodeStep is the wall-clock gap before a request's next output token:
// DecodePerToken, plus DecodePerSeq for every other request decoding now.
func (e *engine) decodeStep() time.Duration {
	d := e.cfg.DecodePerToken
	if e.cfg.DecodePerSeq > 0 {
		d += time.Duration(max(e.decoding.Load()-1, 0)) * e.cfg.DecodePerSeq
	}
	return e.cfg.scaled(d)
}

// prefill models the GPU computing the prompt's KV cache; the caller holds
// the GPU. It fills in g's cache counts.
func (e *engine) prefill(ctx context.Context, g *generation, prompt []string, hashes []prefixcache.BlockHash, windows, chunks []uint64) error {
	bs := e.cfg.BlockSize
	// The last prompt token is always computed, as in vLLM: its logits give
	// the first output token. So a block holding it cannot be a hit.
	matchable := min((len(prompt)-1)/bs, len(hashes))
	r := e.cache.Lookup(hashes, matchable, windows, len(prompt)-1)
	for t := range prefixcache.NumTiers {
		g.cachedBy[t] = prefixcache.TokensFrom(r.Prefix, t, bs)
		g.cachedTokens += g.cachedBy[t]
	}
	g.blendTokens, g.blend = r.BlendTokens, r.Blend
	blendBy := [prefixcache.NumTiers]int{}
	for t := range prefixcache.NumTiers {
		blendBy[t] = prefixcache.TokensFrom(r.Blend, t, bs)
	}
	computed := len(prompt) - g.cachedTokens - g.blendTokens
	recomputed := int(math.Round(float64(g.blendTokens) * e.cfg.BlendRecompute))

	g.prefillCost = e.cfg.prefillCost(len(prompt), computed, g.blendTokens, g.cachedBy[prefixcache.CPU]+blendBy[prefixcache.CPU],
		g.cachedBy[prefixcache.Disk]+blendBy[prefixcache.Disk])
	if e.cfg.Faults.SlowHits {
		g.prefillCost = e.cfg.prefillCost(len(prompt), len(prompt), 0, 0, 0)
	}
	if err := sleepUntil(ctx, time.Now().Add(e.cfg.scaled(g.prefillCost))); err != nil {
		return err
	}

	e.cache.Commit(r, hashes, chunks)
	if e.cache.On(prefixcache.GPU) {
		e.stats.cacheQueries.Add(int64(len(prompt)))
		e.stats.cacheHits.Add(int64(g.cachedBy[prefixcache.GPU]))
	}
	if e.cache.On(prefixcache.CPU) || e.cache.On(prefixcache.Disk) {
		// What the GPU did not hold is asked of the connector, as vLLM
		// asks LMCache for the tokens past its own hit.
		e.stats.externalRequests.Add(1)
		e.stats.externalQueries.Add(int64(len(prompt) - g.cachedBy[prefixcache.GPU]))
	}
	e.stats.promptTokens.Add(int64(len(prompt)))
	e.stats.computedTokens.Add(int64(computed))
	e.stats.blendRecomputed.Add(int64(recomputed))
	return nil
}

// prefillCost is the cost model of one prefill of a prompt of n tokens:
// PrefillOverhead, computed tokens at PrefillPerToken (plus PrefillGrowth
// per 1,000 prompt tokens), the BlendRecompute fraction of blended tokens
// likewise, and tokens found in the CPU or disk tier (prefix or blended) at
// that tier's load cost. GPU-tier hits are free.
func (c Config) prefillCost(n, computed, blended, fromCPU, fromDisk int) time.Duration {
	perToken := float64(c.PrefillPerToken) + float64(c.PrefillGrowth)*float64(n)/1000
	cost := c.PrefillOverhead + time.Duration(perToken*(float64(computed)+float64(blended)*c.BlendRecompute))
	cost += time.Duration(fromCPU) * c.CPULoadPerToken
	cost += time.Duration(fromDisk) * c.DiskLoadPerToken
	return cost
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
