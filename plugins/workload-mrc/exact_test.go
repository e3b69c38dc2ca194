package main

import (
	"testing"

	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/subword"
	"github.com/lmbench/lmbench/sdk/workload"
)

// With a host tokenizer the system prompt, history and query cost exactly
// their lengths, and the session count follows from a warmup prompt's
// tokens, the chat template and the fixed turns included.
func TestExactSessions(t *testing.T) {
	t.Parallel()
	common := workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 9_000}
	tr := sdktest.Run(t, Definition, sdktest.Options{
		Options: map[string]any{"shared-prompt-length": 300, "chat-history-length": 1200, "user-input-length": 20,
			"duration": 2.0, "qps": 2.0},
		Common: common,
		Tokens: &sdktest.FakeTokenizer{},
	})
	warm := tr.Warmup()
	if len(warm) == 0 {
		t.Fatal("no warmup requests")
	}
	for _, s := range warm {
		if got := subword.TextTokens(s.Messages[0].Content); got != 300 {
			t.Errorf("%s: system prompt costs %d tokens, want 300", s.ID, got)
		}
		if got := subword.TextTokens(s.Messages[1].Content); got != 1200 {
			t.Errorf("%s: history costs %d tokens, want 1200", s.ID, got)
		}
	}
	m := warm[0].Messages
	warmTokens := subword.ChatTokens(m[0].Content, m[1].Content, m[2].Content, m[3].Content)
	want := int(common.KVCacheVolumeGB * float64(common.TokensPerGB) / float64(warmTokens))
	if want == int(common.KVCacheVolumeGB*float64(common.TokensPerGB)/1500) {
		t.Fatalf("token and word sizing agree (%d sessions): the test does not tell them apart", want)
	}
	if len(warm) != want {
		t.Errorf("%d sessions, want %d (9000 tokens / %d per warmup prompt)", len(warm), want, warmTokens)
	}
	measured := tr.Measured()
	if len(measured) == 0 {
		t.Fatal("no measured requests")
	}
	q := measured[0].Messages[len(measured[0].Messages)-1].Content
	if got := subword.TextTokens(q); got != 20 {
		t.Errorf("query costs %d tokens, want 20", got)
	}
}
