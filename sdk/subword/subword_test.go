package subword

import (
	"fmt"
	"testing"
)

func TestWordTokens(t *testing.T) {
	t.Parallel()
	seen := map[int]bool{}
	for i := range 300 {
		w := fmt.Sprintf("pseudoword%d", i)
		n := WordTokens(w)
		if n < 1 || n > MaxPerWord {
			t.Fatalf("WordTokens(%q) = %d, want 1..%d", w, n, MaxPerWord)
		}
		seen[n] = true
	}
	for n := 1; n <= MaxPerWord; n++ {
		if !seen[n] {
			t.Errorf("no word of 300 costs %d tokens: the rule does not spread over 1..%d", n, MaxPerWord)
		}
	}
	for _, w := range []string{"hi", "a", "the", "日本語"} {
		if n := WordTokens(w); n != 1 {
			t.Errorf("WordTokens(%q) = %d, want 1 (short words are one token)", w, n)
		}
	}
	if n := WordTokens("abcd"); n > 4 {
		t.Errorf("WordTokens(abcd) = %d, more than its characters", n)
	}
}

func TestTextAndChatTokens(t *testing.T) {
	t.Parallel()
	text := "hi   there\nwonderful"
	want := WordTokens("hi") + WordTokens("there") + WordTokens("wonderful")
	if got := TextTokens(text); got != want {
		t.Errorf("TextTokens = %d, want %d (the sum over words, whatever the spacing)", got, want)
	}
	if got, want := ChatTokens(text, ""), want+2*PerMessage+GenerationPrompt; got != want {
		t.Errorf("ChatTokens = %d, want %d", got, want)
	}
}
