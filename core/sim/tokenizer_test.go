package sim

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/sdk/subword"
)

func subwordConfig() Config {
	cfg := fastConfig()
	cfg.Tokenizer = TokenizerSubword
	return cfg
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
	want := subword.TextTokens(text)
	if got := tokenCount(t, url, `{"prompt":`+quote(text)+`,"add_special_tokens":false}`); got != want {
		t.Errorf("text without special tokens: %d tokens, want %d", got, want)
	}
	if got := tokenCount(t, url, `{"prompt":`+quote(text)+`}`); got != want+1 {
		t.Errorf("text with the default add_special_tokens: %d tokens, want %d (BOS)", got, want+1)
	}
	msgs := `[{"role":"system","content":"hi"},{"role":"user","content":` + quote(text) + `}]`
	chat := tokenCount(t, url, `{"messages":`+msgs+`}`)
	if wantChat := subword.ChatTokens("hi", text); chat != wantChat {
		t.Errorf("chat: %d tokens, want %d (content + %d per message + %d for the generation prompt)",
			chat, wantChat, subword.PerMessage, subword.GenerationPrompt)
	}
	if got := tokenCount(t, url, `{"messages":`+msgs+`,"add_generation_prompt":false}`); got != chat-subword.GenerationPrompt {
		t.Errorf("chat without generation prompt: %d tokens, want %d", got, chat-subword.GenerationPrompt)
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

// A chat with tools, an assistant's tool calls and a tool reply costs
// package subword's tool rule in /tokenize and in the completion's usage
// alike, in both tokenizer modes' own way.
func TestToolChatTokenizeAndUsageAgree(t *testing.T) {
	t.Parallel()
	msgs := `[{"role":"user","content":"weather in Oslo please"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Oslo\"}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"rain and wind"}]`
	tools := `[{"type":"function","function":{"name":"get_weather","description":"Current weather by city","parameters":{"type": "object"}}}]`
	body := `{"messages":` + msgs + `,"tools":` + tools
	want := map[string]int{
		TokenizerSubword: subword.ChatTokens("weather in Oslo please", "", "rain and wind") +
			subword.ToolCallTokens("get_weather", `{"city": "Oslo"}`) +
			subword.PerMessage + subword.ToolTokens("get_weather", "Current weather by city", `{"type": "object"}`),
		// words: the messages', the call's and the tool's words
		TokenizerWords: 4 + 3 + 1 + 2 + 1 + 4 + 2,
	}
	for mode, want := range want {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			cfg := fastConfig()
			cfg.Tokenizer = mode
			_, url := startServer(t, cfg)
			if got := tokenCount(t, url, body+`}`); got != want {
				t.Errorf("/tokenize of a tool chat: %d tokens, want %d", got, want)
			}
			noTools := tokenCount(t, url, `{"messages":`+msgs+`}`)
			if noTools >= want {
				t.Errorf("/tokenize without tools: %d tokens, want fewer than %d", noTools, want)
			}
			status, resp := postRead(t, url+"/v1/chat/completions", body+`,"max_tokens":1}`)
			if status != http.StatusOK {
				t.Fatalf("chat completion: %d %s", status, resp)
			}
			var r chatResponse
			if err := json.Unmarshal([]byte(resp), &r); err != nil {
				t.Fatal(err)
			}
			if r.Usage.PromptTokens != want {
				t.Errorf("usage.prompt_tokens = %d, want %d as /tokenize says", r.Usage.PromptTokens, want)
			}
		})
	}
}
