package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lmbench/lmbench/core/host"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// tokenizerFile is a tiny byte-level BPE tokenizer.json whose pre-tokenizer
// pattern needs look-ahead (core/host/testdata/gen_tokenizer.py).
var tokenizerFile = filepath.Join("..", "..", "core", "host", "testdata", "tokenizer.json")

// TestLongDocQATokenizerFile: against an engine without /tokenize,
// --tokenizer PATH sizes long-doc-qa in the file's tokens: every document
// is exactly --ldqa-document-length by that tokenizer (counted here with
// the same reader), the count follows from the tokens, and the summary
// names the file and that no chat template was rendered.
func TestLongDocQATokenizerFile(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	path, err := filepath.Abs(tokenizerFile)
	if err != nil {
		t.Fatal(err)
	}
	_, sim := startSim(t, "--no-tokenize", "--time-scale", "0")
	rec := newRecorder(t, sim)
	out := t.TempDir()
	// 8000 tokens of KV cache: a warmup prompt is 2000 + 5 + 3 of stated
	// chat overhead, so 3 documents (4 if sized in words).
	r := lmbench(t, nil, "run", "--engine-url", rec.srv.URL, "--workload", "long-doc-qa",
		"--tokens-per-gb-kvcache", "8000", "--kv-cache-volume", "1", "--tokenizer", path,
		"--ldqa-document-length", "2000", "--ldqa-query-per-document", "1",
		"--no-interactive", "--json", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "the chat template is not rendered; a chat counts as its messages' tokens plus 5 per message and 3 for the generation prompt") {
		t.Errorf("no warning about the chat template:\n%s", r.stderr)
	}
	if strings.Contains(r.stderr, "whitespace words") {
		t.Errorf("warned about words with a tokenizer file:\n%s", r.stderr)
	}
	docs := rec.warmupDocs()
	if len(docs) != 3 {
		t.Fatalf("%d warmup documents, want 3 (8000 tokens / 2008 per warmup prompt)", len(docs))
	}
	tok, err := host.LoadTokenizerFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tok.CountTokens(context.Background(), protocol.TokenQuery{Texts: docs})
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range got.Texts {
		if n != 2000 {
			t.Errorf("document %d: %d tokens by %s, want exactly 2000", i, n, tokenizerFile)
		}
		if words := len(strings.Fields(docs[i])); words == 2000 {
			t.Errorf("document %d: 2000 words: sized in words, not by the file", i)
		}
	}
	p := promptTokens(t, out)
	if want := "file:" + path + " (no chat template)"; p.Tokenizer != want {
		t.Errorf("summary tokenizer %q, want %q", p.Tokenizer, want)
	}
	if p.Warmup.Requests != 3 || p.Warmup.Stated == nil || *p.Warmup.Stated != 3*2008 {
		t.Errorf("warmup prompt tokens %+v, want 3 requests stated as 3 x 2008", p.Warmup)
	}
}
