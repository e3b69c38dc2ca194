package main

import (
	"strings"
	"testing"

	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/subword"
)

// With the host's tokenizer every document is exactly context-length of
// the model's tokens and the system prompt system-prompt-length, so the
// pool and the working set are in the unit the engine counts.
func TestDocumentsInTheModelsTokens(t *testing.T) {
	t.Parallel()
	o := small()
	o.Tokens = &sdktest.FakeTokenizer{}
	tr := sdktest.Run(t, Definition, o)
	for _, s := range tr.Measured()[:3] {
		var user, system string
		for _, m := range s.Messages {
			switch m.Role {
			case "user":
				user = m.Content
			case "system":
				system = m.Content
			}
		}
		if n := subword.TextTokens(system); n != 5 {
			t.Errorf("%s: system prompt of %d tokens, want 5", s.ID, n)
		}
		for _, doc := range strings.Split(user, "\n\n") {
			if n := subword.TextTokens(doc); n != 20 {
				t.Errorf("%s: a document of %d tokens, want 20: %q", s.ID, n, doc)
			}
		}
	}
}
