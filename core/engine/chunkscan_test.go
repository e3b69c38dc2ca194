package engine

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

var chunkSeeds = []string{
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" hi"},"logprobs":null,"finish_reason":null}]}`,
	`{"choices":[{"delta":{"content":null,"reasoning_content":"a\nb \u00e9 \ud83c\udf89"}}]}`,
	`{"choices":[{"delta":{"reasoning":"x"},"finish_reason":"stop","stop_reason":null}]}`,
	`{"choices":[{"index":0,"text":" t","logprobs":{"tokens":[" t"],"token_logprobs":[-0.5],"top_logprobs":[{" t":-0.5}]}}]}`,
	`{"choices":[],"usage":{"prompt_tokens":500,"total_tokens":520,"completion_tokens":20,"prompt_tokens_details":{"cached_tokens":448}}}`,
	`{"usage":{"prompt_tokens":1,"completion_tokens":null,"prompt_tokens_details":null}}`,
	`{"error":{"object":"error","message":"boom","type":"InternalServerError","param":null,"code":500}}`,
	`{"error":"overloaded"}`,
	` { "choices" : [ null , { "delta" : null } ] , "usage" : null } `,
	`{"Choices":[{"delta":{"content":"case"}}]}`,
	`{"choices":[{"delta":{"content":"a"}}],"choices":[{"delta":{"reasoning":"b"}}]}`,
	`{"usage":{"prompt_tokens":1.5}}`,
	`{"usage":{"prompt_tokens":-3,"completion_tokens":1e2}}`,
	`{"choices":[{"delta":{"content":"\ud800x"}}]}`,
	`{"choices":[{"delta":{"content":"a\xffb"}}]}`,
	`{"choices":"nope"}`,
	`{"choices":[1]}`,
	`{"a":[1,2,{"b":[true,false,null,-0.5e+3]}],"choices":[]}`,
	`{"choices":[{"delta":{"content":"x"}}]} trailing`,
	`{"choices":[{"delta":{"content":"x"}},]}`,
	`{"choices":[{"delta":{"content":"x"}}],}`,
	`[]`, `null`, `"s"`, `{`, ``, `{"a":01}`, `{"a":"\x01"}`, `{"ſ":1}`,
	// tool calls, as vLLM and OpenAI stream them, then odd shapes
	vllmToolStart, vllmToolArgs,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_x","type":"function","function":{"name":"f","arguments":""}}]},"logprobs":null,"finish_reason":null}]}`,
	`{"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls","stop_reason":null}]}`,
	`{"choices":[{"delta":{"content":"x","tool_calls":[{"index":1,"function":{"arguments":"\u00e9\"}"}},{"index":2,"id":"c2","function":{"name":"g"}}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":null}},{"delta":{"tool_calls":[null,{"function":null},{"index":null,"id":null}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"index":-1}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"index":"0"}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"index":1.5}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"ID":"upper"}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"id":"a","id":"b"}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"function":{"name":"a","Name":"b"}}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":{}}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":{"a":1}}}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"function":"f"}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"index":0}],"tool_calls":[{"index":1}]}}]}`,
}

const (
	vllmToolStart = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"id":"chatcmpl-tool-a1","type":"function","index":0,"function":{"name":"get_weather"}}]},"logprobs":null,"finish_reason":null}]}`
	vllmToolArgs  = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\": \""}}]},"logprobs":null,"finish_reason":null}]}`
)

// equalRaw compares raw JSON values the way our code uses them.
func equalRaw(a, b json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(b)) }

func equalChunks(a, b *chunk) bool {
	if a.Usage != b.Usage || !equalRaw(a.Error, b.Error) || len(a.Choices) != len(b.Choices) {
		return false
	}
	for i := range a.Choices {
		x, y := &a.Choices[i], &b.Choices[i]
		if !equalRaw(x.Text, y.Text) || !equalRaw(x.Delta.Content, y.Delta.Content) ||
			!equalRaw(x.Delta.ReasoningContent, y.Delta.ReasoningContent) || !equalRaw(x.Delta.Reasoning, y.Delta.Reasoning) ||
			len(x.Delta.ToolCalls) != len(y.Delta.ToolCalls) {
			return false
		}
		for j := range x.Delta.ToolCalls {
			p, q := &x.Delta.ToolCalls[j], &y.Delta.ToolCalls[j]
			if !equalRaw(p.Index, q.Index) || !equalRaw(p.ID, q.ID) ||
				!equalRaw(p.Function.Name, q.Function.Name) || !equalRaw(p.Function.Arguments, q.Function.Arguments) {
				return false
			}
		}
	}
	return true
}

// FuzzDecodeFast: whenever the fast decoder accepts a payload,
// encoding/json must accept it too and produce the same chunk.
func FuzzDecodeFast(f *testing.F) {
	for _, s := range chunkSeeds {
		f.Add([]byte(s))
	}
	var fast, ref chunk
	f.Fuzz(func(t *testing.T, payload []byte) {
		fast.reset()
		if !fast.decodeFast(payload) {
			return
		}
		ref.reset()
		if err := json.Unmarshal(payload, &ref); err != nil {
			t.Fatalf("fast path accepted %q, encoding/json rejects it: %v", payload, err)
		}
		if !equalChunks(&fast, &ref) {
			t.Fatalf("fast path and encoding/json differ on %q:\nfast %+v\nref  %+v", payload, fast, ref)
		}
	})
}

// FuzzAppendUnquoted: content unescaping matches encoding/json's.
func FuzzAppendUnquoted(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\nb\"c\\d\/e\b\f\r\t"`, `"\u00e9\ud83c\udf89"`, `"\ud800"`, `"\ud800\u0041"`, `"\udc00\ud800"`, "\"a\xffb\"", "\"\xe4\xb8\"", `"\u12"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want string
		if err := json.Unmarshal(raw, &want); err != nil || len(raw) == 0 || raw[0] != '"' {
			return // only strings are content
		}
		got, err := appendUnquoted([]byte("prefix:"), raw)
		if err != nil {
			t.Fatalf("appendUnquoted(%q): %v; encoding/json decodes it to %q", raw, err, want)
		}
		if string(got) != "prefix:"+want {
			t.Fatalf("appendUnquoted(%q) = %q, encoding/json gives %q", raw, got[len("prefix:"):], want)
		}
	})
}

// TestDecodeFastCoversEngines makes sure the chunks real engines send take
// the fast path, and odd ones are left to encoding/json.
func TestDecodeFastCoversEngines(t *testing.T) {
	t.Parallel()
	tests := []struct {
		payload string
		fast    bool
	}{
		{chunkSeeds[0], true}, {chunkSeeds[1], true}, {chunkSeeds[2], true}, {chunkSeeds[4], true},
		{chunkSeeds[5], true}, {chunkSeeds[7], true}, {chunkSeeds[9], true},
		{vllmToolStart, true}, {vllmToolArgs, true},
		{`{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_x","type":"function","function":{"name":"f","arguments":""}}]}}]}`, true},
		{`{"choices":[{"delta":{"tool_calls":[null,{"function":null}]}}]}`, true},
		{`{"choices":[{"delta":{"tool_calls":[{"ID":"x"}]}}]}`, false},                           // case-folded key
		{`{"choices":[{"delta":{"tool_calls":[{"id":"a","id":"b"}]}}]}`, false},                  // duplicate key
		{`{"choices":[{"delta":{"tool_calls":[{"function":{"name":"a","name":"b"}}]}}]}`, false}, // duplicate key
		{`{"choices":[{"delta":{"tool_calls":{}}}]}`, false},                                     // wrong type
		{`{"Choices":[]}`, false},                  // case-folded key
		{`{"choices":[],"choices":[]}`, false},     // duplicate key
		{`{"usage":{"prompt_tokens":1.0}}`, false}, // not an integer
		{`{"choices":[{"delta":5}]}`, false},       // wrong type
		{`{"choices":[]} x`, false},                // trailing data
	}
	for _, tt := range tests {
		var c chunk
		c.reset()
		if got := c.decodeFast([]byte(tt.payload)); got != tt.fast {
			t.Errorf("decodeFast(%s) = %v, want %v", tt.payload, got, tt.fast)
		}
	}
}

// TestDecodeDoesNotAllocate: once its buffers have grown, a stream decodes
// the common chunks, tool-call deltas included, without allocating.
func TestDecodeDoesNotAllocate(t *testing.T) {
	payloads := [][]byte{[]byte(chunkSeeds[1]), []byte(chunkSeeds[2]), []byte(vllmToolStart), []byte(vllmToolArgs), []byte(chunkSeeds[5])}
	st := getStream(nil, false, time.Now)
	defer putStream(st)
	run := func() {
		st.text, st.calls = st.text[:0], st.calls[:0]
		for _, p := range payloads {
			if _, err := st.decode(p); err != nil {
				t.Fatalf("decode(%s): %v", p, err)
			}
		}
	}
	run() // grow the buffers
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Errorf("decoding %d chunks allocates %v times, want 0", len(payloads), n)
	}
}
