// Command lmbench-workload-needle-qa is the needle-qa workload plugin:
// questions whose answers are facts planted in long documents, each answer
// scored, to check that a cache which makes answers faster leaves them
// right.
package main

import "github.com/lmbench/lmbench/sdk/workload"

// Options are needle-qa's settings.
type Options struct {
	DocumentLength   int    `opt:"document-length" label:"Document length (tokens)" help:"Length of each document in tokens (whitespace words), its facts included." min:"20"`
	Documents        int    `opt:"documents" label:"Documents" help:"Number of documents; --shard I/N splits them (with the permuted variant, their groups of --nqa-documents-per-prompt)." min:"1"`
	FactsPerDocument int    `opt:"facts-per-document" label:"Facts per document" help:"Facts planted in each document." min:"1"`
	Depth            string `opt:"depth" label:"Depths" help:"Where the facts sit in their document, as fractions of its length (0 = the start, 1 = the end), comma-separated; fact i goes to the i-th depth, round robin."`
	QuestionsPerFact int    `opt:"questions-per-fact" label:"Questions per fact" help:"Times each fact is asked about (identical prompts: the same answer is expected each time)." min:"1"`
	Variant          string `opt:"variant" label:"Variant" enum:"prefix,permuted" help:"prefix: a question follows its one document (prefix reuse); permuted: it follows its document's group of --nqa-documents-per-prompt documents in a shuffled order, so documents are reused away from the prompt's start (CacheBlend's case)."`
	DocsPerPrompt    int    `opt:"documents-per-prompt" label:"Documents per prompt" help:"Documents in a permuted question's prompt (the permuted variant)." min:"2"`
	MaxTokens        int    `opt:"max-tokens" label:"Answer tokens" help:"max_tokens of each question: room for the answer." min:"1"`
	InFlight         int    `opt:"num-inflight-requests" label:"Max inflight requests" help:"Max concurrent in-flight questions, the whole run's: --shard I/N divides it among the shards." min:"1"`
}

// Definition is the plugin; tests drive it with sdktest.
var Definition = workload.Definition[Options]{
	Name:    "needle-qa",
	Prefix:  "nqa",
	Summary: "Questions about facts planted in long documents, each answer scored (is the cached answer right?)",
	Version: "0.1.0",
	TagKeys: []string{"depth", "doc", "fact", "ask"},
	// Each answer is scored against its fact (Score).
	WantsResponseText: true,
	ScoreKeys:         []string{scoreExact, scoreContains},
	// The same question should get the same answer, run after run.
	Deterministic: true,
	Defaults: Options{
		DocumentLength:   2000,
		Documents:        4,
		FactsPerDocument: 3,
		Depth:            "0.1,0.5,0.9",
		QuestionsPerFact: 1,
		Variant:          variantPrefix,
		DocsPerPrompt:    3,
		MaxTokens:        16,
		InFlight:         2,
	},
	// Shards by document, or by group of documents (shard.go).
	Shards: true,
	New:    newNeedleQA,
}

func main() { workload.Serve(Definition) }
