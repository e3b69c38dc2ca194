package tokenize

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/lmbench/lmbench/core/engine/profile"
	"github.com/lmbench/lmbench/core/internal/jsonenc"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// query is one thing to count: a text (without special tokens) or a chat
// (through the model's template, with the generation prompt).
type query struct {
	text  *string
	chat  []protocol.ChatMessage
	tools []protocol.Tool
}

// count asks the engine for one query's tokens, in its shape.
func (e *engineTokenizer) count(ctx context.Context, q query) (int, error) {
	if q.text == nil && e.chat == "" {
		return 0, fmt.Errorf("the engine's tokenizer (%s) counts no chats; give the model's tokenizer.json as --tokenizer PATH", e.path)
	}
	if e.shape != profile.ShapeVLLM && (len(q.tools) > 0 || hasToolTurns(q.chat)) {
		return 0, fmt.Errorf("the engine's tokenizer (%s) is not given tools or tool calls here, so a tool-use chat would be miscounted; give the model's tokenizer.json as --tokenizer PATH", e.chat)
	}
	switch e.shape {
	case profile.ShapeLlamaCpp:
		return e.llamacpp(ctx, q)
	case profile.ShapeTGI:
		return e.tgi(ctx, q)
	case profile.ShapeSGLang:
		return e.sglang(ctx, q)
	}
	no, yes := false, true
	body := tokenizeBody{Model: e.model, Prompt: q.text, AddSpecialTokens: &no}
	if q.text == nil {
		body = tokenizeBody{Model: e.model, Messages: q.chat, Tools: q.tools, AddGenerationPrompt: &yes}
	}
	rb, err := e.post(ctx, e.path, body.appendJSON(nil))
	if err != nil {
		return 0, err
	}
	return vllmCount(rb)
}

// probe counts a short text, and for SGLang learns whether its /tokenize
// puts a special token before every text.
func (e *engineTokenizer) probe(ctx context.Context) error {
	if e.shape == profile.ShapeSGLang {
		return e.sglangPrefix(ctx)
	}
	_, err := e.CountTokens(ctx, protocol.TokenQuery{Texts: []string{"hi"}})
	return err
}

// llamacpp counts through llama.cpp's server (tools/server/README.md):
// POST /tokenize {"content","add_special","with_pieces"} answers
// {"tokens":[ids]}; a chat is rendered by POST /apply-template
// {"messages"} into {"prompt"}, which is then tokenized as the server
// tokenizes a chat's prompt (add_special and parse_special true: the
// template's text leaves the BOS to the tokenizer).
func (e *engineTokenizer) llamacpp(ctx context.Context, q query) (int, error) {
	text, special := q.text, false
	if text == nil {
		rb, err := e.post(ctx, e.chat, appendMessages([]byte(`{`), q.chat, true))
		if err != nil {
			return 0, err
		}
		var r struct {
			Prompt *string `json:"prompt"`
		}
		if json.Unmarshal(rb, &r) != nil || r.Prompt == nil {
			return 0, fmt.Errorf("engine %s: expected JSON with a prompt, got %q", e.chat, clipBody(rb))
		}
		text, special = r.Prompt, true
	}
	b := jsonenc.AppendString([]byte(`{"content":`), *text)
	if special {
		b = append(b, `,"add_special":true,"parse_special":true,"with_pieces":false}`...)
	} else {
		b = append(b, `,"add_special":false,"with_pieces":false}`...)
	}
	rb, err := e.post(ctx, e.path, b)
	if err != nil {
		return 0, err
	}
	var r struct {
		Tokens []json.RawMessage `json:"tokens"`
	}
	if json.Unmarshal(rb, &r) != nil || r.Tokens == nil {
		return 0, fmt.Errorf("engine %s: expected JSON with tokens, got %q", e.path, clipBody(rb))
	}
	return len(r.Tokens), nil
}

// tgiToken is one entry of TGI's tokenize answer (router/src/lib.rs's
// SimpleToken).
type tgiToken struct {
	Start int `json:"start"`
	Stop  int `json:"stop"`
}

// tgi counts through Text Generation Inference's router
// (router/src/server.rs): POST /tokenize takes a GenerateRequest
// {"inputs"} and answers a list of {"id","text","start","stop"}; POST
// /chat_tokenize takes a ChatRequest and answers {"tokenize_response":
// [...], "templated_text"}, the chat as the router tokenizes it for
// generation. Its /tokenize adds the special tokens (builds without
// add_special_tokens); those cover no characters of the input (start ==
// stop), so a text's own tokens are the ones that cover some.
func (e *engineTokenizer) tgi(ctx context.Context, q query) (int, error) {
	if q.text == nil {
		b := jsonenc.AppendString([]byte(`{"model":`), e.model)
		rb, err := e.post(ctx, e.chat, appendMessages(append(b, ','), q.chat, false))
		if err != nil {
			return 0, err
		}
		var r struct {
			Tokens []tgiToken `json:"tokenize_response"`
		}
		if json.Unmarshal(rb, &r) != nil || r.Tokens == nil {
			return 0, fmt.Errorf("engine %s: expected JSON with a tokenize_response, got %q", e.chat, clipBody(rb))
		}
		return len(r.Tokens), nil
	}
	b := jsonenc.AppendString([]byte(`{"inputs":`), *q.text)
	rb, err := e.post(ctx, e.path, append(b, `,"add_special_tokens":false}`...))
	if err != nil {
		return 0, err
	}
	var list []tgiToken
	if json.Unmarshal(rb, &list) != nil || list == nil {
		return 0, fmt.Errorf("engine %s: expected a JSON list of tokens, got %q", e.path, clipBody(rb))
	}
	n := 0
	for _, t := range list {
		if t.Stop > t.Start {
			n++
		}
	}
	if n == 0 && len(*q.text) > 0 {
		return len(list), nil // no offsets at all (a tokenizer without them): every token counts
	}
	return n, nil
}

// sglang counts through SGLang's /tokenize (python/sglang/srt/entrypoints/
// openai/serving_tokenize.py): {"model","prompt","add_special_tokens"}
// or {"model","messages"} (a chat, through the chat serving's template),
// answered with {"tokens","count","max_model_len"}. Recent builds send a
// prompt through the completions path, which drops add_special_tokens
// and adds the BOS: sglangPrefix learns that token once and it is not
// counted.
func (e *engineTokenizer) sglang(ctx context.Context, q query) (int, error) {
	if q.text == nil {
		b := jsonenc.AppendString([]byte(`{"model":`), e.model)
		rb, err := e.post(ctx, e.chat, appendMessages(append(b, ','), q.chat, false))
		if err != nil {
			return 0, err
		}
		return vllmCount(rb)
	}
	ids, err := e.sglangIDs(ctx, *q.text)
	if err != nil {
		return 0, err
	}
	if p := e.prefix.Load(); p >= 0 && len(ids) > 0 && ids[0] == p {
		return len(ids) - 1, nil
	}
	return len(ids), nil
}

func (e *engineTokenizer) sglangIDs(ctx context.Context, text string) ([]int64, error) {
	no := false
	rb, err := e.post(ctx, e.path, tokenizeBody{Model: e.model, Prompt: &text, AddSpecialTokens: &no}.appendJSON(nil))
	if err != nil {
		return nil, err
	}
	var r struct {
		Tokens []int64 `json:"tokens"`
	}
	if json.Unmarshal(rb, &r) != nil || r.Tokens == nil {
		return nil, fmt.Errorf("engine %s: expected JSON with tokens, got %q", e.path, clipBody(rb))
	}
	return r.Tokens, nil
}

// sglangPrefix tokenizes two texts that share no first token: when both
// answers start with the same id, the engine put it there.
func (e *engineTokenizer) sglangPrefix(ctx context.Context) error {
	a, err := e.sglangIDs(ctx, "hi")
	if err != nil {
		return fmt.Errorf("text 0: %w", err)
	}
	b, err := e.sglangIDs(ctx, "7")
	if err != nil {
		return fmt.Errorf("text 1: %w", err)
	}
	if len(a) > 1 && len(b) > 1 && a[0] == b[0] {
		e.prefix.Store(a[0])
	}
	return nil
}

// appendMessages appends `"messages":[...]` (and, for llama.cpp, the
// generation prompt it otherwise leaves to the caller) and closes the
// object.
func appendMessages(dst []byte, msgs []protocol.ChatMessage, generationPrompt bool) []byte {
	dst = append(dst, `"messages":[`...)
	for i, m := range msgs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonenc.AppendString(append(dst, `{"role":`...), m.Role)
		dst = append(jsonenc.AppendString(append(dst, `,"content":`...), m.Content), '}')
	}
	dst = append(dst, ']')
	if generationPrompt {
		dst = append(dst, `,"add_generation_prompt":true`...)
	}
	return append(dst, '}')
}

// hasToolTurns is whether a chat holds assistant tool calls or tool
// replies, which only vLLM's /tokenize shape carries.
func hasToolTurns(msgs []protocol.ChatMessage) bool {
	for i := range msgs {
		if len(msgs[i].ToolCalls) > 0 || msgs[i].ToolCallID != "" {
			return true
		}
	}
	return false
}
