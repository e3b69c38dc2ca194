package sim

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lmbench/lmbench/core/sim/prefixcache"
)

// vLLM's histogram buckets (vllm/v1/metrics/loggers.py), so that a scraper's
// bucket arithmetic meets the bounds it meets on a real engine.
var (
	ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5,
		0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	itlBuckets = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5,
		0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	e2eBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0,
		40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
)

// engineLabels are the constant labels of every series: vLLM labels its
// series with model_name and, since the data-parallel engines, engine.
func engineLabels(model string) prometheus.Labels {
	return prometheus.Labels{"engine": "0", "model_name": model}
}

// latencies are the engine's latency histograms, observed as requests run.
type latencies struct {
	ttft, itl, e2e prometheus.Histogram
}

func newLatencies(model string) latencies {
	h := func(name, help string, buckets []float64) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: name, Help: help, Buckets: buckets, ConstLabels: engineLabels(model),
		})
	}
	return latencies{
		ttft: h("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", ttftBuckets),
		itl:  h("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", itlBuckets),
		e2e: h("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.",
			e2eBuckets),
	}
}

// newMetricsHandler serves /metrics from a registry of the server's own
// (never the global one: tests run many servers in one process), in the
// Prometheus text format with vLLM's names, so tools that scrape a real
// engine's prefix-cache hit rate and queue depth work here; LMCache's
// counters when a CPU or disk tier is on; and lmbench_sim:* series for what
// vLLM cannot show: each tier's hits, loads, demotions and evictions, and
// blending. Token counts are in tokens, as vLLM counts them.
//
// vllm:prefix_cache_* count the GPU tier only (vLLM's own prefix cache);
// vllm:external_prefix_cache_* and lmcache:* the CPU and disk tiers (what a
// KV connector such as LMCache loads); usage.prompt_tokens_details.
// cached_tokens counts prefix hits from every tier, so per request it is
// the sum of the two hit counters' increments.
func newMetricsHandler(s *Server) http.Handler {
	reg := prometheus.NewRegistry()
	lat := s.engine.stats.latency
	reg.MustRegister(lat.ttft, lat.itl, lat.e2e, &collector{s: s})
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: nil})
}

// collector reads the engine's counters and cache state at each scrape.
type collector struct{ s *Server }

func (c *collector) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(c, ch) }

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	e := emitter{ch: ch, labels: engineLabels(s.cfg.Model)}
	tiers := s.engine.cache.Snapshot()
	c.collectVLLM(e, tiers)
	if tiers[prefixcache.CPU].On || tiers[prefixcache.Disk].On {
		c.collectExternal(e, tiers)
	}
	c.collectTiers(e, tiers)
	st := &s.engine.stats
	e.counter("lmbench_sim:prefill_computed_tokens_total",
		"Prompt tokens no tier held, prefilled on the GPU.", st.computedTokens.Load())
	e.counter("lmbench_sim:blend_recomputed_tokens_total",
		"Tokens of blended chunks recomputed anyway (the blend recompute fraction).", st.blendRecomputed.Load())
	e.counter("lmbench_sim:blend_corrupted_chunks_total",
		"Blended chunks whose content was lost to the answer (the blend corrupt fault).", st.blendCorrupted.Load())
	for f := range numFaults {
		e.counter("lmbench_sim:faults_total", "Injected faults, by kind.", st.faults[f].Load(), "kind", faultNames[f])
	}
	e.counter("lmbench_sim:resets_total", "POST /reset_prefix_cache calls answered, by whether they cleared.",
		st.resets.Load(), "cleared", strconv.FormatBool(!s.cfg.Faults.ResetNoop))
}

// emitter sends constant metrics with the engine's labels, each with its
// own label pairs (name, value, name, value, ...).
type emitter struct {
	ch     chan<- prometheus.Metric
	labels prometheus.Labels
}

func (e emitter) emit(name, help string, typ prometheus.ValueType, value float64, labels ...string) {
	var names, values []string
	for i := 0; i+1 < len(labels); i += 2 {
		names = append(names, labels[i])
		values = append(values, labels[i+1])
	}
	d := prometheus.NewDesc(name, help, names, e.labels)
	e.ch <- prometheus.MustNewConstMetric(d, typ, value, values...)
}

func (e emitter) counter(name, help string, v int64, labels ...string) {
	e.emit(name, help, prometheus.CounterValue, float64(v), labels...)
}

func (e emitter) gauge(name, help string, v float64, labels ...string) {
	e.emit(name, help, prometheus.GaugeValue, v, labels...)
}

// collectVLLM emits vLLM's own series: the queue, the GPU tier's usage
// and prefix-cache counters, the token and request counts.
func (c *collector) collectVLLM(e emitter, tiers [prefixcache.NumTiers]prefixcache.State) {
	st := &c.s.engine.stats
	gpu := tiers[prefixcache.GPU]
	usage := 0.0
	if gpu.CapacityBlocks > 0 {
		usage = float64(gpu.UsedBlocks) / float64(gpu.CapacityBlocks)
	}
	e.gauge("vllm:num_requests_running", "Number of requests in model execution batches.", float64(st.running.Load()))
	e.gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", float64(st.waiting.Load()))
	e.gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", usage)
	e.counter("vllm:prefix_cache_queries_total",
		"Prefix cache queries, in terms of number of queried tokens.", st.cacheQueries.Load())
	e.counter("vllm:prefix_cache_hits_total",
		"Prefix cache hits, in terms of number of cached tokens.", st.cacheHits.Load())
	// The simulator never preempts (a request keeps its blocks until it
	// ends); the series is there, at 0, as on an engine with room.
	e.counter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.", 0)
	e.counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.", st.promptTokens.Load())
	e.counter("vllm:generation_tokens_total", "Number of generation tokens processed.", st.generationTokens.Load())
	stopped := st.requestsStopped.Load()
	e.counter("vllm:request_success_total", "Count of successfully processed requests.",
		st.requestsDone.Load()-stopped, "finished_reason", "length")
	if c.s.cfg.EOSAfter > 0 { // answers may end at the EOS token
		e.counter("vllm:request_success_total", "Count of successfully processed requests.",
			stopped, "finished_reason", "stop")
	}
}

// collectExternal emits what a KV connector (LMCache) reports of the CPU
// and disk tiers.
func (c *collector) collectExternal(e emitter, tiers [prefixcache.NumTiers]prefixcache.State) {
	st := &c.s.engine.stats
	external := (tiers[prefixcache.CPU].Counters.Hits + tiers[prefixcache.Disk].Counters.Hits) * int64(c.s.cfg.BlockSize)
	e.counter("vllm:external_prefix_cache_queries_total",
		"External prefix cache queries from KV connector cross-instance cache sharing, in terms of number of queried tokens.",
		st.externalQueries.Load())
	e.counter("vllm:external_prefix_cache_hits_total",
		"External prefix cache hits from KV connector cross-instance cache sharing, in terms of number of cached tokens.",
		external)
	e.counter("lmcache:num_retrieve_requests_total", "Total number of retrieve requests sent to lmcache.",
		st.externalRequests.Load())
	e.counter("lmcache:num_requested_tokens_total", "Total number of tokens requested from lmcache.",
		st.externalQueries.Load())
	e.counter("lmcache:num_hit_tokens_total", "Total number of tokens hit in lmcache.", external)
}

// collectTiers emits each tier's capacity, use and traffic.
func (c *collector) collectTiers(e emitter, tiers [prefixcache.NumTiers]prefixcache.State) {
	bs := int64(c.s.cfg.BlockSize)
	for _, t := range tiers {
		tier := []string{"tier", t.Name}
		e.gauge("lmbench_sim:kv_capacity_tokens", "Tier capacity in tokens (0: tier off).",
			float64(int64(t.CapacityBlocks)*bs), tier...)
		e.gauge("lmbench_sim:kv_used_tokens", "Tokens held by the tier.", float64(int64(t.UsedBlocks)*bs), tier...)
		for _, m := range []struct {
			name, help string
			blocks     int64
		}{
			{"lmbench_sim:kv_prefix_hit_tokens_total", "Prefix tokens found in the tier (the fastest tier holding them).", t.Counters.Hits},
			{"lmbench_sim:kv_blend_hit_tokens_total", "Tokens of blended (non-prefix) chunks found in the tier.", t.Counters.BlendHits},
			{"lmbench_sim:kv_loaded_tokens_total", "Tokens loaded from the tier into the GPU (promoted).", t.Counters.Promoted},
			{"lmbench_sim:kv_stored_tokens_total", "Tokens inserted into the tier (written, promoted or demoted in).", t.Counters.Stored},
			{"lmbench_sim:kv_demoted_tokens_total", "Tokens demoted into the tier from the tier above.", t.Counters.DemotedIn},
			{"lmbench_sim:kv_evicted_tokens_total", "Tokens evicted from the tier (least recently used first).", t.Counters.Evicted},
		} {
			e.counter(m.name, m.help, m.blocks*bs, tier...)
		}
	}
}
