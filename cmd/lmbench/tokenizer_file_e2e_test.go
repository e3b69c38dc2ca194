package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lmbench/lmbench/core/tokenize"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// tokenizerFile is a tiny byte-level BPE tokenizer.json whose pre-tokenizer
// pattern needs look-ahead, beside a tokenizer_config.json with a ChatML
// chat template (core/tokenize/testdata/gen_tokenizer.py).
var tokenizerFile = filepath.Join("..", "..", "core", "tokenize", "testdata", "tokenizer.json")

// TestLongDocQATokenizerFile: against an engine without /tokenize,
// --tokenizer PATH sizes long-doc-qa in the file's tokens: every document
// is exactly --ldqa-document-length by that tokenizer (counted here with
// the same reader), the count follows from the tokens of a warmup prompt
// in the file's chat template, and the summary names the file.
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
	// 8000 tokens of KV cache: a warmup prompt is the document's 2000 in
	// "<|im_start|>user\n" … "<|im_end|>\n<|im_start|>assistant\n", 6 + 2 + 11
	// tokens by the file, so 3 documents (4 if sized in words).
	r := lmbench(t, nil, "run", "--engine-url", rec.srv.URL, "--workload", "long-doc-qa",
		"--tokens-per-gb-kvcache", "8000", "--kv-cache-volume", "1", "--tokenizer", path,
		"--ldqa-document-length", "2000", "--ldqa-query-per-document", "1",
		"--no-interactive", "--json", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, warn := range []string{"whitespace words", "no chat_template"} {
		if strings.Contains(r.stderr, warn) {
			t.Errorf("warned %q with a tokenizer file and its template:\n%s", warn, r.stderr)
		}
	}
	docs := rec.warmupDocs()
	if len(docs) != 3 {
		t.Fatalf("%d warmup documents, want 3 (8000 tokens / 2019 per warmup prompt)", len(docs))
	}
	tok, err := tokenize.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tok.CountTokens(context.Background(), protocol.TokenQuery{Texts: docs,
		Chats: []protocol.Chat{{Messages: []protocol.ChatMessage{{Role: "user", Content: docs[0]}}}}})
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
	if got.Chats[0] != 2019 {
		t.Errorf("a warmup prompt costs %d tokens by the file, want 2019", got.Chats[0])
	}
	p := promptTokens(t, out)
	if want := "file:" + path; p.Tokenizer != want {
		t.Errorf("summary tokenizer %q, want %q", p.Tokenizer, want)
	}
	if p.Warmup.Requests != 3 || p.Warmup.Stated == nil || *p.Warmup.Stated != 3*2019 {
		t.Errorf("warmup prompt tokens %+v, want 3 requests stated as 3 x 2019", p.Warmup)
	}
}

// TestTokenizerFileWithoutTemplate: a tokenizer.json alone counts chats as
// their messages plus a stated overhead, warns so, and the summary's
// tokenizer says no chat template was rendered.
func TestTokenizerFileWithoutTemplate(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	b, err := os.ReadFile(tokenizerFile)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	r := lmbench(t, nil, "run", "--engine-url", "builtin", "--sim-no-tokenize", "--sim-time-scale", "0",
		"--workload", "long-doc-qa", "--tokens-per-gb-kvcache", "8000", "--kv-cache-volume", "1", "--tokenizer", path,
		"--ldqa-document-length", "2000", "--ldqa-query-per-document", "1",
		"--no-interactive", "-q", "--json", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "no chat_template in a tokenizer_config.json beside it; a chat counts as its messages' tokens plus 5 per message and 3 for the generation prompt") {
		t.Errorf("no warning about the missing chat template:\n%s", r.stderr)
	}
	p := promptTokens(t, out)
	if want := "file:" + path + " (no chat template)"; p.Tokenizer != want {
		t.Errorf("summary tokenizer %q, want %q", p.Tokenizer, want)
	}
	// 2000 + 5 + 3 per warmup prompt.
	if p.Warmup.Requests != 3 || p.Warmup.Stated == nil || *p.Warmup.Stated != 3*2008 {
		t.Errorf("warmup prompt tokens %+v, want 3 requests stated as 3 x 2008", p.Warmup)
	}
}

// TestMultiRoundChatTokenizerFile: with --tokenizer PATH and no /tokenize,
// each session's system prompt and history are exactly their lengths by
// the file, and the session count follows from a warmup prompt's tokens
// in the file's chat template.
func TestMultiRoundChatTokenizerFile(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	path, err := filepath.Abs(tokenizerFile)
	if err != nil {
		t.Fatal(err)
	}
	_, sim := startSim(t, "--no-tokenize", "--time-scale", "0")
	rec := newRecorder(t, sim)
	out := t.TempDir()
	r := lmbench(t, nil, "run", "--engine-url", rec.srv.URL, "--workload", "multi-round-chat",
		"--tokens-per-gb-kvcache", "9000", "--kv-cache-volume", "1", "--tokenizer", path,
		"--mrc-shared-prompt-length", "300", "--mrc-chat-history-length", "1200", "--mrc-user-input-length", "20",
		"--mrc-output-length", "2", "--mrc-qps", "50", "--mrc-duration", "0.2",
		"--no-interactive", "-q", "--json", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	rec.mu.Lock()
	var warm []map[string]any
	for _, b := range rec.bodies {
		if b["max_tokens"].(float64) == 1 {
			warm = append(warm, b)
		}
	}
	rec.mu.Unlock()
	if len(warm) == 0 {
		t.Fatal("no session warmed")
	}
	tok, err := tokenize.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, b := range warm {
		msgs := b["messages"].([]any)
		texts = append(texts, msgs[0].(map[string]any)["content"].(string), msgs[1].(map[string]any)["content"].(string))
	}
	var chat protocol.Chat
	for _, m := range warm[0]["messages"].([]any) {
		m := m.(map[string]any)
		chat.Messages = append(chat.Messages, protocol.ChatMessage{Role: m["role"].(string), Content: m["content"].(string)})
	}
	got, err := tok.CountTokens(context.Background(), protocol.TokenQuery{Texts: texts, Chats: []protocol.Chat{chat}})
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range got.Texts {
		if want := []int{300, 1200}[i%2]; n != want {
			t.Errorf("session %d message %d: %d tokens by the file, want %d", i/2, i%2, n, want)
		}
	}
	t.Logf("%d sessions, %d tokens a warmup prompt", len(warm), got.Chats[0])
	if n := got.Chats[0]; 9000/n != len(warm) {
		t.Errorf("%d sessions warmed, but a warmup prompt costs %d tokens by the file: 9000 / it is %d", len(warm), n, 9000/n)
	}
	if p := promptTokens(t, out); p.Tokenizer != "file:"+path || p.Warmup.Stated == nil || *p.Warmup.Stated != len(warm)*got.Chats[0] {
		t.Errorf("summary prompt_tokens %+v, want file:%s and %d x %d warmup tokens stated", p, path, len(warm), got.Chats[0])
	}
}
