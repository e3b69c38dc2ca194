package stats

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lmbench/lmbench/core/failure"
	"github.com/lmbench/lmbench/core/record"
)

// DefaultPercentiles is --percentiles' default: the original's P50, P90
// and P99 (P99 is also vLLM's default).
const DefaultPercentiles = "50,90,99"

// ParsePercentiles reads a comma list of percentiles ("50,90,99.9"): each
// a number in (0, 100]; the result is ascending, without repeats.
func ParsePercentiles(s string) ([]float64, error) {
	var out []float64
	for _, field := range strings.Split(s, ",") {
		field = strings.TrimSpace(field)
		if field == "" {
			return nil, fmt.Errorf("want a comma list of percentiles in (0, 100] like %s, got %q", DefaultPercentiles, s)
		}
		p, err := strconv.ParseFloat(field, 64)
		if err != nil || math.IsNaN(p) {
			return nil, fmt.Errorf("%q is not a number (in %q)", field, s)
		}
		if p <= 0 || p > 100 {
			return nil, fmt.Errorf("each percentile must be in (0, 100], got %s (in %q)", field, s)
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// FormatPercentiles writes percentiles the way ParsePercentiles reads them.
func FormatPercentiles(ps []float64) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = FormatPercentile(p)
	}
	return strings.Join(s, ",")
}

// FormatPercentile is p as the summary names it: "50", "99.9".
func FormatPercentile(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) }

// Quantile is one percentile of a Dist: P in (0, 100] and its value.
type Quantile struct{ P, Value float64 }

// Dist is one metric over its values (vLLM's view): how many, their mean,
// population standard deviation (numpy's np.std), median and the
// configured percentiles (numpy's linear method). With no values it is
// not defined: N is 0 and every figure NaN.
type Dist struct {
	N                 int
	Mean, Std, Median float64
	Percentiles       []Quantile
}

// Defined reports whether the metric had any value.
func (d Dist) Defined() bool { return d.N > 0 }

// describe computes a Dist from ascending values.
func describe(sorted []float64, ps []float64) Dist {
	d := Dist{N: len(sorted), Mean: math.NaN(), Std: math.NaN(), Median: math.NaN(), Percentiles: make([]Quantile, len(ps))}
	for i, p := range ps {
		d.Percentiles[i] = Quantile{P: p, Value: math.NaN()}
	}
	if d.N == 0 {
		return d
	}
	var sum float64
	for _, v := range sorted {
		sum += v
	}
	d.Mean = sum / float64(d.N)
	var sq float64
	for _, v := range sorted {
		sq += (v - d.Mean) * (v - d.Mean)
	}
	d.Std = math.Sqrt(sq / float64(d.N))
	d.Median = Percentile(sorted, 50)
	for i, p := range ps {
		d.Percentiles[i].Value = Percentile(sorted, p)
	}
	return d
}

// Cache is what the engine reported about its prefix cache for one phase:
// every request of the phase, failed ones included (they usually report
// no usage).
type Cache struct {
	Requests     int64
	PromptTokens int64 // usage.prompt_tokens
	CachedTokens int64 // usage.prompt_tokens_details.cached_tokens
	// RequestsWithCache counts the requests with any cached tokens.
	RequestsWithCache int64
}

// Ratio is CachedTokens/PromptTokens; NaN without prompt tokens.
func (c Cache) Ratio() float64 {
	if c.PromptTokens == 0 {
		return math.NaN()
	}
	return float64(c.CachedTokens) / float64(c.PromptTokens)
}

func (c *Cache) add(r *record.Record) {
	c.Requests++
	c.PromptTokens += r.InputTokens
	c.CachedTokens += r.CachedTokens
	if r.CachedTokens > 0 {
		c.RequestsWithCache++
	}
}

// Options tune a Builder.
type Options struct {
	// ITLBudget is how many pooled inter-token gaps are kept exactly;
	// past it the ITL percentiles come from a sketch. 0 means
	// DefaultITLBudget.
	ITLBudget int
}

// DefaultITLBudget keeps 4Mi gaps exactly (32 MiB): a run of 32,000
// answers of 128 chunks.
const DefaultITLBudget = 4 << 20

// Builder turns a run's records into its final numbers: the original's
// (through a Collector, with its formulas), vLLM's metrics (TTFT, TPOT,
// pooled ITL, E2E), TTFT and E2E from the schedule, and the cache block.
// Feed it every record of the run, both phases, with Add; then call
// Final once. Everything is exact except the ITL percentiles past
// Options.ITLBudget gaps. A Builder is not safe for concurrent use.
type Builder struct {
	c                   *Collector
	tpotMs              []float64 // successful with >= 2 output tokens
	ttftDueMs, e2eDueMs []float64 // successful with a scheduled time
	itl                 pooled
	warmup, measure     Cache
	warmupF, measureF   failure.Tally
	prompts             struct{ warmup, measure PromptCheck }
	scores              scoreTally
	hasLag              bool
	load                loadTally
	coarse              int // measured requests with a CoarseStream
}

// NewBuilder starts the measured phase's clock at start, with room for n
// measured requests (0 when unknown).
func NewBuilder(start time.Time, n int, opt Options) *Builder {
	budget := opt.ITLBudget
	if budget <= 0 {
		budget = DefaultITLBudget
	}
	return &Builder{
		c: NewCollectorFor(start, n), tpotMs: make([]float64, 0, n),
		ttftDueMs: make([]float64, 0, n), e2eDueMs: make([]float64, 0, n),
		itl: pooled{budget: budget},
	}
}

// DecodeSpeed is the record's decode speed (the original's formula) where
// it is defined: a successful request with a first token, its finish
// after it and at least 2 output tokens. Otherwise NaN: with one token
// the formula divides one token by the time after it, a noisy number with
// no decode in it.
func DecodeSpeed(r *record.Record) float64 {
	if !r.Success || r.FirstToken.IsZero() || !r.Finish.After(r.FirstToken) || r.OutputTokens < 2 ||
		math.IsNaN(r.DecodeSpeed) || math.IsInf(r.DecodeSpeed, 0) {
		return math.NaN()
	}
	return r.DecodeSpeed
}

// Add takes one record. Warmup records count only in the cache block.
func (b *Builder) Add(r *record.Record) {
	b.addPrompt(r)
	b.addScore(r)
	if r.Phase != record.Measure {
		b.warmup.add(r)
		b.warmupF.Add(r.Success, r.RequestID, r.Error)
		return
	}
	b.measure.add(r)
	b.measureF.Add(r.Success, r.RequestID, r.Error)
	b.load.add(r)
	lag := math.NaN()
	if r.ExplicitSchedule && !r.Submit.IsZero() && !r.Scheduled.IsZero() {
		lag = r.Submit.Sub(r.Scheduled).Seconds()
		b.hasLag = true
	}
	coarse := CoarseStream(r)
	decode, itl := DecodeSpeed(r), orZero(r.ITL)
	if coarse { // n/a, not millions of tokens per second
		decode, itl = math.NaN(), 0
		b.coarse++
	}
	b.c.Add(Sample{
		Success: r.Success, TTFT: r.TTFT, Latency: r.Latency, DecodeSpeed: decode,
		ITL: itl, DispatchLag: lag, InputTokens: int(r.InputTokens), OutputTokens: int(r.OutputTokens),
		Finish: r.Finish,
	})
	if !r.Success {
		return
	}
	if tpot, ok := r.TPOT(); ok && !coarse {
		b.tpotMs = append(b.tpotMs, tpot*1000)
	}
	if !r.Scheduled.IsZero() {
		if !r.FirstToken.IsZero() {
			b.ttftDueMs = append(b.ttftDueMs, ms(r.FirstToken.Sub(r.Scheduled)))
		}
		if !r.Finish.IsZero() {
			b.e2eDueMs = append(b.e2eDueMs, ms(r.Finish.Sub(r.Scheduled)))
		}
	}
	for i := 1; i < len(r.ChunkOffsetsUs) && !coarse; i++ {
		b.itl.add(float64(r.ChunkOffsetsUs[i]-r.ChunkOffsetsUs[i-1]) / 1000)
	}
}

// HasDispatchLag reports whether a measured request had an explicit
// schedule, so dispatch lag is defined.
func (b *Builder) HasDispatchLag() bool { return b.hasLag }

// Final computes the summary with percentiles ps (ascending, in
// (0, 100], as ParsePercentiles returns them; nil means
// DefaultPercentiles). It sorts the kept values in place: call it once.
func (b *Builder) Final(ps []float64) Final {
	if ps == nil {
		ps, _ = ParsePercentiles(DefaultPercentiles)
	}
	f := b.c.Final()
	f.Percentiles = slices.Clone(ps)
	// The Collector's sorted TTFTs and latencies of the successful
	// requests are vLLM's TTFT and E2E: the same values, not a copy.
	f.TTFT = describe(b.c.d.ttftMs, ps)
	f.E2E = describe(b.c.d.latencyMs, ps)
	for _, v := range [][]float64{b.tpotMs, b.ttftDueMs, b.e2eDueMs} {
		slices.Sort(v)
	}
	f.TPOT = describe(b.tpotMs, ps)
	f.TTFTFromScheduled = describe(b.ttftDueMs, ps)
	f.E2EFromScheduled = describe(b.e2eDueMs, ps)
	f.ITL, f.ITLMethod = b.itl.describe(ps)
	f.Cache.Warmup, f.Cache.Measure = b.warmup, b.measure
	f.Failures.Warmup, f.Failures.Measure = b.warmupF.Breakdown(), b.measureF.Breakdown()
	f.Prompts.Warmup, f.Prompts.Measure = b.prompts.warmup, b.prompts.measure
	f.CoarseStreams = b.coarse
	b.Judge(&f, 0, SLO{}) // no requested rate, no SLO, unless the caller judges again
	return f
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// orZero maps a journal's null (NaN) per-request ITL to the original's
// "none", 0.
func orZero(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}
