package stats

import (
	"math"

	"github.com/lmbench/lmbench/core/record"
)

// PromptCheck sets the prompt lengths a workload stated (by the host's
// tokenizer) beside the engine's usage.prompt_tokens, over the successful
// requests that stated one and got a usage count.
type PromptCheck struct {
	Requests int64 // requests compared
	Stated   int64 // their stated prompt tokens, summed
	Measured int64 // the engine's prompt tokens for them, summed
	// Differing counts the requests whose two counts differ.
	Differing int64
}

// MeanDifference is (measured - stated) per request compared, NaN when
// none was.
func (p PromptCheck) MeanDifference() float64 {
	if p.Requests == 0 {
		return math.NaN()
	}
	return float64(p.Measured-p.Stated) / float64(p.Requests)
}

func (b *Builder) addPrompt(r *record.Record) {
	if r.StatedPromptTokens <= 0 || !r.Success || r.InputTokens <= 0 {
		return
	}
	p := &b.prompts.measure
	if r.Phase != record.Measure {
		p = &b.prompts.warmup
	}
	p.Requests++
	p.Stated += r.StatedPromptTokens
	p.Measured += r.InputTokens
	if r.StatedPromptTokens != r.InputTokens {
		p.Differing++
	}
}
