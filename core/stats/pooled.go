package stats

import (
	"fmt"
	"math"
	"slices"

	"github.com/DataDog/sketches-go/ddsketch"
)

// SketchAccuracy is the relative accuracy of the ITL percentiles once the
// pooled gaps outgrow their budget: each is within ±0.1% of numpy's
// linear percentile of the same gaps.
const SketchAccuracy = 0.001

// ITL methods, as the summary names them.
const ITLExact = "exact"

// ITLSketch is the method of sketched ITL percentiles: "sketch (±0.1%)".
var ITLSketch = fmt.Sprintf("sketch (±%s%%)", FormatPercentile(SketchAccuracy*100))

// pooled keeps the gaps between consecutive chunks of every successful
// request (vLLM's ITL), in milliseconds: exactly while they fit budget
// values, then in a DDSketch (a log-bucketed histogram whose size grows
// with the log of the range of the values, not their number). Mean and
// standard deviation stay exact either way (Welford's running sums).
type pooled struct {
	budget int
	exact  []float64
	sketch *ddsketch.DDSketch // nil while exact

	n        int
	mean, m2 float64
}

func (p *pooled) add(v float64) {
	p.n++
	d := v - p.mean
	p.mean += d / float64(p.n)
	p.m2 += d * (v - p.mean)
	if p.sketch == nil && len(p.exact) < p.budget {
		p.exact = append(p.exact, v)
		return
	}
	if p.sketch == nil {
		// Cannot fail: the accuracy is in (0, 1).
		p.sketch, _ = ddsketch.LogUnboundedDenseDDSketch(SketchAccuracy)
		for _, e := range p.exact {
			p.sketchAdd(e)
		}
		p.exact = nil
	}
	p.sketchAdd(v)
}

// sketchAdd adds v; a gap is finite (a difference of microsecond
// counts), so the sketch can track it and Add cannot fail.
func (p *pooled) sketchAdd(v float64) { _ = p.sketch.Add(v) }

// describe returns the gaps' Dist and how its percentiles were computed.
func (p *pooled) describe(ps []float64) (Dist, string) {
	if p.sketch == nil {
		slices.Sort(p.exact)
		return describe(p.exact, ps), ITLExact
	}
	d := Dist{N: p.n, Mean: p.mean, Std: math.Sqrt(p.m2 / float64(p.n)), Median: p.percentile(50),
		Percentiles: make([]Quantile, len(ps))}
	for i, q := range ps {
		d.Percentiles[i] = Quantile{P: q, Value: p.percentile(q)}
	}
	return d, ITLSketch
}

// percentile is numpy's linear percentile with the sketch's values at the
// two ranks it interpolates between, so the relative accuracy of those
// values carries over to the result.
func (p *pooled) percentile(q float64) float64 {
	n := float64(p.n)
	k := (n - 1) * q / 100
	f := math.Floor(k)
	c := min(f+1, n-1)
	lo, hi := p.atRank(f), p.atRank(c)
	return lo + (k-f)*(hi-lo)
}

// atRank is the sketch's value at rank r (0-based, in ascending order).
// GetValueAtQuantile(q) answers for rank ⌊q·(n−1)⌋; aiming at the middle
// of r's slot keeps rounding from landing on r−1.
func (p *pooled) atRank(r float64) float64 {
	n := float64(p.n)
	q := 1.0
	if r < n-1 {
		q = (r + 0.5) / (n - 1)
	}
	v, err := p.sketch.GetValueAtQuantile(q)
	if err != nil {
		return math.NaN() // not reached: q is in [0, 1], the sketch is not empty
	}
	return v
}
