package sim

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/sim/prefixcache"
	"github.com/lmbench/lmbench/core/sim/tokenizer"
)

// Server is the simulated engine behind its HTTP API. Create it with New;
// serve it with Start, or mount Handler on a server of your own. Close ends
// it either way.
type Server struct {
	cfg     Config
	log     zerolog.Logger
	engine  *engine
	faults  *injector
	vocab   *vocab
	tok     tokenizer.Tokenizer
	handler http.Handler

	// Seams for golden tests.
	now   func() time.Time // for "created" fields
	newID func() string    // the random part of response ids

	closing context.Context // done once Close is called
	stop    context.CancelFunc

	mu       sync.Mutex
	closed   bool
	inflight sync.WaitGroup // handlers running; Add only under mu while !closed
	http     *http.Server   // set by Start

	dead    atomic.Bool // Faults.DieAfter struck: every request is dropped
	dieOnce sync.Once
}

// New returns a Server for cfg, which must be valid.
func New(cfg Config, log zerolog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("sim: invalid config: %w", err)
	}
	closing, stop := context.WithCancel(context.Background())
	s := &Server{
		cfg:     cfg,
		log:     log,
		engine:  newEngine(cfg),
		faults:  &injector{cfg: cfg.Faults},
		vocab:   newVocab(),
		tok:     tokenizer.Tokenizer{Mode: cfg.Tokenizer},
		now:     time.Now,
		newID:   randomID,
		closing: closing,
		stop:    stop,
	}
	s.handler = s.track(s.routes())
	return s, nil
}

// routes is the HTTP API: vLLM's, or Ollama's part of it when the
// engine poses as Ollama.
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("GET /v1/models", s.handleModels)
	mux.HandleFunc("POST /v1/chat/completions", s.handleChat)
	mux.HandleFunc("POST /v1/completions", s.handleText)
	mux.HandleFunc("GET /status", s.handleStatus)
	if s.cfg.Kind == KindOllama {
		mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, http.StatusOK, map[string]string{"version": ollamaVersion})
		})
		return mux
	}
	mux.Handle("GET /metrics", newMetricsHandler(s))
	mux.HandleFunc("POST /reset_prefix_cache", s.handleReset)
	if !s.cfg.NoTokenize {
		mux.HandleFunc("POST /tokenize", s.handleTokenize)
		mux.HandleFunc("POST /detokenize", s.handleDetokenize)
	}
	return mux
}

// ollamaVersion is what /api/version answers when posing as Ollama: a
// version no Ollama has, saying what it is.
const ollamaVersion = "0.0.0-lmbench-sim"

// Handler returns the HTTP API, for mounting on a server of your own (or
// httptest). Close still cancels the requests it is serving.
func (s *Server) Handler() http.Handler { return s.handler }

// Start listens on addr, which must be a loopback address such as
// "127.0.0.1:0" (port 0 picks a free port), serves in the background and
// returns the base URL, e.g. "http://127.0.0.1:41234". It refuses any other
// address: the simulator is a test double, never a service.
func (s *Server) Start(addr string) (baseURL string, err error) {
	if err := checkLoopback(addr); err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return "", errors.New("sim: Start after Close")
	case s.http != nil:
		return "", errors.New("sim: already started")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("sim: listen on %s: %w", addr, err)
	}
	if ip := ln.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() { // "localhost" resolved elsewhere
		ln.Close()
		return "", fmt.Errorf("sim: %s resolved to non-loopback %s", addr, ip)
	}
	s.http = &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(s.log.With().Str("component", "http").Logger(), "", 0),
	}
	go func() {
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error().Err(err).Msg("sim: serve")
		}
	}()
	baseURL = "http://" + ln.Addr().String()
	s.log.Info().Str("url", baseURL).Str("model", s.cfg.Model).Msg("simulated engine listening")
	return baseURL, nil
}

// checkLoopback accepts host:port where host is a loopback IP or
// "localhost".
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("sim: address %q: %w (want host:port, e.g. 127.0.0.1:0)", addr, err)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("sim: address %q: host must be loopback (127.0.0.1, ::1 or localhost), got %q", addr, host)
	}
	return nil
}

// Close stops the listener (if Start was called), cancels every request in
// flight, waits for their handlers to return and refuses new requests. It
// is safe to call more than once.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	hs := s.http
	s.mu.Unlock()

	s.stop()
	var err error
	if hs != nil && !s.dead.Load() { // a dead engine's server is closed already
		err = hs.Close()
	}
	s.inflight.Wait()
	return err
}

// die is Faults.DieAfter striking: the engine stops as if killed. The
// listener and every connection close (when Start serves it), every
// request in flight ends, and from now on every request's connection is
// dropped unanswered. Close still has to be called.
func (s *Server) die() {
	s.dieOnce.Do(func() {
		s.dead.Store(true)
		s.log.Warn().Int("after_requests", s.cfg.Faults.DieAfter).Msg("simulated fault: the engine dies")
		s.stop() // ends every handler's context
		s.mu.Lock()
		hs := s.http
		s.mu.Unlock()
		if hs != nil {
			_ = hs.Close() // does not wait for the handlers
		}
	})
}

// dropIfDead drops the connection, unanswered, once the engine has died.
func (s *Server) dropIfDead() {
	if s.dead.Load() {
		panic(http.ErrAbortHandler) // net/http closes the connection without a response
	}
}

// track counts handlers in flight for Close and ends each request's
// context when the server closes, even under a caller's own http.Server.
func (s *Server) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.dropIfDead()
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			writeError(w, &apiError{status: http.StatusServiceUnavailable, message: "the simulated engine is closed"})
			return
		}
		s.inflight.Add(1)
		s.mu.Unlock()
		defer s.inflight.Done()

		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		defer context.AfterFunc(s.closing, cancel)()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

type modelList struct {
	Object string      `json:"object"`
	Data   []modelCard `json:"data"`
}

type modelCard struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
	Root    string `json:"root"`
	Parent  null   `json:"parent"`
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	owner := "lmbench-sim"
	if s.cfg.Kind == KindOllama {
		owner = "library"
	}
	list := modelList{Object: "list"}
	for _, m := range append([]string{s.cfg.Model}, s.cfg.extraModels()...) {
		list.Data = append(list.Data, modelCard{ID: m, Object: "model", Created: s.now().Unix(), OwnedBy: owner, Root: m})
	}
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := decodeBody(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	prompt, err := s.tok.Chat(req.Messages, req.Tools, true)
	if err != nil {
		writeError(w, badRequest("%v", err))
		return
	}
	s.complete(w, r, req.params, prompt, true)
}

func (s *Server) handleText(w http.ResponseWriter, r *http.Request) {
	var req textRequest
	if err := decodeBody(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	prompt, err := textPrompt(req.Prompt, s.tok)
	if err != nil {
		writeError(w, err)
		return
	}
	s.complete(w, r, req.params, prompt, false)
}

// checkModel refuses a request naming a model other than the one served.
func (s *Server) checkModel(model string) *apiError {
	if model != "" && !s.cfg.serves(model) {
		return &apiError{status: http.StatusNotFound, message: fmt.Sprintf("The model `%s` does not exist.", model)}
	}
	return nil
}

// complete runs a chat (chat true) or text completion and writes the
// response, streamed or whole, injecting the request's faults.
func (s *Server) complete(w http.ResponseWriter, r *http.Request, p params, prompt []string, chat bool) {
	maxTokens, apiErr := s.checkLength(p, prompt)
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	maxTokens, stopEarly := p.outputTokens(s.cfg, maxTokens)
	faults, die := s.faults.next()
	if die {
		s.die()
		s.dropIfDead()
	}
	if s.failEarly(r.Context(), w, p.Stream, faults) {
		return
	}
	c := &completion{s: s, w: w, ctx: r.Context(), p: p, prompt: prompt, maxTokens: maxTokens,
		cut: faults[faultCutStream], malformed: faults[faultMalformedSSE] && p.Stream,
		stall: faults[faultStallMidStream] && !faults[faultCutStream], hold: faults[faultHoldAfterDone]}
	if faults[faultSlowFirstToken] {
		s.engine.stats.faults[faultSlowFirstToken].Add(1)
		c.slowFirst = s.cfg.Faults.SlowFirstTokenDelay
	}
	idPrefix := "cmpl-"
	if chat {
		idPrefix = "chatcmpl-"
	}
	c.rep = reply{chat: chat, stop: stopEarly, id: idPrefix + s.newID(), created: s.now().Unix(), model: s.cfg.Model,
		top: p.topLogprobs(chat)}
	var g generation
	var started bool
	var err error
	if p.Stream {
		g, started, err = c.stream()
	} else {
		g, err = c.whole()
	}
	s.dropIfDead()
	if stopEarly && g.completionTokens == maxTokens {
		s.engine.stats.requestsStopped.Add(1)
	}
	if err != nil && !started {
		// Nobody may be listening (the client hung up), but if someone is
		// (Close cancelled the request), say why.
		writeError(w, &apiError{status: http.StatusServiceUnavailable, message: "request cancelled: " + err.Error()})
	}
	// Debug even on error: a client hanging up is routine.
	s.log.Debug().Err(err).Str("id", c.rep.id).Int("prompt_tokens", g.promptTokens).Int("cached_tokens", g.cachedTokens).
		Int("cpu_tokens", g.cachedBy[prefixcache.CPU]).Int("disk_tokens", g.cachedBy[prefixcache.Disk]).Int("blend_tokens", g.blendTokens).
		Int("completion_tokens", g.completionTokens).Dur("queued", g.queued).Dur("ttft", g.firstToken).
		Msg("request")
}

// checkLength resolves the output length and refuses a request with no
// prompt or one longer than the model's context.
func (s *Server) checkLength(p params, prompt []string) (int, *apiError) {
	maxTokens, apiErr := p.resolve(s.cfg)
	switch {
	case apiErr != nil:
	case len(prompt) == 0:
		apiErr = badRequest("the prompt has no tokens (a token is a whitespace-separated word)")
	case len(prompt)+maxTokens > s.cfg.MaxModelLen:
		apiErr = badRequest("This model's maximum context length is %d tokens. However, you requested %d tokens "+
			"(%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
			s.cfg.MaxModelLen, len(prompt)+maxTokens, len(prompt), maxTokens)
	}
	return maxTokens, apiErr
}

// failEarly answers the faults that strike before the request is queued
// (an HTTP 500, a stall after the headers), reporting whether one did.
func (s *Server) failEarly(ctx context.Context, w http.ResponseWriter, stream bool, faults faultSet) bool {
	st := &s.engine.stats
	switch {
	case faults[faultHTTP500]:
		st.faults[faultHTTP500].Add(1)
		writeError(w, &apiError{status: http.StatusInternalServerError, message: "simulated fault: internal server error"})
	case faults[faultStallAfterHeaders]:
		st.faults[faultStallAfterHeaders].Add(1)
		if stream {
			newSSE(w).start()
		} else {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
		}
		_ = http.NewResponseController(w).Flush()
		<-ctx.Done() // the client leaves, or the server closes
		s.dropIfDead()
	default:
		return false
	}
	return true
}

// completion is one completion request being answered: what it asks, the
// faults it drew that strike while it is written, and its reply.
type completion struct {
	s         *Server
	w         http.ResponseWriter
	ctx       context.Context
	p         params
	prompt    []string
	maxTokens int
	slowFirst time.Duration
	// cut, malformed, stall and hold are the faults drawn (malformed only
	// for a stream; stall not when cut wins).
	cut, malformed, stall, hold bool
	rep                         reply
}

// hang keeps the response open, unfinished, until the client leaves or
// the server closes.
func (c *completion) hang(f fault) error {
	c.s.engine.stats.faults[f].Add(1)
	<-c.ctx.Done()
	return c.ctx.Err()
}

// cutConnection ends the connection unterminated (net/http drops it).
func (c *completion) cutConnection() {
	c.s.engine.stats.faults[faultCutStream].Add(1)
	panic(http.ErrAbortHandler)
}

// stream writes the answer as server-sent events; started reports
// whether the stream's headers went out.
func (c *completion) stream() (g generation, started bool, err error) {
	out := newSSE(c.w)
	cutAt, badAt := c.maxTokens/2, c.maxTokens/2 // cut after half the tokens; corrupt the middle one
	g, err = c.s.engine.generate(c.ctx, c.prompt, c.maxTokens, c.slowFirst, c.answerFor(), func(k int, text string) error {
		if c.cut && k == max(cutAt, 1) {
			c.cutConnection()
		}
		if c.stall && k == max(cutAt, 1) {
			return c.hang(faultStallMidStream)
		}
		if k == 0 && c.rep.chat {
			if err := out.send(c.rep.roleChunk()); err != nil {
				return err
			}
		}
		if c.malformed && k == badAt {
			c.s.engine.stats.faults[faultMalformedSSE].Add(1)
			return out.write([]byte(`data: {"id":"` + c.rep.id + `","object":` + "\n\n"))
		}
		return out.send(c.rep.tokenChunk(text, k == c.maxTokens-1))
	})
	if c.cut && c.maxTokens == 1 && err == nil {
		c.cutConnection() // one token: cut before the end of the stream instead
	}
	if c.stall && c.maxTokens == 1 && err == nil {
		err = c.hang(faultStallMidStream) // one token: stall before the end instead
	}
	if err == nil && c.p.StreamOptions != nil && c.p.StreamOptions.IncludeUsage {
		err = out.send(c.rep.usageChunk(c.s.usage(g)))
	}
	if err == nil {
		err = out.done()
	}
	if err == nil && c.hold {
		err = c.hang(faultHoldAfterDone)
	}
	return g, out.started, err
}

// whole writes the answer as one JSON response.
func (c *completion) whole() (generation, error) {
	var text strings.Builder
	g, err := c.s.engine.generate(c.ctx, c.prompt, c.maxTokens, c.slowFirst, c.answerFor(), func(_ int, t string) error {
		text.WriteString(t)
		return nil
	})
	if err != nil {
		return g, err
	}
	if c.cut {
		c.cutConnection()
	}
	body, _ := json.Marshal(c.rep.whole(text.String(), c.s.usage(g))) // our own types always marshal
	if c.stall {
		body = body[:len(body)/2]
	}
	c.w.Header().Set("Content-Type", "application/json")
	c.w.WriteHeader(http.StatusOK)
	_, _ = c.w.Write(body)
	switch {
	case c.stall:
		_ = http.NewResponseController(c.w).Flush()
		_ = c.hang(faultStallMidStream)
	case c.hold:
		_ = http.NewResponseController(c.w).Flush()
		_ = c.hang(faultHoldAfterDone)
	}
	return g, nil
}

// usage is a generation's usage as the engine reports it: without cached
// tokens when posing as Ollama, which reports none.
func (s *Server) usage(g generation) *usage {
	u := g.usage()
	if s.cfg.Kind == KindOllama {
		u.PromptTokensDetails = nil
	}
	return u
}
