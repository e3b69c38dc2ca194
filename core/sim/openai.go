package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/lmbench/lmbench/core/sim/tokenizer"
)

// The JSON shapes below follow vLLM's OpenAI-compatible server: field
// names, field order, which fields are null and which are absent.

// maxBodyBytes bounds a request body; long-document workloads send
// megabytes, nothing legitimate sends this much.
const maxBodyBytes = 64 << 20

// params are the request fields chat and text completions share.
type params struct {
	Model               string         `json:"model"`
	MaxTokens           *int           `json:"max_tokens"`
	MaxCompletionTokens *int           `json:"max_completion_tokens"`
	N                   *int           `json:"n"`
	Stream              bool           `json:"stream"`
	StreamOptions       *streamOptions `json:"stream_options"`
	// vLLM's and SGLang's extra fields for an exact output length.
	IgnoreEOS bool `json:"ignore_eos"`
	MinTokens *int `json:"min_tokens"`
	// Logprobs is chat's true (with TopLogprobs) or completions' count:
	// the streamed tokens then carry made-up log-probabilities (logprobs.go).
	Logprobs    json.RawMessage `json:"logprobs"`
	TopLogprobs int             `json:"top_logprobs"`
	// temperature, top_p, seed and the rest are accepted and ignored: the
	// output is fixed.
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatRequest struct {
	params
	Messages []tokenizer.Message `json:"messages"`
	Tools    []tokenizer.Tool    `json:"tools"`
}

type textRequest struct {
	params
	Prompt json.RawMessage `json:"prompt"` // a string, or a list of one string
}

// apiError is a request the server refuses, rendered as vLLM's error JSON.
type apiError struct {
	status  int
	message string
}

func (e *apiError) Error() string { return e.message }

func badRequest(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, message: fmt.Sprintf(format, args...)}
}

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    int     `json:"code"`
}

func writeError(w http.ResponseWriter, e *apiError) {
	typ := strings.ReplaceAll(http.StatusText(e.status), " ", "") + "Error" // NotFoundError, as vLLM
	if e.status == http.StatusBadRequest {
		typ = "BadRequestError"
	}
	writeJSON(w, e.status, errorBody{Error: errorDetail{Message: e.message, Type: typ, Code: e.status}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil { // only our own types get here; they always marshal
		panic(fmt.Sprintf("sim: marshal %T: %v", v, err))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// decodeBody reads a JSON request body into v.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) *apiError {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return &apiError{status: http.StatusRequestEntityTooLarge,
				message: fmt.Sprintf("request body larger than %d bytes", tooBig.Limit)}
		}
		return badRequest("reading request body: %v", err)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return badRequest("invalid JSON body: %v", err)
	}
	return nil
}

// resolve checks the shared fields against the served model and returns
// the number of tokens to generate.
func (p params) resolve(cfg Config) (maxTokens int, err *apiError) {
	if p.Model != "" && !cfg.serves(p.Model) {
		return 0, &apiError{status: http.StatusNotFound,
			message: fmt.Sprintf("The model `%s` does not exist.", p.Model)}
	}
	if p.N != nil && *p.N != 1 {
		return 0, badRequest("n: only 1 is supported, got %d", *p.N)
	}
	if p.StreamOptions != nil && !p.Stream {
		return 0, badRequest("stream_options: only allowed when stream is true")
	}
	maxTokens = cfg.DefaultMaxTokens
	// max_completion_tokens is the newer name and wins, as in vLLM.
	switch {
	case p.MaxCompletionTokens != nil:
		maxTokens = *p.MaxCompletionTokens
		if maxTokens < 1 {
			return 0, badRequest("max_completion_tokens: must be >= 1, got %d", maxTokens)
		}
	case p.MaxTokens != nil:
		maxTokens = *p.MaxTokens
		if maxTokens < 1 {
			return 0, badRequest("max_tokens: must be >= 1, got %d", maxTokens)
		}
	}
	if p.MinTokens != nil && (*p.MinTokens < 0 || *p.MinTokens > maxTokens) {
		return 0, badRequest("min_tokens: must be between 0 and max_tokens (%d), got %d", maxTokens, *p.MinTokens)
	}
	return maxTokens, nil
}

// outputTokens is how many of maxTokens the answer produces: all of them,
// unless Config.EOSAfter ends it earlier (stop: at the end-of-sequence
// token) and the request neither sets ignore_eos nor asks for more with
// min_tokens. Posing as Ollama, it ignores both, as Ollama does.
func (p params) outputTokens(cfg Config, maxTokens int) (n int, stop bool) {
	ollama := cfg.Kind == KindOllama
	if cfg.EOSAfter <= 0 || (p.IgnoreEOS && !ollama) {
		return maxTokens, false
	}
	n = cfg.EOSAfter
	if p.MinTokens != nil && !ollama {
		n = max(n, *p.MinTokens)
	}
	if n >= maxTokens {
		return maxTokens, false
	}
	return n, true
}

// textPrompt returns the tokens of a completions request's prompt.
// A completion prompt gets the tokenizer's special tokens, as in vLLM.
func textPrompt(raw json.RawMessage, tok tokenizer.Tokenizer) ([]string, *apiError) {
	trimmed := strings.TrimSpace(string(raw))
	if trimmed == "" || trimmed == "null" {
		return nil, badRequest("prompt: required")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return tok.Text(s, true), nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil || len(list) != 1 {
		return nil, badRequest("prompt: must be a string or a list of exactly one string")
	}
	return tok.Text(list[0], true), nil
}

// Responses.

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	TotalTokens      int `json:"total_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// PromptTokensDetails is nil when posing as an engine that reports
	// no cached tokens.
	PromptTokensDetails *promptTokensDetails `json:"prompt_tokens_details,omitempty"`
}

type promptTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

func (g generation) usage() *usage {
	return &usage{
		PromptTokens:        g.promptTokens,
		TotalTokens:         g.promptTokens + g.completionTokens,
		CompletionTokens:    g.completionTokens,
		PromptTokensDetails: &promptTokensDetails{CachedTokens: g.cachedTokens},
	}
}

// null renders as JSON null; the fields typed with it are always null here
// (logprobs, stop_reason) but present, as in vLLM.
type null *struct{}

type chatChunk struct {
	ID      string            `json:"id"`
	Object  string            `json:"object"`
	Created int64             `json:"created"`
	Model   string            `json:"model"`
	Choices []chatChunkChoice `json:"choices"`
	Usage   *usage            `json:"usage,omitempty"`
}

type chatChunkChoice struct {
	Index        int       `json:"index"`
	Delta        chatDelta `json:"delta"`
	Logprobs     any       `json:"logprobs"` // nil: null
	FinishReason *string   `json:"finish_reason"`
	// StopReason appears (as null) only on the finishing chunk, as in vLLM.
	StopReason json.RawMessage `json:"stop_reason,omitempty"`
}

type chatDelta struct {
	Role    string `json:"role,omitempty"`
	Content string `json:"content"`
}

type chatResponse struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []chatChoice `json:"choices"`
	Usage   *usage       `json:"usage"`
}

type chatChoice struct {
	Index        int            `json:"index"`
	Message      chatMessageOut `json:"message"`
	Logprobs     null           `json:"logprobs"`
	FinishReason string         `json:"finish_reason"`
	StopReason   null           `json:"stop_reason"`
}

type chatMessageOut struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// textCompletion is both a completions stream chunk and the whole
// non-streamed response; the usage chunk has no choices.
type textCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []textChoice `json:"choices"`
	Usage   *usage       `json:"usage"` // null on token chunks, as in vLLM
}

type textChoice struct {
	Index        int     `json:"index"`
	Text         string  `json:"text"`
	Logprobs     any     `json:"logprobs"` // nil: null
	FinishReason *string `json:"finish_reason"`
	StopReason   null    `json:"stop_reason"`
}

// reply renders one request's responses in its API's shape.
type reply struct {
	chat    bool
	stop    bool // the answer ended at the end-of-sequence token, before max_tokens
	id      string
	created int64
	model   string
	top     int // log-probabilities asked for, alternatives per token (0: none)
}

var finishLength, finishStop = "length", "stop"

// finish is the last chunk's finish_reason.
func (r reply) finish() *string {
	if r.stop {
		return &finishStop
	}
	return &finishLength
}

func (r reply) roleChunk() any {
	return chatChunk{ID: r.id, Object: "chat.completion.chunk", Created: r.created, Model: r.model,
		Choices: []chatChunkChoice{{Delta: chatDelta{Role: "assistant"}}}}
}

func (r reply) tokenChunk(text string, last bool) any {
	var finish *string
	var stop json.RawMessage
	if last {
		finish, stop = r.finish(), json.RawMessage("null")
	}
	if r.chat {
		return chatChunk{ID: r.id, Object: "chat.completion.chunk", Created: r.created, Model: r.model,
			Choices: []chatChunkChoice{{Delta: chatDelta{Content: text}, Logprobs: r.logprobs(text), FinishReason: finish, StopReason: stop}}}
	}
	return textCompletion{ID: r.id, Object: "text_completion", Created: r.created, Model: r.model,
		Choices: []textChoice{{Text: text, Logprobs: r.logprobs(text), FinishReason: finish}}}
}

func (r reply) usageChunk(u *usage) any {
	if r.chat {
		return chatChunk{ID: r.id, Object: "chat.completion.chunk", Created: r.created, Model: r.model,
			Choices: []chatChunkChoice{}, Usage: u}
	}
	return textCompletion{ID: r.id, Object: "text_completion", Created: r.created, Model: r.model,
		Choices: []textChoice{}, Usage: u}
}

func (r reply) whole(text string, u *usage) any {
	if r.chat {
		return chatResponse{ID: r.id, Object: "chat.completion", Created: r.created, Model: r.model,
			Choices: []chatChoice{{Message: chatMessageOut{Role: "assistant", Content: text}, FinishReason: *r.finish()}},
			Usage:   u}
	}
	return textCompletion{ID: r.id, Object: "text_completion", Created: r.created, Model: r.model,
		Choices: []textChoice{{Text: text, FinishReason: r.finish()}}, Usage: u}
}

// sse writes server-sent events, one `data:` line per JSON chunk, flushed
// at once so the client sees each token when it is produced.
type sse struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
}

func newSSE(w http.ResponseWriter) *sse {
	return &sse{w: w, rc: http.NewResponseController(w)}
}

func (s *sse) send(v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("sim: marshal %T: %v", v, err))
	}
	return s.write(append(append([]byte("data: "), body...), "\n\n"...))
}

func (s *sse) done() error { return s.write([]byte("data: [DONE]\n\n")) }

func (s *sse) write(b []byte) error {
	s.start()
	if _, err := s.w.Write(b); err != nil {
		return err
	}
	return s.rc.Flush()
}

// start writes the stream's headers, once; they leave with the first
// flush.
func (s *sse) start() {
	if !s.started {
		s.started = true
		h := s.w.Header()
		h.Set("Content-Type", "text/event-stream; charset=utf-8")
		h.Set("Cache-Control", "no-cache")
		s.w.WriteHeader(http.StatusOK)
	}
}
