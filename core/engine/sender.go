package engine

import (
	"github.com/lmbench/lmbench/core/internal/jsonenc"

	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// DefaultAPIKey is sent when Config.APIKey is empty, as the original does
// when OPENAI_API_KEY is unset.
const DefaultAPIKey = "sk-dummy"

// errorBodyLimit is how much of a non-2xx response body goes into Error.
const errorBodyLimit = 512

// Config configures a Sender.
type Config struct {
	BaseURL string // as typed by the user; normalised with NormalizeURL
	Model   string
	// APIKey is sent as "Authorization: Bearer <key>"; "" sends
	// DefaultAPIKey. It is never logged and never appears in error text.
	APIKey string
	// Transport replaces the default transport (tests, tracing wrappers).
	// The default is one *http.Transport per Sender tuned for many
	// long-lived streaming requests to one host.
	Transport http.RoundTripper
	// Now is the clock for all timestamps; nil means time.Now.
	Now func() time.Time
	// Timeouts limit every request (DefaultTimeouts are lmbench run's);
	// the zero value sets none. Connect applies to the default transport
	// only.
	Timeouts Timeouts
	// MaxConnections caps the requests in flight, and with the default
	// transport the connections open, at once; 0 is no cap. A request
	// waits for a free slot before its Submit time, so the wait is
	// dispatch lag, never time to first token. See DefaultMaxConnections.
	MaxConnections int

	dial dialFunc // replaces the TCP dialer (tests)
}

// Sender sends requests to one engine. It is safe for concurrent use; all
// requests share one connection pool.
type Sender struct {
	base     string
	client   *http.Client
	chatReq  *http.Request // templates: URL and shared headers, no context or body
	complReq *http.Request
	header   http.Header // shared by requests without extra headers; never modified
	prefix   []byte      // `{"model":"…",`
	key      string
	now      func() time.Time
	limits   Timeouts
	slots    chan struct{} // one per request in flight; nil = no cap
}

// New checks cfg and builds a Sender.
func New(cfg Config) (*Sender, error) {
	if strings.TrimSpace(cfg.BaseURL) == "" {
		return nil, errors.New("engine: base URL is empty; expected e.g. http://localhost:8000")
	}
	if cfg.Model == "" {
		return nil, errors.New("engine: model is empty; pass one or find it with profile.DetectModel")
	}
	base := NormalizeURL(cfg.BaseURL)
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("engine: base URL %q: %w", base, err)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("engine: base URL %q has no host", base)
	}
	key := cfg.APIKey
	if key == "" {
		key = DefaultAPIKey
	}
	if strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return nil, errors.New("engine: API key contains control characters")
	}
	if err := cfg.Timeouts.validate(); err != nil {
		return nil, err
	}
	if cfg.MaxConnections < 0 {
		return nil, fmt.Errorf("engine: MaxConnections must be >= 0, got %d", cfg.MaxConnections)
	}
	rt := cfg.Transport
	if rt == nil {
		dial := cfg.dial
		if dial == nil {
			dial = (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext
		}
		rt = newTransport(limitDial(dial, cfg.Timeouts.Connect), cfg.Timeouts.Connect, cfg.MaxConnections)
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	s := &Sender{
		base: base,
		client: &http.Client{
			Transport: rt,
			// A redirect would re-send the request; report it instead.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		header: http.Header{
			"Authorization": {"Bearer " + key},
			"Content-Type":  {"application/json"},
			"Accept":        {"text/event-stream"},
		},
		prefix: jsonenc.AppendString([]byte(`{"model":`), cfg.Model),
		key:    key,
		now:    now,
		limits: cfg.Timeouts,
	}
	if cfg.MaxConnections > 0 {
		s.slots = make(chan struct{}, cfg.MaxConnections)
	}
	s.prefix = append(s.prefix, ',')
	if s.chatReq, err = http.NewRequest(http.MethodPost, base+"/chat/completions", nil); err != nil {
		return nil, fmt.Errorf("engine: base URL %q: %w", base, err)
	}
	if s.complReq, err = http.NewRequest(http.MethodPost, base+"/completions", nil); err != nil {
		return nil, fmt.Errorf("engine: base URL %q: %w", base, err)
	}
	return s, nil
}

// newTransport returns the transport for one Sender: a large idle pool to a
// single host (every in-flight request keeps its connection), at most
// maxConns connections (0 = no limit; the Sender's slots already keep
// requests below it, this also counts connections still closing), no
// compression (SSE chunks are tiny and must arrive as sent), HTTP/1.1 only
// (a custom DialContext without ForceAttemptHTTP2 leaves HTTP/2 off: one
// stream per connection, like the original's client), and no
// response-header timeout because a long prefill legitimately delays the
// headers: the first-token limit covers it.
func newTransport(dial dialFunc, connect time.Duration, maxConns int) *http.Transport {
	idle := 4096
	if maxConns > 0 {
		idle = min(idle, maxConns)
	}
	return &http.Transport{
		Proxy:               http.ProxyFromEnvironment, // as the original's httpx client
		DialContext:         dial,
		MaxIdleConns:        0, // no global limit
		MaxIdleConnsPerHost: idle,
		MaxConnsPerHost:     maxConns,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: connect,
		DisableCompression:  true,
		// Only the headers and a body's first bytes pass through this
		// buffer (net/http copies the rest straight to the socket, 32 KiB a
		// write), and every open connection holds one: net/http's 4 KiB.
		WriteBufferSize: 4 << 10,
		ReadBufferSize:  8 << 10,
	}
}

// BaseURL returns the normalised base URL, e.g. "http://localhost:8000/v1".
func (s *Sender) BaseURL() string { return s.base }

// Close closes idle connections. In-flight requests are not affected.
func (s *Sender) Close() { s.client.CloseIdleConnections() }

// Send sends req, reads the whole stream and returns the measured Result.
// It never retries and never panics; ctx cancels the request at any point,
// and so does any of the Sender's time limits. With MaxConnections, Send
// first waits for a free slot: Submit is taken once it has one.
func (s *Sender) Send(ctx context.Context, req Request) (res Result) {
	res.ID = req.ID
	defer func() {
		if p := recover(); p != nil {
			res = failed(res, s.now(), fmt.Sprintf("internal error: %v", p))
		}
	}()
	if ctx == nil {
		ctx = context.Background()
	}
	body, err := appendBody(make([]byte, 0, bodySize(s.prefix, req)), s.prefix, req)
	if err != nil {
		res.Submit = s.now()
		return failed(res, res.Submit, strings.ToValidUTF8(redact("request not sent: "+err.Error(), s.key), "\uFFFD"))
	}
	if s.slots != nil {
		select {
		case s.slots <- struct{}{}:
		case <-ctx.Done():
			res.Submit = s.now()
			return failed(res, res.Submit, s.errorText(ctx, ""))
		}
		defer func() { <-s.slots }() // after the body is closed: the slot stands for its connection
	}
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	hreq := s.newHTTPRequest(rctx, req, body)

	res.Submit = s.now()
	w := newWatch(s.limits, cancel)
	defer w.stop()
	resp, err := s.client.Do(hreq)
	if err != nil {
		var cte *connectTimeoutError
		if errors.As(err, &cte) && rctx.Err() == nil {
			return failed(res, s.now(), cte.Error())
		}
		return failed(res, s.now(), s.errorText(rctx, err.Error()))
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return failed(res, s.now(), s.errorText(rctx, statusError(resp)))
	}

	st := getStream(resp.Body, req.Completion, s.now)
	defer putStream(st)
	st.logprobsK = req.TopLogprobs
	st.submit = res.Submit
	st.watch = w
	if err := st.run(); err != nil {
		return failed(res, s.now(), s.clean(s.streamError(rctx, st, resp, err)))
	}
	st.fill(&res)
	// The request is over: the rest of the body only decides whether the
	// connection can be reused, and may not hold the request up.
	if !st.src.eof {
		w.afterDone()
		st.drain()
	}
	return res
}

// streamError explains why a stream failed: the limit that cut it, or
// what the response was when it was no event stream at all.
func (s *Sender) streamError(rctx context.Context, st *stream, resp *http.Response, err error) string {
	cause := context.Cause(rctx)
	var te *timeoutError
	switch {
	case errors.As(cause, &te) && te.limit == "idle":
		return fmt.Sprintf("no data for %v after %d chunks with content (--idle-timeout)", te.value, st.chunks)
	case rctx.Err() != nil:
		return cause.Error()
	case st.dataLines > 0:
		return err.Error()
	}
	ctype := resp.Header.Get("Content-Type")
	head := bytes.TrimSpace(st.head)
	if msg, ok := jsonError(head); ok {
		return fmt.Sprintf("HTTP %d with an error instead of an event stream: %s", resp.StatusCode, msg)
	}
	msg := err.Error()
	if !strings.HasPrefix(ctype, "text/event-stream") {
		msg += fmt.Sprintf(" (response Content-Type is %q, not text/event-stream)", ctype)
	}
	if len(head) > 0 {
		msg += fmt.Sprintf("; the body starts %q", excerpt(head, 200))
	}
	return msg
}

// jsonError returns the message of a JSON error body, as engines and
// proxies write them: {"error":{"message":…}}, {"error":"…"} or
// {"message":…} (vLLM's {"object":"error","message":…}).
func jsonError(body []byte) (string, bool) {
	var obj struct {
		Message json.RawMessage `json:"message"`
		Error   json.RawMessage `json:"error"`
	}
	if len(body) == 0 || body[0] != '{' || json.Unmarshal(body, &obj) != nil {
		return "", false
	}
	switch {
	case len(obj.Error) > 0 && !isNull(obj.Error):
		return errorMessage(obj.Error), true
	case len(obj.Message) > 0 && !isNull(obj.Message):
		return errorMessage(obj.Message), true
	}
	return "", false
}

// fill completes res from a stream that ended with [DONE]. Everything it
// keeps is copied out of the pooled stream.
func (st *stream) fill(res *Result) {
	res.Finish = st.finish
	res.InputTokens = st.inputTokens
	res.CachedTokens = st.cachedTokens
	res.OutputTokens = st.outputTokens
	res.UsageOutputTokens = st.outputTokens
	res.FinishReason = finishReasonString(st.finishReason)
	res.ResponseID = string(st.responseID)
	if string(st.responseModel) != st.lastModel { // the same model, request after request
		st.lastModel = string(st.responseModel)
	}
	res.ResponseModel = st.lastModel
	if st.chunks == 0 {
		res.Error = "stream ended without content"
		return
	}
	if res.OutputTokens <= 0 {
		res.OutputTokens = st.chunks
	}
	res.Success = true
	res.Text = string(st.text)
	res.ToolCalls = st.toolCalls()
	res.Logprobs = st.logprobs // not pooled: a new slice per request
	res.Chunks = st.chunks
	if len(st.times) > 0 {
		res.ChunkTimes = slices.Clone(st.times) // one allocation per request
	}
	res.FirstToken = st.first
	res.LastToken = st.last
	if st.chunks > 1 {
		res.ITL = st.last.Sub(st.first) / time.Duration(st.chunks-1)
	}
}

// finishReasonString returns b as a string, without allocating for the reasons
// OpenAI defines.
func finishReasonString(b []byte) string {
	switch string(b) {
	case "":
		return ""
	case "stop":
		return "stop"
	case "length":
		return "length"
	case "tool_calls":
		return "tool_calls"
	case "content_filter":
		return "content_filter"
	}
	return string(b)
}

// newHTTPRequest builds the HTTP request from the endpoint's template; the
// URL and, without extra headers, the header map are shared read-only.
func (s *Sender) newHTTPRequest(ctx context.Context, req Request, body []byte) *http.Request {
	tmpl := s.chatReq
	if req.Completion {
		tmpl = s.complReq
	}
	h := tmpl.WithContext(ctx)
	h.Header = s.header
	if len(req.Header) > 0 {
		h.Header = s.header.Clone()
		for k, v := range req.Header {
			h.Header[k] = v
		}
	}
	h.ContentLength = int64(len(body))
	h.Body = &bodyReader{Reader: bytes.NewReader(body)}
	// GetBody lets the transport re-send a request it could not write at
	// all on a stale keep-alive connection; nothing reached the engine then.
	h.GetBody = func() (io.ReadCloser, error) { return &bodyReader{Reader: bytes.NewReader(body)}, nil }
	return h
}

type bodyReader struct{ *bytes.Reader }

func (*bodyReader) Close() error { return nil }

// failed turns res into a failure: the original reports no tokens, no
// first token and no text for a request that raised.
func failed(res Result, finish time.Time, msg string) Result {
	return Result{ID: res.ID, Submit: res.Submit, Finish: finish, Error: msg}
}

// errorText prefers the context's cause when the context ended, and makes
// sure the API key never leaves in an error.
func (s *Sender) errorText(ctx context.Context, msg string) string {
	if ctx.Err() != nil {
		msg = context.Cause(ctx).Error()
	}
	return s.clean(msg)
}

// clean makes sure the API key never leaves in an error, and that the
// error is valid UTF-8.
func (s *Sender) clean(msg string) string {
	if msg == "" {
		msg = "unknown error"
	}
	return strings.ToValidUTF8(redact(msg, s.key), "\uFFFD")
}

func redact(msg, key string) string {
	if key == "" || !strings.Contains(msg, key) {
		return msg
	}
	return strings.ReplaceAll(msg, key, "[REDACTED]")
}

// statusError formats a non-2xx response as "HTTP <code>: <body excerpt>".
func statusError(resp *http.Response) string {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyLimit))
	msg := strings.TrimSpace(string(b))
	if msg == "" {
		return fmt.Sprintf("HTTP %d", resp.StatusCode)
	}
	return fmt.Sprintf("HTTP %d: %s", resp.StatusCode, msg)
}
