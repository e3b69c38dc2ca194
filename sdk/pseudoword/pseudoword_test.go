package pseudoword

import (
	"slices"
	"strings"
	"testing"
)

// The pool is sorted and distinct, each word 3–7 alternating consonants
// and vowels plus digits, and the same seed gives the same pool.
// (Bit-exactness with CPython is checked against python3 reference output
// in the long-doc-permutator and prefix-suffix-tuner plugins.)
func TestVocab(t *testing.T) {
	pool := Vocab(500, 42)
	if len(pool) != 500 {
		t.Fatalf("size %d, want 500", len(pool))
	}
	if !slices.IsSorted(pool) {
		t.Error("pool is not sorted")
	}
	if len(slices.Compact(slices.Clone(pool))) != 500 {
		t.Error("pool has duplicates")
	}
	if !slices.Equal(pool, Vocab(500, 42)) {
		t.Error("same seed, different pool")
	}
	if slices.Equal(pool, Vocab(500, 43)) {
		t.Error("seeds 42 and 43 give the same pool")
	}
	for _, w := range pool {
		letters := strings.TrimRight(w, "0123456789")
		if len(letters) < 3 || len(letters) > 7 {
			t.Fatalf("word %q: %d letters, want 3–7", w, len(letters))
		}
		for i := range len(letters) {
			set := consonants
			if i%2 == 1 {
				set = vowels
			}
			if !strings.ContainsRune(set, rune(letters[i])) {
				t.Fatalf("word %q: letter %d is not from %q", w, i, set)
			}
		}
	}
}

func TestJoin(t *testing.T) {
	words := []string{"a", "bb", "ccc"}
	for _, c := range []struct {
		idx  []int
		want string
	}{{nil, ""}, {[]int{1}, "bb"}, {[]int{2, 0, 2}, "ccc a ccc"}} {
		if got := Join(words, c.idx); got != c.want {
			t.Errorf("Join(%v) = %q, want %q", c.idx, got, c.want)
		}
	}
}
