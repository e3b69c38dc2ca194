package main

import (
	"strings"
	"testing"

	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/subword"
	"github.com/lmbench/lmbench/sdk/workload"
)

// With a host tokenizer every document costs exactly document-length
// tokens, and the document count follows from a warmup request's tokens
// (document plus chat template), not from words.
func TestExactDocuments(t *testing.T) {
	t.Parallel()
	const length = 2000
	fake := &sdktest.FakeTokenizer{}
	common := workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 100_000}
	tr := sdktest.Run(t, Definition, sdktest.Options{
		Options: map[string]any{"document-length": length, "query-per-document": 2},
		Common:  common,
		Tokens:  fake,
	})
	warm := tr.Warmup()
	if len(warm) == 0 {
		t.Fatal("no warmup requests")
	}
	for _, s := range warm {
		doc := s.Messages[0].Content
		if got := subword.TextTokens(doc); got != length {
			t.Errorf("%s: document costs %d tokens, want exactly %d", s.ID, got, length)
		}
	}
	// A warmup prompt is the document in the chat template.
	warmTokens := subword.ChatTokens(warm[0].Messages[0].Content)
	wantDocs := int(common.KVCacheVolumeGB * float64(common.TokensPerGB) / float64(warmTokens))
	if got := tr.Resolved["num-documents"]; got != int64(wantDocs) {
		t.Errorf("num-documents = %v, want %d (%g tokens of KV cache / %d per warmup prompt)",
			got, wantDocs, common.KVCacheVolumeGB*float64(common.TokensPerGB), warmTokens)
	}
	if len(warm) != wantDocs {
		t.Errorf("%d warmup requests, want %d", len(warm), wantDocs)
	}
	// Words would have given more documents: the sizing is in tokens.
	if words, _ := numDocuments(common.KVCacheVolumeGB, common.TokensPerGB, length); words == wantDocs {
		t.Errorf("token sizing gave the word sizing's %d documents: the test does not tell them apart", words)
	}
	var banner strings.Builder
	for _, f := range tr.Banner {
		banner.WriteString(f.Label + ": " + f.Value + "\n")
	}
	for _, want := range []string{"Document length: 2000 tokens", "Question scaffolding: ", "Warmup prompt: "} {
		if !strings.Contains(banner.String(), want) {
			t.Errorf("banner lacks %q:\n%s", want, banner.String())
		}
	}
}

// Without a tokenizer (an older host, --tokenizer words) the documents are
// the original's words, as the goldens pin.
func TestWordsWithoutTokenizer(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{
		Options: map[string]any{"document-length": 50},
		Common:  workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 100},
	})
	doc := tr.Warmup()[0].Messages[0].Content
	if want := documentText(0, fillerBody(40)); doc != want {
		t.Errorf("document = %q, want the original's %q", doc, want)
	}
}
