package sim

import "strconv"

// topLogprobs is how many alternatives per token the request asked for:
// chat's "logprobs":true with top_logprobs (at least the token itself),
// completions' "logprobs":K; 0: none.
func (p params) topLogprobs(chat bool) int {
	if chat {
		if string(p.Logprobs) != "true" {
			return 0
		}
		return min(max(p.TopLogprobs, 1), 20)
	}
	k, err := strconv.Atoi(string(p.Logprobs))
	if err != nil || k <= 0 {
		return 0
	}
	return min(k, 20)
}

// logprobs are a streamed token's made-up log-probabilities in the API's
// shape (nil when not asked): fixed by the token's text, so two runs agree;
// the token itself is the most likely, then alternatives alt1, alt2, ….
func (r reply) logprobs(text string) any {
	if r.top == 0 {
		return nil
	}
	lp := -0.125 * float64(1+len(text)%4)
	type alt struct {
		Token   string  `json:"token"`
		Logprob float64 `json:"logprob"`
	}
	top := []alt{{text, lp}}
	for i := 1; i < r.top; i++ {
		top = append(top, alt{"alt" + strconv.Itoa(i), lp - float64(i)})
	}
	if r.chat {
		bytes := make([]int, len(text)) // OpenAI's bytes: the token's UTF-8, as numbers
		for i := range len(text) {
			bytes[i] = int(text[i])
		}
		return map[string]any{"content": []map[string]any{{"token": text, "logprob": lp, "bytes": bytes, "top_logprobs": top}}}
	}
	m := map[string]float64{}
	for _, a := range top {
		m[a.Token] = a.Logprob
	}
	return map[string]any{"tokens": []string{text}, "token_logprobs": []float64{lp}, "top_logprobs": []map[string]float64{m}, "text_offset": []int{0}}
}
