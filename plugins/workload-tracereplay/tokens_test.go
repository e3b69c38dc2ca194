package main

import (
	"strings"
	"testing"

	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/subword"
)

// With the host's tokenizer, every prompt is the trace's input_length in
// the model's tokens, chat template included, and requests sharing hash
// ids share those blocks' text, block-size tokens each.
func TestLengthsInTheModelsTokens(t *testing.T) {
	t.Parallel()
	path := writeTrace(t, "t.jsonl", `{"timestamp": 0, "input_length": 40, "output_length": 3, "hash_ids": [1, 2, 3]}
{"timestamp": 10, "input_length": 45, "output_length": 2, "hash_ids": [1, 2, 4]}
{"timestamp": 20, "input_length": 20, "output_length": 2, "hash_ids": [5, 6]}
`)
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: map[string]any{"trace": path, "block-size": 16},
		Tokens: &sdktest.FakeTokenizer{}})
	reqs := tr.Measured()
	want := []int{40, 45, 20}
	for i, s := range reqs {
		if got := subword.ChatTokens(sdktest.UserText(t, s)); got != want[i] {
			t.Errorf("%s: %d tokens, want the trace's %d", s.ID, got, want[i])
		}
	}
	a, b := strings.Fields(sdktest.UserText(t, reqs[0])), strings.Fields(sdktest.UserText(t, reqs[1]))
	n := 0
	for n < min(len(a), len(b)) && a[n] == b[n] {
		n++
	}
	if shared := subword.TextTokens(strings.Join(a[:n], " ")); shared < 32 {
		t.Errorf("lines 1 and 2 share %d tokens of text, want their two common 16-token blocks", shared)
	}
	var tok string
	for _, f := range tr.Banner {
		if f.Label == "Tokenizer" {
			tok = f.Value
		}
	}
	if !strings.Contains(tok, "the model's (lengths exact") {
		t.Errorf("banner's tokenizer %q", tok)
	}
}
