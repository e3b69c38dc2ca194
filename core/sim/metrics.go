package sim

import (
	"fmt"
	"net/http"
	"strings"
)

// handleMetrics serves Prometheus text in vLLM's names, so tools that
// scrape a real engine's prefix-cache hit rate and queue depth work here.
// Cache counts are in tokens, as vLLM counts them.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	st := &s.engine.stats
	var b strings.Builder
	metric := func(name, typ, help string, value int64, extraLabels ...string) {
		labels := append([]string{`engine="0"`}, extraLabels...)
		labels = append(labels, fmt.Sprintf("model_name=%q", s.cfg.Model))
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n%s{%s} %d\n",
			name, help, name, typ, name, strings.Join(labels, ","), value)
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
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write([]byte(b.String()))
}
