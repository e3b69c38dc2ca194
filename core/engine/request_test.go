package engine

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAppendBody(t *testing.T) {
	t.Parallel()
	prefix := []byte(`{"model":"m",`)
	tests := []struct {
		name string
		req  Request
		want string
	}{
		{
			name: "chat",
			req:  Request{Messages: []Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}}, MaxTokens: 128},
			want: `{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}],"stream":true,"max_tokens":128,"temperature":0.0,"stream_options":{"include_usage":true}}`,
		},
		{
			name: "completions",
			req:  Request{Prompt: "once upon", Completion: true, MaxTokens: 1},
			want: `{"model":"m","prompt":"once upon","stream":true,"max_tokens":1,"temperature":0.0,"stream_options":{"include_usage":true}}`,
		},
		{
			name: "completions falls back to the first message",
			req:  Request{Messages: []Message{{Role: "system", Content: "first"}, {Role: "user", Content: "second"}}, Completion: true, MaxTokens: 2},
			want: `{"model":"m","prompt":"first","stream":true,"max_tokens":2,"temperature":0.0,"stream_options":{"include_usage":true}}`,
		},
		{
			name: "ignore_eos asks for exactly max_tokens",
			req:  Request{Messages: []Message{{Role: "user", Content: "x"}}, MaxTokens: 64, IgnoreEOS: true},
			want: `{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true,"max_tokens":64,"ignore_eos":true,"min_tokens":64,"temperature":0.0,"stream_options":{"include_usage":true}}`,
		},
		{
			name: "ignore_eos in completions",
			req:  Request{Prompt: "p", Completion: true, MaxTokens: 5, IgnoreEOS: true},
			want: `{"model":"m","prompt":"p","stream":true,"max_tokens":5,"ignore_eos":true,"min_tokens":5,"temperature":0.0,"stream_options":{"include_usage":true}}`,
		},
		{
			name: "a seed for deterministic decoding",
			req:  Request{Messages: []Message{{Role: "user", Content: "x"}}, MaxTokens: 8, Seed: -42, HasSeed: true},
			want: `{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true,"max_tokens":8,"seed":-42,"temperature":0.0,"stream_options":{"include_usage":true}}`,
		},
		{
			name: "ignore_eos without max_tokens sets no min_tokens",
			req:  Request{Messages: []Message{{Role: "user", Content: "x"}}, IgnoreEOS: true},
			want: `{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true,"ignore_eos":true,"temperature":0.0,"stream_options":{"include_usage":true}}`,
		},
		{
			name: "no max_tokens when zero",
			req:  Request{Messages: []Message{{Role: "user", Content: "x"}}},
			want: `{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true,"temperature":0.0,"stream_options":{"include_usage":true}}`,
		},
		{
			name: "no messages",
			req:  Request{MaxTokens: 3},
			want: `{"model":"m","messages":[],"stream":true,"max_tokens":3,"temperature":0.0,"stream_options":{"include_usage":true}}`,
		},
		{
			name: "assistant tool calls without content",
			req: Request{Messages: []Message{
				{Role: "user", Content: "weather?"},
				{Role: "assistant", ToolCalls: []ToolCall{
					{ID: "call_0", Name: "get_weather", Arguments: `{"city":"Paris"}`},
					{ID: "call_1", Name: "get_time", Arguments: `{}`},
				}},
			}},
			want: `{"model":"m","messages":[{"role":"user","content":"weather?"},` +
				`{"role":"assistant","content":null,"tool_calls":[` +
				`{"id":"call_0","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},` +
				`{"id":"call_1","type":"function","function":{"name":"get_time","arguments":"{}"}}]}],` +
				`"stream":true,"temperature":0.0,"stream_options":{"include_usage":true}}`,
		},
		{
			name: "assistant tool call with content",
			req: Request{Messages: []Message{
				{Role: "assistant", Content: "Let me look.", ToolCalls: []ToolCall{{ID: "c", Name: "f", Arguments: `{"q":"a\nb"}`}}},
			}},
			want: `{"model":"m","messages":[{"role":"assistant","content":"Let me look.","tool_calls":[` +
				`{"id":"c","type":"function","function":{"name":"f","arguments":"{\"q\":\"a\\nb\"}"}}]}],` +
				`"stream":true,"temperature":0.0,"stream_options":{"include_usage":true}}`,
		},
		{
			name: "tool reply",
			req:  Request{Messages: []Message{{Role: "tool", Content: `{"temp_c":21}`, ToolCallID: "call_0"}}, MaxTokens: 5},
			want: `{"model":"m","messages":[{"role":"tool","tool_call_id":"call_0","content":"{\"temp_c\":21}"}],` +
				`"stream":true,"max_tokens":5,"temperature":0.0,"stream_options":{"include_usage":true}}`,
		},
		{
			name: "empty tool reply keeps its empty content",
			req:  Request{Messages: []Message{{Role: "tool", ToolCallID: "call_0"}}},
			want: `{"model":"m","messages":[{"role":"tool","tool_call_id":"call_0","content":""}],` +
				`"stream":true,"temperature":0.0,"stream_options":{"include_usage":true}}`,
		},
		{
			name: "tools after messages",
			req: Request{
				Messages: []Message{{Role: "user", Content: "hi"}},
				Tools: []Tool{
					{Name: "get_weather", Description: "Weather \"now\".", Parameters: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`},
					{Name: "no_params", Description: "Nothing to pass."},
					{Name: "bare"},
					{Name: "spaced", Parameters: " {\n \"type\": \"object\"\n} "},
				},
				MaxTokens: 7,
			},
			want: `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[` +
				`{"type":"function","function":{"name":"get_weather","description":"Weather \"now\".","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},` +
				`{"type":"function","function":{"name":"no_params","description":"Nothing to pass."}},` +
				`{"type":"function","function":{"name":"bare"}},` +
				"{\"type\":\"function\",\"function\":{\"name\":\"spaced\",\"parameters\": {\n \"type\": \"object\"\n} }}]," +
				`"stream":true,"max_tokens":7,"temperature":0.0,"stream_options":{"include_usage":true}}`,
		},
		{
			name: "completions leaves tools out",
			req:  Request{Prompt: "p", Completion: true, Tools: []Tool{{Name: "f", Parameters: `{}`}}},
			want: `{"model":"m","prompt":"p","stream":true,"temperature":0.0,"stream_options":{"include_usage":true}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := appendBody(nil, prefix, tt.req)
			if err != nil {
				t.Fatalf("appendBody: %v", err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("body mismatch (-want +got):\n%s", diff)
			}
			if !json.Valid(got) {
				t.Errorf("body is not valid JSON: %s", got)
			}
			if n := bodySize(prefix, tt.req); n < len(got) {
				t.Errorf("bodySize = %d, smaller than the body (%d bytes)", n, len(got))
			}
		})
	}
}

// TestAppendBodyToolCallsRoundTrip decodes a body with every tool field
// back with encoding/json: what a workload put in is what the engine reads.
func TestAppendBodyToolCallsRoundTrip(t *testing.T) {
	t.Parallel()
	args := "{\"q\":\"line\nbreak \\\" quote é \\u00e9 \x01\"}"
	req := Request{
		Messages: []Message{
			{Role: "assistant", ToolCalls: []ToolCall{{ID: "call\t0", Name: "search", Arguments: args}}},
			{Role: "tool", Content: "result\x00</script>", ToolCallID: "call\t0"},
		},
		Tools: []Tool{{Name: "search", Description: "Search \u2028 the web.", Parameters: `{"type":"object"}`}},
	}
	body, err := appendBody(nil, []byte(`{"model":"m",`), req)
	if err != nil {
		t.Fatalf("appendBody: %v", err)
	}
	type function struct {
		Name        string          `json:"name"`
		Arguments   *string         `json:"arguments,omitempty"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	}
	type call struct {
		ID       string   `json:"id"`
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	type message struct {
		Role       string  `json:"role"`
		Content    *string `json:"content"`
		ToolCalls  []call  `json:"tool_calls,omitempty"`
		ToolCallID string  `json:"tool_call_id,omitempty"`
	}
	var got struct {
		Messages []message `json:"messages"`
		Tools    []struct {
			Type     string   `json:"type"`
			Function function `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("body does not decode: %v\n%s", err, body)
	}
	reply := "result\x00</script>"
	want := []message{
		{Role: "assistant", ToolCalls: []call{{ID: "call\t0", Type: "function", Function: function{Name: "search", Arguments: &args}}}},
		{Role: "tool", Content: &reply, ToolCallID: "call\t0"},
	}
	if diff := cmp.Diff(want, got.Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if len(got.Tools) != 1 || got.Tools[0].Type != "function" || got.Tools[0].Function.Name != "search" ||
		got.Tools[0].Function.Description != "Search \u2028 the web." || string(got.Tools[0].Function.Parameters) != `{"type":"object"}` {
		t.Errorf("tools = %+v", got.Tools)
	}
}

// A tool whose parameters are not JSON would make the whole body invalid:
// the request fails before anything is sent.
func TestAppendBodyRefusesInvalidParameters(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, params string }{
		{"truncated", `{"type":`},
		{"two values", `{} {}`},
		{"not JSON at all", `type: object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := Request{Messages: []Message{{Role: "user", Content: "x"}}, Tools: []Tool{{Name: "ok", Parameters: `{}`}, {Name: "get_weather", Parameters: tt.params}}}
			body, err := appendBody(nil, []byte(`{"model":"m",`), req)
			want := `tools[1] ("get_weather"): parameters are not valid JSON: ` + tt.params
			if err == nil || err.Error() != want {
				t.Errorf("appendBody = %s, %v; want error %q", body, err, want)
			}
		})
	}
}
