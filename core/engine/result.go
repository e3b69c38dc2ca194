package engine

import "time"

// Result is the measured outcome of one request. All four timestamps are
// taken with the Sender's clock (time.Now by default, so they carry Go's
// monotonic reading and differences between them are immune to wall-clock
// jumps).
//
// A chunk with output is one whose delta carries content (or reasoning)
// text or tool-call text (an id, a name or an arguments fragment): tool
// calls are generated tokens like any other.
//
// A failed request keeps ID, Submit, Finish and Error; its content fields
// (Text, ToolCalls, FirstToken, LastToken, token counts, Chunks,
// ChunkTimes, ITL and what the engine said about its answer) are zero, as
// in the original tool, except a stream that ended with [DONE] but carried
// no output: it keeps the usage, the finish reason, the response id and
// the model the engine reported.
type Result struct {
	ID      string
	Success bool
	Error   string // non-empty for every failure
	Text    string // concatenated streamed content
	// ToolCalls are the function calls the answer streamed, assembled from
	// their deltas and in the order of their indexes; nil if none.
	ToolCalls []ToolCall

	Submit     time.Time // right before the HTTP call
	FirstToken time.Time // first chunk with output; zero if none
	LastToken  time.Time // last chunk with output
	Finish     time.Time // end of the stream ([DONE] or the failure)

	InputTokens  int // usage.prompt_tokens, 0 if absent
	OutputTokens int // usage.completion_tokens if > 0, else Chunks
	// CachedTokens is usage.prompt_tokens_details.cached_tokens, else
	// llama.cpp's timings.cache_n; 0 if both are absent.
	CachedTokens int
	// UsageOutputTokens is usage.completion_tokens as the engine reported
	// it, 0 if absent: unlike OutputTokens it never falls back to Chunks,
	// so a reader can tell a count from an estimate.
	UsageOutputTokens int
	Chunks            int // chunks with output
	// ChunkTimes are the arrival times of the chunks with output (exactly
	// those counted in Chunks), as offsets from Submit, in order: the
	// first MaxChunkTimes of them. ChunkTimes[0] is FirstToken-Submit.
	ChunkTimes []time.Duration
	// ITL is the mean gap between successive chunks with output,
	// (LastToken-FirstToken)/(Chunks-1); 0 with fewer than two chunks.
	ITL time.Duration

	// What the engine said about its answer, "" when it did not say:
	// FinishReason is the last non-empty finish_reason of the first
	// choice ("stop", "length", "tool_calls", …); ResponseID and
	// ResponseModel are the first non-empty "id" and "model" of the
	// chunks (engines repeat them in every chunk).
	FinishReason  string
	ResponseID    string
	ResponseModel string

	// Logprobs are the first Request.TopLogprobs tokens' log-probabilities
	// and their top alternatives, where the engine returned them; nil
	// when not asked or not returned.
	Logprobs []TokenLogprob
}

// MaxChunkTimes caps Result.ChunkTimes: 16,384 offsets (128 KiB) per
// request at most. A longer answer keeps the times of its first chunks and
// its full Chunks count. It equals record.MaxChunkOffsets (a test in
// core/bench keeps them equal; engine does not import record).
const MaxChunkTimes = 16384

// TTFT is the time to first token in seconds, or -1 for a failed request
// (the original's convention).
func (r Result) TTFT() float64 {
	if !r.Success {
		return -1.0
	}
	return r.FirstToken.Sub(r.Submit).Seconds()
}

// Latency is Finish-Submit in seconds, for failed requests too.
func (r Result) Latency() float64 {
	return r.Finish.Sub(r.Submit).Seconds()
}

// DecodeSpeed is the original's formula, OutputTokens/(Finish-FirstToken)
// in tokens per second, or 0 when there was no first token or no time
// between it and the end. The first token is counted although the interval
// starts at it, so with max_tokens=1 the value is large and noisy.
func (r Result) DecodeSpeed() float64 {
	if r.FirstToken.IsZero() {
		return 0
	}
	d := r.Finish.Sub(r.FirstToken).Seconds()
	if d <= 0 {
		return 0
	}
	return float64(r.OutputTokens) / d
}
