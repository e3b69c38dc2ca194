package report

import (
	"math"

	"github.com/lmbench/lmbench/core/stats"
)

// withPrompts adds the tokenizer and the stated-versus-measured prompt
// tokens after lmbench's other additions, when the run recorded a
// tokenizer (a re-export of an older journal has none).
func withPrompts(doc []kv, tokenizer string, warmup, measure stats.PromptCheck) []kv {
	if tokenizer == "" {
		return doc
	}
	return append(doc, kv{"prompt_tokens", []kv{
		{"tokenizer", tokenizer},
		{"warmup", promptJSON(warmup)},
		{"measure", promptJSON(measure)},
	}})
}

func promptJSON(p stats.PromptCheck) []kv {
	if p.Requests == 0 { // nothing stated: the comparison is not defined
		return []kv{{"requests", int64(0)}, {"stated", nil}, {"measured", nil}, {"differing", nil}, {"mean_difference", math.NaN()}}
	}
	return []kv{
		{"requests", p.Requests},
		{"stated", p.Stated},
		{"measured", p.Measured},
		{"differing", p.Differing},
		{"mean_difference", p.MeanDifference()},
	}
}

// promptEntries are the terminal lines, only when some request stated
// its length.
func promptEntries(tokenizer string, warmup, measure stats.PromptCheck) []entry {
	if warmup.Requests == 0 && measure.Requests == 0 {
		return nil
	}
	out := []entry{{"Tokenizer", tokenizer}}
	for _, ph := range []struct {
		name string
		p    stats.PromptCheck
	}{{"Warmup", warmup}, {"Measured", measure}} {
		if ph.p.Requests == 0 {
			continue
		}
		out = append(out,
			entry{ph.name + " stated prompt tokens", ph.p.Stated},
			entry{ph.name + " engine prompt tokens", ph.p.Measured},
			entry{ph.name + " requests differing", ph.p.Differing},
		)
	}
	return out
}
