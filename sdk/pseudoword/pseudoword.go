// Package pseudoword draws the deterministic pseudo-word vocabulary of the
// original tool's long-doc-permutator (also used by prefix-suffix-tuner):
// text whose words are distinct tokens for any tokenizer, reproducible
// bit for bit from a seed, with no model or tokenizer needed.
package pseudoword

import (
	"slices"
	"strconv"
	"strings"

	"github.com/lmbench/lmbench/sdk/pyrand"
)

const (
	vowels     = "aeiou"
	consonants = "bcdfghjklmnpqrstvwxyz"
)

// Vocab returns size distinct pseudo-words, sorted, exactly as the
// original's _generate_vocab_pool draws them from random.Random(seed):
// each word alternates consonants and vowels (3–7 letters) and ends in the
// pool's size so far (e.g. "boko42"), which makes every word unique.
func Vocab(size int, seed int64) []string {
	rng := pyrand.New(seed)
	pool := make([]string, 0, size)
	var b strings.Builder
	for len(pool) < size {
		b.Reset()
		n := rng.RandInt(3, 7)
		for j := range n {
			if j%2 == 0 {
				b.WriteByte(consonants[rng.Choice(len(consonants))])
			} else {
				b.WriteByte(vowels[rng.Choice(len(vowels))])
			}
		}
		b.WriteString(strconv.Itoa(len(pool)))
		pool = append(pool, b.String())
	}
	slices.Sort(pool) // Python's sorted() on ASCII strings: byte order
	return pool
}

// Join is Python's " ".join(words[i] for i in idx): the text of the words
// an index draw (e.g. pyrand's Choices) picked.
func Join(words []string, idx []int) string {
	n := len(idx) - 1
	for _, i := range idx {
		n += len(words[i])
	}
	var b strings.Builder
	b.Grow(max(n, 0))
	for k, i := range idx {
		if k > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[i])
	}
	return b.String()
}
