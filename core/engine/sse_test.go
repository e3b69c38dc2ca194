package engine

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// decodeOne runs one data payload through the chunk decoder and returns the
// content it produced.
func decodeOne(t *testing.T, payload string, completion bool) (string, *stream) {
	t.Helper()
	st := getStream(nil, completion, time.Now)
	t.Cleanup(func() { putStream(st) })
	if _, err := st.decode([]byte(payload)); err != nil {
		t.Fatalf("decode(%s): %v", payload, err)
	}
	return string(st.text), st
}

func TestExtractContent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		payload    string
		completion bool
		want       string
	}{
		{"chat content", `{"choices":[{"index":0,"delta":{"content":"Hello"}}]}`, false, "Hello"},
		{"chat no choices", `{"choices":[],"usage":{"prompt_tokens":5}}`, false, ""},
		{"chat choices absent", `{"id":"x"}`, false, ""},
		{"chat null content", `{"choices":[{"delta":{"content":null}}]}`, false, ""},
		{"chat role only", `{"choices":[{"delta":{"role":"assistant"}}]}`, false, ""},
		{"chat empty content does not fall back", `{"choices":[{"delta":{"content":"","reasoning_content":"r"}}]}`, false, ""},
		{"reasoning_content fallback", `{"choices":[{"delta":{"content":null,"reasoning_content":"think"}}]}`, false, "think"},
		{"reasoning fallback", `{"choices":[{"delta":{"reasoning":"ponder"}}]}`, false, "ponder"},
		{"reasoning_content before reasoning", `{"choices":[{"delta":{"reasoning_content":"a","reasoning":"b"}}]}`, false, "a"},
		{"escaped content", `{"choices":[{"delta":{"content":"a\n\"b\" \u00e9 \ud83c\udf89"}}]}`, false, "a\n\"b\" é 🎉"},
		{"unicode content", `{"choices":[{"delta":{"content":"世界"}}]}`, false, "世界"},
		{"first choice only", `{"choices":[{"delta":{"content":"0"}},{"delta":{"content":"1"}}]}`, false, "0"},
		{"completions text", `{"choices":[{"index":0,"text":"Hello there","logprobs":null}]}`, true, "Hello there"},
		{"completions no choices", `{"choices":[]}`, true, ""},
		{"completions ignores delta", `{"choices":[{"delta":{"content":"x"}}]}`, true, ""},
		{"chat ignores text", `{"choices":[{"text":"x"}]}`, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, _ := decodeOne(t, tt.payload, tt.completion)
			if got != tt.want {
				t.Errorf("content = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDecodeUsage(t *testing.T) {
	t.Parallel()
	type usageSeen struct{ In, Out, Cached int }
	tests := []struct {
		name     string
		payloads []string
		want     usageSeen
	}{
		{"usage chunk", []string{`{"choices":[],"usage":{"prompt_tokens":500,"completion_tokens":20,"total_tokens":520}}`}, usageSeen{500, 20, 0}},
		{"cached tokens", []string{`{"choices":[],"usage":{"prompt_tokens":500,"completion_tokens":20,"prompt_tokens_details":{"cached_tokens":256}}}`}, usageSeen{500, 20, 256}},
		{"null usage", []string{`{"choices":[{"delta":{"content":"x"}}],"usage":null}`}, usageSeen{}},
		{"null details", []string{`{"usage":{"prompt_tokens":3,"prompt_tokens_details":null}}`}, usageSeen{3, 0, 0}},
		{"last non-zero wins", []string{
			`{"usage":{"prompt_tokens":10,"completion_tokens":1}}`,
			`{"usage":{"prompt_tokens":10,"completion_tokens":2}}`,
			`{"usage":{"prompt_tokens":0,"completion_tokens":0}}`,
		}, usageSeen{10, 2, 0}},
		{"absent usage keeps earlier values", []string{
			`{"usage":{"prompt_tokens":7,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":4}}}`,
			`{"choices":[]}`,
		}, usageSeen{7, 3, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := getStream(nil, false, time.Now)
			defer putStream(st)
			for _, p := range tt.payloads {
				if _, err := st.decode([]byte(p)); err != nil {
					t.Fatalf("decode(%s): %v", p, err)
				}
			}
			got := usageSeen{st.inputTokens, st.outputTokens, st.cachedTokens}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("usage mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, payload, wantSub string }{
		{"malformed JSON names the line", `{"choices":[{"delta":`, `malformed chunk "{\"choices\":[{\"delta\":"`},
		{"error object", `{"error":{"object":"error","message":"out of KV cache","type":"InternalServerError","code":500}}`, "stream error: out of KV cache"},
		{"error string", `{"error":"overloaded"}`, "stream error: overloaded"},
		{"error without message", `{"error":{"code":500}}`, `stream error: {"code":500}`},
		{"content not a string", `{"choices":[{"delta":{"content":42}}]}`, "content is not a string: 42"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := getStream(nil, false, time.Now)
			defer putStream(st)
			_, err := st.decode([]byte(tt.payload))
			if err == nil || !strings.Contains(err.Error(), tt.wantSub) {
				t.Errorf("decode(%s) error = %v, want it to contain %q", tt.payload, err, tt.wantSub)
			}
		})
	}
}

// TestChunkReuse checks that fields of one chunk never leak into the next
// although the decoder reuses its buffers.
func TestChunkReuse(t *testing.T) {
	t.Parallel()
	st := getStream(nil, false, time.Now)
	defer putStream(st)
	for _, p := range []string{
		`{"choices":[{"delta":{"content":"A","reasoning_content":"R"}},{"delta":{"content":"B"}}]}`,
		`{"choices":[{"delta":{"reasoning":"C"}}]}`,
		`{"choices":[{"delta":{}}]}`,
		`{"choices":[{"delta":{"content":null}}]}`,
		`{"choices":[]}`,
	} {
		if _, err := st.decode([]byte(p)); err != nil {
			t.Fatalf("decode(%s): %v", p, err)
		}
	}
	if got := string(st.text); got != "AC" {
		t.Errorf("text = %q, want %q", got, "AC")
	}
}

// FuzzStream feeds arbitrary bytes to the SSE reader: it must never panic,
// must report every failure with a message, and a success must have seen
// [DONE].
func FuzzStream(f *testing.F) {
	f.Add([]byte("data: " + `{"choices":[{"delta":{"content":"a"}}]}` + "\n\ndata: [DONE]\n\n"))
	f.Add([]byte(": c\r\nevent: error\r\ndata: {\"message\":\"x\"}\r\n\r\n"))
	f.Add([]byte("data:{\"choices\":[{\"text\":\"t\"}]}\ndata:[DONE]"))
	f.Add([]byte("data: {\"usage\":{\"prompt_tokens\":3}}\n\ndata: {bad\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, completion := range []bool{false, true} {
			st := getStream(bytes.NewReader(body), completion, time.Now)
			err := st.run()
			if err != nil && err.Error() == "" {
				t.Fatalf("empty error for %q", body)
			}
			if err == nil && !st.done {
				t.Fatalf("success without [DONE] for %q", body)
			}
			if st.chunks > 0 && (st.first.IsZero() || st.last.Before(st.first)) {
				t.Fatalf("chunks %d, first %v, last %v for %q", st.chunks, st.first, st.last, body)
			}
			putStream(st)
		}
	})
}
