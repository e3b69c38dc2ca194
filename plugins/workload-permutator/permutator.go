package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/pseudoword"
	"github.com/lmbench/lmbench/sdk/pyrand"
	"github.com/lmbench/lmbench/sdk/workload"
)

// vocabSize is the size of the pseudo-word pool contexts draw from; the
// original hard-codes it (no flag).
const vocabSize = 8000

// maxPermutations bounds the permutations one run sends. The original
// builds every request's full text up front, so it runs out of memory long
// before this; a million long-context requests is days of benchmarking.
const maxPermutations = 1 << 20

// maxPromptTokens bounds the words of one request's user message (and of
// the system prompt): 16M pseudo-words is far past any model's context,
// and a typo beyond it would otherwise end in an out-of-memory crash of
// the plugin instead of an error naming the option.
const maxPromptTokens = 1 << 24

// systemWords are the words the system prompt is drawn from.
var systemWords = []string{
	"the", "system", "will", "process", "your", "request",
	"and", "provide", "an", "answer", "based", "on", "context",
}

// warmupSystem and warmupUser make the single dummy warmup request.
const warmupSystem = "You are a helpful assistant."

var warmupUser = strings.TrimSuffix(strings.Repeat("warmup ", 500), " ")

// Validate checks the options with the original's messages, all at once.
func (o Options) Validate() error { return validate(o, vocabSize) }

// validate is the original config's check; vocab is separate because no
// flag sets it.
func validate(o Options, vocab int) error {
	var errs []error
	if o.NumContexts < 1 {
		errs = append(errs, option.Errorf("num-contexts", "num_contexts must be >= 1, got %d", o.NumContexts))
	}
	if o.ContextLength <= 0 {
		errs = append(errs, option.Errorf("context-length", "context_length must be positive, got %d", o.ContextLength))
	} else if o.ContextLength > maxPromptTokens {
		errs = append(errs, option.Errorf("context-length", "context_length must be at most %d tokens, got %d", maxPromptTokens, o.ContextLength))
	} else if o.NumContexts > maxPromptTokens/o.ContextLength {
		errs = append(errs, option.Errorf("num-contexts",
			"num_contexts x context_length = %d x %d tokens in every request, more than the %d supported; lower either",
			o.NumContexts, o.ContextLength, maxPromptTokens))
	}
	if o.SystemPromptLength > maxPromptTokens {
		errs = append(errs, option.Errorf("system-prompt-length", "system_prompt_length must be at most %d tokens, got %d", maxPromptTokens, o.SystemPromptLength))
	}
	if o.NumPermutations < 1 {
		errs = append(errs, option.Errorf("num-permutations", "num_permutations must be >= 1, got %d", o.NumPermutations))
	}
	if vocab < 1 {
		errs = append(errs, option.Errorf("", "vocab_size must be >= 1, got %d", vocab))
	}
	if o.NumInflightRequests < 1 {
		errs = append(errs, option.Errorf("num-inflight-requests", "num_inflight_requests must be >= 1, got %d", o.NumInflightRequests))
	}
	return errors.Join(errs...)
}

// systemPrompt is length words drawn with random.Random(seed).choices from
// systemWords, or "" for length 0.
func systemPrompt(length int, seed int64) string {
	if length <= 0 {
		return ""
	}
	return pseudoword.Join(systemWords, pyrand.New(seed).Choices(len(systemWords), length))
}

// contextText is context i: length words of the pool drawn with
// random.Random(seed+1+i).choices, so the contexts diverge.
func contextText(i, length int, pool []string, seed int64) string {
	return pseudoword.Join(pool, pyrand.New(seed+1+int64(i)).Choices(len(pool), length))
}

// factorial returns n! exactly.
func factorial(n int) *big.Int {
	return new(big.Int).MulRange(1, int64(max(n, 1)))
}

// permutations returns the orderings of n contexts to send, following the
// original: all n! in lexicographic order when k >= n!; when n! > 10k,
// distinct orderings drawn with random.Random(seed).sample until there are
// k, returned sorted (not in draw order); otherwise the first k in
// lexicographic order.
func permutations(n, k int, seed int64) [][]int {
	total := factorial(n)
	kk := big.NewInt(int64(k))
	if kk.Cmp(total) >= 0 {
		return lexicographic(n, int(total.Int64()))
	}
	if total.Cmp(new(big.Int).Mul(kk, big.NewInt(10))) > 0 {
		return sampled(n, k, seed)
	}
	return lexicographic(n, k)
}

// lexicographic returns the first k permutations of 0..n-1 in
// lexicographic order (itertools.permutations' order), k <= n!.
func lexicographic(n, k int) [][]int {
	out := make([][]int, 0, k)
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for len(out) < k {
		out = append(out, slices.Clone(p))
		if !nextPermutation(p) {
			break
		}
	}
	return out
}

// nextPermutation advances p to the next permutation in lexicographic
// order and reports whether there was one.
func nextPermutation(p []int) bool {
	i := len(p) - 2
	for i >= 0 && p[i] >= p[i+1] {
		i--
	}
	if i < 0 {
		return false
	}
	j := len(p) - 1
	for p[j] <= p[i] {
		j--
	}
	p[i], p[j] = p[j], p[i]
	slices.Reverse(p[i+1:])
	return true
}

// sampled draws random orderings with one random.Random(seed) (each is
// sample(range(n), n)) into a set until it has k members, and returns them
// sorted lexicographically, as the original does.
func sampled(n, k int, seed int64) [][]int {
	rng := pyrand.New(seed)
	seen := make(map[string]struct{}, k)
	out := make([][]int, 0, k)
	key := make([]byte, 0, 4*n)
	for len(out) < k {
		p := rng.Sample(n, n)
		key = key[:0]
		for _, v := range p {
			key = strconv.AppendInt(key, int64(v), 36)
			key = append(key, ',')
		}
		if _, dup := seen[string(key)]; dup {
			continue
		}
		seen[string(key)] = struct{}{}
		out = append(out, p)
	}
	slices.SortFunc(out, slices.Compare)
	return out
}

// orderTag renders a permutation for the "order" tag, e.g. "2-0-1".
func orderTag(p []int) string {
	var b strings.Builder
	for i, v := range p {
		if i > 0 {
			b.WriteByte('-')
		}
		b.WriteString(strconv.Itoa(v))
	}
	return b.String()
}

type permutator struct {
	o       Options
	seed    int64
	log     zerolog.Logger
	content *workload.Registry
	perms   [][]int
	total   *big.Int // n!

	pool     []string           // built with the first context
	contexts []workload.Segment // registered lazily; zero until first use
	system   workload.Segment   // registered with the first request, if any

	exact  *exactTexts // lengths in the engine's tokens; nil: in words, as the original
	warmup workload.SequentialWarmup
	next   int // index into perms: the next permutation of the whole run

	// shard is the part of a sharded run this process sends: the
	// permutations whose index it owns, with its share of the in-flight
	// requests (inflight).
	shard    protocol.Shard
	inflight int

	// What the engine can hold by now, for the reuse each request
	// declares: the permutations answered (by request id while in
	// flight), the contexts they carried and whether the system prompt
	// was among them.
	sent     map[string]int
	answered [][]int
	seenCtx  []bool
	seenSys  bool
}

func newPermutator(o Options, env workload.Env) (workload.Workload, error) {
	if env.Seed > math.MaxInt64-int64(o.NumContexts) {
		return nil, option.Errorf("", "--seed %d is too large: context i is drawn with seed+1+i, so for %d contexts the seed must be at most %d",
			env.Seed, o.NumContexts, math.MaxInt64-int64(o.NumContexts))
	}
	inflight, err := inflightShare(o, env.Shard)
	if err != nil {
		return nil, err
	}
	total := factorial(o.NumContexts)
	want := big.NewInt(int64(o.NumPermutations))
	if total.Cmp(want) < 0 {
		want = total
	}
	if want.Cmp(big.NewInt(maxPermutations)) > 0 {
		return nil, option.Errorf("num-permutations", "num_permutations = %d would send %s requests, more than the %d supported; lower it", o.NumPermutations, want, maxPermutations)
	}
	w := &permutator{
		o:        o,
		seed:     env.Seed,
		log:      env.Logger,
		content:  env.Content,
		perms:    permutations(o.NumContexts, o.NumPermutations, env.Seed),
		total:    total,
		contexts: make([]workload.Segment, o.NumContexts),
		sent:     map[string]int{},
		seenCtx:  make([]bool, o.NumContexts),
		shard:    env.Shard,
		inflight: inflight,
	}
	if env.Tokenizer != nil {
		e, err := buildExact(o, env, w.perms, env.Shard)
		if err != nil {
			return nil, err
		}
		w.exact = e
	}
	// One dummy request, answered before measuring starts.
	w.warmup = workload.SequentialWarmup{N: 1, Request: w.warmupRequest, Log: env.Logger, What: "dummy request"}
	w.log.Debug().Msgf("LongDocPermutator: %d contexts x %d permutations = %d requests", o.NumContexts, len(w.perms), len(w.perms))
	return w, nil
}

func (w *permutator) Resolved() map[string]any {
	return map[string]any{"permutations": len(w.perms), "vocab-size": vocabSize}
}

func (w *permutator) PlannedRequests() int { return w.shard.Owned(len(w.perms)) }

func (w *permutator) Banner() []workload.Field {
	b := []workload.Field{
		{Label: "Contexts", Value: strconv.Itoa(w.o.NumContexts)},
		{Label: "Context length", Value: strconv.Itoa(w.o.ContextLength) + " tokens"},
		{Label: "System prompt", Value: strconv.Itoa(w.o.SystemPromptLength) + " tokens"},
		{Label: "Permutations", Value: fmt.Sprintf("%d (of %s possible)", len(w.perms), w.total)},
		{Label: "Total requests", Value: strconv.Itoa(len(w.perms))},
		{Label: "Vocab size", Value: strconv.Itoa(vocabSize)},
		{Label: "Max inflight", Value: strconv.Itoa(w.o.NumInflightRequests)},
	}
	if w.shard.Sharded() {
		b = append(b, workload.Field{Label: "Shard", Value: shardBanner(w.shard, len(w.perms), w.inflight, w.o.NumInflightRequests)})
	}
	return b
}

// context returns a reference to context i, registering its text the first
// time, so each context crosses the process boundary once, with the first
// request that needs it.
func (w *permutator) context(i int) workload.Segment {
	if w.contexts[i].Ref == "" {
		if w.exact != nil {
			w.contexts[i] = w.content.Register("ctx"+strconv.Itoa(i), w.exact.contexts[i])
			return w.contexts[i]
		}
		if w.pool == nil {
			w.pool = pseudoword.Vocab(vocabSize, w.seed)
		}
		w.contexts[i] = w.content.Register("ctx"+strconv.Itoa(i), contextText(i, w.o.ContextLength, w.pool, w.seed))
	}
	return w.contexts[i]
}

// messages is the request for permutation p: the system prompt (when its
// length is not 0) and one user message holding the contexts in p's order,
// separated by blank lines.
func (w *permutator) messages(p []int) []workload.Message {
	var msgs []workload.Message
	if w.o.SystemPromptLength > 0 {
		if w.system.Ref == "" {
			text := systemPrompt(w.o.SystemPromptLength, w.seed)
			if w.exact != nil {
				text = w.exact.system
			}
			w.system = w.content.Register("system", text)
		}
		msgs = append(msgs, workload.System(w.system))
	}
	segs := make([]workload.Segment, 0, 2*len(p)-1)
	for k, i := range p {
		if k > 0 {
			segs = append(segs, workload.Text("\n\n"))
		}
		segs = append(segs, w.context(i))
	}
	return append(msgs, workload.User(segs...))
}

func (w *permutator) Step(_ context.Context, in workload.StepInput) (workload.StepOutput, error) {
	return workload.ByPhase(in, w.warmup.Step, w.measureStep)
}

// warmupRequest is the one dummy warmup request, its length stated when
// the workload counts in the engine's tokens.
func (w *permutator) warmupRequest(int) workload.Request {
	req := workload.Chat("warmup_0",
		workload.System(workload.Text(warmupSystem)),
		workload.User(workload.Text(warmupUser)),
	).WithMaxTokens(1)
	if w.exact != nil {
		req = req.WithPromptTokens(w.exact.warmup)
	}
	return req
}

// measureStep keeps up to num-inflight-requests permutations in flight
// (a shard: its share of them, and only the permutations it owns).
func (w *permutator) measureStep(in workload.StepInput) workload.StepOutput {
	w.skip()
	n := min(w.inflight-in.InFlight, w.shard.Owned(len(w.perms))-w.shard.Owned(w.next))
	reqs := make([]workload.Request, 0, max(n, 0))
	for range n {
		p := w.next
		w.next++
		w.skip()
		w.log.Debug().Msgf("Dispatched permutation %d", p)
		req := workload.Chat(fmt.Sprintf("perm%d_req%d", p, p), w.messages(w.perms[p])...).
			Tag("perm", strconv.Itoa(p)).
			Tag("order", orderTag(w.perms[p]))
		if w.exact != nil {
			req = req.WithPromptTokens(w.exact.stated[p])
		}
		req = w.withExpectedReuse(req, w.perms[p], in.InFlight+len(reqs))
		w.sent[req.ID] = p
		reqs = append(reqs, req)
	}
	if w.next == len(w.perms) {
		return workload.Send(reqs...).Done() // the host waits for what is in flight
	}
	return workload.Send(reqs...).WaitForFinish()
}

// skip moves next past the permutations other shards send.
func (w *permutator) skip() {
	for w.next < len(w.perms) && !w.shard.Owns(w.next) {
		w.next++
	}
}

// OnFinished reports a failed warmup; measured results need nothing.
func (w *permutator) OnFinished(_ context.Context, results []workload.Result) error {
	for _, r := range results {
		if r.Phase == workload.Warmup && !r.Success {
			w.log.Warn().Msgf("Warmup request failed: %s", r.Error)
		}
		if p, ok := w.sent[r.ID]; ok {
			delete(w.sent, r.ID)
			if r.Success {
				w.answered = append(w.answered, w.perms[p])
				for _, i := range w.perms[p] {
					w.seenCtx[i] = true
				}
				w.seenSys = true
			}
		}
	}
	return nil
}

// withExpectedReuse declares what permutation p can find cached: the
// system prompt and every context an answered permutation carried. The
// contexts that extend an answered permutation's leading ones are prefix
// reuse; any other seen context can only be reused by blending, and then
// the request targets the blend tier (the host checks the engine blended
// something). Lengths are the options' (the engine's tokens when exact;
// the host aligns down to a block, so the separators and the chat
// template left out only make it a lower bound). With requests of its
// own still in flight a request that finds nothing answered declares
// nothing: the engine may cache what they carry before it arrives.
func (w *permutator) withExpectedReuse(req workload.Request, p []int, inFlight int) workload.Request {
	reusable, prefix := 0, 0
	if w.seenSys {
		reusable, prefix = w.o.SystemPromptLength, w.o.SystemPromptLength
	}
	lead := 0
	for _, a := range w.answered {
		k := 0
		for k < len(p) && k < len(a) && p[k] == a[k] {
			k++
		}
		lead = max(lead, k)
	}
	blended := false
	for k, i := range p {
		if !w.seenCtx[i] {
			continue
		}
		reusable += w.o.ContextLength
		if k < lead {
			prefix += w.o.ContextLength
		} else {
			blended = true
		}
	}
	switch {
	case reusable == 0 && inFlight > 0:
		return req
	case blended:
		return req.WithExpectedReuse(reusable, protocol.TierBlend)
	}
	return req.WithExpectedReuse(prefix, "")
}
