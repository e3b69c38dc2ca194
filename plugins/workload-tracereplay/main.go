// Command lmbench-workload-trace-replay replays a request trace: the
// Mooncake format (timestamp, input_length, output_length, hash_ids) or a
// plain JSONL or CSV of time, input and output lengths, each request at its
// own (sped-up) time, with prompts that share exactly the blocks the trace
// says they share.
package main

import "github.com/lmbench/lmbench/sdk/workload"

// Options are trace-replay's settings.
type Options struct {
	Trace       string  `opt:"trace" label:"Trace file" help:"The trace to replay: JSON lines (Mooncake's timestamp/input_length/output_length/hash_ids, or the first three alone) or a CSV with a header naming timestamp, input_length and output_length. Timestamps are milliseconds. It is checked in full before anything is sent. With --shard I/N, shard I replays the window's requests I, I+N, … (by position), each at its own time."`
	Format      string  `opt:"format" label:"Trace format" enum:"auto,mooncake,jsonl,csv" help:"auto: csv for a .csv file, otherwise mooncake when the first line has hash_ids, else jsonl. mooncake requires hash_ids on every line; jsonl and csv give every request unique text (no sharing)."`
	Speedup     float64 `opt:"speedup" label:"Speed-up factor" help:"Divides every gap between timestamps: 10 replays an hour of trace in 6 minutes. Must be > 0."`
	BlockSize   int     `opt:"block-size" label:"Block size (tokens per hash id)" help:"Tokens covered by one hash id (Mooncake's traces: 512): every hash id but a request's last covers a full block, so len(hash_ids) must be ceil(input_length / block-size)." min:"1"`
	MaxRequests int     `opt:"max-requests" label:"Max requests" help:"Replay at most this many requests of the window; 0 = all." min:"0"`
	Start       float64 `opt:"start" label:"Window start (s)" help:"Skip the requests whose timestamp is earlier than this many seconds of trace time; the first one replayed is sent at once." min:"0" advanced:"true"`
	IgnoreEOS   bool    `opt:"ignore-eos" label:"Exact output lengths (ignore EOS)" help:"Ask the engine for exactly each request's output_length tokens (ignore_eos and min_tokens, which vLLM and SGLang honour), so answers do not end early at the end-of-sequence token. false: max_tokens alone, the engine may stop sooner."`
	Duration    float64 `opt:"duration" label:"Window length (s)" help:"Replay only the requests within this many seconds of trace time from --tr-start (before the speed-up); 0 = to the end." min:"0" advanced:"true"`
}

// Definition is the plugin; tests drive it with sdktest.
var Definition = workload.Definition[Options]{
	Name:    "trace-replay",
	Prefix:  "tr",
	Summary: "Replays a Mooncake-format or plain JSONL/CSV trace at its own times, sharing the blocks it says are shared",
	Version: "0.1.0",
	// line: the trace line; shared_blocks: leading hash ids an earlier
	// request of the replay already sent in full (the prefix a cache can
	// hit); first_hash_id: the first hash id (Mooncake's traces group
	// requests by it).
	TagKeys:  []string{"line", "shared_blocks", "first_hash_id"},
	Defaults: Options{Format: "auto", Speedup: 1, BlockSize: 512, IgnoreEOS: true},
	// Shards by request ordinal in the window (shard.go).
	Shards: true,
	// With the host's tokenizer, lengths are the model's tokens
	// (tokens.go); without one, words.
	CountsTokens: true,
	New:          newReplay,
}

func main() { workload.Serve(Definition) }
