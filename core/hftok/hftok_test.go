package hftok

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tiny is a tokenizer.json of the given vocabulary (ids in order), merges
// and other top-level fields, with model fields from model.
func tiny(t *testing.T, vocab, merges []string, model, top map[string]any) (*Tokenizer, []string) {
	t.Helper()
	v := map[string]int{}
	for i, s := range vocab {
		v[s] = i
	}
	m := map[string]any{"type": "BPE", "vocab": v, "merges": merges}
	for k, x := range model {
		m[k] = x
	}
	doc := map[string]any{"model": m}
	for k, x := range top {
		doc[k] = x
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return tk, vocab
}

// tokens is text's tokens as strings.
func tokens(t *testing.T, tk *Tokenizer, vocab []string, text string) []string {
	t.Helper()
	ids, err := tk.Encode(text)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, id := range ids {
		out = append(out, vocab[id])
	}
	return out
}

func byteTokens() []string {
	var out []string
	for b := range 256 {
		out = append(out, fmt.Sprintf("<0x%02X>", b))
	}
	return out
}

func TestBPEMerges(t *testing.T) {
	t.Parallel()
	vocab := []string{"a", "b", "c", "aa", "aaa", "bc", "abc"}
	merges := []string{"a a", "aa a", "b c"}
	tk, _ := tiny(t, vocab, merges, nil, nil)
	ign, _ := tiny(t, vocab, merges, map[string]any{"ignore_merges": true}, nil)
	for _, c := range []struct {
		tk   *Tokenizer
		text string
		want []string
	}{
		// The same pair twice: the leftmost merges first, so "aaaaa" is
		// aa+aaa (rightmost first would leave a+aa+aa).
		{tk, "aaaaa", []string{"aa", "aaa"}},
		{tk, "aaa", []string{"aaa"}},
		{tk, "aaaa", []string{"aa", "aa"}},
		{tk, "abc", []string{"a", "bc"}},
		// ignore_merges: a word in the vocabulary is one token.
		{ign, "abc", []string{"abc"}},
		{ign, "aaaaa", []string{"aa", "aaa"}},
		// No unk_token: a character outside the vocabulary is dropped,
		// and its neighbours merge.
		{tk, "axa", []string{"aa"}},
	} {
		if d := cmp.Diff(c.want, tokens(t, c.tk, vocab, c.text)); d != "" {
			t.Errorf("%q (-want +got):\n%s", c.text, d)
		}
	}
}

func TestBPEByteFallbackAndUnk(t *testing.T) {
	t.Parallel()
	vocab := append([]string{"<unk>", "a", "▁", "▁a"}, byteTokens()...)
	merges := []string{"▁ a"}
	fb, _ := tiny(t, vocab, merges, map[string]any{"byte_fallback": true, "unk_token": "<unk>", "fuse_unk": true}, nil)
	if d := cmp.Diff([]string{"a", "<0xC3>", "<0xA9>", "a"}, tokens(t, fb, vocab, "aéa")); d != "" {
		t.Errorf("byte_fallback (-want +got):\n%s", d)
	}
	fused, _ := tiny(t, vocab, merges, map[string]any{"unk_token": "<unk>", "fuse_unk": true}, nil)
	if d := cmp.Diff([]string{"a", "<unk>", "a", "<unk>"}, tokens(t, fused, vocab, "aééaé")); d != "" {
		t.Errorf("fuse_unk (-want +got):\n%s", d)
	}
	unfused, _ := tiny(t, vocab, merges, map[string]any{"unk_token": "<unk>"}, nil)
	if d := cmp.Diff([]string{"a", "<unk>", "<unk>"}, tokens(t, unfused, vocab, "aéé")); d != "" {
		t.Errorf("unk (-want +got):\n%s", d)
	}
}

// TestNormalizers: Llama 2's Prepend+Replace, applied to each stretch
// between added tokens; Qwen's NFC.
func TestNormalizers(t *testing.T) {
	t.Parallel()
	vocab := []string{"▁", "a", "b", "▁a", "é", "e", "\u0301", "<s>"}
	llama2 := map[string]any{
		"normalizer": map[string]any{"type": "Sequence", "normalizers": []any{
			map[string]any{"type": "Prepend", "prepend": "▁"},
			map[string]any{"type": "Replace", "pattern": map[string]any{"String": " "}, "content": "▁"},
		}},
		"added_tokens": []any{map[string]any{"id": 7, "content": "<s>", "special": true}},
	}
	tk, _ := tiny(t, vocab, []string{"▁ a"}, nil, llama2)
	if d := cmp.Diff([]string{"▁a", "▁", "b", "<s>", "▁a"}, tokens(t, tk, vocab, "a b<s>a")); d != "" {
		t.Errorf("Prepend+Replace (-want +got):\n%s", d)
	}
	nfc, _ := tiny(t, vocab, nil, nil, map[string]any{"normalizer": map[string]any{"type": "NFC"}})
	if d := cmp.Diff([]string{"é", "é"}, tokens(t, nfc, vocab, "e\u0301é")); d != "" {
		t.Errorf("NFC (-want +got):\n%s", d)
	}
	none, _ := tiny(t, vocab, nil, nil, nil)
	if d := cmp.Diff([]string{"e", "\u0301"}, tokens(t, none, vocab, "e\u0301")); d != "" {
		t.Errorf("no normalizer (-want +got):\n%s", d)
	}
}

// TestAddedTokens: leftmost-longest, lstrip/rstrip taking the spaces
// beside, single_word only between non-word characters, a normalized
// token matched after normalization.
func TestAddedTokens(t *testing.T) {
	t.Parallel()
	vocab := []string{" ", "a", "b", "x", "<t>", "<tt>", "[L]", "[R]", "W", "▁", "N▁N", "<W>"}
	added := []any{
		map[string]any{"id": 4, "content": "<t>"},
		map[string]any{"id": 5, "content": "<tt>"},
		map[string]any{"id": 6, "content": "[L]", "lstrip": true},
		map[string]any{"id": 7, "content": "[R]", "rstrip": true},
		map[string]any{"id": 11, "content": "W", "single_word": true},
		map[string]any{"id": 10, "content": "N N", "normalized": true},
	}
	top := map[string]any{"added_tokens": added,
		"normalizer": map[string]any{"type": "Replace", "pattern": map[string]any{"String": " "}, "content": "▁"}}
	tk, _ := tiny(t, vocab, nil, nil, top)
	for text, want := range map[string][]string{
		"a<tt>b<t>":  {"a", "<tt>", "b", "<t>"},
		"a  [L]b":    {"a", "[L]", "b"},
		"a[R]  b":    {"a", "[R]", "b"},
		"a W b":      {"a", "▁", "<W>", "▁", "b"},
		"aWb":        {"a", "W", "b"}, // not a single word: the model's own "W"
		"xN Nx":      {"x", "N▁N", "x"},
		"<t><t>x<t>": {"<t>", "<t>", "x", "<t>"},
	} {
		if d := cmp.Diff(want, tokens(t, tk, vocab, text)); d != "" {
			t.Errorf("%q (-want +got):\n%s", text, d)
		}
	}
}

// TestPreTokenizers: Split behaviors, ByteLevel's GPT-2 split and byte
// map, Metaspace's prepend schemes.
func TestPreTokenizers(t *testing.T) {
	t.Parallel()
	split := func(b string) preTokenizer {
		p, err := newPreTokenizer(map[string]any{"type": "Split", "pattern": map[string]any{"String": "-"}, "behavior": b})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	run := func(p preTokenizer, s string, atStart bool) []string {
		ps, err := p([]piece{{s: s, atStart: atStart}})
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, x := range ps {
			out = append(out, x.s)
		}
		return out
	}
	for b, want := range map[string][]string{
		"Isolated":           {"a", "-", "-", "b", "-"},
		"Removed":            {"a", "b"},
		"MergedWithPrevious": {"a-", "-", "b-"},
		"MergedWithNext":     {"a", "-", "-b", "-"},
		"Contiguous":         {"a", "--", "b", "-"},
	} {
		if d := cmp.Diff(want, run(split(b), "a--b-", false)); d != "" {
			t.Errorf("Split %s (-want +got):\n%s", b, d)
		}
	}
	bl, err := newPreTokenizer(map[string]any{"type": "ByteLevel", "add_prefix_space": true})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"Ġhello", "Ġ", "Ġworld", "'s", "Ã©"}, run(bl, "hello  world'sé", false)); d != "" {
		t.Errorf("ByteLevel (-want +got):\n%s", d)
	}
	for scheme, want := range map[string][2][]string{
		"always": {{"▁a", "▁b"}, {"▁a", "▁b"}},
		"first":  {{"▁a", "▁b"}, {"a", "▁b"}},
		"never":  {{"a", "▁b"}, {"a", "▁b"}},
	} {
		ms, err := newPreTokenizer(map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": scheme, "split": true})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want[0], run(ms, "a b", true)); d != "" {
			t.Errorf("Metaspace %s at the start (-want +got):\n%s", scheme, d)
		}
		if d := cmp.Diff(want[1], run(ms, "a b", false)); d != "" {
			t.Errorf("Metaspace %s after an added token (-want +got):\n%s", scheme, d)
		}
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for doc, want := range map[string]string{
		`[1]`:      "expected a Hugging Face tokenizer.json",
		`{"a": 1}`: `found no "model" field`,
		`{"model": {"type": "WordPiece", "vocab": {}}}`:                                                                                    `model: type "WordPiece" is not supported`,
		`{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}}`:                                                                 `merges[0] ["a" "b"]: a part is not in the vocab`,
		`{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["ab"]}}`:                                                                  `merges[0]: expected "a b", got "ab"`,
		`{"model": {"type": "BPE", "vocab": {"a": 0}, "unk_token": "<unk>"}}`:                                                              `unk_token "<unk>" is not in the vocab`,
		`{"model": {"type": "BPE", "vocab": {}}, "normalizer": {"type": "Precompiled"}}`:                                                   `normalizer: unsupported normalizer type "Precompiled"`,
		`{"model": {"type": "BPE", "vocab": {}}, "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "(?<"}, "behavior": "Isolated"}}`: `pre_tokenizer: Split: pattern "(?<"`,
		`{"model": {"type": "BPE", "vocab": {}}, "pre_tokenizer": {"type": "Split", "pattern": {"String": " "}, "behavior": "Sideways"}}`:  `unknown behavior Sideways`,
	} {
		_, err := Parse([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", doc, err, want)
		}
	}
}
