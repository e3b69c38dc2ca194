package analysis

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"

	"github.com/lmbench/lmbench/core/record"
)

// Metric is one headline figure of a run.
type Metric struct {
	Key   string // "ttft_p99"
	Label string // "TTFT P99"
	Unit  string // "ms"
	// HigherIsBetter: throughput; lower is better for latencies.
	HigherIsBetter bool

	field field
	// pct is the percentile, or 0 for the mean.
	pct float64
}

type field int

const (
	fieldTTFT field = iota // ms, successful measured requests
	fieldTPOT              // ms, successful with >= 2 output tokens
	fieldITL               // ms, every gap between chunks, pooled
	fieldE2E               // ms, successful
	numFields

	fieldOutputThroughput  // tok/s, over time windows
	fieldRequestThroughput // successful req/s, over time windows
)

// Headline are the metrics compare reports, in order.
var Headline = []Metric{
	{Key: "ttft_mean", Label: "TTFT mean", Unit: "ms", field: fieldTTFT},
	{Key: "ttft_p50", Label: "TTFT P50", Unit: "ms", field: fieldTTFT, pct: 50},
	{Key: "ttft_p90", Label: "TTFT P90", Unit: "ms", field: fieldTTFT, pct: 90},
	{Key: "ttft_p99", Label: "TTFT P99", Unit: "ms", field: fieldTTFT, pct: 99},
	{Key: "tpot_mean", Label: "TPOT mean", Unit: "ms", field: fieldTPOT},
	{Key: "tpot_p99", Label: "TPOT P99", Unit: "ms", field: fieldTPOT, pct: 99},
	{Key: "itl_p99", Label: "ITL P99 (pooled)", Unit: "ms", field: fieldITL, pct: 99},
	{Key: "e2e_mean", Label: "E2E mean", Unit: "ms", field: fieldE2E},
	{Key: "e2e_p99", Label: "E2E P99", Unit: "ms", field: fieldE2E, pct: 99},
	{Key: "output_throughput", Label: "Output throughput", Unit: "tok/s", HigherIsBetter: true, field: fieldOutputThroughput},
	{Key: "request_throughput", Label: "Request throughput", Unit: "req/s", HigherIsBetter: true, field: fieldRequestThroughput},
}

// Windows is how many equal time windows of the measured phase the
// throughput's interval resamples.
const Windows = 20

// sample is a run's measured requests in the form the metrics need: each
// latency field's values sorted once, with the record each came from, so
// a bootstrap resample is a count per record (no re-sorting); and the
// output tokens and successful requests finished in each time window.
type sample struct {
	records int
	fields  [numFields]sortedValues
	// Throughput: per window, tokens (every measured request's, as the
	// summary counts them) and successful requests finished in it.
	winTokens, winOK []float64
	elapsed          float64 // s
}

// sortedValues are one field's values, ascending, each with its record.
type sortedValues struct {
	v     []float64
	owner []int
}

func (s *sortedValues) add(v float64, owner int) {
	s.v = append(s.v, v)
	s.owner = append(s.owner, owner)
}

func (s *sortedValues) sort() {
	idx := make([]int, len(s.v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case s.v[a] < s.v[b]:
			return -1
		case s.v[a] > s.v[b]:
			return 1
		}
		return 0
	})
	v, o := make([]float64, len(idx)), make([]int, len(idx))
	for i, j := range idx {
		v[i], o[i] = s.v[j], s.owner[j]
	}
	s.v, s.owner = v, o
}

// newSample indexes r's measured records.
func newSample(r *Run) *sample {
	recs := r.Measured()
	s := &sample{records: len(recs), winTokens: make([]float64, Windows), winOK: make([]float64, Windows)}
	start, end := r.MeasureSpan()
	s.elapsed = end.Sub(start).Seconds()
	for i := range recs {
		rec := &recs[i]
		if s.elapsed > 0 && !rec.Finish.IsZero() {
			w := int(rec.Finish.Sub(start).Seconds() / s.elapsed * Windows)
			w = min(max(w, 0), Windows-1)
			s.winTokens[w] += float64(rec.OutputTokens)
			if rec.Success {
				s.winOK[w]++
			}
		}
		if !rec.Success {
			continue
		}
		s.fields[fieldTTFT].add(rec.TTFT*1000, i)
		s.fields[fieldE2E].add(rec.Latency*1000, i)
		if tpot, ok := rec.TPOT(); ok {
			s.fields[fieldTPOT].add(tpot*1000, i)
		}
		for _, g := range gapsMs(rec) {
			s.fields[fieldITL].add(g, i)
		}
	}
	for f := range s.fields {
		s.fields[f].sort()
	}
	return s
}

// gapsMs are a record's inter-chunk gaps in milliseconds (vLLM's ITL).
func gapsMs(r *record.Record) []float64 {
	if len(r.ChunkOffsetsUs) < 2 {
		return nil
	}
	out := make([]float64, 0, len(r.ChunkOffsetsUs)-1)
	for i := 1; i < len(r.ChunkOffsetsUs); i++ {
		out = append(out, float64(r.ChunkOffsetsUs[i]-r.ChunkOffsetsUs[i-1])/1000)
	}
	return out
}

// work is how many values one evaluation of every metric touches.
func (s *sample) work() int {
	n := s.records + Windows
	for f := range s.fields {
		n += len(s.fields[f].v)
	}
	return n
}

// value computes m with each record counted counts[i] times and each time
// window win[k] times (nil: once each, the point estimate).
func (s *sample) value(m Metric, counts, win []int, buf *[]float64) float64 {
	switch m.field {
	case fieldOutputThroughput, fieldRequestThroughput:
		if s.elapsed <= 0 {
			return math.NaN()
		}
		per := s.winTokens
		if m.field == fieldRequestThroughput {
			per = s.winOK
		}
		var sum float64
		for k, v := range per {
			c := 1
			if win != nil {
				c = win[k]
			}
			sum += float64(c) * v
		}
		return sum / s.elapsed
	}
	f := &s.fields[m.field]
	if m.pct == 0 {
		if len(f.v) == 0 {
			return math.NaN()
		}
		if counts == nil {
			return stat.Mean(f.v, nil)
		}
		w := (*buf)[:0]
		var total float64
		for _, o := range f.owner {
			w = append(w, float64(counts[o]))
			total += float64(counts[o])
		}
		*buf = w
		if total == 0 {
			return math.NaN()
		}
		return stat.Mean(f.v, w)
	}
	return weightedPercentile(f.v, f.owner, counts, m.pct)
}

// weightedPercentile is numpy's linear percentile p of the multiset in
// which sorted[j] appears counts[owner[j]] times (once each when counts
// is nil): the values of a resample, without sorting them again. NaN when
// the multiset is empty.
func weightedPercentile(sorted []float64, owner, counts []int, p float64) float64 {
	weight := func(j int) int {
		if counts == nil {
			return 1
		}
		return counts[owner[j]]
	}
	n := 0
	if counts == nil {
		n = len(sorted)
	} else {
		for j := range sorted {
			n += weight(j)
		}
	}
	if n == 0 {
		return math.NaN()
	}
	k := float64(n-1) * p / 100
	lo := int(math.Floor(k))
	hi := min(lo+1, n-1)
	frac := k - float64(lo)
	// Walk the cumulative counts to the order statistics lo and hi.
	var vlo, vhi float64
	seen := 0
	found := false
	for j := range sorted {
		c := weight(j)
		if c == 0 {
			continue
		}
		next := seen + c
		if !found && lo < next {
			vlo, found = sorted[j], true
		}
		if hi < next {
			vhi = sorted[j]
			break
		}
		seen = next
	}
	return vlo + frac*(vhi-vlo)
}

// Value is m for run r, from its measured records (for a finished run,
// the summary's figure).
func Value(r *Run, m Metric) float64 {
	var buf []float64
	return newSample(r).value(m, nil, nil, &buf)
}
