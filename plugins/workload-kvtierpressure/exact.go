package main

import (
	"fmt"

	"github.com/lmbench/lmbench/sdk/workload"
)

// fillerCandidates are probed for one-token words to top texts up with.
var fillerCandidates = []string{"hi", "the", "a", "and", "of", "to", "is"}

// exactTexts sizes kv-tier-pressure in the model's tokens (the host's
// tokenizer): every document and the system prompt are the original's
// seeded words, as many as fit, topped up with one-token filler to
// exactly --ktp-context-length and --ktp-system-prompt-length tokens, so
// the pool, the working set and what the cache holds are in the unit the
// engine counts.
func (w *pressure) exactTexts(env workload.Env) error {
	ctx, tok := env.Context, env.Tokenizer
	fill, err := tok.OneTokenWords(ctx, fillerCandidates)
	if err != nil {
		return err
	}
	fill = fill[:1]
	grow := make([]func(int) string, w.pool)
	for d := range grow {
		grow[d] = func(k int) string { return randomText(k, w.vocab, w.seed+1+int64(d)) }
	}
	if w.texts, err = tok.FitTexts(ctx, grow, fill, w.o.ContextLength); err != nil {
		return fmt.Errorf("context-length %d: %w", w.o.ContextLength, err)
	}
	if w.o.SystemPromptLength > 0 {
		s, err := tok.FitTexts(ctx, []func(int) string{func(k int) string { return randomText(k, w.vocab, w.seed+2) }},
			fill, w.o.SystemPromptLength)
		if err != nil {
			return fmt.Errorf("system-prompt-length %d: %w", w.o.SystemPromptLength, err)
		}
		w.system = s[0]
	}
	return nil
}
