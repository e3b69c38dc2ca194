package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/sdk/subword"
)

func TestSubwordPieces(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, "pseudoword%d ", i)
	}
	for _, w := range strings.Fields(b.String() + " hi a 日本語的な言葉") {
		pieces := subwordPieces(w)
		if len(pieces) != subword.WordTokens(w) {
			t.Errorf("subwordPieces(%q) has %d pieces, want %d", w, len(pieces), subword.WordTokens(w))
		}
		if got := strings.TrimPrefix(strings.Join(pieces, ""), wordMark); got != w {
			t.Errorf("pieces of %q join to %q", w, got)
		}
	}
}

func TestTextAndDetokenize(t *testing.T) {
	t.Parallel()
	text := "hello  wonderful subword\tworld hi"
	for _, mode := range []string{Words, Subword, ""} {
		tok := Tokenizer{Mode: mode}
		tokens := tok.Text(text, false)
		want := len(strings.Fields(text))
		if mode == Subword {
			want = subword.TextTokens(text)
		}
		if len(tokens) != want {
			t.Errorf("%q: Text has %d tokens, want %d", mode, len(tokens), want)
		}
		if got := tok.Detokenize(tokens); got != "hello wonderful subword world hi" {
			t.Errorf("%q: Detokenize(Text) = %q", mode, got)
		}
		special := tok.Text(text, true)
		if extra := len(special) - len(tokens); extra != map[bool]int{true: 1}[mode == Subword] {
			t.Errorf("%q: special tokens add %d, want a BOS only in subword mode", mode, extra)
		}
	}
}

// chat decodes a request's messages and tools and renders them.
func chat(t *testing.T, mode, messages, tools string, addGeneration bool) ([]string, error) {
	t.Helper()
	var ms []Message
	var ts []Tool
	if err := json.Unmarshal([]byte(messages), &ms); err != nil {
		t.Fatal(err)
	}
	if tools != "" {
		if err := json.Unmarshal([]byte(tools), &ts); err != nil {
			t.Fatal(err)
		}
	}
	return Tokenizer{Mode: mode}.Chat(ms, ts, addGeneration)
}

func TestChatTemplate(t *testing.T) {
	t.Parallel()
	msgs := `[{"role":"user","content":[{"type":"text","text":"weather"},{"type":"text","text":"in Oslo"}]},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","function":{"name":"get","arguments":"{\"c\":1}"}}]}]`
	tools := `[{"function":{"name":"get","description":"by city","parameters":{"x":1}}}]`
	got, err := chat(t, Subword, msgs, tools, true)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{imStart, "system", toolStart, "▁get", "▁by", "▁city", `▁{"x":1}`, toolEnd, imEnd,
		imStart, "user", "▁weather", "▁in", "▁Oslo", imEnd,
		imStart, "assistant", toolCallStart, "▁get", `▁{"c":1}`, toolCallEnd, imEnd,
		imStart, "assistant"}
	if d := cmp.Diff(want, joinPieces(got)); d != "" {
		t.Errorf("subword chat (-want +got, a word's pieces joined):\n%s", d)
	}
	got, _ = chat(t, Subword, msgs, tools, false)
	if d := cmp.Diff(want[:len(want)-2], joinPieces(got)); d != "" {
		t.Errorf("subword chat without the generation prompt (-want +got):\n%s", d)
	}
	got, err = chat(t, Words, msgs, tools, true)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(strings.Fields(`get by city {"x":1} weather in Oslo get {"c":1}`), got); d != "" {
		t.Errorf("words chat (-want +got):\n%s", d)
	}
}

// joinPieces joins each word's later subword pieces onto its first.
func joinPieces(tokens []string) []string {
	var out []string
	for _, tok := range tokens {
		if n := len(out); n > 0 && strings.HasPrefix(out[n-1], wordMark) && !strings.HasPrefix(tok, wordMark) && !strings.HasPrefix(tok, "<") {
			out[n-1] += tok
			continue
		}
		out = append(out, tok)
	}
	return out
}

func TestChatErrors(t *testing.T) {
	t.Parallel()
	for msgs, want := range map[string]string{
		`[]`: "messages: must be a non-empty list",
		`[{"role":"user","content":"a"},{"role":"user","content":[{"type":"image_url"}]}]`: `messages[1].content: part 0: type must be "text" (the simulator has no other modalities), got "image_url"`,
		`[{"role":"user","content":7}]`: "messages[0].content: must be a string or a list of text parts",
	} {
		if _, err := chat(t, Words, msgs, "", true); err == nil || err.Error() != want {
			t.Errorf("Chat(%s) = %v, want %q", msgs, err, want)
		}
	}
}

func TestCheckMode(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{Words, Subword} {
		if err := CheckMode(mode); err != nil {
			t.Errorf("CheckMode(%q) = %v", mode, err)
		}
	}
	if err := CheckMode("bpe"); err == nil || err.Error() != `must be words or subword, got "bpe"` {
		t.Errorf("CheckMode(bpe) = %v", err)
	}
}
