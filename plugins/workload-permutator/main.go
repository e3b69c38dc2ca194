// Command lmbench-workload-long-doc-permutator is the long-doc-permutator
// workload plugin: every request holds the same context documents in a
// different order, to stress blended (non-prefix) KV-cache reuse.
//
// Sharded (lmbench run --shard I/N), shard I sends permutations I, I+N,
// I+2N, … of the unsharded run's list (same ids and text) with its share
// of --ldp-num-inflight-requests; every shard sends the dummy warmup and
// the contexts, which every permutation carries (shard.go).
package main

import "github.com/lmbench/lmbench/sdk/workload"

// Options are long-doc-permutator's settings; the field values in
// Definition.Defaults are the original's defaults.
type Options struct {
	NumContexts         int `opt:"num-contexts" label:"Contexts" help:"Number of unique context documents." min:"1"`
	ContextLength       int `opt:"context-length" label:"Context length (tokens)" help:"Token length of each context, counted in pseudo-words (each costs several model tokens)." min:"1"`
	SystemPromptLength  int `opt:"system-prompt-length" label:"System prompt length (tokens)" help:"Token length of the shared system prompt. Use 0 for no system prompt." min:"0"`
	NumPermutations     int `opt:"num-permutations" label:"Permutations" help:"Number of distinct permutations to send. Capped at N! where N = --ldp-num-contexts." min:"1"`
	NumInflightRequests int `opt:"num-inflight-requests" label:"Max inflight requests" help:"Max concurrent in-flight requests. With --shard I/N the run's permutations are split by index (shard I sends permutations I, I+N, ...) and this count among the shards, each needing at least one." min:"1"`
}

// Definition is the plugin; tests drive it with sdktest.
var Definition = workload.Definition[Options]{
	Name:    "long-doc-permutator",
	Prefix:  "ldp",
	Summary: "Permutations of shared context documents (tests blended KV cache reuse)",
	Version: "0.1.0",
	TagKeys: []string{"perm", "order"},
	// Contexts and system prompt exactly their lengths in tokens when the
	// host has a tokenizer.
	CountsTokens: true,
	// Shards: permutation p belongs to shard p mod N (shard.go).
	Shards: true,
	Defaults: Options{
		NumContexts:         5,
		ContextLength:       5000,
		SystemPromptLength:  1000,
		NumPermutations:     10,
		NumInflightRequests: 1,
	},
	New: newPermutator,
}

func main() { workload.Serve(Definition) }
