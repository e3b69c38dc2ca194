package sim

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("response differs from %s (-want +got):\n%s", path, diff)
	}
}

func TestResponsesMatchGoldens(t *testing.T) {
	t.Parallel()
	_, url := startServer(t, fastConfig())
	tests := []struct {
		golden, path, body string
	}{
		{"chat_stream.golden", "/v1/chat/completions",
			`{"model":"lmbench-sim","messages":[{"role":"system","content":"be brief"},` +
				`{"role":"user","content":[{"type":"text","text":"one two"},{"type":"text","text":"three"}]}],` +
				`"max_tokens":3,"stream":true,"stream_options":{"include_usage":true},"temperature":0.7}`},
		{"text_stream.golden", "/v1/completions",
			`{"model":"lmbench-sim","prompt":"once upon a time","max_tokens":2,"stream":true,` +
				`"stream_options":{"include_usage":true}}`},
		{"chat.golden", "/v1/chat/completions",
			`{"messages":[{"role":"user","content":"hello there"}],"max_completion_tokens":4}`},
		{"text.golden", "/v1/completions", `{"model":"lmbench-sim","prompt":["hello there"],"max_tokens":4}`},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			t.Parallel()
			resp := post(t, t.Context(), url+tt.path, tt.body)
			defer resp.Body.Close()
			var body bytes.Buffer
			if _, err := body.ReadFrom(resp.Body); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, body.String())
			}
			wantType := "application/json"
			if strings.Contains(tt.golden, "stream") {
				wantType = "text/event-stream; charset=utf-8"
			}
			if got := resp.Header.Get("Content-Type"); got != wantType {
				t.Errorf("Content-Type = %q, want %q", got, wantType)
			}
			golden(t, tt.golden, body.String())
		})
	}
}

func TestUsageCountsWords(t *testing.T) {
	t.Parallel()
	cfg := fastConfig()
	cfg.DefaultMaxTokens = 5
	_, url := startServer(t, cfg)
	tests := []struct {
		name, path, body  string
		prompt, completed int
	}{
		{"chat string content", "/v1/chat/completions", chatBody("a b  c\n d", `"max_tokens":2`), 4, 2},
		{"chat several messages and parts", "/v1/chat/completions",
			`{"messages":[{"role":"system","content":"x y"},{"role":"user","content":[{"type":"text","text":"p q r"}]},` +
				`{"role":"assistant","content":null},{"role":"user","content":"z"}],"max_tokens":1}`, 6, 1},
		{"default max tokens", "/v1/chat/completions", chatBody("a", ""), 1, 5},
		{"max_completion_tokens", "/v1/chat/completions", chatBody("a", `"max_completion_tokens":7`), 1, 7},
		{"max_completion_tokens wins over max_tokens", "/v1/chat/completions",
			chatBody("a", `"max_tokens":3,"max_completion_tokens":9`), 1, 9},
		{"text", "/v1/completions", `{"prompt":"one two three","max_tokens":20}`, 3, 20},
		{"text max_completion_tokens", "/v1/completions", `{"prompt":"one","max_completion_tokens":2}`, 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := usage{PromptTokens: tt.prompt, CompletionTokens: tt.completed, TotalTokens: tt.prompt + tt.completed,
				PromptTokensDetails: &promptTokensDetails{}}

			// Whole response.
			status, body := postRead(t, url+tt.path, tt.body)
			if status != http.StatusOK {
				t.Fatalf("status %d: %s", status, body)
			}
			var whole chunk
			if err := json.Unmarshal([]byte(body), &whole); err != nil {
				t.Fatal(err)
			}
			if whole.Usage == nil {
				t.Fatalf("no usage in %s", body)
			}
			if diff := cmp.Diff(want, *whole.Usage); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
			text := ""
			if c := whole.Choices[0]; c.Message != nil {
				text = c.Message.Content
			} else {
				text = *c.Text
			}
			if got := len(strings.Fields(text)); got != tt.completed {
				t.Errorf("output %q has %d words, want %d", text, got, tt.completed)
			}

			// The same, streamed with usage.
			streamBody := strings.TrimSuffix(tt.body, "}") + `,"stream":true,"stream_options":{"include_usage":true}}`
			status, body = postRead(t, url+tt.path, streamBody)
			if status != http.StatusOK {
				t.Fatalf("stream: status %d: %s", status, body)
			}
			got := summarise(t, parseSSE(t, body))
			if got.usage == nil {
				t.Fatalf("stream: no usage chunk in %s", body)
			}
			if diff := cmp.Diff(want, *got.usage); diff != "" {
				t.Errorf("stream: usage (-want +got):\n%s", diff)
			}
			if got.tokens != tt.completed || got.text != text || got.finish != "length" {
				t.Errorf("stream: %d token chunks, text %q, finish %q; want %d, %q, \"length\"",
					got.tokens, got.text, got.finish, tt.completed, text)
			}
		})
	}
}

func TestStreamWithoutIncludeUsageHasNoUsage(t *testing.T) {
	t.Parallel()
	_, url := startServer(t, fastConfig())
	for _, tt := range []struct{ path, body string }{
		{"/v1/chat/completions", chatBody("a b", `"max_tokens":3,"stream":true`)},
		{"/v1/chat/completions", chatBody("a b", `"max_tokens":3,"stream":true,"stream_options":{"include_usage":false}`)},
		{"/v1/completions", `{"prompt":"a b","max_tokens":3,"stream":true}`},
	} {
		status, body := postRead(t, url+tt.path, tt.body)
		if status != http.StatusOK {
			t.Fatalf("%s: status %d: %s", tt.body, status, body)
		}
		chunks := parseSSE(t, body)
		for _, c := range chunks {
			if c.Usage != nil || len(c.Choices) == 0 {
				t.Errorf("%s: unexpected usage chunk in\n%s", tt.body, body)
			}
		}
		if got := summarise(t, chunks); got.tokens != 3 {
			t.Errorf("%s: %d tokens, want 3", tt.body, got.tokens)
		}
	}
}

func TestModelsAndHealth(t *testing.T) {
	t.Parallel()
	cfg := fastConfig()
	cfg.Model = "my-model"
	_, url := startServer(t, cfg)

	status, body := get(t, url+"/v1/models")
	if status != http.StatusOK {
		t.Fatalf("GET /v1/models: status %d", status)
	}
	var got any
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"object": "list", "data": []any{map[string]any{
		"id": "my-model", "object": "model", "created": 1700000000.0, "owned_by": "lmbench-sim",
		"root": "my-model", "parent": nil,
	}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("/v1/models (-want +got):\n%s", diff)
	}

	if status, _ := get(t, url+"/health"); status != http.StatusOK {
		t.Errorf("GET /health: status %d, want 200", status)
	}
	// The configured name is the one accepted.
	if status, body := postRead(t, url+"/v1/completions", `{"model":"my-model","prompt":"a"}`); status != http.StatusOK {
		t.Errorf("completion with the configured model: status %d: %s", status, body)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	_, url := startServer(t, fastConfig())
	tests := []struct {
		name, path, body string
		status           int
		errType, message string
	}{
		{"bad JSON", "/v1/chat/completions", `{"messages":`, 400, "BadRequestError",
			"invalid JSON body: unexpected end of JSON input"},
		{"wrong field type", "/v1/completions", `{"prompt":"a","max_tokens":"ten"}`, 400, "BadRequestError", ""},
		{"unknown model", "/v1/chat/completions", `{"model":"gpt-9","messages":[{"role":"user","content":"hi"}]}`,
			404, "NotFoundError", "The model `gpt-9` does not exist."},
		{"unknown model, text", "/v1/completions", `{"model":"gpt-9","prompt":"hi"}`,
			404, "NotFoundError", "The model `gpt-9` does not exist."},
		{"no messages", "/v1/chat/completions", `{"model":"lmbench-sim"}`, 400, "BadRequestError",
			"messages: must be a non-empty list"},
		{"no prompt", "/v1/completions", `{"model":"lmbench-sim"}`, 400, "BadRequestError", "prompt: required"},
		{"empty prompt", "/v1/completions", `{"prompt":"  "}`, 400, "BadRequestError",
			"the prompt has no tokens (a token is a whitespace-separated word)"},
		{"prompt list of two", "/v1/completions", `{"prompt":["a","b"]}`, 400, "BadRequestError",
			"prompt: must be a string or a list of exactly one string"},
		{"image part", "/v1/chat/completions",
			`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`, 400,
			"BadRequestError",
			`messages[0].content: part 0: type must be "text" (the simulator has no other modalities), got "image_url"`},
		{"zero max_tokens", "/v1/completions", `{"prompt":"a","max_tokens":0}`, 400, "BadRequestError",
			"max_tokens: must be >= 1, got 0"},
		{"negative max_completion_tokens", "/v1/chat/completions", chatBody("a", `"max_completion_tokens":-1`), 400,
			"BadRequestError", "max_completion_tokens: must be >= 1, got -1"},
		{"n of 2", "/v1/completions", `{"prompt":"a","n":2}`, 400, "BadRequestError", "n: only 1 is supported, got 2"},
		{"stream_options without stream", "/v1/completions", `{"prompt":"a","stream_options":{"include_usage":true}}`,
			400, "BadRequestError", "stream_options: only allowed when stream is true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, body := postRead(t, url+tt.path, tt.body)
			if status != tt.status {
				t.Errorf("status %d, want %d (body %s)", status, tt.status, body)
			}
			var got struct {
				Error struct {
					Message string `json:"message"`
					Type    string `json:"type"`
					Code    int    `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatalf("error body %q: %v", body, err)
			}
			if got.Error.Type != tt.errType || got.Error.Code != tt.status {
				t.Errorf("error type %q code %d, want %q %d", got.Error.Type, got.Error.Code, tt.errType, tt.status)
			}
			if tt.message != "" && got.Error.Message != tt.message {
				t.Errorf("message %q, want %q", got.Error.Message, tt.message)
			}
			if got.Error.Message == "" {
				t.Error("empty error message")
			}
		})
	}

	resp, err := http.Get(url + "/v1/chat/completions")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /v1/chat/completions: status %d, want 405", resp.StatusCode)
	}
}

// TestWarmStreamGolden pins a stream whose prompt the cache partly holds:
// byte for byte, with usage.prompt_tokens_details.cached_tokens.
func TestWarmStreamGolden(t *testing.T) {
	t.Parallel()
	_, url := startServer(t, fastConfig())
	doc := words("w", 40) // 2 full blocks and 8 tokens
	postRead(t, url+"/v1/chat/completions", chatBody(doc, `"max_tokens":1`))
	status, body := postRead(t, url+"/v1/chat/completions",
		chatBody(doc+" and more", `"max_tokens":2,"stream":true,"stream_options":{"include_usage":true}`))
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	golden(t, "chat_stream_warm.golden", body)
}

// With EOSAfter an answer stops at the end-of-sequence token (finish
// reason stop) unless the request sets ignore_eos or a larger min_tokens;
// streamed and whole, chat and text.
func TestEOSAfter(t *testing.T) {
	t.Parallel()
	cfg := fastConfig()
	cfg.EOSAfter = 3
	_, url := startServer(t, cfg)
	for _, tc := range []struct {
		name, extra string
		tokens      int
		finish      string
	}{
		{"stops at EOS", `"max_tokens":10`, 3, "stop"},
		{"ignore_eos runs to max_tokens", `"max_tokens":10,"ignore_eos":true`, 10, "length"},
		{"min_tokens past EOS", `"max_tokens":10,"min_tokens":7`, 7, "stop"},
		{"min_tokens equal to max_tokens", `"max_tokens":10,"min_tokens":10`, 10, "length"},
		{"max_tokens before EOS", `"max_tokens":2`, 2, "length"},
	} {
		for _, stream := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s stream=%v", tc.name, stream), func(t *testing.T) {
				t.Parallel()
				extra := tc.extra + fmt.Sprintf(`,"stream":%v`, stream)
				if stream {
					extra += `,"stream_options":{"include_usage":true}`
				}
				code, body := postRead(t, url+"/v1/chat/completions", chatBody("a b c", extra))
				if code != http.StatusOK {
					t.Fatalf("status %d: %s", code, body)
				}
				var finish string
				var u *usage
				if stream {
					for _, c := range parseSSE(t, body) {
						for _, ch := range c.Choices {
							if ch.FinishReason != nil {
								finish = *ch.FinishReason
							}
						}
						if c.Usage != nil {
							u = c.Usage
						}
					}
				} else {
					var c chunk
					if err := json.Unmarshal([]byte(body), &c); err != nil {
						t.Fatal(err)
					}
					finish, u = *c.Choices[0].FinishReason, c.Usage
				}
				if u == nil || u.CompletionTokens != tc.tokens || finish != tc.finish {
					t.Errorf("usage %+v, finish %q; want %d completion tokens, finish %q", u, finish, tc.tokens, tc.finish)
				}
			})
		}
	}
	if code, body := postRead(t, url+"/v1/chat/completions", chatBody("a", `"max_tokens":4,"min_tokens":5`)); code != http.StatusBadRequest || !strings.Contains(body, "min_tokens") {
		t.Errorf("min_tokens above max_tokens: status %d %s, want 400 naming min_tokens", code, body)
	}
}

// /metrics counts the answers that ended at the EOS token apart, as
// vLLM's finished_reason label does.
func TestEOSAfterMetrics(t *testing.T) {
	t.Parallel()
	cfg := fastConfig()
	cfg.EOSAfter = 3
	_, url := startServer(t, cfg)
	for _, extra := range []string{`"max_tokens":10`, `"max_tokens":10`, `"max_tokens":10,"ignore_eos":true`} {
		if code, body := postRead(t, url+"/v1/chat/completions", chatBody("a b", extra)); code != http.StatusOK {
			t.Fatalf("status %d: %s", code, body)
		}
	}
	_, m := get(t, url+"/metrics")
	for _, want := range []string{`vllm:request_success_total{engine="0",finished_reason="stop",model_name="lmbench-sim"} 2`,
		`vllm:request_success_total{engine="0",finished_reason="length",model_name="lmbench-sim"} 1`} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
