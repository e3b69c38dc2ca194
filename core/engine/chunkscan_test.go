package engine

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"
)

var chunkSeeds = []string{
	llamacppFinal,
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
	// what the engine says about its answer, then odd shapes
	`{"id":"cmpl-\u00e9","model":"org/m","choices":[{"index":0,"text":"","finish_reason":"length"}]}`,
	`{"id":null,"model":7,"choices":[{"finish_reason":{"type":"stop"}}]}`,
	`{"id":"a","id":"b"}`, `{"model":"a","Model":"b"}`, `{"ID":"x"}`,
	`{"choices":[{"finish_reason":"stop","finish_reason":null}]}`,
	`{"choices":[{"Finish_Reason":"stop"}]}`,
	// token counts as floats, and numbers that are no counts
	`{"usage":{"prompt_tokens":3.0,"completion_tokens":2.000,"prompt_tokens_details":{"cached_tokens":1.0}}}`,
	`{"usage":{"prompt_tokens":1e2,"completion_tokens":-2.0,"prompt_tokens_details":{"cached_tokens":2.5e1}}}`,
	`{"usage":{"completion_tokens":9223372036854775807}}`, `{"usage":{"completion_tokens":9223372036854775808}}`,
	`{"usage":{"completion_tokens":9007199254740993.0}}`, `{"usage":{"completion_tokens":9.223372036854775807e18}}`,
	`{"usage":{"prompt_tokens":1e400}}`, `{"usage":{"prompt_tokens":"3"}}`, `{"usage":{"prompt_tokens":-0.0}}`,
}

const (
	vllmToolStart = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"id":"chatcmpl-tool-a1","type":"function","index":0,"function":{"name":"get_weather"}}]},"logprobs":null,"finish_reason":null}]}`
	vllmToolArgs  = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\": \""}}]},"logprobs":null,"finish_reason":null}]}`
)

// equalRaw compares raw JSON values the way our code uses them.
func equalRaw(a, b json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(b)) }

// llamacppFinal is llama.cpp server's last chunk of a chat stream
// (tools/server/server-task.cpp's to_json_oaicompat_chat_stream): the
// usage without cached tokens (builds before they were added there) and
// its timings, whose cache_n is the prompt tokens taken from the slot's
// cache.
const llamacppFinal = `{"choices":[{"finish_reason":"stop","index":0,"delta":{}}],"created":1758777191,` +
	`"id":"chatcmpl-L2v2Gl6N","model":"gpt-3.5-turbo","system_fingerprint":"b6510-703f9e32","object":"chat.completion.chunk",` +
	`"usage":{"completion_tokens":326,"prompt_tokens":14,"total_tokens":340},` +
	`"timings":{"cache_n":13,"prompt_n":1,"prompt_ms":20.325,"prompt_per_token_ms":20.325,"prompt_per_second":49.2,` +
	`"predicted_n":326,"predicted_ms":3084.1,"predicted_per_token_ms":9.46,"predicted_per_second":105.7}}`

func equalChunks(a, b *chunk) bool {
	if a.Usage != b.Usage || a.Timings != b.Timings || !equalRaw(a.Error, b.Error) || !equalRaw(a.ID, b.ID) || !equalRaw(a.Model, b.Model) ||
		len(a.Choices) != len(b.Choices) {
		return false
	}
	for i := range a.Choices {
		x, y := &a.Choices[i], &b.Choices[i]
		if !equalRaw(x.Text, y.Text) || !equalRaw(x.FinishReason, y.FinishReason) || !equalRaw(x.Logprobs, y.Logprobs) || !equalRaw(x.Delta.Content, y.Delta.Content) ||
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
		{chunkSeeds[0], true}, {chunkSeeds[1], true}, {chunkSeeds[2], true}, {chunkSeeds[3], true}, {chunkSeeds[4], true},
		{chunkSeeds[5], true}, {chunkSeeds[7], true}, {chunkSeeds[9], true},
		{`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"stop","stop_reason":null}]}`, true},
		{`{"usage":{"prompt_tokens":500.0,"completion_tokens":20.0,"prompt_tokens_details":{"cached_tokens":448.0}}}`, true}, // whole floats
		{vllmToolStart, true}, {vllmToolArgs, true}, {llamacppFinal, true},
		{`{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_x","type":"function","function":{"name":"f","arguments":""}}]}}]}`, true},
		{`{"choices":[{"delta":{"tool_calls":[null,{"function":null}]}}]}`, true},
		{`{"choices":[{"delta":{"tool_calls":[{"ID":"x"}]}}]}`, false},                           // case-folded key
		{`{"choices":[{"delta":{"tool_calls":[{"id":"a","id":"b"}]}}]}`, false},                  // duplicate key
		{`{"choices":[{"delta":{"tool_calls":[{"function":{"name":"a","name":"b"}}]}}]}`, false}, // duplicate key
		{`{"choices":[{"delta":{"tool_calls":{}}}]}`, false},                                     // wrong type
		{`{"Choices":[]}`, false},                                          // case-folded key
		{`{"choices":[],"choices":[]}`, false},                             // duplicate key
		{`{"id":"a","id":"b"}`, false},                                     // duplicate key
		{`{"choices":[{"finish_reason":"a","finish_reason":"b"}]}`, false}, // duplicate key
		{`{"Model":"m"}`, false},                                           // case-folded key
		{`{"usage":{"prompt_tokens":1.5}}`, false},                         // not a whole number
		{`{"usage":{"prompt_tokens":"1"}}`, false},                         // not a number
		{`{"choices":[{"delta":5}]}`, false},                               // wrong type
		{`{"choices":[]} x`, false},                                        // trailing data
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
// the common chunks, tool-call deltas, finish reasons and usage written
// with floats included, without allocating.
func TestDecodeDoesNotAllocate(t *testing.T) {
	payloads := [][]byte{[]byte(chunkSeeds[1]), []byte(chunkSeeds[2]), []byte(vllmToolStart), []byte(vllmToolArgs), []byte(chunkSeeds[5]),
		[]byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"."},"logprobs":null,"finish_reason":"stop","stop_reason":null}]}`),
		[]byte(`{"id":"chatcmpl-1","choices":[],"usage":{"prompt_tokens":500.0,"completion_tokens":20.0}}`)}
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

func TestWholeNumber(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"0", 0, true}, {"42", 42, true}, {"-7", -7, true}, {"-0", 0, true},
		{"3.0", 3, true}, {"3.000", 3, true}, {"-2.0", -2, true}, {"-0.0", 0, true},
		{"1e3", 1000, true}, {"2.5e1", 25, true}, {"1E+2", 100, true}, {"120e-1", 12, true},
		{"9223372036854775807", math.MaxInt64, true}, {"9223372036854775807.0", math.MaxInt64, true},
		{"-9223372036854775808", math.MinInt64, true},
		{"123456789012345678", 123456789012345678, true}, // 18 digits: the loop, exactly
		{"9007199254740993.0", 9007199254740993, true},   // exactly, not through float64
		{"1.5", 0, false}, {"0.1", 0, false}, {"1e-1", 0, false}, {"2.50e0", 0, false},
		{"9223372036854775808", 0, false}, {"9.3e18", 0, false}, {"-9.3e18", 0, false}, {"1e400", 0, false},
		{"", 0, false}, {"-", 0, false}, {`"3"`, 0, false}, {"true", 0, false}, {"null", 0, false},
	}
	for _, tt := range tests {
		got, ok := wholeNumber([]byte(tt.in))
		if got != tt.want || ok != tt.ok {
			t.Errorf("wholeNumber(%s) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
