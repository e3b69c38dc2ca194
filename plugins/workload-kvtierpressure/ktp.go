package main

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/pseudoword"
	"github.com/lmbench/lmbench/sdk/pyrand"
	"github.com/lmbench/lmbench/sdk/workload"
)

// Bounds on what one run may hold in memory: the pool's text is generated
// in the plugin and kept by the host for the whole run.
const (
	maxPoolWords = 1 << 28 // about 2 GiB of text
	maxVocab     = 1 << 20
	maxRequests  = 1 << 20
)

// Validate checks the options with the original's messages, all at once.
func (o Options) Validate() error {
	var errs []error
	if !(o.OverflowFactor > 0) || math.IsInf(o.OverflowFactor, 1) {
		errs = append(errs, option.Errorf("overflow-factor", "overflow_factor must be positive, got %v", o.OverflowFactor))
	}
	if math.IsNaN(o.AccessSkew) || math.IsInf(o.AccessSkew, 1) {
		errs = append(errs, option.Errorf("access-skew", "access_skew must be a finite number >= 0, got %v", o.AccessSkew))
	}
	if o.PoolSize > 0 && o.DocsPerRequest > o.PoolSize {
		errs = append(errs, option.Errorf("docs-per-request",
			"docs_per_request (%d) must be <= pool_size (%d): a request cannot carry more distinct documents than the pool holds", o.DocsPerRequest, o.PoolSize))
	}
	if o.VocabSize > maxVocab {
		errs = append(errs, option.Errorf("vocab-size", "vocab_size must be at most %d, got %d", maxVocab, o.VocabSize))
	}
	if o.NumRequests > maxRequests {
		errs = append(errs, option.Errorf("num-requests", "num_requests must be at most %d, got %d", maxRequests, o.NumRequests))
	}
	return errors.Join(errs...)
}

// resolvePool is --ktp-pool-size, or, when 0, the original's
// ceil(F x V x tokens_per_gb / context_length): the pool overflows the
// cache the server reports F times.
func resolvePool(o Options, volumeGB float64, tokensPerGB int64) (int, error) {
	pool := o.PoolSize
	if pool < 1 {
		if volumeGB <= 0 || tokensPerGB <= 0 {
			return 0, option.Errorf("pool-size",
				"pool_size was not given and cannot be derived: no cache capacity is known (--kv-cache-volume %v GB, %d tokens per GB). Pass --ktp-pool-size, or --tokens-per-gb-kvcache / --lmcache-url",
				volumeGB, tokensPerGB)
		}
		budget := o.OverflowFactor * volumeGB * float64(tokensPerGB)
		pool = max(int(math.Min(math.Ceil(budget/float64(o.ContextLength)), math.MaxInt32)), 1)
	}
	if o.DocsPerRequest > pool {
		return 0, option.Errorf("docs-per-request",
			"docs_per_request (%d) must be <= pool_size (%d): a request cannot carry more distinct documents than the pool holds", o.DocsPerRequest, pool)
	}
	if words := float64(pool) * float64(o.ContextLength); words > maxPoolWords {
		return 0, option.Errorf("pool-size", "the pool of %d documents of %d tokens is %.0f tokens of text; at most %d fit: lower --ktp-pool-size, --ktp-overflow-factor or --ktp-context-length",
			pool, o.ContextLength, words, maxPoolWords)
	}
	return pool, nil
}

// warmupSweep partitions the pool so every document is stored once, the
// last group back-filled from the front so every warm-up request has the
// measured shape (the original's warmup_sweep).
func warmupSweep(pool, k int) [][]int {
	var groups [][]int
	for start := 0; start < pool; start += k {
		g := make([]int, 0, k)
		for i := start; i < min(start+k, pool); i++ {
			g = append(g, i)
		}
		for i := 0; len(g) < k; i++ {
			g = append(g, i)
		}
		groups = append(groups, g)
	}
	return groups
}

// sampleRequests draws the measured stream as the original's
// sample_requests does from random.Random(seed): k distinct documents per
// request, uniformly (random.sample) or, with skew s > 0, one at a time
// with Zipf weights 1/(rank+1)^s over those not yet picked
// (random.choices with weights).
func sampleRequests(pool, k, n int, skew float64, seed int64) [][]int {
	r := pyrand.New(seed)
	out := make([][]int, n)
	if skew == 0 {
		for i := range out {
			out[i] = r.Sample(pool, k)
		}
		return out
	}
	weights := make([]float64, pool)
	for rank := range weights {
		weights[rank] = 1 / math.Pow(float64(rank+1), skew)
	}
	remaining := make([]int, pool)
	rw := make([]float64, pool)
	cum := make([]float64, pool)
	for i := range out {
		for j := range remaining {
			remaining[j] = j
		}
		copy(rw, weights)
		rem, remW := remaining[:pool], rw[:pool]
		picked := make([]int, 0, k)
		for range k {
			c := weightedChoice(r, remW, cum[:len(remW)])
			picked = append(picked, rem[c])
			rem = append(rem[:c], rem[c+1:]...)
			remW = append(remW[:c], remW[c+1:]...)
		}
		out[i] = picked
	}
	return out
}

// weightedChoice is random.choices(range(len(w)), weights=w)[0]: the
// cumulative weights summed left to right, then bisect_right of
// random() x total over all but the last.
func weightedChoice(r *pyrand.Random, w, cum []float64) int {
	total := 0.0
	for i, x := range w {
		total += x
		cum[i] = total
	}
	v := r.Random() * total
	hi := len(w) - 1
	return sort.Search(hi, func(i int) bool { return cum[i] > v })
}

// randomText is the original's _generate_text: length words drawn with
// random.Random(seed).choice from the vocabulary, joined by spaces.
func randomText(length int, vocab []string, seed int64) string {
	if length == 0 {
		return ""
	}
	r := pyrand.New(seed)
	var b strings.Builder
	for i := range length {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(vocab[r.Choice(len(vocab))])
	}
	return b.String()
}

// lruModel is an LRU of whole documents holding capacity of them: what a
// cache of the reported size alone would keep.
type lruModel struct {
	capacity int
	order    *list.List            // of document, most recent first
	at       map[int]*list.Element // document -> its place in order
}

func newLRUModel(capacity int) *lruModel {
	return &lruModel{capacity: capacity, order: list.New(), at: map[int]*list.Element{}}
}

// touch counts the documents of group the model holds, then uses them all.
func (m *lruModel) touch(group []int) int {
	resident := 0
	for _, d := range group {
		if _, ok := m.at[d]; ok {
			resident++
		}
	}
	for _, d := range group {
		if e, ok := m.at[d]; ok {
			m.order.MoveToFront(e)
		} else {
			m.at[d] = m.order.PushFront(d)
		}
	}
	for m.order.Len() > m.capacity {
		e := m.order.Back()
		delete(m.at, e.Value.(int))
		m.order.Remove(e)
	}
	return resident
}

// request is one planned request: its documents and how many of them the
// capacity model holds when it is sent.
type request struct {
	id       string
	docs     []int
	resident int
	stated   int // the whole chat's tokens (exact.go); 0: not counted
}

type pressure struct {
	o       Options
	log     workload.Logger
	content *workload.Registry
	pool    int
	vocab   []string
	seed    int64
	// texts are the documents in the model's tokens (exact.go); nil:
	// lengths in words, drawn when first used.
	texts     []string
	system    string
	docs      []workload.Segment // registered on first use
	capacity  int                // documents the reported cache holds (0: unknown)
	capGB     float64
	capTok    int64
	sweep     []request
	measured  []request
	next      int // into the current phase's list, over the whole run's
	lookAhead bool

	// shard is the part of a sharded run this process sends: the sweep
	// requests and measured requests whose index it owns, with its share of
	// the in-flight requests (inflight).
	shard    protocol.Shard
	inflight int

	// The measured phase's results, for the tier check.
	heard, ok            int
	promptTok, cachedTok int64
	predicted, ideal     int64 // tokens a cache of the reported size / of any size would serve
	byID                 map[string]int
}

func newPressure(o Options, env workload.Env) (workload.Workload, error) {
	pool, err := resolvePool(o, env.KVCacheVolumeGB, env.TokensPerGB)
	if err != nil {
		return nil, err
	}
	inflight, err := inflightShare(o, env.Shard)
	if err != nil {
		return nil, err
	}
	w := &pressure{
		o: o, log: env.Logger, content: env.Content, pool: pool, seed: env.Seed,
		vocab:     pseudoword.Vocab(o.VocabSize, env.Seed),
		docs:      make([]workload.Segment, pool),
		capGB:     env.KVCacheVolumeGB,
		capTok:    max(int64(env.KVCacheVolumeGB*float64(env.TokensPerGB)), 0),
		lookAhead: env.HostHas(protocol.LookAhead),
		byID:      map[string]int{},
		shard:     env.Shard,
		inflight:  inflight,
	}
	w.capacity = int(w.capTok / int64(o.ContextLength))
	// The whole run's plan, whatever the shard: the capacity model runs
	// over the whole stream, so a shard's resident tags are the unsharded
	// run's. The original seeds the system prompt with seed+2 and document i with
	// seed+1+i (so document 1 opens with the system prompt's words).
	w.system = randomText(o.SystemPromptLength, w.vocab, env.Seed+2)
	if env.Tokenizer != nil {
		if err := w.exactTexts(env); err != nil {
			return nil, err
		}
	}
	model := newLRUModel(w.capacity)
	for i, g := range warmupSweep(pool, o.DocsPerRequest) {
		w.sweep = append(w.sweep, request{id: "warm" + strconv.Itoa(i), docs: g, resident: model.touch(g)})
	}
	for i, g := range sampleRequests(pool, o.DocsPerRequest, o.NumRequests, o.AccessSkew, env.Seed) {
		id := "sample" + strconv.Itoa(i)
		w.byID[id] = i
		w.measured = append(w.measured, request{id: id, docs: g, resident: model.touch(g)})
	}
	if env.Tokenizer != nil {
		if err := w.statePrompts(env); err != nil {
			return nil, err
		}
	}
	return w, nil
}

func (w *pressure) PlannedRequests() int { return w.shard.Owned(len(w.measured)) }

func (w *pressure) Resolved() map[string]any { return map[string]any{"pool-size": w.pool} }

func (w *pressure) tokensPerRequest() int {
	return w.o.SystemPromptLength + w.o.DocsPerRequest*w.o.ContextLength
}

// predictedShare is the share of measured document reads the capacity
// model holds.
func (w *pressure) predictedShare() float64 {
	held := 0
	for _, r := range w.measured {
		held += r.resident
	}
	return float64(held) / float64(len(w.measured)*w.o.DocsPerRequest)
}

func (w *pressure) Banner() []workload.Field {
	passes := float64(w.o.NumRequests*w.o.DocsPerRequest) / float64(w.pool)
	b := []workload.Field{
		{Label: "Document pool", Value: strconv.Itoa(w.pool) + " documents"},
		{Label: "Document length", Value: strconv.Itoa(w.o.ContextLength) + " tokens"},
		{Label: "Docs per request", Value: strconv.Itoa(w.o.DocsPerRequest)},
		{Label: "System prompt", Value: strconv.Itoa(w.o.SystemPromptLength) + " tokens"},
		{Label: "Working set", Value: strconv.Itoa(w.pool*w.o.ContextLength) + " tokens"},
		{Label: "Reported cache", Value: w.reported()},
		{Label: "Access skew", Value: fmt.Sprintf("%.2f (0 = uniform)", w.o.AccessSkew)},
		{Label: "Warm-up sweep", Value: fmt.Sprintf("%d requests (every document once)", len(w.sweep))},
		{Label: "Measured requests", Value: fmt.Sprintf("%d (%.1f passes over the pool)", w.o.NumRequests, passes)},
		{Label: "Tokens per request", Value: strconv.Itoa(w.tokensPerRequest())},
		{Label: "Held by the reported cache", Value: fmt.Sprintf("%.1f%% of document reads (an LRU of that size over this stream)", 100*w.predictedShare())},
		{Label: "Vocab size", Value: strconv.Itoa(w.o.VocabSize)},
		{Label: "Max inflight", Value: strconv.Itoa(w.o.NumInflightRequests)},
		{Label: "Max output length", Value: strconv.Itoa(w.o.MaxOutputLength) + " tokens"},
	}
	if w.texts != nil {
		b = append(b, workload.Field{Label: "Tokenizer", Value: "the model's (documents and system prompt exact)"})
	}
	if w.shard.Sharded() {
		b = append(b, workload.Field{Label: "Shard", Value: shardBanner(w.shard, len(w.measured), len(w.sweep), w.inflight, w.o.NumInflightRequests)})
	}
	return b
}

func (w *pressure) reported() string {
	if w.capTok <= 0 {
		return "unknown (no --kv-cache-volume or tokens per GB)"
	}
	return fmt.Sprintf("%s GB = %d tokens (%d documents)", strconv.FormatFloat(w.capGB, 'f', -1, 64), w.capTok, w.capacity)
}

// document returns a reference to document d, registering its text the
// first time it is used.
func (w *pressure) document(d int) workload.Segment {
	if w.docs[d].Ref == "" {
		text := ""
		if w.texts != nil {
			text = w.texts[d]
		} else {
			text = randomText(w.o.ContextLength, w.vocab, w.seed+1+int64(d))
		}
		w.docs[d] = w.content.Register("doc"+strconv.Itoa(d), text)
	}
	return w.docs[d]
}

// chat is the original's _build_messages: the system prompt when not
// empty, then one user message of the documents joined by blank lines.
func (w *pressure) chat(r request, maxTokens int) workload.Request {
	var segs []workload.Segment
	names := make([]string, len(r.docs))
	for i, d := range r.docs {
		if i > 0 {
			segs = append(segs, workload.Text("\n\n"))
		}
		segs = append(segs, w.document(d))
		names[i] = strconv.Itoa(d)
	}
	var msgs []workload.Message
	if w.system != "" {
		msgs = append(msgs, workload.System(workload.Text(w.system)))
	}
	msgs = append(msgs, workload.User(segs...))
	req := workload.Chat(r.id, msgs...).
		WithMaxTokens(maxTokens).
		Tag("docs", docsTag(names)).
		Tag("resident", strconv.Itoa(r.resident))
	if r.stated > 0 {
		req = req.WithPromptTokens(r.stated)
	}
	return req
}

// maxDocsTag keeps the docs tag under the host's 1,024 bytes per tag value.
const maxDocsTag = 1000

// docsTag is the documents joined by spaces, cut after the last that fits
// maxDocsTag with the number left out ("3 17 ... +40 more").
func docsTag(names []string) string {
	out := strings.Join(names, " ")
	if len(out) <= maxDocsTag {
		return out
	}
	n := 0
	for i := range names {
		if n+len(names[i])+1 > maxDocsTag-16 {
			return strings.Join(names[:i], " ") + " +" + strconv.Itoa(len(names)-i) + " more"
		}
		n += len(names[i]) + 1
	}
	return out
}

// lookAheadDepth is how many requests are handed over beyond those in
// flight with a host that holds them for a slot.
const lookAheadDepth = 8

func (w *pressure) Step(_ context.Context, in workload.StepInput) (workload.StepOutput, error) {
	switch in.Phase {
	case workload.Warmup:
		if w.next == 0 {
			w.log.Info().Msgf("Warm-up sweep: %d requests covering every document once", len(w.sweep))
		}
		return w.dispatch(in, w.sweep, 1), nil // the original's warm-up requests ask for 1 token
	case workload.Measure:
		return w.dispatch(in, w.measured, w.o.MaxOutputLength), nil
	}
	return workload.StepOutput{}, fmt.Errorf("unknown phase %v", in.Phase)
}

// dispatch keeps num-inflight-requests of list in flight (and, with a
// host that holds requests for a slot, the next few handed over ahead); a
// shard keeps its share of them, of the requests it owns.
func (w *pressure) dispatch(in workload.StepInput, list []request, maxTokens int) workload.StepOutput {
	limit := w.inflight
	ahead := 0
	if w.lookAhead {
		ahead = lookAheadDepth
	}
	w.skip(list)
	n := max(min(limit+ahead-in.InFlight, w.shard.Owned(len(list))-w.shard.Owned(w.next)), 0)
	reqs := make([]workload.Request, 0, n)
	for range n {
		req := w.chat(list[w.next], maxTokens)
		w.next++
		w.skip(list)
		if w.lookAhead {
			req = req.WithMaxInFlight(limit)
		}
		reqs = append(reqs, req)
	}
	if w.next == len(list) {
		w.next = 0 // the next phase starts its own list
		return workload.Send(reqs...).Done()
	}
	if w.lookAhead {
		return workload.Send(reqs...).WaitForInFlightBelow(limit + ahead/2)
	}
	return workload.Send(reqs...).WaitForFinish()
}

// skip moves next past the requests of list other shards send.
func (w *pressure) skip(list []request) {
	for w.next < len(list) && !w.shard.Owns(w.next) {
		w.next++
	}
}

// OnFinished reports failed warm-up requests, and once every measured
// request is heard of, checks the tier.
func (w *pressure) OnFinished(_ context.Context, results []workload.Result) error {
	for _, r := range results {
		if r.Phase == workload.Warmup {
			if !r.Success {
				w.log.Warn().Msgf("Warm-up request %s failed: %s", r.ID, r.Error)
			}
			continue
		}
		i, known := w.byID[r.ID]
		if !known {
			continue
		}
		w.heard++
		if r.Success {
			w.ok++
			w.promptTok += int64(r.InputTokens)
			w.cachedTok += int64(r.CachedTokens)
			w.predicted += int64(w.o.SystemPromptLength + w.measured[i].resident*w.o.ContextLength)
			w.ideal += int64(w.tokensPerRequest())
		}
		if w.heard == w.shard.Owned(len(w.measured)) {
			w.checkTier()
		}
	}
	return nil
}

// beyondThreshold is the share of what the reported capacity cannot hold
// that must still come from the cache for the tier below it to count as
// exercised.
const beyondThreshold = 0.25

// tierCheck is the verdict on the measured phase: measured cache hits
// against what a cache of the reported size alone would serve (the LRU
// model) and what every tier together could (the whole prompt).
type tierCheck struct {
	Measured, Predicted, Ideal float64 // shares of the prompt tokens
	// Beyond is the share of what the reported capacity could not hold that
	// the cache served anyway: from a tier below it. NaN when undefined.
	Beyond    float64
	Exercised bool
}

func (w *pressure) tier() tierCheck {
	c := tierCheck{Beyond: math.NaN()}
	if w.promptTok > 0 {
		c.Measured = float64(w.cachedTok) / float64(w.promptTok)
	}
	if w.ideal > 0 {
		c.Predicted = float64(w.predicted) / float64(w.ideal)
		c.Ideal = 1
	}
	if w.ideal > w.predicted && w.promptTok > 0 {
		// In prompt tokens: the engine's count, against the plan's.
		scale := float64(w.promptTok) / float64(w.ideal)
		c.Beyond = (float64(w.cachedTok) - float64(w.predicted)*scale) / (float64(w.ideal-w.predicted) * scale)
	}
	c.Exercised = c.Beyond >= beyondThreshold
	return c
}

func (w *pressure) checkTier() {
	if w.ok == 0 {
		w.log.Warn().Msg("Tier check: no measured request succeeded, so the cache tiers cannot be checked")
		return
	}
	c := w.tier()
	perReq := float64(w.cachedTok) / float64(w.ok)
	w.log.Info().Msgf("Tier check: %d of %d prompt tokens served from cache (%.1f%%, %.1f per request); a cache of the reported %s GB alone would serve about %.1f%%",
		w.cachedTok, w.promptTok, 100*c.Measured, perReq, strconv.FormatFloat(w.capGB, 'f', -1, 64), 100*c.Predicted)
	switch {
	case w.cachedTok == 0:
		msg := "Tier check: the engine reported no cached tokens (usage.prompt_tokens_details.cached_tokens) over the measured phase: either it reports none, or nothing was reused"
		if w.o.DocsPerRequest > 1 {
			msg += "; with --ktp-docs-per-request above 1 only an engine that blends (CacheBlend) reuses documents: use one that does, or --ktp-docs-per-request 1"
		}
		w.log.Warn().Msg(msg)
	case math.IsNaN(c.Beyond):
		w.log.Warn().Msg("Tier check: the reported cache holds every document read, so no tier below it was needed: raise --ktp-overflow-factor or --ktp-pool-size")
	case c.Exercised:
		w.log.Info().Msgf("Tier check: passed: the cache served %.0f%% of what the reported capacity could not hold, so a tier below it was exercised", 100*c.Beyond)
	default:
		msg := fmt.Sprintf("Tier check: not exercised: the cache served %.0f%% of what the reported capacity could not hold (at least %.0f%% expected from a tier below it): the lower tier is off, too small, or not read",
			100*max(c.Beyond, 0), 100*beyondThreshold)
		if w.o.DocsPerRequest > 1 {
			msg += "; with --ktp-docs-per-request above 1 only an engine that blends (CacheBlend) reuses documents, and an engine may count blended tokens apart from cached_tokens (the built-in engine does: lmbench_sim:kv_blend_hit_tokens_total): read its blend counters before concluding"
		}
		w.log.Warn().Msg(msg)
	}
}
