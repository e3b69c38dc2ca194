package sim

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func subwordConfig() Config {
	cfg := fastConfig()
	cfg.Tokenizer = TokenizerSubword
	return cfg
}

func TestSubwordTokens(t *testing.T) {
	t.Parallel()
	seen := map[int]bool{}
	for _, w := range strings.Fields(words("pseudoword", 200)) {
		n := SubwordTokens(w)
		if n < 1 || n > maxPieces {
			t.Fatalf("SubwordTokens(%q) = %d, want 1..%d", w, n, maxPieces)
		}
		if got := len(subwordPieces(w)); got != n {
			t.Errorf("subwordPieces(%q) has %d pieces, want %d", w, got, n)
		}
		if got := strings.TrimPrefix(strings.Join(subwordPieces(w), ""), wordMark); got != w {
			t.Errorf("pieces of %q join to %q", w, got)
		}
		seen[n] = true
	}
	for n := 1; n <= maxPieces; n++ {
		if !seen[n] {
			t.Errorf("no word of 200 costs %d tokens: the rule does not spread over 1..%d", n, maxPieces)
		}
	}
	for _, w := range []string{"hi", "a", "the", "日本語"} {
		if n := SubwordTokens(w); n != 1 {
			t.Errorf("SubwordTokens(%q) = %d, want 1 (short words are one token)", w, n)
		}
	}
}

// tokenCount posts body to /tokenize and returns the count.
func tokenCount(t *testing.T, url, body string) int {
	t.Helper()
	status, resp := postRead(t, url+"/tokenize", body)
	if status != http.StatusOK {
		t.Fatalf("tokenize %s: status %d: %s", body, status, resp)
	}
	var r tokenizeResponse
	if err := json.Unmarshal([]byte(resp), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Tokens) != r.Count {
		t.Fatalf("tokenize: count %d but %d tokens", r.Count, len(r.Tokens))
	}
	return r.Count
}

func TestSubwordTokenizeAndUsageAgree(t *testing.T) {
	t.Parallel()
	_, url := startServer(t, subwordConfig())
	text := words("document", 50) + " hi hi"
	want := 2 // the two "hi"
	for _, w := range strings.Fields(words("document", 50)) {
		want += SubwordTokens(w)
	}
	if got := tokenCount(t, url, `{"prompt":`+quote(text)+`,"add_special_tokens":false}`); got != want {
		t.Errorf("text without special tokens: %d tokens, want %d", got, want)
	}
	if got := tokenCount(t, url, `{"prompt":`+quote(text)+`}`); got != want+1 {
		t.Errorf("text with the default add_special_tokens: %d tokens, want %d (BOS)", got, want+1)
	}
	msgs := `[{"role":"system","content":"hi"},{"role":"user","content":` + quote(text) + `}]`
	chat := tokenCount(t, url, `{"messages":`+msgs+`}`)
	if wantChat := 1 + want + 2*perMessage + genPrompt; chat != wantChat {
		t.Errorf("chat: %d tokens, want %d (content + %d per message + %d for the generation prompt)", chat, wantChat, perMessage, genPrompt)
	}
	if got := tokenCount(t, url, `{"messages":`+msgs+`,"add_generation_prompt":false}`); got != chat-genPrompt {
		t.Errorf("chat without generation prompt: %d tokens, want %d", got, chat-genPrompt)
	}

	// The completion's usage counts the same tokens the endpoint does.
	status, body := postRead(t, url+"/v1/chat/completions", `{"messages":`+msgs+`,"max_tokens":1}`)
	if status != http.StatusOK {
		t.Fatalf("chat completion: %d %s", status, body)
	}
	var resp chatResponse
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Usage.PromptTokens != chat {
		t.Errorf("usage.prompt_tokens = %d, /tokenize says %d", resp.Usage.PromptTokens, chat)
	}
}

func TestSubwordDetokenize(t *testing.T) {
	t.Parallel()
	_, url := startServer(t, subwordConfig())
	text := "hello wonderful subword world hi"
	status, body := postRead(t, url+"/tokenize", `{"prompt":`+quote(text)+`,"add_special_tokens":false}`)
	if status != http.StatusOK {
		t.Fatalf("tokenize: %d %s", status, body)
	}
	var tr tokenizeResponse
	if err := json.Unmarshal([]byte(body), &tr); err != nil {
		t.Fatal(err)
	}
	ids, _ := json.Marshal(tr.Tokens)
	status, body = postRead(t, url+"/detokenize", `{"tokens":`+string(ids)+`}`)
	if d := cmp.Diff(`{"prompt":`+quote(text)+`}`, body); status != http.StatusOK || d != "" {
		t.Errorf("detokenize: status %d (-want +got):\n%s", status, d)
	}
}

func TestNoTokenize(t *testing.T) {
	t.Parallel()
	cfg := fastConfig()
	cfg.NoTokenize = true
	_, url := startServer(t, cfg)
	for _, path := range []string{"/tokenize", "/detokenize"} {
		if status, _ := postRead(t, url+path, `{"prompt":"x"}`); status != http.StatusNotFound {
			t.Errorf("%s with NoTokenize: status %d, want 404", path, status)
		}
	}
}

func TestTokenizerModeValidate(t *testing.T) {
	t.Parallel()
	cfg := fastConfig()
	cfg.Tokenizer = "bpe"
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), `sim.Config.Tokenizer: must be words or subword, got "bpe"`) {
		t.Errorf("Validate = %v, want the Tokenizer field named", err)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
