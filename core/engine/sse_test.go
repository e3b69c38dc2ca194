package engine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
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
		// Some servers write counts as floats: a whole number is a count.
		{"whole floats", []string{`{"choices":[],"usage":{"prompt_tokens":500.0,"completion_tokens":20.0,"prompt_tokens_details":{"cached_tokens":256.0}}}`}, usageSeen{500, 20, 256}},
		{"exponents", []string{`{"choices":[],"usage":{"prompt_tokens":5e2,"completion_tokens":2.0E1,"prompt_tokens_details":{"cached_tokens":0.0}}}`}, usageSeen{500, 20, 0}},
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
		{"tool_calls not an array", `{"choices":[{"delta":{"tool_calls":{"index":0}}}]}`, "malformed chunk"},
		{"tool call not an object", `{"choices":[{"delta":{"tool_calls":[7]}}]}`, "malformed chunk"},
		{"tool call function not an object", `{"choices":[{"delta":{"tool_calls":[{"function":"f"}]}}]}`, "malformed chunk"},
		{"tool call arguments not a string", `{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":{"city":"Paris"}}}]}}]}`, `tool_calls[0].function.arguments is not a string: {"city":"Paris"}`},
		{"tool call name not a string", `{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":1}}]}}]}`, "tool_calls[0].function.name is not a string: 1"},
		{"tool call id not a string", `{"choices":[{"delta":{"tool_calls":[{"index":0},{"index":1,"id":true}]}}]}`, "tool_calls[1].id is not a string: true"},
		{"negative tool call index", `{"choices":[{"delta":{"tool_calls":[{"index":-1,"id":"c"}]}}]}`, "tool_calls[0].index is not an integer from 0 to 999999999: -1"},
		{"string tool call index", `{"choices":[{"delta":{"tool_calls":[{"index":"0","id":"c"}]}}]}`, `tool_calls[0].index is not an integer from 0 to 999999999: "0"`},
		{"fractional tool call index", `{"choices":[{"delta":{"tool_calls":[{"index":1.5,"id":"c"}]}}]}`, "malformed chunk"},
		{"huge tool call index", `{"choices":[{"delta":{"tool_calls":[{"index":12345678901,"id":"c"}]}}]}`, "tool_calls[0].index is not an integer from 0 to 999999999: 12345678901"},
		{"fractional token count", `{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2.5}}`, "usage token count 2.5 is not a whole number"},
		{"token count too large", `{"usage":{"prompt_tokens":1e30}}`, "usage token count 1e30 is not a whole number"},
		{"token count not a number", `{"usage":{"prompt_tokens":"10"}}`, `usage token count "10" is not a whole number`},
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
	f.Add([]byte("data: " + toolChunk(`[{"index":0,"id":"c","function":{"name":"f","arguments":"{"}}]`) + "\n\ndata: " +
		toolChunk(`[{"index":0,"function":{"arguments":"}"}},{"index":1,"id":"d"}]`) + "\n\ndata: [DONE]\n\n"))
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
			if calls := st.toolCalls(); len(calls) > 0 && (completion || st.chunks == 0) {
				t.Fatalf("%d tool calls with completion %v and %d chunks for %q", len(calls), completion, st.chunks, body)
			}
			for _, c := range st.toolCalls() {
				if c.ID == "" && c.Name == "" && c.Arguments == "" {
					t.Fatalf("empty tool call for %q", body)
				}
			}
			putStream(st)
		}
	})
}

// toolChunk is a chat chunk whose delta holds the given tool_calls JSON.
func toolChunk(toolCalls string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":` + toolCalls + `},"logprobs":null,"finish_reason":null}]}`
}

func TestDecodeToolCalls(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		payloads   []string
		completion bool
		wantOutput []bool // per payload: did it count as output
		wantText   string
		want       []ToolCall
	}{
		{
			name: "vLLM: id and name first, then argument fragments",
			payloads: []string{
				toolChunk(`[{"id":"chatcmpl-tool-a1","type":"function","index":0,"function":{"name":"get_weather"}}]`),
				toolChunk(`[{"index":0,"function":{"arguments":"{\"city\": \""}}]`),
				toolChunk(`[{"index":0,"function":{"arguments":"Paris"}}]`),
				toolChunk(`[{"index":0,"function":{"arguments":"\"}"}}]`),
				`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			},
			wantOutput: []bool{true, true, true, true, false},
			want:       []ToolCall{{ID: "chatcmpl-tool-a1", Name: "get_weather", Arguments: `{"city": "Paris"}`}},
		},
		{
			name: "later ids and names do not replace the first",
			payloads: []string{
				toolChunk(`[{"index":0,"id":"call_0","type":"function","function":{"name":"f","arguments":""}}]`),
				toolChunk(`[{"index":0,"id":"","function":{"name":null,"arguments":"{}"}}]`),
				toolChunk(`[{"index":0,"id":"other","function":{"name":"g"}}]`),
			},
			wantOutput: []bool{true, true, true},
			want:       []ToolCall{{ID: "call_0", Name: "f", Arguments: "{}"}},
		},
		{
			name: "several calls, interleaved, returned in index order",
			payloads: []string{
				toolChunk(`[{"index":1,"id":"b","function":{"name":"second","arguments":"[1"}}]`),
				toolChunk(`[{"index":0,"id":"a","function":{"name":"first","arguments":"{"}}]`),
				toolChunk(`[{"index":1,"function":{"arguments":",2]"}},{"index":0,"function":{"arguments":"}"}}]`),
				toolChunk(`[{"index":2,"id":"c","function":{"name":"third"}}]`),
			},
			wantOutput: []bool{true, true, true, true},
			want:       []ToolCall{{ID: "a", Name: "first", Arguments: "{}"}, {ID: "b", Name: "second", Arguments: "[1,2]"}, {ID: "c", Name: "third"}},
		},
		{
			name: "content and a tool call in one chunk",
			payloads: []string{
				`{"choices":[{"delta":{"content":"Checking.","tool_calls":[{"index":0,"id":"x","function":{"name":"f","arguments":"{}"}}]}}]}`,
			},
			wantOutput: []bool{true},
			wantText:   "Checking.",
			want:       []ToolCall{{ID: "x", Name: "f", Arguments: "{}"}},
		},
		{
			name: "no index: the position in the array",
			payloads: []string{
				toolChunk(`[{"id":"a","function":{"name":"f","arguments":"{}"}},{"id":"b","index":null,"function":{"name":"g","arguments":"{}"}}]`),
			},
			wantOutput: []bool{true},
			want:       []ToolCall{{ID: "a", Name: "f", Arguments: "{}"}, {ID: "b", Name: "g", Arguments: "{}"}},
		},
		{
			name: "escaped arguments are unescaped",
			payloads: []string{
				toolChunk(`[{"index":0,"id":"i","function":{"name":"f","arguments":"{\"q\":\"caf\u00e9\\n\"}"}}]`),
			},
			wantOutput: []bool{true},
			want:       []ToolCall{{ID: "i", Name: "f", Arguments: `{"q":"café\n"}`}},
		},
		{
			name: "deltas without text are not output and make no call",
			payloads: []string{
				toolChunk(`[]`),
				toolChunk(`null`),
				toolChunk(`[null,{"index":3,"type":"function"},{"index":4,"id":"","function":{"name":"","arguments":""}}]`),
			},
			wantOutput: []bool{false, false, false},
		},
		{
			name:       "completions ignore tool calls",
			payloads:   []string{`{"choices":[{"text":"t","delta":{"tool_calls":[{"index":0,"id":"x"}]}}]}`},
			completion: true,
			wantOutput: []bool{true},
			wantText:   "t",
		},
		{
			name:       "only the first choice",
			payloads:   []string{`{"choices":[{"delta":{}},{"delta":{"tool_calls":[{"index":0,"id":"x","function":{"name":"f"}}]}}]}`},
			wantOutput: []bool{false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := getStream(nil, tt.completion, time.Now)
			defer putStream(st)
			var outputs []bool
			for _, p := range tt.payloads {
				out, err := st.decode([]byte(p))
				if err != nil {
					t.Fatalf("decode(%s): %v", p, err)
				}
				outputs = append(outputs, out)
			}
			if diff := cmp.Diff(tt.wantOutput, outputs); diff != "" {
				t.Errorf("output per chunk (-want +got):\n%s", diff)
			}
			if got := string(st.text); got != tt.wantText {
				t.Errorf("text = %q, want %q", got, tt.wantText)
			}
			if diff := cmp.Diff(tt.want, st.toolCalls()); diff != "" {
				t.Errorf("tool calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeToolCallLimit(t *testing.T) {
	t.Parallel()
	st := getStream(nil, false, time.Now)
	defer putStream(st)
	for i := range maxToolCalls {
		p := toolChunk(fmt.Sprintf(`[{"index":%d,"id":"c%d"}]`, i, i))
		if _, err := st.decode([]byte(p)); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	_, err := st.decode([]byte(toolChunk(fmt.Sprintf(`[{"index":%d,"id":"one too many"}]`, maxToolCalls))))
	if want := fmt.Sprintf("more than %d tool calls", maxToolCalls); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error = %v, want it to contain %q", err, want)
	}
}

// TestToolCallsReusePooledStreams: a stream taken from the pool starts
// without the calls of the previous request.
func TestToolCallsReusePooledStreams(t *testing.T) {
	st := getStream(nil, false, time.Now)
	if _, err := st.decode([]byte(toolChunk(`[{"index":0,"id":"old","function":{"name":"f","arguments":"{\"a\":1}"}},{"index":1,"id":"old2"}]`))); err != nil {
		t.Fatal(err)
	}
	putStream(st)
	for range 4 { // the pool may hand back another stream; any of them must be clean
		st = getStream(nil, false, time.Now)
		if len(st.calls) != 0 || len(st.text) != 0 {
			t.Fatalf("pooled stream kept %d calls, text %q", len(st.calls), st.text)
		}
		if _, err := st.decode([]byte(toolChunk(`[{"index":0,"function":{"arguments":"x"}}]`))); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]ToolCall{{Arguments: "x"}}, st.toolCalls()); diff != "" {
			t.Errorf("tool calls (-want +got):\n%s", diff)
		}
		putStream(st)
	}
}

// TestDecodeAnswerInfo: what the engine says about its answer. The id and
// the model are the first non-empty ones (every chunk repeats them), the
// finish reason the last non-empty one of the first choice; a value that
// is no string is ignored, never a failure.
func TestDecodeAnswerInfo(t *testing.T) {
	t.Parallel()
	type info struct{ ID, Model, FinishReason string }
	tests := []struct {
		name       string
		payloads   []string
		completion bool
		want       info
	}{
		{"vLLM chat: reason in the last content chunk, then usage", []string{
			`{"id":"chatcmpl-abc","object":"chat.completion.chunk","created":1,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
			`{"id":"chatcmpl-abc","object":"chat.completion.chunk","created":1,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}]}`,
			`{"id":"chatcmpl-abc","object":"chat.completion.chunk","created":1,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"length","stop_reason":null}]}`,
			`{"id":"chatcmpl-abc","object":"chat.completion.chunk","created":1,"model":"Qwen/Qwen3-8B","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1}}`,
		}, false, info{"chatcmpl-abc", "Qwen/Qwen3-8B", "length"}},
		{"completions", []string{
			`{"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[{"index":0,"text":" a","logprobs":null,"finish_reason":null}]}`,
			`{"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[{"index":0,"text":"","logprobs":null,"finish_reason":"stop"}]}`,
		}, true, info{"cmpl-1", "m", "stop"}},
		{"the last non-empty reason wins; null and empty keep it", []string{
			`{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`,
			`{"choices":[{"delta":{},"finish_reason":"stop"}]}`,
			`{"choices":[{"delta":{},"finish_reason":null}]}`,
			`{"choices":[{"delta":{},"finish_reason":""}]}`,
			`{"choices":[{"delta":{}}]}`,
		}, false, info{FinishReason: "stop"}},
		{"the first non-empty id and model win", []string{
			`{"id":"","model":null,"choices":[]}`,
			`{"id":"first","model":"m1","choices":[]}`,
			`{"id":"second","model":"m2","choices":[]}`,
		}, false, info{"first", "m1", ""}},
		{"escaped strings are unescaped", []string{`{"id":"a\"b","model":"caf\u00e9/\u4e16","choices":[{"finish_reason":"st\u006fp"}]}`},
			false, info{`a"b`, "café/世", "stop"}},
		{"other types are ignored", []string{
			`{"id":42,"model":{"name":"m"},"choices":[{"delta":{"content":"x"},"finish_reason":["stop"]}]}`,
			`{"id":true,"model":[],"choices":[{"finish_reason":1}]}`,
		}, false, info{}},
		{"only the first choice", []string{`{"choices":[{"delta":{}},{"delta":{},"finish_reason":"stop"}]}`}, false, info{}},
		{"through encoding/json too", []string{` {"ID":"upper","Model":"M","choices":[{"Finish_Reason":"stop"}]} `}, false, info{"upper", "M", "stop"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := getStream(nil, tt.completion, time.Now)
			defer putStream(st)
			for _, p := range tt.payloads {
				if _, err := st.decode([]byte(p)); err != nil {
					t.Fatalf("decode(%s): %v", p, err)
				}
			}
			got := info{string(st.responseID), string(st.responseModel), string(st.finishReason)}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answer info (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStreamChunkTimes: one offset from submit per chunk with output, in
// order, the first maxTimes of them; Chunks counts them all.
func TestStreamChunkTimes(t *testing.T) {
	t.Parallel()
	var body strings.Builder
	body.WriteString("data: " + `{"choices":[{"delta":{"role":"assistant","content":""}}]}` + "\n\n") // no output: no time
	for i := range 5 {
		fmt.Fprintf(&body, "data: %s\n\n", `{"choices":[{"delta":{"content":"t`+strconv.Itoa(i)+`"}}]}`)
		body.WriteString(": keep-alive\n\n") // a comment reads no clock
	}
	body.WriteString("data: " + `{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f"}}]}}]}` + "\n\n")
	body.WriteString("data: " + `{"choices":[],"usage":{"completion_tokens":6}}` + "\n\ndata: [DONE]\n\n")
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for _, tc := range []struct {
		max  int
		want []time.Duration
	}{
		{MaxChunkTimes, []time.Duration{ms(2), ms(3), ms(4), ms(5), ms(6), ms(7)}},
		{4, []time.Duration{ms(2), ms(3), ms(4), ms(5)}},
		{0, nil},
	} {
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		clock := &stepClock{t: t0, step: time.Millisecond} // one reading per data line
		st := getStream(strings.NewReader(body.String()), false, clock.Now)
		st.submit, st.maxTimes = t0, tc.max
		if err := st.run(); err != nil {
			t.Fatal(err)
		}
		var res Result
		st.fill(&res)
		putStream(st)
		if res.Chunks != 6 {
			t.Errorf("max %d: Chunks = %d, want 6 (all of them)", tc.max, res.Chunks)
		}
		if diff := cmp.Diff(tc.want, res.ChunkTimes); diff != "" {
			t.Errorf("max %d: ChunkTimes (-want +got):\n%s", tc.max, diff)
		}
	}
}

// TestCachedTokensFromLlamaCppTimings: llama.cpp's server reports the
// prompt tokens its slot reused in timings.cache_n, usage's
// cached_tokens only in recent builds; the usage count wins when both are
// there.
func TestCachedTokensFromLlamaCppTimings(t *testing.T) {
	t.Parallel()
	withUsage := strings.Replace(llamacppFinal, `"total_tokens":340}`, `"total_tokens":340,"prompt_tokens_details":{"cached_tokens":12}}`, 1)
	for _, tt := range []struct {
		name, final string
		want        int
	}{
		{"timings only", llamacppFinal, 13},
		{"usage and timings", withUsage, 12},
		{"neither", usageChunk(14, 326), 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, sseHandler(chatChunk("Hello"), tt.final, done))
			res := newSender(t, srv.URL).Send(context.Background(), chatRequest("r0"))
			if !res.Success || res.CachedTokens != tt.want || res.InputTokens != 14 {
				t.Errorf("cached %d, input %d (success %v, %s); want cached %d, input 14", res.CachedTokens, res.InputTokens, res.Success, res.Error, tt.want)
			}
		})
	}
}

// TestLogprobsKeptForTheFirstTokens: asked for K, the body asks the
// engine for them in the mode's shape, and the first K tokens' are kept,
// chat's and completions' alike.
func TestLogprobsKeptForTheFirstTokens(t *testing.T) {
	t.Parallel()
	chat := func(tok string, lp float64) string {
		return fmt.Sprintf(`{"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":%q},`+
			`"logprobs":{"content":[{"token":%q,"logprob":%g,"bytes":[1],"top_logprobs":[{"token":%q,"logprob":%g,"bytes":[1]},{"token":"x","logprob":-9,"bytes":null}]}]},"finish_reason":null}]}`,
			tok, tok, lp, tok, lp)
	}
	compl := `{"id":"c","object":"text_completion","model":"m","choices":[{"index":0,"text":"ab","logprobs":{"tokens":["a","b"],"token_logprobs":[-0.5,-1],` +
		`"top_logprobs":[{"z":-3,"a":-0.5},{"b":-1,"y":-2}],"text_offset":[0,1]},"finish_reason":null}]}`
	for _, tt := range []struct {
		name       string
		completion bool
		payloads   []string
		body       string
		want       []TokenLogprob
	}{
		{"chat", false, []string{chat("Hel", -0.25), chat("lo", -0.5), chat("!", -1)}, `"logprobs":true,"top_logprobs":2`,
			[]TokenLogprob{{"Hel", -0.25, []TopLogprob{{"Hel", -0.25}, {"x", -9}}}, {"lo", -0.5, []TopLogprob{{"lo", -0.5}, {"x", -9}}}}},
		{"completions", true, []string{compl}, `"logprobs":2`,
			[]TokenLogprob{{"a", -0.5, []TopLogprob{{"a", -0.5}, {"z", -3}}}, {"b", -1, []TopLogprob{{"b", -1}, {"y", -2}}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body := make(chan string, 1)
			h := sseHandler(append(tt.payloads, usageChunk(3, 3), done)...)
			srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				body <- string(b)
				r.Body = io.NopCloser(strings.NewReader(""))
				h(w, r)
			}))
			req := chatRequest("r0")
			req.Completion, req.TopLogprobs = tt.completion, 2
			res := newSender(t, srv.URL).Send(context.Background(), req)
			if !res.Success {
				t.Fatal(res.Error)
			}
			if b := <-body; !strings.Contains(b, tt.body) {
				t.Errorf("body %s lacks %s", b, tt.body)
			}
			if d := cmp.Diff(tt.want, res.Logprobs); d != "" {
				t.Errorf("logprobs (-want +got):\n%s", d)
			}
		})
	}
	srv := newServer(t, sseHandler(chat("Hel", -0.25), usageChunk(3, 1), done))
	if res := newSender(t, srv.URL).Send(context.Background(), chatRequest("r1")); res.Logprobs != nil {
		t.Errorf("not asked, kept %v", res.Logprobs)
	}
}
