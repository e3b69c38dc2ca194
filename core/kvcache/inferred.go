package kvcache

import (
	"fmt"
	"math"

	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/report"
)

// inferredReuse gathers, for an engine that reports no cached tokens, the
// TTFTs of the requests the workload declared warm (at least a block and
// hitShare of the prompt expected cached) and of those it declared cold,
// by prompt-length bucket. Unlike ttftGain it compares across phases:
// a workload's cold requests are often its warmup (long-doc-qa's first
// request per document) and its warm ones the measured phase.
type inferredReuse struct {
	warm, cold map[int][]float64
	shares     []float64
}

func newInferredReuse() *inferredReuse {
	return &inferredReuse{warm: map[int][]float64{}, cold: map[int][]float64{}}
}

// add takes a finished request and the reuse it declared, aligned to the
// block; nil g takes nothing.
func (g *inferredReuse) add(r *record.Record, expected, blockSize int64) {
	prompt := r.InputTokens
	if prompt <= 0 {
		prompt = r.StatedPromptTokens
	}
	if g == nil || !r.Success || r.TTFT < 0 || prompt <= 0 {
		return
	}
	b := int(math.Floor(math.Log2(float64(prompt)) * bucketsPerDoubling))
	share := float64(expected) / float64(prompt)
	switch {
	case expected == 0:
		g.cold[b] = append(g.cold[b], r.TTFT)
	case expected >= blockSize && share >= hitShare:
		g.warm[b] = append(g.warm[b], r.TTFT)
		g.shares = append(g.shares, share)
	}
}

// result is the warm requests' median TTFT beside the cold ones' over the
// buckets with minGainGroup of each, as ttftGain computes it; nil when no
// bucket has both.
func (g *inferredReuse) result() *report.TTFTGain {
	t := &ttftGain{hits: map[gainKey][]float64{}, cold: map[gainKey][]float64{}, shares: g.shares}
	for b, xs := range g.warm {
		t.hits[gainKey{bucket: b}] = xs
	}
	for b, xs := range g.cold {
		t.cold[gainKey{bucket: b}] = xs
	}
	out := t.result()
	if out != nil {
		out.Inferred = true
	}
	return out
}

// judgeUnreported is the ledger of an engine that reports no cached
// tokens: it says so once, sets no cached figure it could not measure,
// and infers reuse from TTFT (labelled inferred). The engine's counters,
// when it has any, are still set beside the phases.
func judgeUnreported(l *report.CacheLedger, scan scanFunc, workload string, e *report.EngineMetrics, g *inferredReuse,
	declared [2]expectation) error {
	var ph [2]journalCache
	_, err := scan(func(r *record.Record) error {
		if r.Phase == record.Warmup {
			ph[0].requests++
		} else {
			ph[1].requests++
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("cache ledger: reading the journal back: %w", err)
	}
	// What the workload expected stays; what it was measured against
	// (short requests, cold requests with hits) cannot be known.
	for i := range declared {
		declared[i].short, declared[i].coldHits, declared[i].cached = 0, 0, 0
	}
	l.Warmup, l.Measure = ledgerPhase(ph[0], declared[0]), ledgerPhase(ph[1], declared[1])
	if e != nil && e.Available() {
		l.Warmup.Engine, l.Measure.Engine = e.Warmup.PrefixHits, e.Measure.PrefixHits
	}
	if r := l.Reset; r != nil && r.Error != "" {
		l.Verdicts = append(l.Verdicts, fmt.Sprintf("the cache reset (%s) failed: %s", r.When, r.Error))
	}
	l.TTFTGain = g.result()
	l.Verdicts = append(l.Verdicts, unreportedVerdict(l.NotReported, workload, l.TTFTGain))
	return nil
}

// unreportedVerdict says once that the engine reports no cached tokens,
// and what TTFT shows instead.
func unreportedVerdict(engine, workload string, g *report.TTFTGain) string {
	head := engine + " does not report cached tokens: the cached figures are n/a; "
	if g == nil {
		return head + "too few requests " + workload + " declared warm and cold of similar prompt length to infer reuse from TTFT"
	}
	what := "the cache served them"
	if g.Ratio >= report.InferredReuseRatio {
		what = "no reuse is evident"
	}
	return fmt.Sprintf("%sreuse inferred from TTFT: %d requests %s declared warm had a median TTFT of %.1f ms, "+
		"%d declared cold of similar prompt length %.1f ms (ratio %.2f, over %d prompt-length buckets): %s (inferred)",
		head, g.HitRequests, workload, g.HitTTFT, g.ColdRequests, g.ColdTTFT, g.Ratio, g.Buckets, what)
}
