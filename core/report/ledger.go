package report

import (
	"fmt"
	"math"
	"strings"
)

// CacheLedger is what the run found about the KV cache: the reset and its
// check, and per phase the engine's per-request cached tokens beside its
// /metrics hit counters, with the verdicts (core/bench computes it).
type CacheLedger struct {
	// Reset is --reset-cache and its check; nil when none was asked.
	Reset   *CacheReset
	Warmup  LedgerPhase
	Measure LedgerPhase
	// BlockSize is the block the ledger aligned to and its tolerance per
	// request; BlockSizeFrom says where it came from ("--block-size",
	// "/status", "the built-in engine", "default"; "" when not known).
	BlockSize     int
	BlockSizeFrom string
	// TTFTGain sets the TTFT of requests that hit beside that of cold
	// ones of similar prompt length in the same phase; nil when no phase
	// had enough of both.
	TTFTGain *TTFTGain
	// Blend is the non-prefix reuse the workload expected beside what was
	// measured; nil when none was expected.
	Blend *BlendCheck
	// NotReported names the engine when it reports no cached tokens:
	// the requests' cached figures are not known (n/a), and TTFTGain, when
	// set, is inferred from the TTFT of requests the workload declared warm
	// against those it declared cold.
	NotReported string
	// Verdicts are the warnings, in order.
	Verdicts []string
}

// TTFTGain compares hits with cold requests, per phase and prompt-length
// bucket (within about 19%), over the buckets with at least three of each.
type TTFTGain struct {
	// Inferred: hits are the requests declared warm, not those that
	// reported cached tokens (an engine that reports none).
	Inferred                           bool
	HitRequests, ColdRequests, Buckets int
	// HitCachedShare is the hits' median share of their prompt cached.
	HitCachedShare float64
	// HitTTFT and ColdTTFT are the buckets' median TTFTs in ms, averaged
	// weighted by the smaller group of each bucket; Ratio the same
	// average of the buckets' hit/cold ratios.
	HitTTFT, ColdTTFT, Ratio float64
	// HitAhead and ColdAhead are the buckets' median count of the run's
	// requests sent earlier and still without a first token when a hit
	// (a cold request) was sent, the queue it joined, averaged as above;
	// NaN when send times are not known.
	HitAhead, ColdAhead float64
}

// queuedShare: hits sent with more than this many times the cold
// requests' queue ahead of them, plus one request, waited longer.
const queuedShare = 1.25

// QueuedLonger reports whether the hits joined a clearly longer queue
// than the cold requests: their TTFTs then differ by the wait, whatever
// the cache did, and the two cannot be compared.
func (g *TTFTGain) QueuedLonger() bool {
	return g.HitAhead > g.ColdAhead*queuedShare+1
}

// BlendCheck is the non-prefix (blended) reuse a workload declared (tier
// blend) beside what the engine measured.
type BlendCheck struct {
	Requests int   // requests that declared blend reuse
	Expected int64 // their expected reusable tokens, block-aligned
	// Measured is the engine's blended-token counter over the phases
	// those requests ran in (NaN: the engine has none); Source names it.
	Measured float64
	Source   string
	// Short is how many of the requests reported fewer cached tokens than
	// they expected less a block (the check without a blend counter).
	Short int
}

// CacheReset is a --reset-cache and what its check found.
type CacheReset struct {
	When string // before-warmup, before-measure
	URL  string
	// Status is the HTTP status the reset answered (0: it never answered;
	// Error says why).
	Status int
	Error  string
	// Cleared is the check's verdict: "yes", "no" or "unknown"; Detail
	// says what the check saw.
	Cleared string
	Detail  string
}

// LedgerPhase sets a phase's cached tokens as the journal has them (the
// engine's usage.prompt_tokens_details.cached_tokens of each request)
// beside the engine's /metrics hit counters. NaN: not known.
type LedgerPhase struct {
	Requests int
	// Journal is the sum of the requests' cached_tokens; Reporting how
	// many requests reported any.
	Journal   int64
	Reporting int
	// Engine is the phase's delta of the prefix-hit counters (vLLM: GPU
	// plus connector; SGLang: cached tokens); Difference = Journal -
	// Engine; Tolerance is one block per request.
	Engine, Difference, Tolerance float64
	// Agrees: |Difference| <= Tolerance ("yes", "no"; "n/a" without the
	// engine's counters).
	Agrees string

	// The workload's own expectations (the expected-reuse capability):
	// how many requests declared one; the cached tokens they expected,
	// each aligned down to the engine's block (NaN: none declared), and
	// the cached tokens those requests reported. Short: requests that
	// found more than a block less than they expected; ColdHits:
	// requests declared cold that found cached tokens; BelowBlock:
	// requests that expected some reuse but less than one block.
	Declared         int
	Expected         float64
	ExpectedMeasured int64
	Short, ColdHits  int
	BelowBlock       int
}

// ledgerSection is the terminal's "Cache ledger" section; "" without one.
func ledgerSection(l *CacheLedger) string {
	if l == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(center(" Cache ledger ", Width, '-') + "\n")
	add := func(es ...entry) {
		for _, x := range es {
			b.WriteString(x.String() + "\n")
		}
	}
	text := func(s string) {
		for i, line := range wrap(s, Width-2) {
			if i > 0 {
				line = "  " + line
			}
			b.WriteString(line + "\n")
		}
	}
	if r := l.Reset; r != nil {
		add(entry{"Cache reset (" + r.When + ") cleared", r.Cleared})
		if r.Detail != "" {
			text("Reset: " + r.Detail)
		}
	}
	for _, p := range []struct {
		name string
		p    LedgerPhase
	}{{"Warmup", l.Warmup}, {"Measured", l.Measure}} {
		if p.p.Declared > 0 {
			add(entry{p.name + " expected cached tokens", count(p.p.Expected)})
		}
		var journal any = p.p.Journal
		if l.NotReported != "" {
			journal = "n/a"
		}
		add(entry{p.name + " cached tokens (requests)", journal},
			entry{p.name + " hit tokens (/metrics)", count(p.p.Engine)},
			entry{p.name + " agree within a block/request", p.p.Agrees})
	}
	if l.BlockSize > 0 && l.BlockSizeFrom != "" {
		add(entry{"Block size (tokens)", fmt.Sprintf("%d (%s)", l.BlockSize, l.BlockSizeFrom)})
	}
	if g := l.TTFTGain; g != nil && g.Inferred {
		add(entry{"TTFT of warm / cold requests (ms)", fmt.Sprintf("%.1f / %.1f", g.HitTTFT, g.ColdTTFT)},
			entry{"Warm / cold requests compared", fmt.Sprintf("%d / %d", g.HitRequests, g.ColdRequests)},
			entry{"Reuse (inferred from TTFT)", inferredReuse(g)})
	} else if g != nil {
		add(entry{"TTFT of hits / cold requests (ms)", fmt.Sprintf("%.1f / %.1f", g.HitTTFT, g.ColdTTFT)},
			entry{"Hits / cold requests compared", fmt.Sprintf("%d / %d", g.HitRequests, g.ColdRequests)})
	}
	if bl := l.Blend; bl != nil {
		measured := "n/a"
		if !math.IsNaN(bl.Measured) {
			measured = fmt.Sprintf("%d", int64(math.Round(bl.Measured)))
		}
		add(entry{"Blend reuse expected / measured", fmt.Sprintf("%d / %s tokens", bl.Expected, measured)})
	}
	for _, v := range l.Verdicts {
		text("WARNING: " + v)
	}
	return b.String()
}

// InferredReuseRatio is the warm/cold TTFT ratio below which reuse
// inferred from TTFT counts as seen.
const InferredReuseRatio = 0.9

// inferredReuse is the ledger's line on reuse inferred from TTFT.
func inferredReuse(g *TTFTGain) string {
	if g.Ratio < InferredReuseRatio {
		return fmt.Sprintf("yes (ratio %.2f)", g.Ratio)
	}
	return fmt.Sprintf("not seen (ratio %.2f)", g.Ratio)
}

// withCacheLedger appends bench_summary.json's "cache_ledger" member; doc
// is unchanged without one.
func withCacheLedger(doc []kv, l *CacheLedger) []kv {
	if l == nil {
		return doc
	}
	var reset any
	if r := l.Reset; r != nil {
		reset = []kv{{"when", r.When}, {"url", r.URL}, {"status", orNullInt(r.Status)}, {"error", orNull(r.Error)},
			{"cleared", r.Cleared}, {"detail", orNull(r.Detail)}}
	}
	phase := func(p LedgerPhase) []kv {
		var journal, reporting, declaredCached any = p.Journal, p.Reporting, p.ExpectedMeasured
		if l.NotReported != "" {
			journal, reporting, declaredCached = nil, nil, nil
		}
		return []kv{
			{"requests", p.Requests},
			{"journal_cached_tokens", journal},
			{"requests_reporting_cached_tokens", reporting},
			{"engine_hit_tokens", p.Engine},
			{"difference", p.Difference},
			{"tolerance", p.Tolerance},
			{"agrees", p.Agrees},
			{"declared_requests", p.Declared},
			{"expected_cached_tokens", p.Expected},
			{"declared_cached_tokens", declaredCached},
			{"short_requests", p.Short},
			{"cold_requests_with_hits", p.ColdHits},
			{"expected_below_one_block", p.BelowBlock},
		}
	}
	var gain, blend any
	if g := l.TTFTGain; g != nil {
		gain = []kv{{"hit_requests", g.HitRequests}, {"cold_requests", g.ColdRequests}, {"buckets", g.Buckets},
			{"hit_cached_share", g.HitCachedShare}, {"hit_ttft_ms", g.HitTTFT}, {"cold_ttft_ms", g.ColdTTFT},
			{"ratio", g.Ratio}, {"hit_requests_ahead", g.HitAhead}, {"cold_requests_ahead", g.ColdAhead}}
		if g.Inferred { // an engine without cached tokens: warm and cold as declared
			gain = append([]kv{{"inferred", true}}, gain.([]kv)...)
		}
	}
	if bl := l.Blend; bl != nil {
		blend = []kv{{"requests", bl.Requests}, {"expected_tokens", bl.Expected}, {"measured_tokens", bl.Measured},
			{"source", orNull(bl.Source)}, {"short_requests", bl.Short}}
	}
	ledger := []kv{
		{"reset", reset},
		{"warmup", phase(l.Warmup)},
		{"measure", phase(l.Measure)},
		{"block_size", orNullInt(l.BlockSize)},
		{"block_size_source", orNull(l.BlockSizeFrom)},
		{"ttft_gain", gain},
		{"blend", blend},
		{"verdicts", append([]string{}, l.Verdicts...)},
	}
	if l.NotReported != "" {
		ledger = append(ledger, kv{"cached_tokens_reported", false})
	}
	return append(doc, kv{"cache_ledger", ledger})
}

// Agreement is "yes" when |difference| <= tolerance, "no" otherwise,
// "n/a" when either is not defined.
func Agreement(difference, tolerance float64) string {
	switch {
	case difference != difference || tolerance != tolerance:
		return "n/a"
	case difference <= tolerance && -difference <= tolerance:
		return "yes"
	}
	return "no"
}
