package stats

import (
	"math"
	"slices"
	"sync"
	"time"

	"github.com/lmbench/lmbench/core/failure"
)

// Sample is one finished request as the collector sees it.
type Sample struct {
	Success bool
	TTFT    float64 // seconds; ignored unless Success
	Latency float64 // seconds
	// DecodeSpeed is in tokens per second; NaN where it is not defined
	// (see DecodeSpeed), and then left out of the decode figures.
	DecodeSpeed float64
	ITL         float64 // seconds, mean inter-token latency of the request; 0 = none
	// DispatchLag is submit time minus scheduled time in seconds (negative
	// when sent early). NaN means the request had no schedule. Note that
	// the zero value, 0, counts as "sent exactly on time".
	DispatchLag  float64
	InputTokens  int
	OutputTokens int
	Finish       time.Time
}

// Aggregated are the live numbers, in the original's field order.
type Aggregated struct {
	TotalRequests        int
	SuccessfulRequests   int
	FailedRequests       int
	ElapsedTime          float64 // seconds
	MeanTTFTMs           float64
	MeanDecodeSpeed      float64
	MeanRequestLatencyMs float64
	InputThroughput      float64 // tokens per second
	OutputThroughput     float64
	TotalInputTokens     int
	TotalOutputTokens    int
}

// Final adds percentiles to Aggregated. TTFT, decode-speed and latency
// figures cover successful requests (decode speed only those where it is
// defined); ITL covers successful requests with ITL > 0; dispatch lag
// covers every request with a schedule. A figure with nothing to cover is
// NaN ("n/a"), never 0: the means of Aggregated included (the running
// numbers of Live say 0 there).
//
// The fields after the original's are lmbench's additions, filled by a
// Builder (a Collector leaves them zero: N 0, not defined).
type Final struct {
	Aggregated
	P50TTFTMs, P90TTFTMs, P99TTFTMs                               float64
	P50DecodeSpeed, P90DecodeSpeed, P99DecodeSpeed                float64
	P50RequestLatencyMs, P90RequestLatencyMs, P99RequestLatencyMs float64
	MeanITLMs, P50ITLMs, P90ITLMs, P99ITLMs                       float64
	MeanDispatchLagMs, P50DispatchLagMs, P99DispatchLagMs         float64

	// Percentiles are those every Dist reports, ascending.
	Percentiles []float64
	// vLLM's metrics, in milliseconds, over successful requests: TTFT,
	// TPOT (requests with at least 2 output tokens), ITL (the pooled gaps
	// between consecutive chunks of every request) and E2E latency.
	TTFT, TPOT, ITL, E2E Dist
	// ITLMethod says how ITL's percentiles were computed: ITLExact, or
	// ITLSketch past the Builder's budget of gaps.
	ITLMethod string
	// TTFT and E2E from the request's scheduled (due) time rather than
	// its submit time, over successful requests with one: the difference
	// is the time the request waited in the client.
	TTFTFromScheduled, E2EFromScheduled Dist
	// Cache is the engine's prefix-cache report, per phase.
	Cache struct{ Warmup, Measure Cache }
	// Failures are each phase's failed requests by kind.
	Failures struct{ Warmup, Measure failure.Breakdown }
	// Prompts sets stated prompt lengths beside the engine's, per phase.
	Prompts struct{ Warmup, Measure PromptCheck }
	// CoarseStreams counts the measured requests whose tokens arrived in
	// far fewer chunks than their usage counts (CoarseStream): their
	// decode speed, TPOT and ITL are left out.
	CoarseStreams int
	// Scores are the workload's scores of the measured answers; nil when
	// it scored none (set from the run's tag keys: Builder.Scores).
	Scores *Scores
	// Load and Goodput are filled in by Builder.Judge.
	Load    Load
	Goodput Goodput
}

// Collector accumulates samples. It is safe for concurrent use.
type Collector struct {
	mu sync.Mutex
	d  data
}

// data is what a Collector keeps; a Live uses only its counters and sums.
type data struct {
	start      time.Time
	lastFinish time.Time

	successful, failed int
	decoded            int // successful with a defined decode speed
	inputTokens        int
	outputTokens       int
	sumTTFT            float64 // seconds, successful only
	sumDecode          float64
	sumLatency         float64 // seconds, successful only
	sumITL             float64 // seconds
	sumLag             float64 // seconds

	ttftMs    []float64 // successful only
	decode    []float64 // successful with a defined decode speed
	latencyMs []float64 // successful only
	itlMs     []float64 // successful with ITL > 0
	lagMs     []float64 // every request with a schedule
}

// NewCollector returns an empty collector whose clock starts at start.
func NewCollector(start time.Time) *Collector {
	return &Collector{d: data{start: start}}
}

// NewCollectorFor is NewCollector with room for n samples, so collecting
// a known number of them (a journal's, at the end of a run) never
// reallocates.
func NewCollectorFor(start time.Time, n int) *Collector {
	c := NewCollector(start)
	c.d.ttftMs, c.d.decode, c.d.latencyMs = make([]float64, 0, n), make([]float64, 0, n), make([]float64, 0, n)
	c.d.itlMs, c.d.lagMs = make([]float64, 0, n), make([]float64, 0, n)
	return c
}

// Add records one finished request. Token counts are added for failed
// requests too, as in the original (spec Q7).
func (c *Collector) Add(s Sample) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := &c.d
	d.count(s)
	if !math.IsNaN(s.DispatchLag) {
		d.lagMs = append(d.lagMs, s.DispatchLag*1000)
	}
	if !s.Success {
		return
	}
	d.ttftMs = append(d.ttftMs, s.TTFT*1000)
	if !math.IsNaN(s.DecodeSpeed) {
		d.decode = append(d.decode, s.DecodeSpeed)
	}
	d.latencyMs = append(d.latencyMs, s.Latency*1000)
	if s.ITL > 0 {
		d.itlMs = append(d.itlMs, s.ITL*1000)
	}
}

// count adds s to the counters and sums (what Live keeps). Token counts
// are added for failed requests too, as in the original (spec Q7).
func (d *data) count(s Sample) {
	d.inputTokens += s.InputTokens
	d.outputTokens += s.OutputTokens
	if s.Finish.After(d.lastFinish) {
		d.lastFinish = s.Finish
	}
	if !math.IsNaN(s.DispatchLag) {
		d.sumLag += s.DispatchLag
	}
	if !s.Success {
		d.failed++
		return
	}
	d.successful++
	d.sumTTFT += s.TTFT
	if !math.IsNaN(s.DecodeSpeed) {
		d.decoded++
		d.sumDecode += s.DecodeSpeed
	}
	d.sumLatency += s.Latency
	if s.ITL > 0 {
		d.sumITL += s.ITL
	}
}

// Final returns the summary. Its clock stops at the latest Finish among the
// samples (0 elapsed without samples), not at the time of the call, so
// calling Final twice, or later, gives identical numbers (fixing the
// original's #4981).
func (c *Collector) Final() Final {
	c.mu.Lock()
	d := &c.d
	elapsed := 0.0
	if d.lastFinish.After(d.start) {
		elapsed = d.lastFinish.Sub(d.start).Seconds()
	}
	defer c.mu.Unlock()
	f := Final{Aggregated: d.aggregated(elapsed)}
	// Sorted in place, not copied: a long run's samples are the most
	// memory the host holds at its end. (A later Add appends to sorted
	// data; a later Final sorts again.)
	ttft, decode, latency, itl, lag := d.ttftMs, d.decode, d.latencyMs, d.itlMs, d.lagMs
	f.MeanITLMs, f.MeanDispatchLagMs = math.NaN(), math.NaN()
	if len(itl) > 0 {
		f.MeanITLMs = d.sumITL / float64(len(itl)) * 1000
	}
	if len(lag) > 0 {
		f.MeanDispatchLagMs = d.sumLag / float64(len(lag)) * 1000
	}
	if d.successful == 0 {
		f.MeanTTFTMs, f.MeanRequestLatencyMs = math.NaN(), math.NaN()
	}
	if d.decoded == 0 {
		f.MeanDecodeSpeed = math.NaN()
	}
	for _, v := range [][]float64{ttft, decode, latency, itl, lag} {
		slices.Sort(v)
	}
	f.P50TTFTMs, f.P90TTFTMs, f.P99TTFTMs = pct(ttft, 50), pct(ttft, 90), pct(ttft, 99)
	f.P50DecodeSpeed, f.P90DecodeSpeed, f.P99DecodeSpeed = pct(decode, 50), pct(decode, 90), pct(decode, 99)
	f.P50RequestLatencyMs, f.P90RequestLatencyMs, f.P99RequestLatencyMs = pct(latency, 50), pct(latency, 90), pct(latency, 99)
	f.P50ITLMs, f.P90ITLMs, f.P99ITLMs = pct(itl, 50), pct(itl, 90), pct(itl, 99)
	f.P50DispatchLagMs, f.P99DispatchLagMs = pct(lag, 50), pct(lag, 99)
	return f
}

// pct is Percentile, NaN (not defined) without values.
func pct(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	return Percentile(sorted, p)
}

// aggregated computes the spec's formulas, 0 for a mean over nothing (the
// live display's "none yet"; Final says NaN there); the mutex of the
// Collector or Live owning d must be held.
func (d *data) aggregated(elapsed float64) Aggregated {
	n := float64(max(d.successful, 1))
	tput := max(elapsed, 1e-9)
	return Aggregated{
		TotalRequests:        d.successful + d.failed,
		SuccessfulRequests:   d.successful,
		FailedRequests:       d.failed,
		ElapsedTime:          elapsed,
		MeanTTFTMs:           d.sumTTFT / n * 1000,
		MeanDecodeSpeed:      d.sumDecode / float64(max(d.decoded, 1)),
		MeanRequestLatencyMs: d.sumLatency / n * 1000,
		InputThroughput:      float64(d.inputTokens) / tput,
		OutputThroughput:     float64(d.outputTokens) / tput,
		TotalInputTokens:     d.inputTokens,
		TotalOutputTokens:    d.outputTokens,
	}
}

// Percentile is numpy's default ("linear") percentile of an ascending
// slice: 0 for an empty slice; otherwise with k = (n-1)·p/100, f = ⌊k⌋ and
// c = min(f+1, n-1) it is v[f] + (k-f)·(v[c]-v[f]). p is clamped to
// [0, 100]; a NaN p gives NaN.
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	switch {
	case n == 0:
		return 0
	case n == 1:
		return sorted[0]
	case math.IsNaN(p):
		return math.NaN()
	}
	p = min(max(p, 0), 100)
	k := float64(n-1) * p / 100
	f := int(math.Floor(k))
	c := min(f+1, n-1)
	return sorted[f] + (k-float64(f))*(sorted[c]-sorted[f])
}
