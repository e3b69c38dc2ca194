package tokenize

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/engine/profile"
	"github.com/lmbench/lmbench/core/internal/jsonenc"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// --tokenizer values besides a path.
const (
	Auto   = config.TokenizerAuto
	Engine = config.TokenizerEngine
	Words  = config.TokenizerWords
)

// Check checks a --tokenizer value before any network traffic:
// auto, engine, words, or a path to a local Hugging Face tokenizer.json
// (or a directory holding one), which must load.
func Check(v, origin string) error {
	switch v {
	case Auto, Engine, Words:
		return nil
	case "":
		return fmt.Errorf("%s: must be auto, engine, words or the path of a tokenizer.json, got an empty value", origin)
	}
	if _, err := loadFileTokenizer(v); err != nil {
		return fmt.Errorf("%s %s: %w", origin, v, err)
	}
	return nil
}

// engineTokenizer counts tokens through the engine's tokenizer endpoint,
// in its shape (shapes.go: vLLM's, SGLang's, llama.cpp's, TGI's), caching
// every answer: texts without special tokens, chats through the chat
// template with the generation prompt.
type engineTokenizer struct {
	base, apiKey, model string
	client              *http.Client
	shape               profile.Shape
	path, chat          string // the text and chat endpoints ("" chat: none)

	mu    sync.Mutex
	cache map[string]int // "t\x00"+text or chatKey
	calls atomic.Int64   // POST /tokenize made, the probe's included
	// prefix is the special token SGLang's /tokenize puts before every
	// text when it does not honour add_special_tokens (-1: none seen).
	prefix atomic.Int64
}

// newEngineTokenizer counts through the tokenizer of a profile; nil is
// vLLM's /tokenize, which an engine lmbench does not recognise is asked
// in.
func newEngineTokenizer(base, apiKey, model string, tok *profile.Tokenizer) *engineTokenizer {
	// Engines serve /tokenize at the server's root, beside /v1.
	root := strings.TrimSuffix(strings.TrimRight(base, "/"), "/v1")
	// As many idle connections as calls in flight: with net/http's
	// default of 2, six of every eight calls of a batch would dial anew.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = tokenizeParallel
	e := &engineTokenizer{base: root, apiKey: apiKey, model: model, shape: profile.ShapeVLLM, path: "/tokenize", chat: "/tokenize",
		client: &http.Client{Timeout: 2 * time.Minute, Transport: tr}, cache: map[string]int{}}
	if tok != nil {
		e.shape, e.path, e.chat = tok.Shape, tok.Path, tok.Chat
	}
	e.prefix.Store(-1)
	return e
}

// tokenizeParallel bounds the /tokenize calls in flight for one batch.
const tokenizeParallel = 8

type tokenizeBody struct {
	Model               string                 `json:"model,omitempty"`
	Prompt              *string                `json:"prompt,omitempty"`
	Messages            []protocol.ChatMessage `json:"-"`
	Tools               []protocol.Tool        `json:"-"`
	AddSpecialTokens    *bool                  `json:"add_special_tokens,omitempty"`
	AddGenerationPrompt *bool                  `json:"add_generation_prompt,omitempty"`
}

// appendJSON appends the body as JSON, the texts escaped once (through
// encoding/json a MarshalJSON's output is scanned again): sizing sends
// every prompt this way.
func (b tokenizeBody) appendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	open := len(dst)
	sep := func() {
		if len(dst) > open {
			dst = append(dst, ',')
		}
	}
	if b.Model != "" {
		dst = jsonenc.AppendString(append(dst, `"model":`...), b.Model)
	}
	if b.Prompt != nil {
		sep()
		dst = jsonenc.AppendString(append(dst, `"prompt":`...), *b.Prompt)
	}
	flags := [2]struct {
		name string
		v    *bool
	}{{"add_special_tokens", b.AddSpecialTokens}, {"add_generation_prompt", b.AddGenerationPrompt}}
	for _, f := range flags {
		if f.v != nil {
			sep()
			dst = strconv.AppendBool(append(jsonenc.AppendString(dst, f.name), ':'), *f.v)
		}
	}
	if len(b.Messages) > 0 {
		sep()
		dst = append(dst, `"messages":[`...)
		for i := range b.Messages {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendChatMessage(dst, &b.Messages[i])
		}
		dst = append(dst, ']')
	}
	if len(b.Tools) > 0 {
		sep()
		dst = appendTools(dst, b.Tools)
	}
	return append(dst, '}')
}

// appendChatMessage appends one message in OpenAI's shape, as the
// request itself carries it (core/engine): vLLM's /tokenize renders the
// tool calls and the call id through the chat template as its chat
// completions do.
func appendChatMessage(dst []byte, m *protocol.ChatMessage) []byte {
	dst = jsonenc.AppendString(append(dst, `{"role":`...), m.Role)
	if m.ToolCallID != "" {
		dst = jsonenc.AppendString(append(dst, `,"tool_call_id":`...), m.ToolCallID)
	}
	dst = append(dst, `,"content":`...)
	if m.Content == "" && len(m.ToolCalls) > 0 {
		dst = append(dst, "null"...)
	} else {
		dst = jsonenc.AppendString(dst, m.Content)
	}
	if len(m.ToolCalls) > 0 {
		dst = append(dst, `,"tool_calls":[`...)
		for i, tc := range m.ToolCalls {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonenc.AppendString(append(dst, `{"id":`...), tc.ID)
			dst = jsonenc.AppendString(append(dst, `,"type":"function","function":{"name":`...), tc.Name)
			dst = jsonenc.AppendString(append(dst, `,"arguments":`...), tc.Arguments)
			dst = append(dst, "}}"...)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

// appendTools appends "tools":[…] in OpenAI's shape; parameters that are
// not JSON were refused by checkTools.
func appendTools(dst []byte, tools []protocol.Tool) []byte {
	dst = append(dst, `"tools":[`...)
	for i, t := range tools {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonenc.AppendString(append(dst, `{"type":"function","function":{"name":`...), t.Name)
		if t.Description != "" {
			dst = jsonenc.AppendString(append(dst, `,"description":`...), t.Description)
		}
		if t.Parameters != "" {
			dst = append(append(dst, `,"parameters":`...), t.Parameters...)
		}
		dst = append(dst, "}}"...)
	}
	return append(dst, ']')
}

// checkTools refuses a chat whose tool parameters are not JSON: they are
// copied into the body raw.
func checkTools(c protocol.Chat) error {
	for i, t := range c.Tools {
		if t.Parameters != "" && !json.Valid([]byte(t.Parameters)) {
			return fmt.Errorf("tools[%d] (%q): parameters are not valid JSON", i, t.Name)
		}
	}
	return nil
}

// chatKey is a chat's cache key: each message's role and content, length
// first, so no two chats share one.
func chatKey(c protocol.Chat) string {
	var b strings.Builder
	b.WriteString("c\x00")
	field := func(s string) {
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	for _, m := range c.Messages {
		field(m.Role)
		field(m.Content)
		if len(m.ToolCalls) > 0 || m.ToolCallID != "" {
			// Marked, so a chat without tools keeps its key.
			b.WriteString("T" + strconv.Itoa(len(m.ToolCalls)) + ":")
			field(m.ToolCallID)
			for _, tc := range m.ToolCalls {
				field(tc.ID)
				field(tc.Name)
				field(tc.Arguments)
			}
		}
	}
	if len(c.Tools) > 0 {
		b.WriteString("\x00tools" + strconv.Itoa(len(c.Tools)) + ":")
		for _, t := range c.Tools {
			field(t.Name)
			field(t.Description)
			field(t.Parameters)
		}
	}
	return b.String()
}

// CountTokens answers q from the cache and the engine; any failure fails
// the whole query, naming the item.
func (e *engineTokenizer) CountTokens(ctx context.Context, q protocol.TokenQuery) (protocol.TokenCounts, error) {
	type item struct {
		key  string
		q    query
		out  *int
		what string
	}
	out := protocol.TokenCounts{Texts: make([]int, len(q.Texts)), Chats: make([]int, len(q.Chats))}
	var (
		todo  []item
		again = map[string][]*int{} // a text asked twice in q is counted once
	)
	ask := func(key string, dst *int, mk func() (query, string)) {
		if n, ok := e.cache[key]; ok {
			*dst = n
			return
		}
		if _, ok := again[key]; ok {
			again[key] = append(again[key], dst)
			return
		}
		again[key] = nil
		q, what := mk()
		todo = append(todo, item{key, q, dst, what})
	}
	e.mu.Lock()
	for i, t := range q.Texts {
		ask("t\x00"+t, &out.Texts[i], func() (query, string) {
			return query{text: &t}, fmt.Sprintf("text %d", i)
		})
	}
	for i, c := range q.Chats {
		if err := checkTools(c); err != nil {
			e.mu.Unlock()
			return protocol.TokenCounts{}, fmt.Errorf("chat %d: %w", i, err)
		}
		ask(chatKey(c), &out.Chats[i], func() (query, string) {
			return query{chat: c.Messages, tools: c.Tools}, fmt.Sprintf("chat %d", i)
		})
	}
	e.mu.Unlock()

	errs := make([]error, len(todo))
	sem := make(chan struct{}, tokenizeParallel)
	var wg sync.WaitGroup
	for k, it := range todo {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			n, err := e.count(ctx, it.q)
			if err != nil {
				errs[k] = fmt.Errorf("%s: %w", it.what, err)
				return
			}
			*it.out = n
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return protocol.TokenCounts{}, err
		}
	}
	e.mu.Lock()
	for _, it := range todo {
		e.cache[it.key] = *it.out
		for _, dst := range again[it.key] {
			*dst = *it.out
		}
	}
	e.mu.Unlock()
	return out, nil
}

// post is one POST to the engine's path; the answer's body, a non-2xx
// status an error.
func (e *engineTokenizer) post(ctx context.Context, path string, b []byte) ([]byte, error) {
	e.calls.Add(1)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.base+path, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if e.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.apiKey)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, which may hold credentials
		}
		return nil, fmt.Errorf("engine %s: %w", path, err)
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("engine %s: reading the answer: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &tokenizeStatusError{path: path, status: resp.StatusCode, body: clipBody(rb)}
	}
	return rb, nil
}

// vllmCount is vLLM's answer's count.
func vllmCount(rb []byte) (int, error) {
	if n, ok := leadingCount(rb); ok {
		return n, nil
	}
	var r struct {
		Count *int `json:"count"`
	}
	if err := json.Unmarshal(rb, &r); err != nil || r.Count == nil {
		return 0, fmt.Errorf("engine /tokenize: expected JSON with a count, got %q", clipBody(rb))
	}
	return *r.Count, nil
}

// leadingCount reads the count of an answer that starts with it, as
// vLLM's and the built-in engine's do ({"count":N,...,"tokens":[...]}),
// without decoding the token array after it; false for any other shape,
// which encoding/json then reads.
func leadingCount(b []byte) (int, bool) {
	const head = `{"count":`
	if !bytes.HasPrefix(b, []byte(head)) {
		return 0, false
	}
	b = b[len(head):]
	n, i := 0, 0
	for ; i < len(b) && i < 10 && b[i] >= '0' && b[i] <= '9'; i++ {
		n = n*10 + int(b[i]-'0')
	}
	if i == 0 || i == 10 || i == len(b) || (b[i] != ',' && b[i] != '}') || (b[0] == '0' && i > 1) {
		return 0, false
	}
	return n, true
}

type tokenizeStatusError struct {
	path   string
	status int
	body   string
}

func (e *tokenizeStatusError) Error() string {
	return fmt.Sprintf("engine %s: HTTP %d: %s", e.path, e.status, e.body)
}

func clipBody(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// Target is the engine whose tokenizer Resolve asks: its API base
// (http://host:8000/v1), key and served model, and where its profile
// says it counts tokens (nil: vLLM's /tokenize, as an engine lmbench does
// not recognise is asked; a Tokenizer without a Path: none).
type Target struct {
	Base, APIKey, Model string
	Tokenizer           *profile.Tokenizer
}

// Resolve picks the tokenizer for --tokenizer mode: the engine's
// tokenizer endpoint, in its shape, when it answers a probe (auto,
// engine), else none (words), with a warning that lengths are in words.
// engine fails when the probe does. The name says what was chosen, for
// the log and the banner.
func Resolve(ctx context.Context, mode, origin string, at Target, log zerolog.Logger) (protocol.TokenCounter, string, error) {
	if mode == "" {
		mode = Auto
	}
	if mode == Words {
		log.Warn().Msgf("%s words: prompt lengths are in whitespace words, not the model's tokens", origin)
		return nil, Words, nil
	}
	if mode != Auto && mode != Engine {
		return fileTokenizerFor(mode, origin, log)
	}
	if at.Tokenizer != nil && at.Tokenizer.Path == "" {
		if mode == Engine {
			return nil, "", fmt.Errorf("%s engine: the engine has no tokenizer endpoint; give the model's tokenizer.json as --tokenizer PATH", origin)
		}
		log.Warn().Msgf("%s auto: the engine has no tokenizer endpoint; prompt lengths are in whitespace words, not the model's tokens "+
			"(--tokenizer PATH counts them with the model's tokenizer.json)", origin)
		return nil, Words, nil
	}
	tok := newEngineTokenizer(at.Base, at.APIKey, at.Model, at.Tokenizer)
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	err := tok.probe(pctx)
	if err == nil {
		log.Info().Str("tokenizer", "engine "+tok.path).Str("shape", string(tok.shape)).Msg("prompt lengths are in the engine's tokens")
		return tok, Engine, nil
	}
	if mode == Engine {
		return nil, "", fmt.Errorf("%s engine: the engine's %s does not answer: %w", origin, tok.path, err)
	}
	log.Warn().Err(err).Msgf("%s auto: the engine has no usable %s; prompt lengths are in whitespace words, not the model's tokens", origin, tok.path)
	return nil, Words, nil
}
