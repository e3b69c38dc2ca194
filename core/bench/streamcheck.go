package bench

import (
	"sync"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/stats"
	"github.com/lmbench/lmbench/sdk/host/runloop"
)

// streamLogLimit is how many requests of each kind the stream checks
// name in the log; the summary counts them all.
const streamLogLimit = 5

// streamChecks flag, request by request, answers lmbench cannot take at
// their word: output shorter than max_tokens under ignore_eos (an engine
// that ignores it: Ollama, TGI) and streams whose tokens arrived in far
// fewer chunks than their usage counts (stats.CoarseStream).
type streamChecks struct {
	ignoreAll bool // --ignore-eos
	log       zerolog.Logger

	mu            sync.Mutex
	short, coarse int
}

func (s *streamChecks) observe(rec *record.Record, out *runloop.Outgoing) {
	if !rec.Success {
		return
	}
	short := (out.IgnoreEOS || s.ignoreAll) && out.MaxTokens > 0 && rec.OutputTokens < int64(out.MaxTokens)
	coarse := stats.CoarseStream(rec)
	if !short && !coarse {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if short {
		s.short++
		if s.short <= streamLogLimit {
			s.log.Warn().Str("request", rec.RequestID).Int64("output_tokens", rec.OutputTokens).Int("max_tokens", out.MaxTokens).
				Str("finish_reason", rec.FinishReason).
				Msgf("request %s: %d output tokens of the %d asked for under ignore_eos: the engine ignored it",
					rec.RequestID, rec.OutputTokens, out.MaxTokens)
		}
	}
	if coarse && rec.Phase == record.Measure {
		s.coarse++
		if s.coarse <= streamLogLimit {
			s.log.Warn().Str("request", rec.RequestID).Int64("chunks", rec.Chunks).Int64("usage_output_tokens", rec.UsageOutputTokens).
				Msgf("request %s: %d output tokens arrived in %d chunks: its decode speed, TPOT and ITL are left out (n/a)",
					rec.RequestID, rec.UsageOutputTokens, rec.Chunks)
		}
	}
}

// shortCount is how many requests ended short under ignore_eos.
func (s *streamChecks) shortCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.short
}
