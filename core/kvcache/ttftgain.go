package kvcache

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/report"
)

// What the TTFT-gain check counts as a hit and as a cold request: a hit
// found at least one block and at least hitShare of its prompt cached (so
// a gain is due), a cold request less than coldShare of it. Requests in
// between are left out of the comparison.
const (
	hitShare  = 0.25
	coldShare = 0.05
	// minGainGroup is the fewest hits and cold requests a bucket needs to
	// be compared: a median of one or two says little.
	minGainGroup = 3
	// noGainRatio: hits whose TTFT is at least this share of the cold
	// requests' bring no gain worth the name.
	noGainRatio = 0.9
	// bucketsPerDoubling sets the width of a prompt-length bucket: four
	// per doubling, prompts within about 19% of each other.
	bucketsPerDoubling = 4
)

// gainKey is a phase and a prompt-length bucket: requests are compared
// only within both, so a sequential warmup never meets a concurrent
// measured phase, nor a short prompt a long one.
type gainKey struct {
	phase  record.Phase
	bucket int
}

// ttftGain gathers the TTFTs of hits and cold requests by gainKey.
type ttftGain struct {
	hits, cold map[gainKey][]float64
	shares     []float64 // the hits' cached share of their prompts
	// When each hit and cold request was sent (by gainKey, as hits and
	// cold), and when every request of the run was sent and stopped
	// waiting (its first token, else its end): how many requests were
	// ahead of one in the engine's queue. Nil when not known (inferred).
	hitAt, coldAt  map[gainKey][]time.Time
	sent, answered []time.Time
}

func newTTFTGain() *ttftGain {
	return &ttftGain{hits: map[gainKey][]float64{}, cold: map[gainKey][]float64{},
		hitAt: map[gainKey][]time.Time{}, coldAt: map[gainKey][]time.Time{}}
}

// add takes a finished request; failed ones and those without a first
// token or a prompt length say nothing about TTFT.
func (g *ttftGain) add(r *record.Record, blockSize int) {
	if !r.Submit.IsZero() {
		end := r.FirstToken
		if end.IsZero() {
			end = r.Finish
		}
		g.sent, g.answered = append(g.sent, r.Submit), append(g.answered, end)
	}
	if !r.Success || r.TTFT < 0 || r.InputTokens <= 0 {
		return
	}
	k := gainKey{r.Phase, int(math.Floor(math.Log2(float64(r.InputTokens)) * bucketsPerDoubling))}
	share := float64(r.CachedTokens) / float64(r.InputTokens)
	switch {
	case r.CachedTokens >= int64(blockSize) && share >= hitShare:
		g.hits[k] = append(g.hits[k], r.TTFT)
		g.hitAt[k] = append(g.hitAt[k], r.Submit)
		g.shares = append(g.shares, share)
	case share < coldShare:
		g.cold[k] = append(g.cold[k], r.TTFT)
		g.coldAt[k] = append(g.coldAt[k], r.Submit)
	}
}

// aheadOf is the median, over the times in at, of the run's requests
// sent before and still without a first token: the queue a request
// joined. NaN when the send times are not known.
func (g *ttftGain) aheadOf(at []time.Time) float64 {
	if len(g.sent) == 0 || len(at) == 0 || slices.ContainsFunc(at, time.Time.IsZero) {
		return math.NaN()
	}
	xs := make([]float64, len(at))
	for i, t := range at {
		before := sort.Search(len(g.sent), func(j int) bool { return !g.sent[j].Before(t) })
		done := sort.Search(len(g.answered), func(j int) bool { return g.answered[j].After(t) })
		xs[i] = float64(max(before-done, 0))
	}
	return median(xs)
}

// result sets the hits' median TTFT beside the cold requests' in every
// bucket where both have minGainGroup requests, weighted by the smaller
// group; nil when no bucket has both.
func (g *ttftGain) result() *report.TTFTGain {
	var out report.TTFTGain
	var wsum, hitSum, coldSum, ratioSum, hitAhead, coldAhead float64
	slices.SortFunc(g.sent, time.Time.Compare)
	slices.SortFunc(g.answered, time.Time.Compare)
	keys := make([]gainKey, 0, len(g.hits))
	for k := range g.hits {
		keys = append(keys, k)
	}
	// A fixed order keeps the weighted sums the same to the last digit.
	slices.SortFunc(keys, func(a, b gainKey) int {
		if a.phase != b.phase {
			return strings.Compare(a.phase.String(), b.phase.String())
		}
		return a.bucket - b.bucket
	})
	for _, k := range keys {
		h, c := g.hits[k], g.cold[k]
		if len(h) < minGainGroup || len(c) < minGainGroup {
			continue
		}
		w := float64(min(len(h), len(c)))
		hm, cm := median(h), median(c)
		out.HitRequests += len(h)
		out.ColdRequests += len(c)
		out.Buckets++
		wsum += w
		hitSum += w * hm
		coldSum += w * cm
		if cm > 0 {
			ratioSum += w * hm / cm
		}
		hitAhead += w * g.aheadOf(g.hitAt[k])
		coldAhead += w * g.aheadOf(g.coldAt[k])
	}
	if out.Buckets == 0 {
		return nil
	}
	out.HitTTFT, out.ColdTTFT = hitSum/wsum*1000, coldSum/wsum*1000
	out.HitAhead, out.ColdAhead = hitAhead/wsum, coldAhead/wsum
	out.Ratio = ratioSum / wsum
	out.HitCachedShare = median(g.shares)
	return &out
}

// verdict is the warning when hits brought no gain, "" otherwise; when
// the hits waited in a longer queue than the cold requests (waiting: the
// engine's peak waiting requests, NaN when unknown) it says the
// comparison cannot tell, not that the cache is slow.
func ttftGainVerdict(t *report.TTFTGain, waiting float64) string {
	if t == nil || t.Ratio < noGainRatio {
		return ""
	}
	if t.QueuedLonger() {
		peak := ""
		if !math.IsNaN(waiting) && waiting > 0 {
			peak = fmt.Sprintf(" (the engine's peak waiting requests: %.0f)", waiting)
		}
		return fmt.Sprintf("hits and cold requests cannot be compared under saturation: %d requests that found %.0f%% "+
			"of their prompt cached had a median TTFT of %.1f ms, %d cold requests of similar prompt length %.1f ms "+
			"(ratio %.2f), but the hits were sent with a median of %.0f of the run's requests ahead of them still "+
			"waiting for a first token, the cold requests with %.0f%s: TTFT counts that wait, so it cannot tell "+
			"whether the engine reuses what it reports cached; rerun at a load the engine keeps up with "+
			"(a lower rate or speedup) to judge the cache",
			t.HitRequests, 100*t.HitCachedShare, t.HitTTFT, t.ColdRequests, t.ColdTTFT, t.Ratio, t.HitAhead, t.ColdAhead, peak)
	}
	return fmt.Sprintf("hits without a TTFT gain over cold requests: %d requests that found %.0f%% of their prompt cached "+
		"(median) had a median TTFT of %.1f ms, %d cold requests of similar prompt length in the same phase %.1f ms "+
		"(ratio %.2f, over %d prompt-length buckets): the engine recomputes or reloads what it reports cached "+
		"(a slow KV connector, cached tokens counted but not used)",
		t.HitRequests, 100*t.HitCachedShare, t.HitTTFT, t.ColdRequests, t.ColdTTFT, t.Ratio, t.Buckets)
}

// median of xs (not empty); xs is sorted in place.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
