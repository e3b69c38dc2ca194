package main

import (
	"testing"

	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/subword"
)

// With a host tokenizer every prompt costs exactly request-length tokens,
// across header lengths (1 to 3 digits here), and states its chat tokens.
func TestExactPrompts(t *testing.T) {
	t.Parallel()
	fake := &sdktest.FakeTokenizer{}
	tr := sdktest.Run(t, Definition, sdktest.Options{
		Options: map[string]any{"num-requests": 120, "request-length": 300},
		Tokens:  fake,
	})
	got := tr.Measured()
	if len(got) != 120 {
		t.Fatalf("%d requests, want 120", len(got))
	}
	for _, s := range got {
		text := s.Messages[0].Content
		if n := subword.TextTokens(text); n != 300 {
			t.Errorf("%s: %d tokens, want exactly 300", s.ID, n)
		}
	}
	// Batched: a probe, the prefixes, a build round or two, the chats.
	if n := len(fake.Queries()); n > 12 {
		t.Errorf("%d tokenizer queries for 120 prompts, want a handful", n)
	}
}
