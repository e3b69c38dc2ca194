package enginemetrics

// Kind is how a metric is read.
type Kind int

const (
	Counter Kind = iota
	Gauge
	Histogram
)

// Fold is how a metric's series (one per label set: engines, data-parallel
// ranks, model names, finish reasons, cache sources) become one value.
type Fold int

const (
	// Sum adds the series: token and request counters, queue depths.
	Sum Fold = iota
	// Max takes the largest: a usage fraction is per engine, and the
	// fullest engine is the one that preempts.
	Max
	// Mean averages: a hit-rate gauge per rank.
	Mean
)

// Def is one metric lmbench reads: the name it is kept under (Key) and the
// names engines expose it by, newest first (the first present is used, so
// an engine that exposes an old and a new name is not counted twice).
type Def struct {
	Key   string
	Names []string
	Kind  Kind
	Fold  Fold
}

// Keys of the metrics the summary uses.
const (
	VLLMPrefixQueries   = "vllm:prefix_cache_queries_total"
	VLLMPrefixHits      = "vllm:prefix_cache_hits_total"
	VLLMExternalQueries = "vllm:external_prefix_cache_queries_total"
	VLLMExternalHits    = "vllm:external_prefix_cache_hits_total"
	VLLMRunning         = "vllm:num_requests_running"
	VLLMWaiting         = "vllm:num_requests_waiting"
	VLLMKVUsage         = "vllm:kv_cache_usage_perc"
	VLLMPreemptions     = "vllm:num_preemptions_total"
	VLLMPromptTokens    = "vllm:prompt_tokens_total"
	VLLMTTFT            = "vllm:time_to_first_token_seconds"
	VLLMITL             = "vllm:inter_token_latency_seconds"
	VLLME2E             = "vllm:e2e_request_latency_seconds"

	LMCacheRetrieves = "lmcache:num_retrieve_requests_total"
	LMCacheRequested = "lmcache:num_requested_tokens_total"
	LMCacheHits      = "lmcache:num_hit_tokens_total"

	// SimBlendHits is the built-in engine's blended (non-prefix) tokens
	// found, summed over its tiers.
	SimBlendHits = "lmbench_sim:kv_blend_hit_tokens_total"

	SGLangCachedTokens = "sglang:cached_tokens_total"
	SGLangPromptTokens = "sglang:prompt_tokens_total"
	SGLangHitRate      = "sglang:cache_hit_rate"
	SGLangRunning      = "sglang:num_running_reqs"
	SGLangQueue        = "sglang:num_queue_reqs"
	SGLangTokenUsage   = "sglang:token_usage"
	SGLangTTFT         = "sglang:time_to_first_token_seconds"
	SGLangITL          = "sglang:inter_token_latency_seconds"
	SGLangE2E          = "sglang:e2e_request_latency_seconds"
)

// Defs are the metrics lmbench reads. vLLM renamed gpu_prefix_cache_* to
// prefix_cache_*, gpu_cache_usage_perc to kv_cache_usage_perc and
// time_per_output_token_seconds (the gap between tokens) to
// inter_token_latency_seconds; the old names are read where the new ones
// are missing. A counter is also looked up without its _total suffix, the
// name some clients give the family.
var Defs = []Def{
	{VLLMPrefixQueries, []string{VLLMPrefixQueries, "vllm:gpu_prefix_cache_queries_total"}, Counter, Sum},
	{VLLMPrefixHits, []string{VLLMPrefixHits, "vllm:gpu_prefix_cache_hits_total"}, Counter, Sum},
	{VLLMExternalQueries, []string{VLLMExternalQueries}, Counter, Sum},
	{VLLMExternalHits, []string{VLLMExternalHits}, Counter, Sum},
	{VLLMRunning, []string{VLLMRunning}, Gauge, Sum},
	{VLLMWaiting, []string{VLLMWaiting}, Gauge, Sum},
	{VLLMKVUsage, []string{VLLMKVUsage, "vllm:gpu_cache_usage_perc"}, Gauge, Max},
	{VLLMPreemptions, []string{VLLMPreemptions}, Counter, Sum},
	{VLLMPromptTokens, []string{VLLMPromptTokens}, Counter, Sum},
	{VLLMTTFT, []string{VLLMTTFT}, Histogram, Sum},
	{VLLMITL, []string{VLLMITL, "vllm:time_per_output_token_seconds"}, Histogram, Sum},
	{VLLME2E, []string{VLLME2E}, Histogram, Sum},

	{LMCacheRetrieves, []string{LMCacheRetrieves}, Counter, Sum},
	{LMCacheRequested, []string{LMCacheRequested}, Counter, Sum},
	{LMCacheHits, []string{LMCacheHits}, Counter, Sum},

	{SimBlendHits, []string{SimBlendHits}, Counter, Sum},

	{SGLangCachedTokens, []string{SGLangCachedTokens}, Counter, Sum},
	{SGLangPromptTokens, []string{SGLangPromptTokens}, Counter, Sum},
	{SGLangHitRate, []string{SGLangHitRate}, Gauge, Mean},
	{SGLangRunning, []string{SGLangRunning}, Gauge, Sum},
	{SGLangQueue, []string{SGLangQueue}, Gauge, Sum},
	{SGLangTokenUsage, []string{SGLangTokenUsage}, Gauge, Max},
	{SGLangTTFT, []string{SGLangTTFT}, Histogram, Sum},
	{SGLangITL, []string{SGLangITL}, Histogram, Sum},
	{SGLangE2E, []string{SGLangE2E}, Histogram, Sum},
}

func defOf(key string) (Def, bool) {
	for _, d := range Defs {
		if d.Key == key {
			return d, true
		}
	}
	return Def{}, false
}
