package jsonenc

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAppendString(t *testing.T) {
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
			if diff := cmp.Diff(tt.want, string(AppendString(nil, tt.in))); diff != "" {
				t.Errorf("AppendString(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// FuzzAppendString checks that our encoding decodes to what
// encoding/json's encoding decodes to, for any input.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "hi", "a\"\\\n\x00", "\xff\xfe", "世界\u2028", "\xe4\xb8"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := AppendString(nil, s)
		var got string
		if err := json.Unmarshal(enc, &got); err != nil {
			t.Fatalf("AppendString(%q) = %s: not valid JSON: %v", s, enc, err)
		}
		ref, _ := json.Marshal(s)
		var want string
		if err := json.Unmarshal(ref, &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("AppendString(%q) decodes to %q, encoding/json's to %q", s, got, want)
		}
	})
}
