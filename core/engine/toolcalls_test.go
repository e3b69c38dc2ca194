package engine

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Streams in vLLM's shape (--enable-auto-tool-choice): a role chunk with
// empty content, then per call a delta with its id, type, index and name,
// then deltas with argument fragments only, and a last chunk with
// finish_reason "tool_calls".
const (
	vllmRoleChunk   = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`
	vllmFinishTools = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"tool_calls","stop_reason":null}]}`
)

func vllmToolName(index, id, name string) string {
	return toolChunk(`[{"id":"` + id + `","type":"function","index":` + index + `,"function":{"name":"` + name + `"}}]`)
}

// vllmToolArgsChunk streams one arguments fragment; frag is JSON-string
// content (already escaped).
func vllmToolArgsChunk(index, frag string) string {
	return toolChunk(`[{"index":` + index + `,"function":{"arguments":"` + frag + `"}}]`)
}

func TestSendToolCalls(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                  string
		payloads              []string
		wantText              string
		want                  []ToolCall
		wantChunks, wantOut   int
		wantInput, wantCached int
	}{
		{
			name: "content, then two calls with arguments over many chunks",
			payloads: []string{
				vllmRoleChunk,
				chatChunk("Let me"), chatChunk(" check."),
				vllmToolName("0", "chatcmpl-tool-a1", "get_weather"),
				vllmToolArgsChunk("0", `{\"city\": `), vllmToolArgsChunk("0", `\"Par`), vllmToolArgsChunk("0", `is\"`), vllmToolArgsChunk("0", `}`),
				vllmToolName("1", "chatcmpl-tool-b2", "get_time"),
				vllmToolArgsChunk("1", `{\"tz\": \"Europe/Paris\"`), vllmToolArgsChunk("1", `}`),
				vllmFinishTools,
				`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":300,"total_tokens":340,"completion_tokens":40,"prompt_tokens_details":{"cached_tokens":256}}}`,
				done,
			},
			wantText: "Let me check.",
			want: []ToolCall{
				{ID: "chatcmpl-tool-a1", Name: "get_weather", Arguments: `{"city": "Paris"}`},
				{ID: "chatcmpl-tool-b2", Name: "get_time", Arguments: `{"tz": "Europe/Paris"}`},
			},
			wantChunks: 10, wantOut: 40, wantInput: 300, wantCached: 256,
		},
		{
			name: "a chunk with both content and a tool-call delta counts once",
			payloads: []string{
				`{"choices":[{"index":0,"delta":{"content":"On it.","tool_calls":[{"index":0,"id":"call_0","type":"function","function":{"name":"search","arguments":"{\"q\":"}}]}}]}`,
				vllmToolArgsChunk("0", `\"go\"}`),
				usageChunk(20, 9),
				done,
			},
			wantText:   "On it.",
			want:       []ToolCall{{ID: "call_0", Name: "search", Arguments: `{"q":"go"}`}},
			wantChunks: 2, wantOut: 9, wantInput: 20,
		},
		{
			name: "calls interleaved by index come back in index order",
			payloads: []string{
				vllmToolName("1", "b", "second"),
				vllmToolName("0", "a", "first"),
				toolChunk(`[{"index":1,"function":{"arguments":"[2]"}},{"index":0,"function":{"arguments":"[1]"}}]`),
				done,
			},
			want:       []ToolCall{{ID: "a", Name: "first", Arguments: "[1]"}, {ID: "b", Name: "second", Arguments: "[2]"}},
			wantChunks: 3, wantOut: 3,
		},
		{
			name: "no usage: OutputTokens counts the tool-call chunks",
			payloads: []string{
				vllmRoleChunk,
				vllmToolName("0", "c", "f"),
				vllmToolArgsChunk("0", `{`), vllmToolArgsChunk("0", ``), vllmToolArgsChunk("0", `}`),
				vllmFinishTools,
				done,
			},
			want:       []ToolCall{{ID: "c", Name: "f", Arguments: "{}"}},
			wantChunks: 3, wantOut: 3, // the empty fragment is no output
		},
		{
			name: "OpenAI's shape: empty arguments with the name, null content",
			payloads: []string{
				`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_abc","type":"function","function":{"name":"get_weather","arguments":""}}],"refusal":null},"logprobs":null,"finish_reason":null}]}`,
				`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"location\":\"Boston\"}"}}]},"logprobs":null,"finish_reason":null}]}`,
				`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}`,
				done,
			},
			want:       []ToolCall{{ID: "call_abc", Name: "get_weather", Arguments: `{"location":"Boston"}`}},
			wantChunks: 2, wantOut: 2,
		},
		{
			name:       "plain content has no tool calls",
			payloads:   []string{chatChunk("hi"), done},
			wantText:   "hi",
			wantChunks: 1, wantOut: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, sseHandler(tt.payloads...))
			res := newSender(t, srv.URL).Send(context.Background(), chatRequest("r"))
			if !res.Success {
				t.Fatalf("failed: %s", res.Error)
			}
			if res.Text != tt.wantText {
				t.Errorf("Text = %q, want %q", res.Text, tt.wantText)
			}
			if diff := cmp.Diff(tt.want, res.ToolCalls); diff != "" {
				t.Errorf("ToolCalls (-want +got):\n%s", diff)
			}
			got := []int{res.Chunks, res.OutputTokens, res.InputTokens, res.CachedTokens}
			if diff := cmp.Diff([]int{tt.wantChunks, tt.wantOut, tt.wantInput, tt.wantCached}, got); diff != "" {
				t.Errorf("[chunks out in cached] (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSendToolCallTimestamps: an answer that only calls a tool has its
// first token at the first tool-call delta, and its ITL from the gaps
// between tool-call chunks, as content would.
func TestSendToolCallTimestamps(t *testing.T) {
	t.Parallel()
	srv := newServer(t, sseHandler(
		vllmRoleChunk,                     // 2: no output
		vllmToolName("0", "c", "f"),       // 3: first token
		vllmToolArgsChunk("0", `{\"a\":`), // 4
		vllmToolArgsChunk("0", `1}`),      // 5: last token
		vllmFinishTools,                   // 6: no output
		usageChunk(10, 6),                 // 7
		done,                              // 8: finish
	))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := &stepClock{t: t0, step: 10 * time.Millisecond}
	res := newSender(t, srv.URL, func(c *Config) { c.Now = clock.Now }).Send(context.Background(), chatRequest("r"))
	if !res.Success {
		t.Fatalf("failed: %s", res.Error)
	}
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * 10 * time.Millisecond) }
	type times struct {
		Submit, First, Last, Finish time.Time
		ITL                         time.Duration
		Chunks                      int
	}
	want := times{ms(1), ms(3), ms(5), ms(8), 10 * time.Millisecond, 3}
	got := times{res.Submit, res.FirstToken, res.LastToken, res.Finish, res.ITL, res.Chunks}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("timestamps (-want +got):\n%s", diff)
	}
	if res.Text != "" || len(res.ToolCalls) != 1 || res.ToolCalls[0].Arguments != `{"a":1}` {
		t.Errorf("Text %q, ToolCalls %+v; want no text and one call with {\"a\":1}", res.Text, res.ToolCalls)
	}
	// The tool-call chunks are the chunks timed, and the answer says why it ended.
	if diff := cmp.Diff([]time.Duration{20 * time.Millisecond, 30 * time.Millisecond, 40 * time.Millisecond}, res.ChunkTimes); diff != "" {
		t.Errorf("ChunkTimes (-want +got):\n%s", diff)
	}
	if res.FinishReason != "tool_calls" {
		t.Errorf("FinishReason = %q, want tool_calls", res.FinishReason)
	}
}

// A failed request keeps no tool calls, as it keeps no text; malformed
// tool_calls fail the request like any malformed chunk.
func TestSendToolCallFailures(t *testing.T) {
	t.Parallel()
	start := vllmToolName("0", "c", "f")
	tests := []struct {
		name    string
		handler http.HandlerFunc
		wantErr string
	}{
		{"tool_calls not an array", sseHandler(start, toolChunk(`{"index":0}`), done), `malformed chunk "{\"id\":\"chatcmpl-1\"`},
		{"arguments not a string", sseHandler(start, toolChunk(`[{"index":0,"function":{"arguments":{"a":1}}}]`), done), `tool_calls[0].function.arguments is not a string: {"a":1}`},
		{"negative index", sseHandler(start, toolChunk(`[{"index":-2,"function":{"arguments":"{}"}}]`), done), "tool_calls[0].index is not an integer from 0 to 999999999: -2"},
		{"truncated JSON", sseHandler(start, `{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{`, done), "malformed chunk"},
		{"error after tool calls", sseHandler(start, vllmToolArgsChunk("0", `{}`), `{"error":{"message":"engine died"}}`, done), "stream error: engine died"},
		{"no [DONE] after tool calls", sseHandler(start, vllmToolArgsChunk("0", `{}`)), "stream ended before [DONE]: EOF after 2 data lines (2 with content)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, tt.handler)
			res := newSender(t, srv.URL).Send(context.Background(), chatRequest("r"))
			checkFailed(t, res, tt.wantErr)
			if res.ToolCalls != nil || res.Text != "" || res.Chunks != 0 || res.OutputTokens != 0 || !res.FirstToken.IsZero() {
				t.Errorf("ToolCalls %+v, Text %q, Chunks %d, OutputTokens %d, FirstToken %v; want zero values",
					res.ToolCalls, res.Text, res.Chunks, res.OutputTokens, res.FirstToken)
			}
		})
	}
}

// TestSendToolRequestBody checks the exact bytes the engine receives for
// a conversation with a tool call, its reply and the tools on offer.
func TestSendToolRequestBody(t *testing.T) {
	t.Parallel()
	got := make(chan string, 1)
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- string(b)
		sseHandler(chatChunk("21 °C in Paris."), done)(w, r)
	}))
	req := Request{
		ID: "r",
		Messages: []Message{
			{Role: "user", Content: "Weather in Paris?"},
			{Role: "assistant", ToolCalls: []ToolCall{{ID: "call_0", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
			{Role: "tool", Content: `{"temp_c":21}`, ToolCallID: "call_0"},
		},
		Tools: []Tool{{
			Name: "get_weather", Description: "Current weather in a city.",
			Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`,
		}},
		MaxTokens: 32,
	}
	res := newSender(t, srv.URL).Send(context.Background(), req)
	if !res.Success || res.Text != "21 °C in Paris." || res.ToolCalls != nil {
		t.Fatalf("Success %v, Text %q, ToolCalls %+v, Error %q", res.Success, res.Text, res.ToolCalls, res.Error)
	}
	want := `{"model":"test-model","messages":[` +
		`{"role":"user","content":"Weather in Paris?"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_0","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},` +
		`{"role":"tool","tool_call_id":"call_0","content":"{\"temp_c\":21}"}],` +
		`"tools":[{"type":"function","function":{"name":"get_weather","description":"Current weather in a city.",` +
		`"parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}],` +
		`"stream":true,"max_tokens":32,"temperature":0.0,"stream_options":{"include_usage":true}}`
	if diff := cmp.Diff(want, <-got); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

// A tool with invalid parameters fails the request before anything is
// sent: the engine never sees an invalid body.
func TestSendInvalidToolParameters(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		sseHandler(chatChunk("x"), done)(w, r)
	}))
	req := chatRequest("r")
	req.Tools = []Tool{{Name: "f", Parameters: `{"type":`}}
	res := newSender(t, srv.URL).Send(context.Background(), req)
	checkFailed(t, res, `request not sent: tools[0] ("f"): parameters are not valid JSON: {"type":`)
	if n := hits.Load(); n != 0 {
		t.Errorf("the engine got %d requests, want none", n)
	}
	if !strings.HasPrefix(res.Error, "request not sent") || res.ID != "r" {
		t.Errorf("Error %q, ID %q", res.Error, res.ID)
	}
}
