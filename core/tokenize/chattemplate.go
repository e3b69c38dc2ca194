package tokenize

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ardanlabs/jinja"

	"github.com/lmbench/lmbench/sdk/protocol"
)

// The chat template of a tokenizer file is the chat_template.jinja
// beside it (where current transformers saves it; it wins, as there) or
// the chat_template of the tokenizer_config.json beside it (Jinja),
// rendered with ardanlabs/jinja: pure Go, no dependencies, written for
// LLM chat templates and tested against current models' (Llama 3, Qwen
// 3, Gemma, Mistral, DeepSeek, GPT-OSS); gonja v2, the general Jinja
// port, lacks HF templates' raise_exception, strftime_now and Python
// string methods out of the box.

// chatTemplate renders chats as the engine does: messages, the
// generation prompt, and the config's bos and eos tokens.
type chatTemplate struct {
	file     string
	tmpl     *jinja.Template
	bos, eos string
}

// loadChatTemplate reads the chat template beside a tokenizer.json; nil
// (and no error) when there is none. The bos and eos tokens are the
// tokenizer_config.json's, when there is one.
func loadChatTemplate(tokenizerFile string) (*chatTemplate, error) {
	dir := filepath.Dir(tokenizerFile)
	cfg, err := readTokenizerConfig(filepath.Join(dir, "tokenizer_config.json"))
	if err != nil {
		return nil, err
	}
	file, src := cfg.file, cfg.template
	jinjaFile := filepath.Join(dir, "chat_template.jinja")
	switch raw, err := os.ReadFile(jinjaFile); {
	case err == nil:
		file, src = jinjaFile, string(raw)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	if src == "" {
		return nil, nil
	}
	tmpl, err := jinja.Compile(src)
	if err != nil {
		return nil, fmt.Errorf("%s: chat_template: %w (remove it to count chats without a template)", file, err)
	}
	return &chatTemplate{file: file, tmpl: tmpl, bos: cfg.bos, eos: cfg.eos}, nil
}

// tokenizerConfig is what a tokenizer_config.json says of chats.
type tokenizerConfig struct {
	file, template, bos, eos string
}

// readTokenizerConfig reads a tokenizer_config.json; empty when there is
// none.
func readTokenizerConfig(file string) (tokenizerConfig, error) {
	raw, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return tokenizerConfig{}, nil
	}
	if err != nil {
		return tokenizerConfig{}, err
	}
	var cfg struct {
		ChatTemplate json.RawMessage `json:"chat_template"`
		BOS          json.RawMessage `json:"bos_token"`
		EOS          json.RawMessage `json:"eos_token"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return tokenizerConfig{}, fmt.Errorf("%s: expected a JSON object: %w", file, err)
	}
	src, err := templateSource(cfg.ChatTemplate)
	if err != nil {
		return tokenizerConfig{}, fmt.Errorf("%s: chat_template: %w", file, err)
	}
	return tokenizerConfig{file: file, template: src, bos: tokenText(cfg.BOS), eos: tokenText(cfg.EOS)}, nil
}

// templateSource is chat_template's text: a string, or the "default" of
// a list of named templates.
func templateSource(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var named []struct{ Name, Template string }
	if err := json.Unmarshal(raw, &named); err != nil {
		return "", fmt.Errorf("expected a string or a list of {name, template}, got %.40s", raw)
	}
	for _, n := range named {
		if n.Name == "default" {
			return n.Template, nil
		}
	}
	return "", fmt.Errorf("a list of %d named templates without \"default\"", len(named))
}

// tokenText is a bos_token or eos_token: a string or an added token's
// object with a content.
func tokenText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct{ Content string }
	_ = json.Unmarshal(raw, &o) // anything else: no token
	return o.Content
}

// render is the prompt text of chat c with the generation prompt. Tool
// calls and tools reach the template as vLLM hands them to it: OpenAI's
// shapes, with a call's arguments and a tool's parameters parsed from
// their JSON text (templates write them with tojson or iterate over them).
func (t *chatTemplate) render(c protocol.Chat) (string, error) {
	msgs := make([]any, len(c.Messages))
	for i, m := range c.Messages {
		msg := map[string]any{"role": m.Role, "content": m.Content}
		if m.Content == "" && len(m.ToolCalls) > 0 {
			msg["content"] = nil
		}
		if m.ToolCallID != "" {
			msg["tool_call_id"] = m.ToolCallID
		}
		if len(m.ToolCalls) > 0 {
			calls := make([]any, len(m.ToolCalls))
			for j, tc := range m.ToolCalls {
				calls[j] = map[string]any{"id": tc.ID, "type": "function",
					"function": map[string]any{"name": tc.Name, "arguments": jsonValue(tc.Arguments)}}
			}
			msg["tool_calls"] = calls
		}
		msgs[i] = msg
	}
	vars := map[string]any{
		"messages": msgs, "add_generation_prompt": true,
		"bos_token": t.bos, "eos_token": t.eos,
	}
	if len(c.Tools) > 0 {
		tools := make([]any, len(c.Tools))
		for i, tl := range c.Tools {
			fn := map[string]any{"name": tl.Name}
			if tl.Description != "" {
				fn["description"] = tl.Description
			}
			if tl.Parameters != "" {
				fn["parameters"] = jsonValue(tl.Parameters)
			}
			tools[i] = map[string]any{"type": "function", "function": fn}
		}
		vars["tools"] = tools
	}
	out, err := t.tmpl.Render(vars)
	if err != nil {
		return "", fmt.Errorf("%s: chat_template: %w", t.file, err)
	}
	return out, nil
}

// jsonValue is text parsed as JSON, or the text itself when it is not
// JSON (a model's malformed arguments stay as they came).
func jsonValue(text string) any {
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return text
	}
	return v
}
