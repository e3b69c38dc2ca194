package main

import (
	"math/rand/v2"
	"strings"

	"github.com/lmbench/lmbench/sdk/pseudoword"
)

// vocabSize is the number of distinct words prompts are drawn from: a
// power of two, so a word carries idBits bits of a block's hash id.
const (
	vocabSize = 1 << idBits
	idBits    = 12
	// idWords is how many leading words of a block spell its hash id
	// (6 x 12 bits cover every int64), so no two ids share a block's text.
	idWords = 6
)

// textStream is the second word of the PCG seed of block text, so it
// differs from anything else drawn from the run seed.
const textStream = 0x7472616365_7478 // "tracetx"

// prompts builds prompt text from hash ids: block after block, each the
// words of its id alone (never of its position or request), so requests
// that share hash ids share exactly those blocks of text, and a block's
// first idWords words spell its id, so different ids never share a block
// of idWords words or more (a shorter one spells only its id's low
// 12-bit digits: ids below 4,096 still differ in its first word).
//
// Without a tokenizer a word is one token (lmbench's built-in engine
// counts whitespace-separated words). With one (inTokens), cost holds each
// word's tokens after a space and a block is exactly its length in the
// model's tokens: its words while they fit, then one-token words (ones).
type prompts struct {
	vocab     []string // vocabSize words, none containing whitespace
	seed      uint64
	blockSize int
	cost      []int    // tokens of " "+vocab[i]; nil: a word is a token
	ones      []string // one-token words that top a block up (with cost)
}

func newPrompts(seed int64, blockSize int) *prompts {
	return &prompts{vocab: pseudoword.Vocab(vocabSize, 0), seed: uint64(seed), blockSize: blockSize}
}

// text is the prompt of input words over hash ids: every block but the
// last is blockSize words, the last is what input leaves (a prefix of that
// id's full block).
func (p *prompts) text(ids []int64, input int) string {
	var b strings.Builder
	b.Grow(input * 8)
	for k, id := range ids {
		n := min(p.blockSize, input-k*p.blockSize)
		if n <= 0 {
			break
		}
		if k > 0 {
			b.WriteByte(' ')
		}
		p.block(&b, id, n)
	}
	return b.String()
}

// block writes the first n words of the block of hash id: its id in
// base vocabSize, then words drawn from (seed, id).
func (p *prompts) block(b *strings.Builder, id int64, n int) {
	r := rand.New(rand.NewPCG(p.seed^uint64(id)*0x9e3779b97f4a7c15, textStream))
	left := n // tokens (words without a tokenizer) still to write
	for j := 0; left > 0; j++ {
		var w int
		if j < idWords {
			w = int(uint64(id)>>(idBits*j)) & (vocabSize - 1)
		} else {
			w = r.IntN(vocabSize)
		}
		word, cost := p.vocab[w], 1
		if p.cost != nil {
			cost = p.cost[w]
		}
		if cost > left { // the model's tokens: top up with one-token words
			word, cost = p.ones[j%len(p.ones)], 1
		}
		if j > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(word)
		left -= cost
	}
}
