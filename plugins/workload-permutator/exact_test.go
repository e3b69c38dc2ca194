package main

import (
	"strings"
	"testing"

	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/subword"
)

// With a host tokenizer every context and the system prompt cost exactly
// their lengths, and each request states its prompt's chat tokens.
func TestExactContexts(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{
		Options: map[string]any{"num-contexts": 3, "context-length": 400, "system-prompt-length": 50},
		Tokens:  &sdktest.FakeTokenizer{},
	})
	measured := tr.Measured()
	if len(measured) != 6 {
		t.Fatalf("%d requests, want the 6 permutations of 3", len(measured))
	}
	for _, s := range measured {
		if got := subword.TextTokens(s.Messages[0].Content); got != 50 {
			t.Errorf("%s: system prompt costs %d tokens, want 50", s.ID, got)
		}
		parts := strings.Split(s.Messages[1].Content, "\n\n")
		if len(parts) != 3 {
			t.Fatalf("%s: %d contexts", s.ID, len(parts))
		}
		for k, c := range parts {
			if got := subword.TextTokens(c); got != 400 {
				t.Errorf("%s: context %d costs %d tokens, want 400", s.ID, k, got)
			}
		}
	}
}
