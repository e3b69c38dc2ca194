package sim

import (
	"strings"
	"testing"
)

// Posing as Ollama, the engine answers Ollama's questions and reports
// what Ollama reports: no cached tokens, no /tokenize, /metrics or reset.
func TestPosingAsOllama(t *testing.T) {
	t.Parallel()
	cfg := fastConfig()
	cfg.Kind = KindOllama
	_, url := startServer(t, cfg)
	if code, body := get(t, url+"/api/version"); code != 200 || body != `{"version":"`+ollamaVersion+`"}` {
		t.Errorf("GET /api/version = %d %s", code, body)
	}
	if _, body := get(t, url+"/v1/models"); !strings.Contains(body, `"owned_by":"library"`) {
		t.Errorf("model list %s, want owned_by library", body)
	}
	for _, path := range []string{"/metrics"} {
		if code, _ := get(t, url+path); code != 404 {
			t.Errorf("GET %s = %d, want 404", path, code)
		}
	}
	for _, path := range []string{"/tokenize", "/reset_prefix_cache"} {
		if code, _ := postRead(t, url+path, `{"prompt":"a b"}`); code != 404 && code != 405 {
			t.Errorf("POST %s = %d, want 404", path, code)
		}
	}
	code, body := postRead(t, url+"/v1/chat/completions", chatBody("a b c", ""))
	if code != 200 || strings.Contains(body, "cached_tokens") || !strings.Contains(body, `"prompt_tokens":`) {
		t.Errorf("chat = %d %s, want usage without cached_tokens", code, body)
	}
}

// Posing as Ollama, ignore_eos and min_tokens are ignored: the answer
// ends at the end-of-sequence token.
func TestPosingAsOllamaIgnoresIgnoreEOS(t *testing.T) {
	t.Parallel()
	cfg := fastConfig()
	cfg.Kind, cfg.EOSAfter = KindOllama, 2
	_, url := startServer(t, cfg)
	_, body := postRead(t, url+"/v1/chat/completions", chatBody("a b c", `"max_tokens":8,"ignore_eos":true,"min_tokens":8`))
	if !strings.Contains(body, `"completion_tokens":2`) || !strings.Contains(body, `"finish_reason":"stop"`) {
		t.Errorf("answer %s, want 2 tokens ending at stop", body)
	}
}

// Extra models are listed after the first and served.
func TestExtraModels(t *testing.T) {
	t.Parallel()
	cfg := fastConfig()
	cfg.ExtraModels = "second, third"
	_, url := startServer(t, cfg)
	_, body := get(t, url+"/v1/models")
	if i, j := strings.Index(body, `"lmbench-sim"`), strings.Index(body, `"third"`); i < 0 || j < i || !strings.Contains(body, `"second"`) {
		t.Errorf("model list %s, want lmbench-sim, second, third", body)
	}
	if code, _ := postRead(t, url+"/v1/chat/completions", strings.Replace(chatBody("a", ""), "lmbench-sim", "third", 1)); code != 200 {
		t.Errorf("a request naming an extra model: %d, want 200", code)
	}
	cfg.ExtraModels = "lmbench-sim"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "ExtraModels") {
		t.Errorf("Validate with the served model as an extra: %v", err)
	}
}
