package sim

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// ttftBuckets are vLLM's buckets for vllm:time_to_first_token_seconds.
var ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5,
	0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}

// histogram is a Prometheus histogram: counts per upper bound, cumulative
// when rendered.
type histogram struct {
	mu     sync.Mutex
	bounds []float64
	counts []int64 // counts[i]: observations <= bounds[i] and > bounds[i-1]; last: +Inf
	sum    float64
	n      int64
}

func newHistogram(bounds []float64) histogram {
	return histogram{bounds: bounds, counts: make([]int64, len(bounds)+1)}
}

func (h *histogram) observe(v float64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	h.counts[i]++
	h.sum += v
	h.n++
}

// handleMetrics serves Prometheus text in vLLM's names, so tools that
// scrape a real engine's prefix-cache hit rate and queue depth work here,
// plus lmbench_sim:* series for what vLLM cannot show: each tier's hits,
// loads, demotions and evictions, and blending. Token counts are in
// tokens, as vLLM counts them. vllm:prefix_cache_* count the GPU tier only
// (vLLM's own prefix cache); usage.prompt_tokens_details.cached_tokens
// counts prefix hits from every tier.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	st := &s.engine.stats
	var b strings.Builder
	base := fmt.Sprintf(`engine="0",model_name=%q`, s.cfg.Model)
	header := func(name, typ, help string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	metric := func(name, typ, help string, value int64, extraLabels ...string) {
		header(name, typ, help)
		labels := append([]string{`engine="0"`}, extraLabels...)
		labels = append(labels, fmt.Sprintf("model_name=%q", s.cfg.Model))
		fmt.Fprintf(&b, "%s{%s} %d\n", name, strings.Join(labels, ","), value)
	}
	metric("vllm:num_requests_running", "gauge",
		"Number of requests in model execution batches.", st.running.Load())
	metric("vllm:num_requests_waiting", "gauge",
		"Number of requests waiting to be processed.", st.waiting.Load())
	metric("vllm:prefix_cache_queries_total", "counter",
		"Prefix cache queries, in terms of number of queried tokens.", st.cacheQueries.Load())
	metric("vllm:prefix_cache_hits_total", "counter",
		"Prefix cache hits, in terms of number of cached tokens.", st.cacheHits.Load())
	metric("vllm:prompt_tokens_total", "counter",
		"Number of prefill tokens processed.", st.promptTokens.Load())
	metric("vllm:generation_tokens_total", "counter",
		"Number of generation tokens processed.", st.generationTokens.Load())
	metric("vllm:request_success_total", "counter",
		"Count of successfully processed requests.", st.requestsDone.Load(), `finished_reason="length"`)

	// vllm:time_to_first_token_seconds
	h := &st.ttft
	h.mu.Lock()
	name := "vllm:time_to_first_token_seconds"
	header(name, "histogram", "Histogram of time to first token in seconds.")
	var cum int64
	for i, bound := range h.bounds {
		cum += h.counts[i]
		fmt.Fprintf(&b, "%s_bucket{%s,le=%q} %d\n", name, base, strconv.FormatFloat(bound, 'f', -1, 64), cum)
	}
	cum += h.counts[len(h.bounds)]
	fmt.Fprintf(&b, "%s_bucket{%s,le=\"+Inf\"} %d\n", name, base, cum)
	fmt.Fprintf(&b, "%s_sum{%s} %s\n", name, base, strconv.FormatFloat(h.sum, 'g', -1, 64))
	fmt.Fprintf(&b, "%s_count{%s} %d\n", name, base, h.n)
	h.mu.Unlock()

	// The simulator's own series.
	bs := int64(s.cfg.BlockSize)
	tiers := s.engine.cache.snapshot()
	perTier := func(name, typ, help string, value func(tierState) int64) {
		header(name, typ, help)
		for _, t := range tiers {
			fmt.Fprintf(&b, "%s{%s,tier=%q} %d\n", name, base, t.name, value(t))
		}
	}
	perTier("lmbench_sim:kv_capacity_tokens", "gauge", "Tier capacity in tokens (0: tier off).",
		func(t tierState) int64 { return int64(t.capacityBlocks) * bs })
	perTier("lmbench_sim:kv_used_tokens", "gauge", "Tokens held by the tier.",
		func(t tierState) int64 { return int64(t.usedBlocks) * bs })
	perTier("lmbench_sim:kv_prefix_hit_tokens_total", "counter", "Prefix tokens found in the tier (the fastest tier holding them).",
		func(t tierState) int64 { return t.counters.hits * bs })
	perTier("lmbench_sim:kv_blend_hit_tokens_total", "counter", "Tokens of blended (non-prefix) chunks found in the tier.",
		func(t tierState) int64 { return t.counters.blendHits * bs })
	perTier("lmbench_sim:kv_loaded_tokens_total", "counter", "Tokens loaded from the tier into the GPU (promoted).",
		func(t tierState) int64 { return t.counters.promoted * bs })
	perTier("lmbench_sim:kv_stored_tokens_total", "counter", "Tokens inserted into the tier (written, promoted or demoted in).",
		func(t tierState) int64 { return t.counters.stored * bs })
	perTier("lmbench_sim:kv_demoted_tokens_total", "counter", "Tokens demoted into the tier from the tier above.",
		func(t tierState) int64 { return t.counters.demotedIn * bs })
	perTier("lmbench_sim:kv_evicted_tokens_total", "counter", "Tokens evicted from the tier (least recently used first).",
		func(t tierState) int64 { return t.counters.evicted * bs })
	header("lmbench_sim:prefill_computed_tokens_total", "counter", "Prompt tokens no tier held, prefilled on the GPU.")
	fmt.Fprintf(&b, "lmbench_sim:prefill_computed_tokens_total{%s} %d\n", base, st.computedTokens.Load())
	header("lmbench_sim:blend_recomputed_tokens_total", "counter", "Tokens of blended chunks recomputed anyway (the blend recompute fraction).")
	fmt.Fprintf(&b, "lmbench_sim:blend_recomputed_tokens_total{%s} %d\n", base, st.blendRecomputed.Load())
	header("lmbench_sim:faults_total", "counter", "Injected faults, by kind.")
	for f := range numFaults {
		fmt.Fprintf(&b, "lmbench_sim:faults_total{%s,kind=%q} %d\n", base, faultNames[f], st.faults[f].Load())
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write([]byte(b.String()))
}
