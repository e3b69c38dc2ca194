package tokenize

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ardanlabs/jinja"
	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/sdk/protocol"
)

// The counts below follow by hand from testdata/tokenizer.json's merges
// (see gen_tokenizer.py): "hello" and " world" are one token each, bytes
// without a merge one each.
var fileCounts = map[string]int{
	"hello":         1,
	"hello world":   2,
	"hello  world":  3, // "hello", " ", " world": \s+(?!\S) leaves the last space to the word
	"hello, world!": 4,
	"the the a a":   4,
	"hi hi":         3, // "hi", then " hi" is Ġ + hi (no "Ġ hi" merge)
	"é":             2, // two bytes, no merge
	"12345":         5, // \p{N}{1,3}: "123" "45", a token a byte
	"":              0,
	// Added tokens written in a text are one token each, as the engine
	// parses them; a partial one is its bytes.
	"<|im_start|>hello<|im_end|><|im_end|>": 4,
	"<|im_e":                                6,
}

func TestFileTokenizerCounts(t *testing.T) {
	t.Parallel()
	tok, err := loadFileTokenizer("testdata/tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	var want []int
	for s, n := range fileCounts {
		texts, want = append(texts, s), append(want, n)
	}
	chat := protocol.Chat{Messages: []protocol.ChatMessage{{Role: "system", Content: "hello"}, {Role: "user", Content: "hello world"}}}
	got, err := tok.CountTokens(context.Background(), protocol.TokenQuery{Texts: texts, Chats: []protocol.Chat{chat}})
	if err != nil {
		t.Fatal(err)
	}
	// The chat through testdata/tokenizer_config.json's ChatML template:
	// "<|im_start|>" "system" "\n" "hello" "<|im_end|>" "\n" is 1+6+1+1+1+1,
	// the user's message 1+4+1+2+1+1, the generation prompt
	// "<|im_start|>" "assistant" "\n" 1+9+1: a token a byte where no merge.
	if d := cmp.Diff(protocol.TokenCounts{Texts: want, Chats: []int{11 + 10 + 11}}, got); d != "" {
		t.Errorf("counts of %q (-want +got):\n%s", texts, d)
	}
}

// TestFileTokenizerByteLevelRegex: a GPT-2-style file (ByteLevel with its
// own pattern, look-ahead included; ignore_merges, an rstrip added
// token) counts alike; a directory holding
// tokenizer.json is read as the file; with no tokenizer_config.json beside
// it a chat is its messages plus the stated overhead, and the name says so.
func TestFileTokenizerByteLevelRegex(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc["pre_tokenizer"] = map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}
	doc["model"].(map[string]any)["ignore_merges"] = true
	doc["added_tokens"].([]any)[2].(map[string]any)["rstrip"] = true
	dir := t.TempDir()
	b, _ := json.Marshal(doc)
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	tok, err := loadFileTokenizer(dir)
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"hello  world", "hello world", "the the a a"}
	chat := protocol.Chat{Messages: []protocol.ChatMessage{{Role: "system", Content: "hello"}, {Role: "user", Content: "hello world"}}}
	got, err := tok.CountTokens(context.Background(), protocol.TokenQuery{Texts: texts, Chats: []protocol.Chat{chat}})
	if err != nil {
		t.Fatal(err)
	}
	// The chat: 1 + 2 tokens of text, 5 per message, 3 of generation prompt.
	if d := cmp.Diff(protocol.TokenCounts{Texts: []int{3, 2, 4}, Chats: []int{1 + 2 + 2*5 + 3}}, got); d != "" {
		t.Errorf("counts of %q (-want +got):\n%s", texts, d)
	}
	if want := "file:" + dir + " (no chat template)"; tok.name() != want {
		t.Errorf("name %q, want %q", tok.name(), want)
	}
}

// TestChatTemplateJinja: a chat_template.jinja beside the file wins over
// the tokenizer_config.json's chat_template, whose bos_token it still
// gets, as transformers reads them.
func TestChatTemplateJinja(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, f := range []string{"tokenizer.json", "tokenizer_config.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tmpl := "{{ bos_token }}{% for m in messages %}{{ m.content }}<|im_end|>{% endfor %}"
	if err := os.WriteFile(filepath.Join(dir, "chat_template.jinja"), []byte(tmpl), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := `{"bos_token": "<|endoftext|>", "chat_template": "{{ raise_exception('the config template was used') }}"}`
	if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	tok, err := loadFileTokenizer(dir)
	if err != nil {
		t.Fatal(err)
	}
	chat := protocol.Chat{Messages: []protocol.ChatMessage{{Role: "user", Content: "hello world"}}}
	got, err := tok.CountTokens(context.Background(), protocol.TokenQuery{Chats: []protocol.Chat{chat}})
	if err != nil {
		t.Fatal(err)
	}
	// "<|endoftext|>" "hello" " world" "<|im_end|>"
	if want := []int{4}; !cmp.Equal(want, got.Chats) {
		t.Errorf("chat counts %v, want %v", got.Chats, want)
	}
}

func TestChatTemplateErrors(t *testing.T) {
	t.Parallel()
	tj, err := os.ReadFile("testdata/tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	for cfg, want := range map[string]string{
		`{"chat_template": "{% for m in messages %}"}`:              "tokenizer_config.json: chat_template: ",
		`{"chat_template": [{"name": "tool_use", "template": ""}]}`: `chat_template: a list of 1 named templates without "default"`,
		`[1]`: "tokenizer_config.json: expected a JSON object",
	} {
		dir := t.TempDir()
		_ = os.WriteFile(filepath.Join(dir, "tokenizer.json"), tj, 0o644)
		_ = os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(cfg), 0o644)
		err := Check(dir, "--tokenizer")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", cfg, err, want)
		}
	}
}

func TestCheckTokenizerFile(t *testing.T) {
	t.Parallel()
	if err := Check("testdata/tokenizer.json", "--tokenizer"); err != nil {
		t.Errorf("the test file: %v", err)
	}
	if err := Check("testdata", "--tokenizer"); err != nil {
		t.Errorf("its directory: %v", err)
	}
	dir := t.TempDir()
	notTok := filepath.Join(dir, "x.json")
	_ = os.WriteFile(notTok, []byte(`{"a": 1}`), 0o644)
	badRe := filepath.Join(dir, "bad.json")
	_ = os.WriteFile(badRe, []byte(`{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
		"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "(?<"}, "behavior": "Isolated", "invert": false}}`), 0o644)
	for path, want := range map[string]string{
		"/nonexistent/tokenizer.json": "--tokenizer /nonexistent/tokenizer.json: expected a Hugging Face tokenizer.json or a directory holding one",
		dir:                           "--tokenizer " + dir + ": a directory without tokenizer.json",
		notTok:                        `found no "model" field`,
		badRe:                         `pre_tokenizer: Split: pattern "(?<"`,
	} {
		err := Check(path, "--tokenizer")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", path, err, want)
		}
	}
}

func TestResolveTokenizerFile(t *testing.T) {
	t.Parallel()
	// No engine is asked: the base URL is unreachable.
	tok, name, err := Resolve(context.Background(), "testdata/tokenizer.json", "--tokenizer", Target{Base: "http://127.0.0.1:1/v1", Model: "m"}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	if name != "file:testdata/tokenizer.json" {
		t.Errorf("name %q", name)
	}
	got, err := tok.CountTokens(context.Background(), protocol.TokenQuery{Texts: []string{"hello world"}})
	if err != nil || got.Texts[0] != 2 {
		t.Errorf("count %v, %v; want 2", got, err)
	}
}

// BenchmarkFileTokenizerDocument counts a fresh 2,000-word document (the
// cache never answers) with the test file.
func BenchmarkFileTokenizerDocument(b *testing.B) {
	tok, err := loadFileTokenizer("testdata/tokenizer.json")
	if err != nil {
		b.Fatal(err)
	}
	words := strings.Repeat("the a ", 1000)
	b.ResetTimer()
	for i := range b.N {
		text := fmt.Sprintf("Document %d: %s", i, words)
		if _, err := tok.CountTokens(context.Background(), protocol.TokenQuery{Texts: []string{text}}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestReadTokenizerFileOnce: Check then Resolve read a file once; a
// file changed since is read again.
func TestReadTokenizerFileOnce(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := readTokenizerFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := readTokenizerFile(file); err != nil || b != a {
		t.Errorf("second read: %p, %v; want the first's %p", b, err, a)
	}
	if err := os.WriteFile(file, append(raw, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := readTokenizerFile(file); err != nil || c == a {
		t.Errorf("read after a change: %p, %v; want a new tokenizer", c, err)
	}
}

// A template sees tools and tool calls in OpenAI's shapes, arguments and
// parameters parsed from their JSON, as vLLM hands them over.
func TestChatTemplateRendersTools(t *testing.T) {
	t.Parallel()
	src := "{% for t in tools %}[{{ t.function.name }}:{{ t.function.parameters.type }}]{% endfor %}" +
		"{% for m in messages %}<{{ m.role }}>{% if m.content %}{{ m.content }}{% endif %}" +
		"{% for c in m.tool_calls %}call {{ c.function.name }} {{ c.function.arguments.city }}{% endfor %}" +
		"{% if m.tool_call_id %}({{ m.tool_call_id }}){% endif %}{% endfor %}"
	tmpl, err := jinja.Compile(src)
	if err != nil {
		t.Fatal(err)
	}
	ct := &chatTemplate{file: "chat_template.jinja", tmpl: tmpl}
	got, err := ct.render(toolChat())
	if err != nil {
		t.Fatal(err)
	}
	want := "[get_weather:object]<user>weather in Oslo please<assistant>call get_weather Oslo<tool>rain and wind(c1)"
	if got != want {
		t.Errorf("rendered %q, want %q", got, want)
	}
}
