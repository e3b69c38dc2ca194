// Command lmbench-workload-prefix-suffix-tuner is the prefix-suffix-tuner
// workload plugin: a two-pass, strictly sequential workload that shows what
// each tier of a tiered KV cache (GPU, CPU, disk) is worth.
//
// Every request is one user message
//
//	PREFIX_<8 hex> <prefix body> BR_<8 hex> <breaker body> SUFFIX <suffix body>
//
// with one of num-prefixes distinct prefixes, a breaker drawn afresh for
// every request (so nothing after the prefix can be reused by ordinary
// prefix caching), and one suffix shared by every request (the only text
// CacheBlend-style chunk reuse can find). Bodies are pseudo-words from the
// long-doc-permutator's vocabulary pool, each component with its own seed:
// prefix i uses seed+1000+i, the suffix seed+1, the breakers one stream
// seeded with seed+2; all are bit-exact with CPython's random module.
//
// Pass 1 (warmup) sends every prefix once in pool order; pass 2 (measured)
// sends them again in the same order, one request in flight at a time. The
// pool is sized from --psf-thrash, the size of the tier to overflow, as the
// original design document says: num_prefixes = floor(thrash × 1.05 ×
// tokens_per_gb / prefix_tokens), so the prefixes alone hold 1.05 times the
// tier. (The original's later code divides by context_length instead.)
// Under LRU and same-order replay any overflow makes every pass-2 request
// miss the targeted tier: each miss evicts exactly the prefix needed next.
// Sizing by prefix tokens guarantees that whatever else the tier keeps of
// the breakers and suffix; when rounding leaves a pool of few, large
// prefixes no larger than the tier, the plugin warns.
//
// This is the design document's version. The original's stored code
// differs (spec §11): its bodies are numbers, "hi" filler or
// tokenizer-decoded ids rather than pseudo-words, it sizes the pool by
// context_length, and its last version adds a throwaway engine warmup
// request and a 5 s settle sleep after pass 1; none of that is done here.
// --kv-cache-volume is not used (the host still checks it is positive).
//
// It refuses lmbench run --shard: N shards would put N requests in flight
// and interleave pass 2's order, so no split keeps what it measures
// (shard.go).
package main

import "github.com/lmbench/lmbench/sdk/workload"

// Options are prefix-suffix-tuner's settings; the field values in
// Definition.Defaults are the original's defaults.
type Options struct {
	ContextLength int     `opt:"context-length" label:"Context length (tokens)" help:"Total tokens per request (prefix + breaker + suffix)." min:"1"`
	PrefixRatio   float64 `opt:"prefix-ratio" label:"Prefix ratio" help:"Fraction of context-length used by the prefix; must be in (0.0, 1.0); the remainder minus a 32-token breaker is the suffix shared by every request (at least 100 tokens)."`
	Thrash        float64 `opt:"thrash" label:"Target tier size (GB)" help:"Size in GB of the KV-cache tier to overflow. For GPU only, give the GPU tier (the engine's prefix cache in HBM): every measured request is a cold prefill. For GPU+CPU+disk, with or without CacheBlend, give the CPU tier (LMCache's DRAM): every measured request misses it and is served from disk. The pool is sized by prefix tokens: floor(thrash x 1.05 x tokens-per-gb-kvcache / prefix tokens) prefixes (at least 1), so the prefixes alone hold 1.05 times the tier (breakers and suffix come on top); pass 2 replays pass 1's order one request at a time, and under LRU each miss evicts the prefix needed next. --kv-cache-volume is not used."`
}

// Definition is the plugin; tests drive it with sdktest.
var Definition = workload.Definition[Options]{
	Name:    "prefix-suffix-tuner",
	Prefix:  "psf",
	Summary: "Two-pass sequential workload demonstrating tiered KV cache reuse (pool sized by --psf-thrash to overflow one tier; one request at a time, so it refuses --shard)",
	Version: "0.1.0",
	TagKeys: []string{"prefix", "pass"},
	// Prefixes, suffix and breakers exactly their sizes in tokens, and the
	// pool sized from them, when the host has a tokenizer.
	CountsTokens: true,
	// Shards only to refuse --shard with the reason (shard.go): the plan
	// is not split.
	Shards: true,
	Defaults: Options{
		ContextLength: 8000,
		PrefixRatio:   0.8,
		Thrash:        20.0,
	},
	New: newTuner,
}

func main() { workload.Serve(Definition) }
