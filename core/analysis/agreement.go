package analysis

import (
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"

	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/stats"
)

// Agreement sets the answers of two runs side by side, request by request
// (runs recorded with --record-outputs, paired by id as Pair pairs them):
// is the cached answer the same answer? lmbench asks every engine for
// greedy decoding (temperature 0), so the same prompt should get the
// same answer, with the cache on or off, reused as a prefix or blended:
// every answer that differs is listed (Diverging).
type Agreement struct {
	// Pairs counts the measured requests that succeeded in both runs with
	// an answer recorded; Identical those whose answers are the same.
	Pairs, Identical int
	// Similarity is the pairs' mean token similarity: 1 − the token-level
	// edit distance / the longer answer's tokens (1: identical; tokens are
	// whitespace-separated words). NaN without pairs.
	Similarity float64
	// Divergence is the median position, in tokens from the start, of the
	// first token where diverging answers differ; NaN when none diverge.
	Divergence float64
	// ByShare splits the pairs by cached share (the larger of the two
	// runs': cached / prompt tokens), ByTier by the reuse tier declared.
	ByShare, ByTier []AgreementGroup
	// Diverging are the pairs whose answers differ, in A's order.
	Diverging []DivergingAnswer
	// Scores are the workload's scores of the paired answers, mean per
	// score in each run (a needle's accuracy), in sorted key order.
	Scores []ScoreMeans
	// Note says why there are no pairs ("" when there are).
	Note string
}

// AgreementGroup is the agreement of the pairs in one group.
type AgreementGroup struct {
	Label            string
	Pairs, Identical int
	Similarity       float64
}

// IdenticalShare is the share of pairs with identical answers (NaN without pairs).
func (g AgreementGroup) IdenticalShare() float64 { return share(g.Identical, g.Pairs) }

// IdenticalShare is the share of pairs with identical answers (NaN without pairs).
func (a *Agreement) IdenticalShare() float64 { return share(a.Identical, a.Pairs) }

// DivergingAnswer is a paired request whose answers differ.
type DivergingAnswer struct {
	ID string
	// At is the first token (from 0) where the answers differ.
	At         int
	Similarity float64
	// CachedA and CachedB are the request's cached share in each run.
	CachedA, CachedB float64
	Tier             string // the reuse tier declared ("" none)
	A, B             string // the answers
}

// ScoreMeans is one score's mean over the paired answers in each run.
type ScoreMeans struct {
	Key  string
	A, B float64
}

func share(n, of int) float64 {
	if of == 0 {
		return math.NaN()
	}
	return float64(n) / float64(of)
}

// TierNone labels the pairs whose workload named no reuse tier; the
// cached-share groups are stats.ShareGroups.
const TierNone = "no tier named"

var cachedShare = stats.CachedShare

// recordsOutputs reports whether any of run's records kept its answer.
func recordsOutputs(r *Run) bool {
	return slices.ContainsFunc(r.Records, func(rec record.Record) bool { return rec.OutputText != "" })
}

// Agree pairs a's and b's successful measured requests by id and compares
// their answers; nil when neither run recorded its answers (the
// comparison then says nothing of answers, as before they were kept).
func Agree(a, b *Run) *Agreement {
	ag := &Agreement{Similarity: math.NaN(), Divergence: math.NaN()}
	switch ra, rb := recordsOutputs(a), recordsOutputs(b); {
	case !ra && !rb:
		return nil
	case !ra || !rb:
		ag.Note = "only one run recorded its answers: run both with --record-outputs"
		return ag
	}
	inB := map[string]*record.Record{}
	for i := range b.Records {
		if r := &b.Records[i]; r.Phase == record.Measure && r.Success {
			inB[r.RequestID] = r
		}
	}
	shares, tiers := map[string]*AgreementGroup{}, map[string]*AgreementGroup{}
	scoresA, scoresB := map[string][]float64{}, map[string][]float64{}
	var sims, divs []float64
	for i := range a.Records {
		ra := &a.Records[i]
		rb, ok := inB[ra.RequestID]
		if ra.Phase != record.Measure || !ra.Success || !ok {
			continue
		}
		ta, tb := strings.Fields(ra.OutputText), strings.Fields(rb.OutputText)
		sim, at := TokenSimilarity(ta, tb), firstDifference(ta, tb)
		same := ra.OutputText == rb.OutputText
		tier := rb.TargetTier
		if tier == "" {
			tier = ra.TargetTier
		}
		ag.Pairs++
		if same {
			ag.Identical++
		}
		sims = append(sims, sim)
		groupOf(shares, stats.ShareGroup(max(cachedShare(ra), cachedShare(rb)))).add(same, sim)
		groupOf(tiers, orTierNone(tier)).add(same, sim)
		for k, v := range ra.Scores {
			if vb, ok := rb.Scores[k]; ok {
				scoresA[k], scoresB[k] = append(scoresA[k], v), append(scoresB[k], vb)
			}
		}
		if !same {
			divs = append(divs, float64(at))
			ag.Diverging = append(ag.Diverging, DivergingAnswer{ID: ra.RequestID, At: at, Similarity: sim,
				CachedA: cachedShare(ra), CachedB: cachedShare(rb), Tier: tier, A: ra.OutputText, B: rb.OutputText})
		}
	}
	if ag.Pairs == 0 {
		ag.Note = "no request succeeded in both runs"
		return ag
	}
	ag.Similarity = mean(sims)
	if len(divs) > 0 {
		slices.Sort(divs)
		ag.Divergence = stats.Percentile(divs, 50)
	}
	for _, l := range stats.ShareGroups {
		if g, ok := shares[l]; ok {
			ag.ByShare = append(ag.ByShare, g.done())
		}
	}
	for _, l := range slices.Sorted(maps.Keys(tiers)) {
		ag.ByTier = append(ag.ByTier, tiers[l].done())
	}
	for _, k := range slices.Sorted(maps.Keys(scoresA)) {
		ag.Scores = append(ag.Scores, ScoreMeans{Key: k, A: mean(scoresA[k]), B: mean(scoresB[k])})
	}
	return ag
}

func orTierNone(t string) string {
	if t == "" {
		return TierNone
	}
	return t
}

// groupOf returns the group labelled l, adding it.
func groupOf(m map[string]*AgreementGroup, l string) *AgreementGroup {
	g, ok := m[l]
	if !ok {
		g = &AgreementGroup{Label: l}
		m[l] = g
	}
	return g
}

// add counts a pair (Similarity holds the sum until done).
func (g *AgreementGroup) add(same bool, sim float64) {
	g.Pairs++
	g.Similarity += sim
	if same {
		g.Identical++
	}
}

// done turns the sum of similarities into their mean.
func (g *AgreementGroup) done() AgreementGroup {
	out := *g
	out.Similarity /= float64(out.Pairs)
	return out
}

func mean(vs []float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, v := range vs {
		s += v
	}
	return s / float64(len(vs))
}

// TokenSimilarity is 1 − the edit distance between two token sequences
// (insertions, deletions, substitutions of whole tokens) / the longer
// one's length: 1 for identical sequences (two empty ones too), 0 for
// sequences with nothing in common. The distance is levenshtein's, over
// the tokens mapped to one rune each.
func TokenSimilarity(a, b []string) float64 {
	n := max(len(a), len(b))
	if n == 0 {
		return 1
	}
	ids := map[string]rune{}
	runes := func(toks []string) string {
		var sb strings.Builder
		for _, t := range toks {
			r, ok := ids[t]
			if !ok {
				// Past the surrogates and the BMP: any rune is one rune.
				r = rune(0x10000 + len(ids))
				ids[t] = r
			}
			sb.WriteRune(r)
		}
		return sb.String()
	}
	ra, rb := runes(a), runes(b)
	return 1 - float64(levenshtein.ComputeDistance(ra, rb))/float64(n)
}

// firstDifference is the index of the first token where a and b differ
// (the shorter one's length when one extends the other; len when equal).
func firstDifference(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
