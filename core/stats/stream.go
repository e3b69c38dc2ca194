package stats

import "github.com/lmbench/lmbench/core/record"

// A stream is too coarse to time its tokens when the engine's usage says
// at least coarseMinTokens output tokens and they arrived in chunks of
// coarseTokensPerChunk tokens or more on average: an engine that buffers
// its answer (128 tokens in one chunk gives a decode speed of millions of
// tokens per second and a TPOT of 0). Speculative decoding's few tokens
// per step stay below it.
const (
	coarseMinTokens      = 16
	coarseTokensPerChunk = 8
)

// CoarseStream reports whether a successful request's output tokens
// arrived in far fewer chunks than its usage counts: its decode speed,
// TPOT and ITL say nothing about the engine's decoding and are left out.
// A record without a chunk count (a version-1 journal) is never coarse.
func CoarseStream(r *record.Record) bool {
	return r.Success && r.Chunks >= 1 && r.UsageOutputTokens >= coarseMinTokens &&
		r.Chunks*coarseTokensPerChunk <= r.UsageOutputTokens
}
