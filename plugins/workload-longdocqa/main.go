// Command lmbench-workload-long-doc-qa is the long-doc-qa workload plugin:
// repeated questions over long documents, to measure KV-cache reuse.
package main

import "github.com/lmbench/lmbench/sdk/workload"

// Options are long-doc-qa's settings; the field values in Definition.Defaults
// are the original's defaults.
type Options struct {
	DocumentLength      int    `opt:"document-length" label:"Document length (tokens)" help:"Token length per document." min:"1"`
	QueryPerDocument    int    `opt:"query-per-document" label:"Queries per document" help:"Questions per document." min:"1"`
	ShufflePolicy       string `opt:"shuffle-policy" label:"Shuffle policy" enum:"random,tile" help:"Request ordering."`
	NumInflightRequests int    `opt:"num-inflight-requests" label:"Max inflight requests" help:"Max concurrent in-flight requests, the whole run's: --shard I/N divides it among the shards, which split the documents." min:"1"`
}

// Definition is the plugin; tests drive it with sdktest.
var Definition = workload.Definition[Options]{
	Name:    "long-doc-qa",
	Prefix:  "ldqa",
	Summary: "Repeated Q&A over long documents (tests KV cache reuse)",
	Version: "0.1.0",
	TagKeys: []string{"doc", "query"},
	// Documents exactly document-length tokens when the host has a tokenizer.
	CountsTokens: true,
	Defaults: Options{
		DocumentLength:      10000,
		QueryPerDocument:    2,
		ShufflePolicy:       "random",
		NumInflightRequests: 3,
	},
	// Shards by document (shard.go).
	Shards: true,
	New:    newLongDocQA,
}

func main() { workload.Serve(Definition) }
