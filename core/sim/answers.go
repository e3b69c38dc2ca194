package sim

import (
	"math/rand/v2"
	"regexp"
	"strings"

	"github.com/lmbench/lmbench/core/sim/prefixcache"
)

// Answers (Config.Answers): the engine answers a needle question from
// the prompt it received, as a model that reads perfectly would. The
// question is the prompt's last "What is the X?"; the answer is V from a
// sentence "The X is V." in the prompt, or dontKnow when there is none.
// So a workload that plants facts and asks for them (needle-qa) scores
// 100% whenever the fact reached the engine, and
// Faults.BlendCorrupt shows what a cache that loses it looks like.

// dontKnow is the answer to a question the prompt does not answer.
const dontKnow = "I do not know."

var askedFor = regexp.MustCompile(`What is the ([^?\n]+)\?`)

// needleAnswer answers the prompt's last needle question from text.
func needleAnswer(text string) string {
	qs := askedFor.FindAllStringSubmatch(text, -1)
	if len(qs) == 0 {
		return dontKnow
	}
	subject := qs[len(qs)-1][1]
	stated := regexp.MustCompile(`The ` + regexp.QuoteMeta(subject) + ` is (\S+?)\.(?:\s|$)`)
	if m := stated.FindStringSubmatch(text); m != nil {
		return m[1]
	}
	return dontKnow
}

// answerTokens is answer as output tokens: its words, each after a space
// but the first (as the vocabulary's tokens are).
func answerTokens(answer string) []string {
	words := strings.Fields(answer)
	for i := 1; i < len(words); i++ {
		words[i] = " " + words[i]
	}
	return words
}

// corrupted reports which blended chunks lose their content
// (Faults.BlendCorrupt): each with probability rate, drawn from the seed
// and the chunk's content, so the same chunk is lost in every request
// and every run with the same seed, whatever the arrival order.
func corrupted(blend []prefixcache.Hit, rate float64, seed int64) []prefixcache.Hit {
	if rate <= 0 {
		return nil
	}
	var out []prefixcache.Hit
	for _, h := range blend {
		if rand.New(rand.NewPCG(uint64(seed), h.Hash())).Float64() < rate {
			out = append(out, h)
		}
	}
	return out
}

// answerFor is the answer hook of a request with Config.Answers (nil
// without): the prompt's text, less the tokens of corrupted blended
// chunks, answers the question; the completion ends with the answer
// (finish_reason stop) unless max_tokens cuts it short.
func (c *completion) answerFor() func([]prefixcache.Hit) []string {
	cfg := c.s.cfg
	if !cfg.Answers {
		return nil
	}
	return func(blend []prefixcache.Hit) []string {
		prompt := c.prompt
		if lost := corrupted(blend, cfg.Faults.BlendCorrupt, cfg.Faults.Seed); len(lost) > 0 {
			prompt = make([]string, 0, len(c.prompt))
			gone := make([]bool, len(c.prompt))
			for _, h := range lost {
				for i := h.At; i < min(h.At+cfg.BlockSize, len(gone)); i++ {
					gone[i] = true
				}
			}
			for i, tok := range c.prompt {
				if !gone[i] {
					prompt = append(prompt, tok)
				}
			}
			c.s.engine.stats.blendCorrupted.Add(int64(len(lost)))
		}
		words := answerTokens(needleAnswer(c.s.tok.Detokenize(prompt)))
		c.rep.stop = len(words) <= c.maxTokens
		c.maxTokens = min(c.maxTokens, len(words))
		return words
	}
}
