// Command lmbench-workload-multi-round-chat is the multi-round-chat workload
// plugin: concurrent chat sessions whose conversations grow round by round,
// sent at a fixed rate (or in a Poisson or bursty stream), to measure KV-cache reuse of long chat histories.
package main

import (
	"github.com/lmbench/lmbench/sdk/arrival"
	"github.com/lmbench/lmbench/sdk/workload"
)

// Options are multi-round-chat's settings; the field values in
// Definition.Defaults are the original's defaults. The number of sessions
// is derived: --kv-cache-volume × --tokens-per-gb-kvcache divided by
// (shared-prompt-length + chat-history-length), at least 1, or, with the
// host's tokenizer, by a warmup prompt's tokens (exact.go).
type Options struct {
	SharedPromptLength int     `opt:"shared-prompt-length" label:"System prompt length (tokens)" help:"System prompt token length. Sessions = --kv-cache-volume × --tokens-per-gb-kvcache / (this + --mrc-chat-history-length), at least 1; with the engine's tokenizer (--tokenizer), / a warmup prompt's tokens, the chat template included." min:"1"`
	ChatHistoryLength  int     `opt:"chat-history-length" label:"Chat history length (tokens)" help:"Pre-filled chat history token length." min:"1"`
	UserInputLength    int     `opt:"user-input-length" label:"User input length (tokens)" help:"Tokens per user query." min:"1"`
	OutputLength       int     `opt:"output-length" label:"Output length (tokens)" help:"Max tokens to generate per response." min:"1"`
	QPS                float64 `opt:"qps" label:"Queries per second" help:"Queries per second, the mean rate of --mrc-arrival (constant: request k is due k/qps seconds after the start). Requests go round-robin over the sessions; a session with an answer outstanding holds the queue until it is answered."`
	Arrival            string  `opt:"arrival" label:"Arrival process" enum:"constant,poisson,gamma" help:"How measured requests arrive at --mrc-qps: constant (request k due at k/qps, as the original), poisson (exponential gaps) or gamma (bursty gaps of shape --mrc-burstiness, as vLLM's --burstiness); drawn from --seed and, as vLLM does, rescaled so that as many requests fall in the duration as with constant."`
	Burstiness         float64 `opt:"burstiness" label:"Burstiness (gamma shape)" help:"Shape of --mrc-arrival gamma, as vLLM's --burstiness: the gaps' coefficient of variation is 1/sqrt(burstiness), so below 1 is burstier than Poisson, above 1 smoother, 1 is Poisson. Must be > 0, and 1 with the other arrivals."`
	Duration           float64 `opt:"duration" label:"Duration (seconds)" help:"Benchmark duration in seconds. No request is sent after it; those already sent are awaited."`
	MaxRounds          int     `opt:"max-rounds" label:"Max rounds per conversation" advanced:"true" min:"0" help:"Answered rounds after which a session starts a new conversation (its system prompt and pre-filled history, without the rounds), and its answers are released; 0 = never, as the original: the history then grows for the whole run."`
}

// Definition is the plugin; tests drive it with sdktest.
var Definition = workload.Definition[Options]{
	Name:              "multi-round-chat",
	Prefix:            "mrc",
	Summary:           "Multi-turn chat with stateful sessions",
	Version:           "0.1.0",
	TagKeys:           []string{"session", "round"},
	WantsResponseText: true,
	// Prompts, histories and queries exactly their lengths in tokens when
	// the host has a tokenizer.
	CountsTokens: true,
	Defaults: Options{
		SharedPromptLength: 2000,
		ChatHistoryLength:  10000,
		UserInputLength:    50,
		OutputLength:       200,
		QPS:                1.0,
		Arrival:            arrival.Constant,
		Burstiness:         1,
		Duration:           60.0,
	},
	// Shards by session (shard.go).
	Shards: true,
	New:    newMultiRoundChat,
}

func main() { workload.Serve(Definition) }
