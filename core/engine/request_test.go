package engine

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAppendJSONString(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"plain", "hello world", `"hello world"`},
		{"empty", "", `""`},
		{"quote and backslash", `a"b\c`, `"a\"b\\c"`},
		{"newline tab cr", "a\nb\tc\rd", `"a\nb\tc\rd"`},
		{"control characters", "\x00\x1f\b\f", `"\u0000\u001f\u0008\u000c"`},
		{"html stays", "<a href='x'>&</a>", `"<a href='x'>&</a>"`},
		{"unicode stays", "héllo 世界 🎉", `"héllo 世界 🎉"`},
		{"invalid utf-8 replaced", "a\xffb", `"a\ufffdb"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, string(appendJSONString(nil, tt.in))); diff != "" {
				t.Errorf("appendJSONString(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// FuzzAppendJSONString checks that our encoding decodes to what
// encoding/json's encoding decodes to, for any input.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "hi", "a\"\\\n\x00", "\xff\xfe", "世界\u2028", "\xe4\xb8"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := appendJSONString(nil, s)
		var got string
		if err := json.Unmarshal(enc, &got); err != nil {
			t.Fatalf("appendJSONString(%q) = %s: not valid JSON: %v", s, enc, err)
		}
		ref, _ := json.Marshal(s)
		var want string
		if err := json.Unmarshal(ref, &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("appendJSONString(%q) decodes to %q, encoding/json's to %q", s, got, want)
		}
	})
}

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
			req:  Request{Messages: []Message{{"system", "be brief"}, {"user", "hi"}}, MaxTokens: 128},
			want: `{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}],"stream":true,"max_tokens":128,"temperature":0.0,"stream_options":{"include_usage":true}}`,
		},
		{
			name: "completions",
			req:  Request{Prompt: "once upon", Completion: true, MaxTokens: 1},
			want: `{"model":"m","prompt":"once upon","stream":true,"max_tokens":1,"temperature":0.0,"stream_options":{"include_usage":true}}`,
		},
		{
			name: "completions falls back to the first message",
			req:  Request{Messages: []Message{{"system", "first"}, {"user", "second"}}, Completion: true, MaxTokens: 2},
			want: `{"model":"m","prompt":"first","stream":true,"max_tokens":2,"temperature":0.0,"stream_options":{"include_usage":true}}`,
		},
		{
			name: "no max_tokens when zero",
			req:  Request{Messages: []Message{{"user", "x"}}},
			want: `{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true,"temperature":0.0,"stream_options":{"include_usage":true}}`,
		},
		{
			name: "no messages",
			req:  Request{MaxTokens: 3},
			want: `{"model":"m","messages":[],"stream":true,"max_tokens":3,"temperature":0.0,"stream_options":{"include_usage":true}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := appendBody(nil, prefix, tt.req)
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
