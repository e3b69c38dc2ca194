package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/core/dispatch"
	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/sdk/host/runloop"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// toolCallWorkload sends one chat request in the measure phase and keeps
// the results it hears of.
type toolCallWorkload struct {
	req protocol.Request

	mu      sync.Mutex
	results []protocol.Result
}

func (w *toolCallWorkload) Describe(context.Context, protocol.HostInfo) (protocol.WorkloadDescription, error) {
	return protocol.WorkloadDescription{}, nil
}

func (w *toolCallWorkload) Configure(context.Context, protocol.WorkloadConfig) (protocol.Configured, error) {
	return protocol.Configured{}, nil
}

func (w *toolCallWorkload) Step(_ context.Context, r protocol.StepRequest) (protocol.StepResponse, error) {
	done := protocol.Next{Kind: protocol.NextDone}
	if r.Phase != protocol.Measure {
		return protocol.StepResponse{Next: done}, nil
	}
	return protocol.StepResponse{Requests: []protocol.Request{w.req}, Next: done}, nil
}

func (w *toolCallWorkload) OnFinished(_ context.Context, rs []protocol.Result) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.results = append(w.results, rs...)
	return nil
}

// toolCallEngine is an httptest engine that keeps each request body and
// answers in vLLM's streaming shape: some content, then two tool calls
// whose arguments arrive in fragments, id and name only in the first delta.
func toolCallEngine(t *testing.T, bodies chan<- []byte) *httptest.Server {
	t.Helper()
	chunk := func(delta string) string {
		return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":null}]}`
	}
	payloads := []string{
		chunk(`{"role":"assistant","content":""}`),
		chunk(`{"content":"Checking both."}`),
		chunk(`{"tool_calls":[{"id":"chatcmpl-tool-1","type":"function","index":0,"function":{"name":"get_weather"}}]}`),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\": "}}]}`),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"Lyon\"}"}}]}`),
		chunk(`{"tool_calls":[{"id":"chatcmpl-tool-2","type":"function","index":1,"function":{"name":"get_time"}}]}`),
		chunk(`{"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]}`),
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"tool_calls","stop_reason":null}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":120,"total_tokens":150,"completion_tokens":30}}`,
		"[DONE]",
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("reading the request body: %v", err)
		}
		bodies <- b
		w.Header().Set("Content-Type", "text/event-stream")
		for _, p := range payloads {
			fmt.Fprintf(w, "data: %s\n\n", p)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestToolCallsThroughTheHost drives the run loop on the host's transport
// with the real engine sender: a workload's assistant tool call, tool
// reply and tools reach the engine in OpenAI's shape, and the calls the
// engine streams back reach the workload when it wants response text.
func TestToolCallsThroughTheHost(t *testing.T) {
	t.Parallel()
	req := protocol.Request{
		ID: "q", MaxTokens: 64,
		Messages: []protocol.Message{
			{Role: "user", Content: []protocol.Segment{{Text: "Weather in Paris?"}}},
			{Role: "assistant", ToolCalls: []protocol.ToolCall{{ID: "call_0", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
			{Role: "tool", Content: []protocol.Segment{{Text: `{"temp_c":21}`}}, ToolCallID: "call_0"},
			{Role: "user", Content: []protocol.Segment{{Text: "And Lyon, and the time?"}}},
		},
		Tools: []protocol.Tool{
			{Name: "get_weather", Description: "Current weather in a city.", Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`},
			{Name: "get_time"},
		},
	}
	wantBody := map[string]any{
		"model": "m",
		"messages": []any{
			map[string]any{"role": "user", "content": "Weather in Paris?"},
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{
				map[string]any{"id": "call_0", "type": "function", "function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris"}`}},
			}},
			map[string]any{"role": "tool", "tool_call_id": "call_0", "content": `{"temp_c":21}`},
			map[string]any{"role": "user", "content": "And Lyon, and the time?"},
		},
		"tools": []any{
			map[string]any{"type": "function", "function": map[string]any{
				"name": "get_weather", "description": "Current weather in a city.",
				"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}},
			}},
			map[string]any{"type": "function", "function": map[string]any{"name": "get_time"}},
		},
		"stream":         true,
		"max_tokens":     64.0,
		"temperature":    0.0,
		"stream_options": map[string]any{"include_usage": true},
	}
	streamed := []protocol.ToolCall{
		{ID: "chatcmpl-tool-1", Name: "get_weather", Arguments: `{"city": "Lyon"}`},
		{ID: "chatcmpl-tool-2", Name: "get_time", Arguments: "{}"},
	}
	tests := []struct {
		name      string
		wantsText bool
		want      protocol.Result
	}{
		{"wants text", true, protocol.Result{ID: "q", Phase: protocol.Measure, Success: true, Text: "Checking both.", ToolCalls: streamed, InputTokens: 120, OutputTokens: 30}},
		{"no text", false, protocol.Result{ID: "q", Phase: protocol.Measure, Success: true, InputTokens: 120, OutputTokens: 30}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			bodies := make(chan []byte, 4)
			srv := toolCallEngine(t, bodies)
			snd, err := engine.New(engine.Config{BaseURL: srv.URL, Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			defer snd.Close()
			ctx := context.Background()
			tr := dispatch.New(ctx, snd, nil)
			defer tr.Close()
			wl := &toolCallWorkload{req: req}
			res, err := runloop.Run(ctx, runloop.Config[dispatch.Measured]{Workload: wl, Transport: tr, Plugin: "tools", WantsText: tt.wantsText,
				Capabilities: protocol.Capabilities{protocol.ToolCalls}})
			if err != nil || res.Interrupted {
				t.Fatalf("Run = %+v, %v", res, err)
			}

			if len(bodies) != 1 {
				t.Fatalf("the engine got %d requests, want 1", len(bodies))
			}
			raw := <-bodies
			var got map[string]any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatalf("request body is not JSON: %v\n%s", err, raw)
			}
			if d := cmp.Diff(wantBody, got); d != "" {
				t.Errorf("request body (-want +got):\n%s", d)
			}

			if len(wl.results) != 1 {
				t.Fatalf("the workload heard %d results, want 1: %+v", len(wl.results), wl.results)
			}
			r := wl.results[0]
			if r.TTFT <= 0 || r.Latency < r.TTFT || r.Finish <= 0 {
				t.Errorf("TTFT %v, Latency %v, Finish %v; want 0 < TTFT <= Latency and Finish > 0", r.TTFT, r.Latency, r.Finish)
			}
			r.TTFT, r.Latency, r.Finish = 0, 0, 0 // timings checked above
			if d := cmp.Diff(tt.want, r); d != "" {
				t.Errorf("result (-want +got):\n%s", d)
			}
		})
	}
}
