package main

import (
	"strings"
	"testing"

	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/subword"
	"github.com/lmbench/lmbench/sdk/workload"
)

// With a host tokenizer the prefix, the breaker and the suffix cost
// exactly their sizes, the pool is sized by a prefix's tokens plus the
// chat template's, and every request states its prompt's tokens.
func TestExactParts(t *testing.T) {
	t.Parallel()
	common := workload.Common{TokensPerGB: 20_000}
	tr := sdktest.Run(t, Definition, sdktest.Options{
		Options: map[string]any{"context-length": 1000, "prefix-ratio": 0.5, "thrash": 1.0},
		Common:  common,
		Tokens:  &sdktest.FakeTokenizer{},
	})
	prefixTokens, suffixTokens := 500, 1000-500-breakerTokens
	template := subword.ChatTokens("") // what the template adds to one user message
	wantN := int(1.0 * overflowFactor * 20_000 / float64(prefixTokens+template))
	if wantN == int(1.0*overflowFactor*20_000/float64(prefixTokens)) {
		t.Fatalf("token and word sizing agree (%d prefixes): the test does not tell them apart", wantN)
	}
	if got := tr.Resolved["num-prefixes"]; got != int64(wantN) {
		t.Errorf("num-prefixes = %v, want %d", got, wantN)
	}
	for _, s := range append(tr.Warmup(), tr.Measured()...) {
		content := s.Messages[0].Content
		i := strings.Index(content, " BR_")
		j := strings.Index(content, " SUFFIX ")
		if i < 0 || j < i {
			t.Fatalf("%s: no breaker or suffix in %q", s.ID, content[:60])
		}
		for name, part := range map[string]struct {
			text string
			want int
		}{
			"prefix":  {content[:i], prefixTokens},
			"breaker": {content[i+1 : j], breakerTokens},
			"suffix":  {content[j+1:], suffixTokens},
		} {
			if got := subword.TextTokens(part.text); got != part.want {
				t.Errorf("%s: %s costs %d tokens, want %d", s.ID, name, got, part.want)
			}
		}
	}
	if len(tr.Measured()) != wantN {
		t.Errorf("%d measured requests, want %d", len(tr.Measured()), wantN)
	}
}
