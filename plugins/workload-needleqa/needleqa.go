package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
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

// Variants (Options.Variant).
const (
	variantPrefix   = "prefix"
	variantPermuted = "permuted"
)

// Score names (Definition.ScoreKeys): exact is 1 when the answer, trimmed
// of spaces and a final full stop, is the fact's value; contains is 1
// when the value appears anywhere in it.
const (
	scoreExact    = "exact"
	scoreContains = "contains"
)

// vocabSize is the filler's vocabulary: enough distinct words that no two
// stretches of filler repeat, so a cache can only reuse what it saw.
const vocabSize = 4096

// factWords is the length of a fact sentence in words ("The access code
// of vault 17 is 4832.").
const factWords = 8

// Validate checks the options, all at once.
func (o Options) Validate() error {
	var errs []error
	if _, err := parseDepths(o.Depth); err != nil {
		errs = append(errs, option.Errorf("depth", "%v", err))
	}
	if need := 2 + o.FactsPerDocument*(factWords+1); o.DocumentLength < need {
		errs = append(errs, option.Errorf("document-length",
			"%d tokens cannot hold %d facts of %d tokens and the document's header: at least %d expected", o.DocumentLength, o.FactsPerDocument, factWords, need))
	}
	if o.Variant != variantPrefix && o.Variant != variantPermuted {
		errs = append(errs, option.Errorf("variant", "expected prefix or permuted, got %q", o.Variant))
	}
	if o.Variant == variantPermuted && o.Documents < o.DocsPerPrompt {
		errs = append(errs, option.Errorf("documents", "the permuted variant puts %d documents (--nqa-documents-per-prompt) in each prompt: at least that many expected, got %d", o.DocsPerPrompt, o.Documents))
	}
	return errors.Join(errs...)
}

// parseDepths reads the comma-separated depths, each in [0, 1].
func parseDepths(s string) ([]float64, error) {
	var out []float64
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		d, err := strconv.ParseFloat(f, 64)
		if err != nil || d < 0 || d > 1 {
			return nil, fmt.Errorf("expected fractions between 0 and 1 separated by commas, got %q", s)
		}
		out = append(out, d)
	}
	return out, nil
}

// fact is one planted fact and where it sits.
type fact struct {
	vault int     // the vault's number, unique in the run
	code  string  // the answer
	depth float64 // as asked for (Options.Depth)
}

// sentence is the fact as the document states it.
func (f fact) sentence() string {
	return "The access code of vault " + strconv.Itoa(f.vault) + " is " + f.code + "."
}

// question asks for the fact.
func (f fact) question() string {
	return "\n\nQuestion: What is the access code of vault " + strconv.Itoa(f.vault) + "? Answer with the code only."
}

// question is one measured request: fact Fact of document Doc, asked for
// the Ask-th time.
type question struct{ Doc, Fact, Ask int }

func (q question) id() string { return fmt.Sprintf("d%d_f%d_a%d", q.Doc, q.Fact, q.Ask) }

type needleQA struct {
	o       Options
	log     zerolog.Logger
	content *workload.Registry
	facts   [][]fact // by document
	texts   []string // document d's text
	words   []int    // document d's length in words
	docs    []workload.Segment
	plan    []question
	orders  map[question][]int // a permuted question's documents, in prompt order
	expect  map[string]fact    // by request id: what an answer must say
	limit   int
	warmup  workload.SequentialWarmup
	owned   []int // documents this shard warms
	shard   workload.Shard
	next    int
	ahead   bool
}

func newNeedleQA(o Options, env workload.Env) (workload.Workload, error) {
	limit, err := workload.Divide(env.Shard, "num-inflight-requests", o.InFlight, "in flight")
	if err != nil {
		return nil, err
	}
	if err := o.checkShard(env.Shard); err != nil {
		return nil, err
	}
	depths, _ := parseDepths(o.Depth) // Validate checked them
	w := &needleQA{o: o, log: env.Logger, content: env.Content, limit: limit, shard: env.Shard,
		docs: make([]workload.Segment, o.Documents), orders: map[question][]int{}, expect: map[string]fact{},
		ahead: env.HostHas(protocol.LookAhead)}
	vocab := pseudoword.Vocab(vocabSize, env.Seed)
	for d := range o.Documents {
		facts := plantFacts(d, o.FactsPerDocument, depths, env.Seed)
		text := documentText(d, o.DocumentLength, facts, vocab, env.Seed)
		w.facts, w.texts = append(w.facts, facts), append(w.texts, text)
		w.words = append(w.words, len(strings.Fields(text)))
		if w.owns(d) {
			w.owned = append(w.owned, d)
		}
	}
	w.plan = w.schedule(env.Seed)
	w.warmup = workload.SequentialWarmup{N: len(w.owned), Request: w.warmupRequest, Log: env.Logger, What: "documents sent"}
	return w, nil
}

// plantFacts are document d's facts: vault numbers unique in the run,
// 4-digit codes drawn from the seed, depths in turn.
func plantFacts(d, n int, depths []float64, seed int64) []fact {
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(d)<<1|1))
	out := make([]fact, n)
	for i := range out {
		out[i] = fact{vault: d*n + i + 1, code: strconv.Itoa(1000 + rng.IntN(9000)), depth: depths[i%len(depths)]}
	}
	return out
}

// documentText is document d: "Document d:", then filler words drawn from
// vocab (d's own draw, so documents share nothing) with each fact's
// sentence at its depth, length words in all.
func documentText(d, length int, facts []fact, vocab []string, seed int64) string {
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(d)<<1))
	filler := length - 2 - len(facts)*factWords
	order := sortedFacts(facts)
	var b strings.Builder
	b.WriteString("Document " + strconv.Itoa(d) + ":")
	k := 0
	for i := 0; i <= filler; i++ {
		// A fact goes before the filler word at its depth.
		for k < len(order) && int(facts[order[k]].depth*float64(filler)) == i {
			b.WriteString(" " + facts[order[k]].sentence())
			k++
		}
		if i < filler {
			b.WriteString(" " + vocab[rng.IntN(len(vocab))])
		}
	}
	return b.String()
}

// sortedFacts is the facts' indexes by depth (stable: equal depths keep
// their order).
func sortedFacts(facts []fact) []int {
	idx := make([]int, len(facts))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case facts[a].depth < facts[b].depth:
			return -1
		case facts[a].depth > facts[b].depth:
			return 1
		}
		return 0
	})
	return idx
}

// schedule lists every question this shard asks, ask-major, shuffled with
// Python's Random(seed) as long-doc-qa does, then filtered to the shard;
// the permuted variant draws each question's document order.
func (w *needleQA) schedule(seed int64) []question {
	var all []question
	for a := range w.o.QuestionsPerFact {
		for d := range w.o.Documents {
			for f := range w.o.FactsPerDocument {
				all = append(all, question{Doc: d, Fact: f, Ask: a})
			}
		}
	}
	pyrand.New(seed).Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	var out []question
	for _, q := range all {
		if !w.owns(q.Doc) {
			continue
		}
		out = append(out, q)
		w.expect[q.id()] = w.facts[q.Doc][q.Fact]
		if w.o.Variant == variantPermuted {
			w.orders[q] = w.permutation(q, seed)
		}
	}
	return out
}

// group is the documents a permuted prompt about document d draws from:
// d's run of documents-per-prompt (the last group takes the remainder's
// documents too, so every group is full).
func (w *needleQA) group(d int) []int {
	n, g := w.o.Documents, w.o.DocsPerPrompt
	first := min(d/g, n/g-1) * g
	last := first + g
	if last+g > n {
		last = n
	}
	out := make([]int, 0, last-first)
	for i := first; i < last; i++ {
		out = append(out, i)
	}
	return out
}

// permutation is question q's documents in prompt order: its group of
// documents, shuffled by a draw of the question's own, then turned so the
// asked document is never first (its reuse is never the prompt's prefix).
func (w *needleQA) permutation(q question, seed int64) []int {
	p := w.group(q.Doc)
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(q.Doc)<<32|uint64(q.Fact)<<16|uint64(q.Ask)))
	rng.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
	if p[0] == q.Doc {
		p = append(p[1:], p[0])
	}
	return p
}

func (w *needleQA) Resolved() map[string]any {
	return map[string]any{"num-questions": len(w.plan)}
}

func (w *needleQA) PlannedRequests() int { return len(w.plan) }

func (w *needleQA) Banner() []workload.Field {
	fields := []workload.Field{
		{Label: "Variant", Value: w.o.Variant},
		{Label: "Documents", Value: strconv.Itoa(w.o.Documents) + " of " + strconv.Itoa(w.o.DocumentLength) + " tokens"},
		{Label: "Facts/doc", Value: strconv.Itoa(w.o.FactsPerDocument) + " at depths " + w.o.Depth},
		{Label: "Questions", Value: strconv.Itoa(w.o.Documents * w.o.FactsPerDocument * w.o.QuestionsPerFact)},
		{Label: "Max inflight", Value: strconv.Itoa(w.o.InFlight)},
	}
	if w.o.Variant == variantPermuted {
		fields = append(fields, workload.Field{Label: "Docs/prompt", Value: strconv.Itoa(w.o.DocsPerPrompt)})
	}
	if w.shard.Sharded() {
		fields = append(fields, workload.ShardField(w.shard, "documents", w.o.Documents))
	}
	return fields
}

// document returns a reference to document d, registering it the first
// time.
func (w *needleQA) document(d int) workload.Segment {
	if w.docs[d].Ref == "" {
		w.docs[d] = w.content.Register("doc"+strconv.Itoa(d), w.texts[d])
	}
	return w.docs[d]
}

func (w *needleQA) Step(_ context.Context, in workload.StepInput) (workload.StepOutput, error) {
	return workload.ByPhase(in, w.warmup.Step, w.measureStep)
}

// warmupRequest sends the shard's i-th document alone, so it is cached
// before any question about it.
func (w *needleQA) warmupRequest(i int) workload.Request {
	d := w.owned[i]
	return workload.Chat("warmup_doc"+strconv.Itoa(d), workload.User(w.document(d))).
		WithMaxTokens(1).
		WithExpectedReuse(0, "").
		Tag("doc", strconv.Itoa(d))
}

// lookAheadDepth is how many questions go to a host that holds them for
// a slot, beyond those in flight.
const lookAheadDepth = 8

// measureStep keeps num-inflight-requests questions in flight.
func (w *needleQA) measureStep(in workload.StepInput) workload.StepOutput {
	ahead := 0
	if w.ahead {
		ahead = lookAheadDepth
	}
	n := min(w.limit+ahead-in.InFlight, len(w.plan)-w.next)
	reqs := make([]workload.Request, 0, max(n, 0))
	for range n {
		req := w.questionRequest(w.plan[w.next])
		w.next++
		if w.ahead {
			req = req.WithMaxInFlight(w.limit)
		}
		reqs = append(reqs, req)
	}
	if w.next == len(w.plan) {
		return workload.Send(reqs...).Done()
	}
	if w.ahead {
		return workload.Send(reqs...).WaitForInFlightBelow(w.limit + ahead/2)
	}
	return workload.Send(reqs...).WaitForFinish()
}

// questionRequest is q's request: its document (prefix) or its group in
// q's order (permuted), then the question, with the reuse declared.
func (w *needleQA) questionRequest(q question) workload.Request {
	f := w.facts[q.Doc][q.Fact]
	var segs []workload.Segment
	reuse, tier := w.words[q.Doc], ""
	if order, ok := w.orders[q]; ok {
		reuse, tier = 0, protocol.TierBlend
		for i, d := range order {
			if i > 0 {
				segs = append(segs, workload.Text("\n\n"))
			}
			segs = append(segs, w.document(d))
			reuse += w.words[d]
		}
	} else {
		segs = append(segs, w.document(q.Doc))
	}
	segs = append(segs, workload.Text(f.question()))
	return workload.Chat(q.id(), workload.User(segs...)).
		WithMaxTokens(w.o.MaxTokens).
		WithExpectedReuse(reuse, tier).
		Tag("depth", strconv.FormatFloat(f.depth, 'f', -1, 64)).
		Tag("doc", strconv.Itoa(q.Doc)).
		Tag("fact", strconv.Itoa(q.Fact)).
		Tag("ask", strconv.Itoa(q.Ask))
}

// OnFinished reports failed warmup requests.
func (w *needleQA) OnFinished(_ context.Context, results []workload.Result) error {
	for _, r := range results {
		if r.Phase == workload.Warmup && !r.Success {
			w.log.Warn().Msgf("Warmup %s failed: %s", r.ID, r.Error)
		}
	}
	return nil
}

// Score judges a question's answer against its fact (workload.Scorer);
// warmup requests get none. A failed request scores 0.
func (w *needleQA) Score(r workload.Result) map[string]float64 {
	f, ok := w.expect[r.ID]
	if !ok || r.Phase != workload.Measure {
		return nil
	}
	exact, contains := Judge(r.Text, f.code)
	if !r.Success {
		exact, contains = false, false
	}
	return map[string]float64{scoreExact: b2f(exact), scoreContains: b2f(contains)}
}

// Judge says whether answer is exactly want (spaces, quotes and a final
// full stop aside) and whether it contains want.
func Judge(answer, want string) (exact, contains bool) {
	a := strings.Trim(strings.TrimSpace(answer), `."'`)
	return a == want, strings.Contains(answer, want)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
