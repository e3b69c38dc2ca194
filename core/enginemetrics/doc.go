// Package enginemetrics reads an inference engine's own Prometheus
// /metrics: vLLM's vllm:* series, LMCache's lmcache:* counters and SGLang's
// sglang:* series. It parses the exposition text with prometheus/common's
// expfmt, folds each known metric's series into one value (Snapshot),
// keeps a run's scrapes in bench_metrics.jsonl (Scraper) and turns them into
// per-phase figures (Phases): counter deltas, gauge min/mean/max and
// histogram delta buckets with estimated percentiles.
//
// Start with Parse for one exposition, or New for a run's Scraper.
package enginemetrics
