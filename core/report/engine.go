package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/lmbench/lmbench/core/stats"
)

// EngineMetrics is what the engine's own /metrics said over the run
// (core/bench scrapes and computes it; this package prints it). A figure
// that is not defined (the engine has no such metric, a scrape failed) is
// NaN, printed "n/a" and written null.
type EngineMetrics struct {
	URL string
	// Engine is whose metrics were found: "vllm", "sglang" or "" (none).
	Engine string
	// Scrapes taken and how many failed; FirstError is the first failure.
	Scrapes, Failed int
	FirstError      string
	// SamplesFile is the samples' file name in the output directory ("":
	// not kept).
	SamplesFile string
	Warmup      EnginePhase
	Measure     EnginePhase
	// Notes are warnings about the metrics themselves (a counter that
	// went down), in order.
	Notes []string
}

// Available reports whether any engine metric was read.
func (e *EngineMetrics) Available() bool { return e.Engine != "" }

// EnginePhase is one phase's figures. Token counts are in tokens.
type EnginePhase struct {
	// The engine's own prefix cache (vLLM: GPU blocks; SGLang: every
	// cache source): tokens looked up and found, and their ratio.
	PrefixQueries, PrefixHits, PrefixHitRate float64
	// Hits of vLLM's KV connector (LMCache's CPU or disk tier), and
	// LMCache's own counters.
	ExternalHits                  float64
	LMCacheRequested, LMCacheHits float64
	// BlendHits are blended (non-prefix) tokens found (the built-in
	// engine's counter; NaN on an engine without one).
	BlendHits              float64
	Preemptions            float64
	RunningMax, WaitingMax float64
	KVUsageMax             float64 // 0 to 1
	// The engine's latency histograms over the phase, in milliseconds
	// (percentiles estimated from the buckets).
	TTFT, ITL, E2E EngineDist
}

// EngineDist is a histogram's figures.
type EngineDist struct {
	Count               float64
	Mean, P50, P90, P99 float64
}

// NaNDist is an EngineDist with nothing in it.
var NaNDist = EngineDist{Count: math.NaN(), Mean: math.NaN(), P50: math.NaN(), P90: math.NaN(), P99: math.NaN()}

// NaNPhase is an EnginePhase with no figure defined.
func NaNPhase() EnginePhase {
	n := math.NaN()
	return EnginePhase{PrefixQueries: n, PrefixHits: n, PrefixHitRate: n, ExternalHits: n,
		LMCacheRequested: n, LMCacheHits: n, BlendHits: n, Preemptions: n, RunningMax: n, WaitingMax: n, KVUsageMax: n,
		TTFT: NaNDist, ITL: NaNDist, E2E: NaNDist}
}

// engineSection is the terminal's "Engine metrics" section; "" when
// metrics were off.
func engineSection(e *EngineMetrics, f stats.Final) string {
	if e == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(center(" Engine metrics (/metrics) ", Width, '-') + "\n")
	add := func(es ...entry) {
		for _, x := range es {
			b.WriteString(x.String() + "\n")
		}
	}
	text := func(s string) {
		for i, l := range wrap(s, Width-2) {
			if i > 0 {
				l = "  " + l
			}
			b.WriteString(l + "\n")
		}
	}
	add(entry{"Scrapes (failed)", fmt.Sprintf("%d (%d)", e.Scrapes, e.Failed)})
	if !e.Available() {
		why := e.FirstError
		if why == "" {
			why = "no vLLM, LMCache or SGLang metric in the exposition"
		}
		text("Engine metrics: n/a (" + why + ")")
	} else {
		w, m := e.Warmup, e.Measure
		add(entry{"Warmup prefix hit rate (%)", w.PrefixHitRate * 100},
			entry{"Measured prefix hits (tokens)", count(m.PrefixHits)},
			entry{"Measured prefix hit rate (%)", m.PrefixHitRate * 100},
			entry{"Measured connector hits (tokens)", count(m.ExternalHits)},
			entry{"Measured LMCache hit tokens", count(m.LMCacheHits)},
			entry{"Measured preemptions", count(m.Preemptions)},
			entry{"Peak running requests", count(m.RunningMax)},
			entry{"Peak waiting requests", count(m.WaitingMax)},
			entry{"Peak KV-cache usage (%)", m.KVUsageMax * 100},
			entry{"Engine P50 TTFT (ms)", m.TTFT.P50}, entry{"lmbench P50 TTFT (ms)", f.P50TTFTMs},
			entry{"Engine P90 TTFT (ms)", m.TTFT.P90}, entry{"lmbench P90 TTFT (ms)", f.P90TTFTMs},
			entry{"Engine P99 TTFT (ms)", m.TTFT.P99}, entry{"lmbench P99 TTFT (ms)", f.P99TTFTMs},
			entry{"Engine P50 ITL (ms)", m.ITL.P50},
			entry{"Engine P50 E2E (ms)", m.E2E.P50})
	}
	for _, v := range e.Notes {
		text("Note: " + v)
	}
	return b.String()
}

// withEngineMetrics appends bench_summary.json's "engine_metrics" member;
// doc is unchanged when metrics were off.
func withEngineMetrics(doc []kv, e *EngineMetrics) []kv {
	if e == nil {
		return doc
	}
	return append(doc, kv{"engine_metrics", []kv{
		{"url", e.URL},
		{"engine", orNull(e.Engine)},
		{"scrapes", e.Scrapes},
		{"failed_scrapes", e.Failed},
		{"first_error", orNull(e.FirstError)},
		{"samples_file", orNull(e.SamplesFile)},
		{"warmup", enginePhaseJSON(e.Warmup)},
		{"measure", enginePhaseJSON(e.Measure)},
		{"notes", append([]string{}, e.Notes...)},
	}})
}

func enginePhaseJSON(p EnginePhase) []kv {
	return []kv{
		{"prefix_cache_queries", p.PrefixQueries},
		{"prefix_cache_hits", p.PrefixHits},
		{"prefix_cache_hit_rate", p.PrefixHitRate},
		{"external_prefix_cache_hits", p.ExternalHits},
		{"lmcache_requested_tokens", p.LMCacheRequested},
		{"lmcache_hit_tokens", p.LMCacheHits},
		{"preemptions", p.Preemptions},
		{"running_max", p.RunningMax},
		{"waiting_max", p.WaitingMax},
		{"kv_cache_usage_max", p.KVUsageMax},
		{"ttft_ms", engineDistJSON(p.TTFT)},
		{"itl_ms", engineDistJSON(p.ITL)},
		{"e2e_ms", engineDistJSON(p.E2E)},
	}
}

func engineDistJSON(d EngineDist) []kv {
	return []kv{{"count", d.Count}, {"mean", d.Mean}, {"p50", d.P50}, {"p90", d.P90}, {"p99", d.P99}}
}

// writeStrings writes an array of strings as json.dumps(indent=2) does,
// "[]" when empty.
func writeStrings(b *strings.Builder, v []string, depth int) {
	if len(v) == 0 {
		b.WriteString("[]")
		return
	}
	b.WriteString("[\n")
	for i, x := range v {
		b.WriteString(strings.Repeat("  ", depth+1) + jsonString(x))
		if i < len(v)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(strings.Repeat("  ", depth) + "]")
}

// count is a count as an integer, NaN (n/a) when not defined.
func count(v float64) any {
	if math.IsNaN(v) {
		return v
	}
	return int64(math.Round(v))
}
