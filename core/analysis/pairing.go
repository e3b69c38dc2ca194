package analysis

import (
	"math"
	"math/rand/v2"

	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/stats"
)

// Pairing is two runs of the same workload and seed matched request by
// request: each measured request id that succeeded in both, with its TTFT
// in each and the ratio B/A.
type Pairing struct {
	// Pairs are in A's completion order.
	Pairs []PairedRequest
	// OnlyA and OnlyB count the successful measured requests of one run
	// whose id has no successful partner in the other.
	OnlyA, OnlyB int
	// The per-request ratios' median (with its 95% bootstrap interval:
	// pairs resampled with replacement), 10th and 90th percentiles.
	Median, MedianLo, MedianHi float64
	P10, P90                   float64
	// Faster counts the pairs whose TTFT is lower in B; Slower higher;
	// the rest are equal.
	Faster, Slower int
}

// PairedRequest is one request id's TTFT in both runs, in milliseconds.
type PairedRequest struct {
	ID    string
	A, B  float64
	Ratio float64 // B / A
}

// FasterShare is the share of pairs faster in B (NaN without pairs).
func (p *Pairing) FasterShare() float64 {
	if len(p.Pairs) == 0 {
		return math.NaN()
	}
	return float64(p.Faster) / float64(len(p.Pairs))
}

// Pair matches a's and b's successful measured requests by id and
// describes the distribution of their TTFT ratios B/A; the median's
// interval comes from resamples resamples of the pairs, seeded with seed.
// A request whose TTFT in A is not positive has no ratio and is left out.
func Pair(a, b *Run, seed uint64, resamples int) *Pairing {
	inB := map[string]*record.Record{}
	for i := range b.Records {
		r := &b.Records[i]
		if r.Phase == record.Measure && r.Success {
			inB[r.RequestID] = r
		}
	}
	p := &Pairing{Median: math.NaN(), MedianLo: math.NaN(), MedianHi: math.NaN(), P10: math.NaN(), P90: math.NaN()}
	matched := map[string]bool{}
	for i := range a.Records {
		ra := &a.Records[i]
		if ra.Phase != record.Measure || !ra.Success {
			continue
		}
		rb, ok := inB[ra.RequestID]
		if !ok || ra.TTFT <= 0 {
			p.OnlyA++
			continue
		}
		matched[ra.RequestID] = true
		pr := PairedRequest{ID: ra.RequestID, A: ra.TTFT * 1000, B: rb.TTFT * 1000, Ratio: rb.TTFT / ra.TTFT}
		switch {
		case pr.B < pr.A:
			p.Faster++
		case pr.B > pr.A:
			p.Slower++
		}
		p.Pairs = append(p.Pairs, pr)
	}
	p.OnlyB = len(inB) - len(matched)
	if len(p.Pairs) == 0 {
		return p
	}
	var ratios sortedValues
	for i, pr := range p.Pairs {
		ratios.add(pr.Ratio, i)
	}
	ratios.sort()
	p.Median = stats.Percentile(ratios.v, 50)
	p.P10 = stats.Percentile(ratios.v, 10)
	p.P90 = stats.Percentile(ratios.v, 90)
	rng := rand.New(rand.NewPCG(seed, 0x7061697273)) // "pairs"
	counts := make([]int, len(p.Pairs))
	medians := make([]float64, 0, resamples)
	for range resamples {
		draw(rng, counts)
		medians = append(medians, weightedPercentile(ratios.v, ratios.owner, counts, 50))
	}
	p.MedianLo, p.MedianHi = interval(medians, resamples)
	return p
}
