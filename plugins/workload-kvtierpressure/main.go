// Command lmbench-workload-kv-tier-pressure is the original's
// kv-tier-pressure workload: a document pool larger than the KV cache the
// server reports, so a tier must spill, swept once in warmup, then read
// with Zipf-skewed access; at the end it checks that the tier below the
// reported capacity really served reads.
//
// Sharded (lmbench run --shard I/N), shard I sends sweep requests I, I+N,
// … and measured requests I, I+N, … of the unsharded run's plan, with its
// share of --ktp-num-inflight-requests (shard.go).
package main

import "github.com/lmbench/lmbench/sdk/workload"

// Options are kv-tier-pressure's settings, with the original's names and
// defaults (its --ktp-* flags).
type Options struct {
	PoolSize            int     `opt:"pool-size" label:"Document pool" help:"Documents in the pool: the working set is pool-size x context-length tokens. 0 = ceil(overflow-factor x --kv-cache-volume x tokens per GB / context-length), so the pool overflows the cache the server reports." min:"0"`
	DocsPerRequest      int     `opt:"docs-per-request" label:"Documents per request" help:"Documents drawn into each request, concatenated after the system prompt. Above 1 a document sits at a different offset in almost every prompt, so only an engine that blends (CacheBlend) reuses it; 1 keeps every prompt prefix-stable." min:"1"`
	ContextLength       int     `opt:"context-length" label:"Document length (tokens)" help:"Length of each document." min:"1"`
	SystemPromptLength  int     `opt:"system-prompt-length" label:"System prompt length (tokens)" help:"Length of the system prompt every request shares; 0 = none." min:"0"`
	NumRequests         int     `opt:"num-requests" label:"Measured requests" help:"Requests sent after the warm-up sweep." min:"1"`
	OverflowFactor      float64 `opt:"overflow-factor" label:"Overflow factor" help:"Working set as a multiple of the reported cache when --ktp-pool-size is 0: 2 means half of it cannot be resident. Must be > 0."`
	AccessSkew          float64 `opt:"access-skew" label:"Access skew (Zipf exponent)" help:"Document popularity: 0 draws uniformly; s > 0 weighs document r by 1/(r+1)^s, concentrating reads on a hot few. Drawn from --seed." min:"0"`
	VocabSize           int     `opt:"vocab-size" label:"Vocabulary size" help:"Distinct words document text is drawn from." min:"1"`
	NumInflightRequests int     `opt:"num-inflight-requests" label:"Max inflight requests" help:"Requests in flight at once, in the sweep and in the measured phase. With --shard I/N both phases are split by request index (shard I sends requests I, I+N, ... of each) and this count among the shards, each needing at least one." min:"1"`
	MaxOutputLength     int     `opt:"max-output-length" label:"Max output length" help:"max_tokens of a measured request; 1 isolates the prefill, which is what a cache tier changes." min:"1"`
}

// Definition is the plugin; tests drive it with sdktest.
var Definition = workload.Definition[Options]{
	Name:    "kv-tier-pressure",
	Prefix:  "ktp",
	Summary: "Documents from a pool larger than the KV cache, Zipf-skewed, so a lower cache tier must serve reads",
	Version: "0.1.0",
	// docs: the request's documents, in prompt order; resident: how many
	// of them a cache of the reported capacity alone would hold (an LRU
	// over the run's own stream).
	TagKeys: []string{"docs", "resident"},
	// Shards: sweep and measured request k belong to shard k mod N (shard.go).
	Shards: true,
	// With the host's tokenizer, documents are the model's tokens
	// (exact.go); without one, words.
	CountsTokens: true,
	Defaults: Options{DocsPerRequest: 16, ContextLength: 2560, SystemPromptLength: 256, NumRequests: 200,
		OverflowFactor: 2, VocabSize: 8000, NumInflightRequests: 8, MaxOutputLength: 1},
	New: newPressure,
}

func main() { workload.Serve(Definition) }
