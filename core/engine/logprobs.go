package engine

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
)

// TokenLogprob is one answer token's log-probability and the top
// alternatives the engine gave at its position (the token itself among
// them, as OpenAI's API returns it), most likely first.
type TokenLogprob struct {
	Token   string       `json:"token"`
	Logprob float64      `json:"logprob"`
	Top     []TopLogprob `json:"top"`
}

// TopLogprob is one alternative at a position.
type TopLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
}

// appendLogprobs appends one chunk's choices[0].logprobs to dst, up to k
// tokens: chat's {"content":[{"token","logprob","top_logprobs":[...]}]}
// or completions' {"tokens","token_logprobs","top_logprobs":[{tok:lp}]}.
func appendLogprobs(dst []TokenLogprob, raw json.RawMessage, completion bool, k int) ([]TokenLogprob, error) {
	if !completion {
		var c struct {
			Content []struct {
				Token   string       `json:"token"`
				Logprob float64      `json:"logprob"`
				Top     []TopLogprob `json:"top_logprobs"`
			} `json:"content"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return dst, fmt.Errorf("logprobs: %w", err)
		}
		for _, t := range c.Content {
			if len(dst) == k {
				break
			}
			dst = append(dst, TokenLogprob{Token: t.Token, Logprob: t.Logprob, Top: t.Top})
		}
		return dst, nil
	}
	var c struct {
		Tokens   []string             `json:"tokens"`
		Logprobs []*float64           `json:"token_logprobs"`
		Top      []map[string]float64 `json:"top_logprobs"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return dst, fmt.Errorf("logprobs: %w", err)
	}
	for i, tok := range c.Tokens {
		if len(dst) == k {
			break
		}
		t := TokenLogprob{Token: tok}
		if i < len(c.Logprobs) && c.Logprobs[i] != nil {
			t.Logprob = *c.Logprobs[i]
		}
		if i < len(c.Top) {
			for alt, lp := range c.Top[i] {
				t.Top = append(t.Top, TopLogprob{alt, lp})
			}
			// A JSON object has no order: most likely first, ties by token.
			slices.SortFunc(t.Top, func(a, b TopLogprob) int {
				return cmp.Or(cmp.Compare(b.Logprob, a.Logprob), cmp.Compare(a.Token, b.Token))
			})
		}
		dst = append(dst, t)
	}
	return dst, nil
}
