package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/pyrand"
	"github.com/lmbench/lmbench/sdk/workload"
)

// questions are asked in turn: query q uses questions[q%len(questions)].
var questions = [...]string{
	"What is this document about?",
	"Summarize the key points.",
	"What is the main topic discussed?",
	"Provide a brief overview.",
}

// maxDocuments bounds the derived document count: beyond it the run could
// not hold its documents in memory anyway.
const maxDocuments = 1 << 24

// Validate checks the options with the original's messages, all at once.
func (o Options) Validate() error {
	var errs []error
	if o.DocumentLength <= 0 {
		errs = append(errs, option.Errorf("document-length", "document_length must be positive, got %d", o.DocumentLength))
	}
	if o.QueryPerDocument < 1 {
		errs = append(errs, option.Errorf("query-per-document", "query_per_document must be >= 1, got %d", o.QueryPerDocument))
	}
	if o.ShufflePolicy != "random" && o.ShufflePolicy != "tile" {
		errs = append(errs, option.Errorf("shuffle-policy", "shuffle_policy must be 'random' or 'tile', got '%s'", o.ShufflePolicy))
	}
	if o.NumInflightRequests < 1 {
		errs = append(errs, option.Errorf("num-inflight-requests", "num_inflight_requests must be >= 1, got %d", o.NumInflightRequests))
	}
	return errors.Join(errs...)
}

// numDocuments sizes the document set to fill the KV cache:
// max(int(kv_cache_volume_gb * tokens_per_gb / document_length), 1), with the
// original's float arithmetic and truncation.
func numDocuments(kvCacheGB float64, tokensPerGB int64, documentLength int) (int, error) {
	f := kvCacheGB * float64(tokensPerGB) / float64(documentLength)
	if math.IsNaN(f) || f >= maxDocuments {
		return 0, option.Errorf("document-length",
			"kv_cache_volume_gb * tokens_per_gb / document_length = %g documents, more than the %d supported; raise it or lower the KV cache volume",
			f, maxDocuments)
	}
	if f < 1 {
		return 1, nil
	}
	return int(f), nil
}

// pair is one measured request: document Doc, question Query.
type pair struct{ Doc, Query int }

// schedule lists the (doc, query) pairs query-major (every document for
// query 0, then query 1, …); "random" shuffles them with Python's
// Random(seed).shuffle, so the order equals the original's.
func schedule(numDocs, queries int, policy string, seed int64) []pair {
	out := make([]pair, 0, numDocs*queries)
	for q := range queries {
		for d := range numDocs {
			out = append(out, pair{Doc: d, Query: q})
		}
	}
	if policy == "random" {
		pyrand.New(seed).Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	}
	return out
}

// fillerBody is `words` copies of "hi" joined by spaces (at least one).
func fillerBody(words int) string {
	words = max(words, 1)
	return strings.Repeat("hi ", words-1) + "hi"
}

// documentText is document d: a distinct header in front of a body shared
// by all documents, so documents share no prefix with each other.
func documentText(d int, body string) string {
	return "Document " + strconv.Itoa(d) + ": " + body
}

// questionText follows the document in a measured request.
func questionText(q int) string {
	return fmt.Sprintf("\n\nQuestion %d: %s", q, questions[q%len(questions)])
}

type longDocQA struct {
	o         Options
	log       zerolog.Logger
	content   *workload.Registry
	numDocs   int
	body      string
	docs      []workload.Segment // registered lazily; zero until first use
	schedule  []pair
	bodyWords int        // words of the document body, once counted
	exact     *exactDocs // lengths in the engine's tokens; nil: in words, as the original
	shard     workload.Shard
	owned     []int // the documents this shard sends (all when unsharded)
	limit     int   // the shard's part of num-inflight-requests
	warmup    workload.SequentialWarmup
	next      int // index into schedule
	// lookAhead: the host holds a request for a slot (WithMaxInFlight).
	lookAhead bool
}

func newLongDocQA(o Options, env workload.Env) (workload.Workload, error) {
	if err := o.checkShard(env.Shard); err != nil {
		return nil, err // an older host skips PrecheckShard
	}
	var exact *exactDocs
	var n int
	var err error
	if env.Tokenizer != nil {
		exact, n, err = buildExact(o, env)
	} else {
		n, err = numDocuments(env.KVCacheVolumeGB, env.TokensPerGB, o.DocumentLength)
		if err == nil {
			err = checkDocuments(env.Shard, n)
		}
	}
	if err != nil {
		return nil, err
	}
	var owned []int
	for d := range n {
		if env.Shard.Owns(d) {
			owned = append(owned, d)
		}
	}
	// The unsharded order, filtered to the shard's documents.
	plan := slices.DeleteFunc(schedule(n, o.QueryPerDocument, o.ShufflePolicy, env.Seed),
		func(p pair) bool { return !env.Shard.Owns(p.Doc) })
	w := &longDocQA{
		shard:     env.Shard,
		owned:     owned,
		limit:     env.Shard.Share(o.NumInflightRequests),
		exact:     exact,
		o:         o,
		log:       env.Logger,
		content:   env.Content,
		numDocs:   n,
		body:      fillerBody(o.DocumentLength - 10),
		docs:      make([]workload.Segment, n),
		schedule:  plan,
		lookAhead: env.HostHas(protocol.LookAhead),
	}
	// The documents one at a time, each once the previous one finished,
	// so every document is in the cache before measuring starts.
	w.warmup = workload.SequentialWarmup{N: len(owned), Request: w.warmupRequest, Log: env.Logger, What: "documents sent"}
	return w, nil
}

func (w *longDocQA) Resolved() map[string]any { return map[string]any{"num-documents": w.numDocs} }

func (w *longDocQA) PlannedRequests() int { return len(w.schedule) }

func (w *longDocQA) Banner() []workload.Field {
	fields := []workload.Field{
		{Label: "Documents", Value: strconv.Itoa(w.numDocs)},
		{Label: "Queries/doc", Value: strconv.Itoa(w.o.QueryPerDocument)},
		{Label: "Total requests", Value: strconv.Itoa(w.numDocs * w.o.QueryPerDocument)},
		{Label: "Document length", Value: strconv.Itoa(w.o.DocumentLength) + " tokens"},
		{Label: "Max inflight", Value: strconv.Itoa(w.o.NumInflightRequests)},
		{Label: "Shuffle policy", Value: w.o.ShufflePolicy},
	}
	if w.exact != nil {
		fields = append(fields, w.exact.banner(w.o.DocumentLength)...)
	}
	if w.shard.Sharded() {
		fields = append(fields, workload.ShardField(w.shard, "documents", w.numDocs),
			workload.Field{Label: "Shard's max inflight", Value: strconv.Itoa(w.limit)})
	}
	return fields
}

// reusablePrefix is what a question can find cached: its document, in
// the engine's tokens when lengths are exact (the template's few tokens
// before it are left out: the host aligns the count down to a block), else
// in whitespace words: "Document", its number followed by a colon, then
// the body.
func (w *longDocQA) reusablePrefix() int {
	if w.exact != nil {
		return w.o.DocumentLength
	}
	if w.bodyWords == 0 {
		w.bodyWords = len(strings.Fields(w.body))
	}
	return 2 + w.bodyWords
}

// document returns a reference to document d, registering its text the
// first time, so each document crosses the process boundary once, with the
// first request that needs it.
func (w *longDocQA) document(d int) workload.Segment {
	if w.docs[d].Ref == "" {
		text := documentText(d, w.body)
		if w.exact != nil {
			text = w.exact.texts[d]
		}
		w.docs[d] = w.content.Register("doc"+strconv.Itoa(d), text)
	}
	return w.docs[d]
}

func (w *longDocQA) Step(_ context.Context, in workload.StepInput) (workload.StepOutput, error) {
	return workload.ByPhase(in, w.warmup.Step, w.measureStep)
}

// warmupRequest is the warmup's i-th request: the shard's i-th document.
func (w *longDocQA) warmupRequest(i int) workload.Request {
	d := w.owned[i]
	req := workload.Chat("warmup_doc"+strconv.Itoa(d), workload.User(w.document(d))).
		WithMaxTokens(1).
		WithExpectedReuse(0, ""). // each document's first request is cold
		Tag("doc", strconv.Itoa(d))
	if w.exact != nil {
		req = req.WithPromptTokens(w.exact.warm[d])
	}
	return req
}

// lookAheadDepth is how many requests long-doc-qa hands over beyond those
// in flight, with a host that holds them for a slot; it is stepped again
// once half of them have gone out.
const lookAheadDepth = 8

// measureStep keeps up to num-inflight-requests requests in flight. With
// a host that holds requests for a slot, it also hands over the next
// lookAheadDepth ahead of time, so each goes out the moment a request
// finishes, not a plugin round trip later, and one Step refills several:
// the order and the times requests are sent stay the same.
func (w *longDocQA) measureStep(in workload.StepInput) workload.StepOutput {
	limit := w.limit
	ahead := 0
	if w.lookAhead {
		ahead = lookAheadDepth
	}
	n := min(limit+ahead-in.InFlight, len(w.schedule)-w.next)
	reqs := make([]workload.Request, 0, max(n, 0))
	for range n {
		p := w.schedule[w.next]
		w.next++
		id := fmt.Sprintf("doc%d_q%d", p.Doc, p.Query)
		w.log.Debug().Msgf("Dispatched request %s (doc %d, query %d)", id, p.Doc, p.Query)
		req := workload.Chat(id, workload.User(w.document(p.Doc), workload.Text(questionText(p.Query)))).
			// The document, warmed, is the reusable prefix (the host
			// aligns it to blocks).
			WithExpectedReuse(w.reusablePrefix(), "").
			Tag("doc", strconv.Itoa(p.Doc)).
			Tag("query", strconv.Itoa(p.Query))
		if w.lookAhead {
			req = req.WithMaxInFlight(limit)
		}
		if w.exact != nil {
			req = req.WithPromptTokens(w.exact.asked[p.Doc][p.Query])
		}
		reqs = append(reqs, req)
	}
	if w.next == len(w.schedule) {
		return workload.Send(reqs...).Done() // the host waits for what is in flight
	}
	if w.lookAhead {
		return workload.Send(reqs...).WaitForInFlightBelow(limit + ahead/2)
	}
	return workload.Send(reqs...).WaitForFinish()
}

// OnFinished reports failed warmup requests; measured results need nothing.
func (w *longDocQA) OnFinished(_ context.Context, results []workload.Result) error {
	for _, r := range results {
		if r.Phase == workload.Warmup && !r.Success {
			w.log.Warn().Msgf("Warmup %s failed: %s", r.ID, r.Error)
		}
	}
	return nil
}
