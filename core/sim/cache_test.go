package sim

import (
	"fmt"
	"testing"
)

// hashesOf returns the block hashes of a space-separated prompt.
func hashesOf(prompt string, blockSize int) []blockHash {
	return blockHashes(tokenize(prompt), blockSize)
}

func TestBlockHashes(t *testing.T) {
	t.Parallel()
	if got := len(hashesOf("a b c d e", 2)); got != 2 {
		t.Errorf("5 tokens in blocks of 2: %d hashes, want 2 (the partial block has none)", got)
	}
	if got := len(hashesOf("a", 2)); got != 0 {
		t.Errorf("1 token in blocks of 2: %d hashes, want 0", got)
	}
	abcd := hashesOf("a b c d", 2)
	if again := hashesOf("a  b\nc d", 2); abcd[0] != again[0] || abcd[1] != again[1] {
		t.Error("same tokens, different whitespace: hashes differ, want equal")
	}
	// Block "c d" after "a b" is not block "c d" after "x y", nor "c d" first.
	if xycd := hashesOf("x y c d", 2); xycd[1] == abcd[1] {
		t.Error("same block content after a different prefix: same hash, want different (hashes must chain)")
	}
	if cd := hashesOf("c d", 2); cd[0] == abcd[1] {
		t.Error("same block content at a different position: same hash, want different")
	}
	// Token boundaries count: "ab c" is not "a bc".
	if hashesOf("ab c", 2)[0] == hashesOf("a bc", 2)[0] {
		t.Error(`blocks ["ab","c"] and ["a","bc"] hash equal, want different`)
	}
}

func TestPrefixCacheMatch(t *testing.T) {
	t.Parallel()
	c := newPrefixCache(100, 2)
	c.store(hashesOf("a b c d e", 2)) // blocks "a b", "c d"
	tests := []struct {
		prompt string
		want   int // leading blocks cached
	}{
		{"a b c d", 2},
		{"a b c d e f", 2},
		{"a b c x", 1},
		{"a x c d", 0},
		{"x y", 0},
		{"c d", 0}, // cached as block 1, asked as block 0
		{"x y c d", 0},
	}
	for _, tt := range tests {
		if got := c.match(hashesOf(tt.prompt, 2)); got != tt.want {
			t.Errorf("match(%q) = %d blocks, want %d", tt.prompt, got, tt.want)
		}
	}
}

func TestPrefixCacheEvictsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	c := newPrefixCache(6, 2) // 3 blocks
	p1 := hashesOf("a1 a1 a2 a2", 2)
	p2 := hashesOf("b1 b1 b2 b2", 2)
	p3 := hashesOf("c1 c1", 2)
	p4 := hashesOf("d1 d1", 2)

	c.store(p1)
	c.store(p2)
	// 4 blocks into 3: p1's tail goes first; its head outlives it.
	if got, want := c.match(p1), 1; got != want {
		t.Errorf("after p1, p2: p1 matches %d blocks, want %d", got, want)
	}
	if got, want := c.match(p2), 2; got != want {
		t.Errorf("after p1, p2: p2 matches %d blocks, want %d", got, want)
	}

	c.store(p1) // p1 is now most recent; p2's tail, then its head, make room
	if got, want := c.match(p1), 2; got != want {
		t.Errorf("after re-storing p1: p1 matches %d blocks, want %d", got, want)
	}
	if got, want := c.match(p2), 1; got != want {
		t.Errorf("after re-storing p1: p2 matches %d blocks, want %d", got, want)
	}

	c.store(p3) // evicts the least recent: p2's head
	if got := c.match(p2); got != 0 {
		t.Errorf("after storing p3: p2 matches %d blocks, want 0", got)
	}
	if got, want := c.match(p1), 2; got != want {
		t.Errorf("after storing p3: p1 matches %d blocks, want %d", got, want)
	}

	c.store(p1) // refresh: now p3 is the least recent
	c.store(p4)
	if got := c.match(p3); got != 0 {
		t.Errorf("after refreshing p1 and storing p4: p3 matches %d blocks, want 0", got)
	}
	if got, want := c.match(p1), 2; got != want {
		t.Errorf("after refreshing p1 and storing p4: p1 matches %d blocks, want %d", got, want)
	}
	if got, want := c.len(), 3; got != want {
		t.Errorf("len() = %d, want capacity %d", got, want)
	}
}

func TestPrefixCacheLongPromptKeepsItsHead(t *testing.T) {
	t.Parallel()
	c := newPrefixCache(20, 2) // 10 blocks
	var prompt []string
	for i := range 40 { // 20 blocks, twice the capacity
		prompt = append(prompt, fmt.Sprint("t", i))
	}
	hashes := blockHashes(prompt, 2)
	c.store(hashes)
	if got, want := c.match(hashes), 10; got != want {
		t.Errorf("prompt of 20 blocks in a 10-block cache matches %d blocks, want %d (its head)", got, want)
	}
	if got, want := c.len(), 10; got != want {
		t.Errorf("len() = %d, want %d", got, want)
	}
}

func TestPrefixCacheOff(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ tokens, blockSize int }{{0, 16}, {15, 16}} {
		c := newPrefixCache(tt.tokens, tt.blockSize)
		if c != nil {
			t.Errorf("newPrefixCache(%d, %d) = non-nil, want nil (no whole block fits)", tt.tokens, tt.blockSize)
		}
		h := hashesOf("a b", 1)
		c.store(h)
		if got := c.match(h); got != 0 {
			t.Errorf("cache off: match after store = %d, want 0", got)
		}
	}
}
