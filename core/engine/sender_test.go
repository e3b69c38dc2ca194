package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// --- test engine helpers ---

func chatChunk(content string) string {
	c, _ := json.Marshal(content)
	return fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":%s},"logprobs":null,"finish_reason":null}],"usage":null}`, c)
}

func textChunk(text string) string {
	c, _ := json.Marshal(text)
	return fmt.Sprintf(`{"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[{"index":0,"text":%s,"logprobs":null,"finish_reason":null}],"usage":null}`, c)
}

func usageChunk(in, out int) string {
	return fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":%d,"total_tokens":%d,"completion_tokens":%d}}`, in, in+out, out)
}

const done = "[DONE]"

// sseHandler streams each payload as one "data: " event, flushing after
// each, then ends the response.
func sseHandler(payloads ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, p := range payloads {
			fmt.Fprintf(w, "data: %s\n\n", p)
			w.(http.Flusher).Flush()
		}
	}
}

// rawHandler writes body verbatim as an event stream.
func rawHandler(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}
}

func newServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func newSender(t *testing.T, baseURL string, edit ...func(*Config)) *Sender {
	t.Helper()
	cfg := Config{BaseURL: baseURL, Model: "test-model"}
	for _, e := range edit {
		e(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

func chatRequest(id string) Request {
	return Request{ID: id, Messages: []Message{{Role: "user", Content: "Say hello"}}, MaxTokens: 16}
}

// stepClock advances by step on every reading, so timestamps are exact.
type stepClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}

// checkFailed asserts the shape every failed Result has.
func checkFailed(t *testing.T, res Result, wantSub string) {
	t.Helper()
	if res.Success {
		t.Fatalf("Success = true, want a failure containing %q", wantSub)
	}
	if res.Error == "" || !strings.Contains(res.Error, wantSub) {
		t.Errorf("Error = %q, want it to contain %q", res.Error, wantSub)
	}
	if got := res.TTFT(); got != -1.0 {
		t.Errorf("TTFT() = %v, want -1", got)
	}
	if res.Finish.Before(res.Submit) || res.Submit.IsZero() {
		t.Errorf("Submit %v, Finish %v: want 0 < Submit <= Finish", res.Submit, res.Finish)
	}
	if res.Latency() < 0 {
		t.Errorf("Latency() = %v, want >= 0", res.Latency())
	}
	if res.Chunks != 0 || res.ChunkTimes != nil {
		t.Errorf("Chunks %d, ChunkTimes %v; want none", res.Chunks, res.ChunkTimes)
	}
}

// --- success ---

func TestSendSuccess(t *testing.T) {
	t.Parallel()
	srv := newServer(t, sseHandler(chatChunk("Hello"), chatChunk(" world"), usageChunk(500, 20), done))
	res := newSender(t, srv.URL).Send(context.Background(), chatRequest("r0"))

	if !res.Success || res.Error != "" {
		t.Fatalf("Success = %v, Error = %q; want success", res.Success, res.Error)
	}
	if res.ID != "r0" || res.Text != "Hello world" {
		t.Errorf("ID, Text = %q, %q; want r0, %q", res.ID, res.Text, "Hello world")
	}
	if !(res.Submit.Before(res.FirstToken) && res.FirstToken.Before(res.Finish)) {
		t.Errorf("want Submit < FirstToken < Finish, got %v, %v, %v", res.Submit, res.FirstToken, res.Finish)
	}
	if res.LastToken.Before(res.FirstToken) || res.LastToken.After(res.Finish) {
		t.Errorf("want FirstToken <= LastToken <= Finish, got %v, %v, %v", res.FirstToken, res.LastToken, res.Finish)
	}
	if res.TTFT() <= 0 || res.Latency() <= 0 || res.DecodeSpeed() <= 0 {
		t.Errorf("TTFT, Latency, DecodeSpeed = %v, %v, %v; want all > 0", res.TTFT(), res.Latency(), res.DecodeSpeed())
	}
	if res.Latency() < res.TTFT() {
		t.Errorf("Latency %v < TTFT %v", res.Latency(), res.TTFT())
	}
	if res.InputTokens != 500 || res.OutputTokens != 20 || res.Chunks != 2 {
		t.Errorf("InputTokens, OutputTokens, Chunks = %d, %d, %d; want 500, 20, 2", res.InputTokens, res.OutputTokens, res.Chunks)
	}
}

// TestSendTimestamps pins down when each timestamp is taken: Submit before
// the call, one clock reading per data line, FirstToken/LastToken at the
// first/last content line, Finish at [DONE] (not after draining).
func TestSendTimestamps(t *testing.T) {
	t.Parallel()
	srv := newServer(t, sseHandler(chatChunk("a"), chatChunk("b"), chatChunk("c"), usageChunk(500, 20), done))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := &stepClock{t: t0, step: 10 * time.Millisecond}
	res := newSender(t, srv.URL, func(c *Config) { c.Now = clock.Now }).Send(context.Background(), chatRequest("r"))
	if !res.Success {
		t.Fatalf("failed: %s", res.Error)
	}
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * 10 * time.Millisecond) }
	type times struct{ Submit, First, Last, Finish time.Time }
	want := times{ms(1), ms(2), ms(4), ms(6)}
	got := times{res.Submit, res.FirstToken, res.LastToken, res.Finish}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("timestamps (-want +got):\n%s", diff)
	}
	if res.ITL != 10*time.Millisecond {
		t.Errorf("ITL = %v, want 10ms", res.ITL)
	}
	// One offset per content chunk: the first is the TTFT, the last LastToken.
	if diff := cmp.Diff([]time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond}, res.ChunkTimes); diff != "" {
		t.Errorf("ChunkTimes (-want +got):\n%s", diff)
	}
	approx := func(name string, got, want float64) {
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	approx("TTFT", res.TTFT(), 0.010)
	approx("Latency", res.Latency(), 0.050)
	approx("DecodeSpeed", res.DecodeSpeed(), 20/0.040)
}

func TestSendITLFromChunkGaps(t *testing.T) {
	t.Parallel()
	const gap = 20 * time.Millisecond
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 4 {
			if i > 0 {
				time.Sleep(gap)
			}
			fmt.Fprintf(w, "data: %s\n\n", chatChunk("t"))
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	res := newSender(t, srv.URL).Send(context.Background(), chatRequest("r"))
	if !res.Success {
		t.Fatalf("failed: %s", res.Error)
	}
	if res.Chunks != 4 || res.OutputTokens != 4 {
		t.Errorf("Chunks, OutputTokens = %d, %d; want 4, 4 (no usage: chunk count)", res.Chunks, res.OutputTokens)
	}
	if res.ITL < gap*3/4 || res.ITL > 10*gap {
		t.Errorf("ITL = %v, want about %v", res.ITL, gap)
	}
	if want := res.LastToken.Sub(res.FirstToken) / 3; res.ITL != want {
		t.Errorf("ITL = %v, want (LastToken-FirstToken)/3 = %v", res.ITL, want)
	}
}

func TestSendSingleChunkHasNoITL(t *testing.T) {
	t.Parallel()
	srv := newServer(t, sseHandler(chatChunk("x"), usageChunk(3, 1), done))
	res := newSender(t, srv.URL).Send(context.Background(), chatRequest("r"))
	if !res.Success || res.ITL != 0 || res.Chunks != 1 {
		t.Errorf("Success, ITL, Chunks = %v, %v, %d; want true, 0, 1", res.Success, res.ITL, res.Chunks)
	}
}

func TestSendUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                string
		usage               string
		wantIn, wantOut     int
		wantCached, wantCnt int
		wantUsageOut        int
	}{
		{"prompt and completion tokens", `{"choices":[],"usage":{"prompt_tokens":500,"completion_tokens":20}}`, 500, 20, 0, 2, 20},
		{"cached tokens", `{"choices":[],"usage":{"prompt_tokens":500,"completion_tokens":20,"prompt_tokens_details":{"cached_tokens":448}}}`, 500, 20, 448, 2, 20},
		{"no usage: chunk count", `{"choices":[]}`, 0, 2, 0, 2, 0},
		{"zero completion tokens: chunk count", `{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":0}}`, 9, 2, 0, 2, 0},
		{"counts written as floats", `{"choices":[],"usage":{"prompt_tokens":500.0,"completion_tokens":3.0,"prompt_tokens_details":{"cached_tokens":448.0}}}`, 500, 3, 448, 2, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, sseHandler(chatChunk("a"), chatChunk("b"), tt.usage, done))
			res := newSender(t, srv.URL).Send(context.Background(), chatRequest("r"))
			if !res.Success {
				t.Fatalf("failed: %s", res.Error)
			}
			got := []int{res.InputTokens, res.OutputTokens, res.CachedTokens, res.Chunks, res.UsageOutputTokens}
			if diff := cmp.Diff([]int{tt.wantIn, tt.wantOut, tt.wantCached, tt.wantCnt, tt.wantUsageOut}, got); diff != "" {
				t.Errorf("[in out cached chunks usage-out] (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSendSSEFraming(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, want string
	}{
		{"data without space", "data:" + chatChunk("a") + "\n\ndata:[DONE]\n\n", "a"},
		{"CRLF line endings", "data: " + chatChunk("a") + "\r\n\r\ndata: [DONE]\r\n\r\n", "a"},
		{"comments and other fields", ": keep-alive\n\nevent: message\nid: 1\nretry: 100\ndata: " + chatChunk("a") + "\n\n: ping\ndata: [DONE]\n\n", "a"},
		{"empty data lines", "data:\n\ndata: \n\ndata: " + chatChunk("a") + "\n\ndata: [DONE]\n\n", "a"},
		{"no blank line between events", "data: " + chatChunk("a") + "\ndata: " + chatChunk("b") + "\ndata: [DONE]\n", "ab"},
		{"[DONE] without newline", "data: " + chatChunk("a") + "\n\ndata: [DONE]", "a"},
		{"empty content chunks ignored", "data: " + chatChunk("") + "\n\ndata: " + chatChunk("a") + "\n\ndata: " + chatChunk("") + "\n\ndata: [DONE]\n\n", "a"},
		{"escapes and unicode", "data: " + chatChunk("line\n\"q\" é 🎉") + "\n\ndata: [DONE]\n\n", "line\n\"q\" é 🎉"},
		{"reasoning fallback", "data: " + `{"choices":[{"delta":{"content":null,"reasoning_content":"hmm"}}]}` + "\n\ndata: " + chatChunk("!") + "\n\ndata: [DONE]\n\n", "hmm!"},
		{"event type ends with its event", "event: error\n\ndata: " + chatChunk("a") + "\n\ndata: [DONE]\n\n", "a"},
		{"after [DONE] is ignored", "data: " + chatChunk("a") + "\n\ndata: [DONE]\n\ndata: {bad json\n\n", "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, rawHandler(tt.body))
			res := newSender(t, srv.URL).Send(context.Background(), chatRequest("r"))
			if !res.Success {
				t.Fatalf("failed: %s", res.Error)
			}
			if res.Text != tt.want {
				t.Errorf("Text = %q, want %q", res.Text, tt.want)
			}
		})
	}
}

func TestSendLargeLines(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB, far beyond the read buffer
	srv := newServer(t, sseHandler(chatChunk("x"), chatChunk(big), chatChunk("y"), done))
	res := newSender(t, srv.URL).Send(context.Background(), chatRequest("r"))
	if !res.Success {
		t.Fatalf("failed: %s", res.Error)
	}
	if res.Text != "x"+big+"y" || res.Chunks != 3 {
		t.Errorf("len(Text), Chunks = %d, %d; want %d, 3", len(res.Text), res.Chunks, len(big)+2)
	}
}

// --- request ---

func TestSendRequestBodyAndHeaders(t *testing.T) {
	t.Parallel()
	type seen struct {
		Method, Path, Auth, ContentType, Accept, Traceparent string
		Body                                                 map[string]any
		Keys                                                 []string
	}
	got := make(chan seen, 1)
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		s := seen{
			Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization"),
			ContentType: r.Header.Get("Content-Type"), Accept: r.Header.Get("Accept"),
			Traceparent: r.Header.Get("Traceparent"), Keys: topLevelKeys(t, raw),
		}
		if err := json.Unmarshal(raw, &s.Body); err != nil {
			t.Errorf("request body is not JSON: %v\n%s", err, raw)
		}
		got <- s
		sseHandler(chatChunk("ok"), done)(w, r)
	}))
	req := Request{
		ID:        "r1",
		Messages:  []Message{{Role: "system", Content: "You are helpful."}, {Role: "user", Content: "Document 0: hi hi\n\nQuestion 0: \"why\"?"}},
		MaxTokens: 128,
		Header:    http.Header{"Traceparent": {"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}},
	}
	res := newSender(t, srv.URL+"/", func(c *Config) { c.APIKey = "sk-test" }).Send(context.Background(), req)
	if !res.Success {
		t.Fatalf("failed: %s", res.Error)
	}
	want := seen{
		Method: "POST", Path: "/v1/chat/completions", Auth: "Bearer sk-test",
		ContentType: "application/json", Accept: "text/event-stream",
		Traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		Body: map[string]any{
			"model": "test-model",
			"messages": []any{
				map[string]any{"role": "system", "content": "You are helpful."},
				map[string]any{"role": "user", "content": "Document 0: hi hi\n\nQuestion 0: \"why\"?"},
			},
			"stream":         true,
			"max_tokens":     128.0,
			"temperature":    0.0,
			"stream_options": map[string]any{"include_usage": true},
		},
		Keys: []string{"model", "messages", "stream", "max_tokens", "temperature", "stream_options"},
	}
	if diff := cmp.Diff(want, <-got); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
}

// topLevelKeys returns the keys of a JSON object in their order.
func topLevelKeys(t *testing.T, raw []byte) []string {
	t.Helper()
	var keys []string
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if _, err := dec.Token(); err != nil {
		t.Errorf("body: %v", err)
		return nil
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Errorf("body: %v", err)
			return keys
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Errorf("body: %v", err)
			return keys
		}
	}
	return keys
}

func TestSendCompletionsMode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		req        Request
		wantPrompt string
	}{
		{"prompt", Request{ID: "c", Prompt: "Once upon a time", Completion: true, MaxTokens: 8}, "Once upon a time"},
		{"first message when no prompt", Request{ID: "c", Messages: []Message{{Role: "system", Content: "sys"}, {Role: "user", Content: "u"}}, Completion: true, MaxTokens: 8}, "sys"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			type seen struct {
				Path string
				Body map[string]any
			}
			got := make(chan seen, 1)
			srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				s := seen{Path: r.URL.Path}
				if err := json.NewDecoder(r.Body).Decode(&s.Body); err != nil {
					t.Errorf("body: %v", err)
				}
				got <- s
				sseHandler(textChunk("Hello"), textChunk(" there"), usageChunk(50, 2), done)(w, r)
			}))
			res := newSender(t, srv.URL).Send(context.Background(), tt.req)
			if !res.Success {
				t.Fatalf("failed: %s", res.Error)
			}
			want := seen{Path: "/v1/completions", Body: map[string]any{
				"model": "test-model", "prompt": tt.wantPrompt, "stream": true, "max_tokens": 8.0,
				"temperature": 0.0, "stream_options": map[string]any{"include_usage": true},
			}}
			if diff := cmp.Diff(want, <-got); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
			if res.Text != "Hello there" || res.InputTokens != 50 || res.OutputTokens != 2 {
				t.Errorf("Text, InputTokens, OutputTokens = %q, %d, %d; want %q, 50, 2", res.Text, res.InputTokens, res.OutputTokens, "Hello there")
			}
		})
	}
}

func TestSendAPIKey(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, key, want string }{
		{"default sk-dummy", "", "Bearer sk-dummy"},
		{"from config", "sk-live-abc", "Bearer sk-live-abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := make(chan string, 1)
			srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got <- r.Header.Get("Authorization")
				sseHandler(chatChunk("x"), done)(w, r)
			}))
			s := newSender(t, srv.URL, func(c *Config) { c.APIKey = tt.key })
			if res := s.Send(context.Background(), chatRequest("r")); !res.Success {
				t.Fatalf("failed: %s", res.Error)
			}
			if g := <-got; g != tt.want {
				t.Errorf("Authorization = %q, want %q", g, tt.want)
			}
		})
	}
}

// TestSendNeverLeaksAPIKey makes the engine echo the key back in every
// failure path that quotes engine output.
func TestSendNeverLeaksAPIKey(t *testing.T) {
	t.Parallel()
	const key = "sk-secret-0123456789"
	echo := func(format string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			auth := r.Header.Get("Authorization")
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, format, auth)
		}
	}
	tests := []struct {
		name    string
		handler http.HandlerFunc
	}{
		{"HTTP 401 body", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"error":"Incorrect API key provided: `+r.Header.Get("Authorization")+`"}`, http.StatusUnauthorized)
		}},
		{"stream error object", echo("data: {\"error\":{\"message\":\"bad key %s\"}}\n\n")},
		{"event: error", echo("event: error\ndata: bad key %s\n\n")},
		{"malformed chunk", echo("data: {not json %s\n\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, tt.handler)
			res := newSender(t, srv.URL, func(c *Config) { c.APIKey = key }).Send(context.Background(), chatRequest("r"))
			if res.Success {
				t.Fatal("Success = true, want a failure")
			}
			if strings.Contains(res.Error, key) {
				t.Errorf("Error leaks the API key: %q", res.Error)
			}
			if !strings.Contains(res.Error, "[REDACTED]") {
				t.Errorf("Error = %q, want the echoed key replaced by [REDACTED]", res.Error)
			}
		})
	}
}

// --- failures ---

func TestSendConnectionRefused(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	res := newSender(t, addr).Send(context.Background(), chatRequest("r"))
	checkFailed(t, res, "refused")
	if res.InputTokens != 0 || res.OutputTokens != 0 || res.Text != "" || !res.FirstToken.IsZero() {
		t.Errorf("InputTokens, OutputTokens, Text, FirstToken = %d, %d, %q, %v; want zero values", res.InputTokens, res.OutputTokens, res.Text, res.FirstToken)
	}
	if res.DecodeSpeed() != 0 {
		t.Errorf("DecodeSpeed() = %v, want 0", res.DecodeSpeed())
	}
}

// hijackHandler writes a chunked event stream by hand and then breaks the
// connection after the given payloads, as a crashing engine would.
func hijackHandler(t *testing.T, reset bool, payloads ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		conn, bw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		defer conn.Close()
		bw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
		for _, p := range payloads {
			ev := "data: " + p + "\n\n"
			fmt.Fprintf(bw, "%x\r\n%s\r\n", len(ev), ev)
		}
		bw.Flush()
		if reset {
			time.Sleep(20 * time.Millisecond) // let the client read the chunks first
			_ = conn.(*net.TCPConn).SetLinger(0)
		}
	}
}

func TestSendMidStreamBreak(t *testing.T) {
	t.Parallel()
	t.Run("connection closed", func(t *testing.T) {
		t.Parallel()
		srv := newServer(t, hijackHandler(t, false, chatChunk("Hello"), chatChunk(" wor")))
		res := newSender(t, srv.URL).Send(context.Background(), chatRequest("r"))
		checkFailed(t, res, "stream ended before [DONE]: unexpected EOF after 2 data lines (2 with content)")
		if res.Text != "" || !res.FirstToken.IsZero() || res.OutputTokens != 0 || res.Chunks != 0 {
			t.Errorf("Text, FirstToken, OutputTokens, Chunks = %q, %v, %d, %d; want zero values", res.Text, res.FirstToken, res.OutputTokens, res.Chunks)
		}
		if res.ResponseID != "" || res.ResponseModel != "" || res.FinishReason != "" {
			t.Errorf("ResponseID, ResponseModel, FinishReason = %q, %q, %q; want none for a failure", res.ResponseID, res.ResponseModel, res.FinishReason)
		}
	})
	t.Run("connection reset", func(t *testing.T) {
		t.Parallel()
		srv := newServer(t, hijackHandler(t, true, chatChunk("Hello"), chatChunk(" wor")))
		res := newSender(t, srv.URL).Send(context.Background(), chatRequest("r"))
		checkFailed(t, res, "")
	})
	t.Run("clean end without [DONE]", func(t *testing.T) {
		t.Parallel()
		srv := newServer(t, sseHandler(chatChunk("Hello"), usageChunk(5, 1)))
		res := newSender(t, srv.URL).Send(context.Background(), chatRequest("r"))
		checkFailed(t, res, "stream ended before [DONE]: EOF after 2 data lines (1 with content)")
	})
}

func TestSendStreamFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		handler http.HandlerFunc
		wantErr string
	}{
		{"usage-only stream", sseHandler(usageChunk(500, 0), done), "stream ended without content"},
		{"empty stream", sseHandler(done), "stream ended without content"},
		{"malformed JSON", sseHandler(chatChunk("a"), `{"choices": [oops`, done), `malformed chunk "{\"choices\": [oops"`},
		{"error object mid-stream", sseHandler(chatChunk("a"), `{"error":{"object":"error","message":"KV cache exhausted","type":"InternalServerError","code":500}}`, done), "stream error: KV cache exhausted"},
		{"event: error", rawHandler("data: " + chatChunk("a") + "\n\nevent: error\ndata: {\"message\":\"engine died\"}\n\n"), "stream error: engine died"},
		{"HTTP 500", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "  boom: "+strings.Repeat("x", 1000), http.StatusInternalServerError)
		}, "HTTP 500: boom: " + strings.Repeat("x", 512-len("  boom: "))},
		{"HTTP 400 JSON body", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"object":"error","message":"max_tokens is too large","code":400}`)
		}, `HTTP 400: {"object":"error","message":"max_tokens is too large","code":400}`},
		{"HTTP 503 empty body", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }, "HTTP 503"},
		{"redirect not followed", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
		}, "HTTP 307"},
		{"not an event stream", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"choices":[{"message":{"content":"hi"}}]}`)
		}, `stream ended before [DONE]: EOF after 0 data lines (0 with content) (response Content-Type is "application/json", not text/event-stream)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, tt.handler)
			res := newSender(t, srv.URL).Send(context.Background(), chatRequest("r"))
			checkFailed(t, res, tt.wantErr)
		})
	}
}

func TestSendHTTPErrorIsExact(t *testing.T) {
	t.Parallel()
	body := "  internal error: " + strings.Repeat("y", 1000)
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, body)
	}))
	res := newSender(t, srv.URL).Send(context.Background(), chatRequest("r"))
	if want := "HTTP 500: " + strings.TrimSpace(body[:512]); res.Error != want {
		t.Errorf("Error = %q, want %q", res.Error, want)
	}
}

// TestSendUsageOnlyKeepsUsage: a stream that ended properly without content
// is not an exception in the original, so its usage still counts (spec Q7).
func TestSendUsageOnlyKeepsUsage(t *testing.T) {
	t.Parallel()
	srv := newServer(t, sseHandler(usageChunk(500, 0), done))
	res := newSender(t, srv.URL).Send(context.Background(), chatRequest("r"))
	checkFailed(t, res, "stream ended without content")
	if res.InputTokens != 500 || res.OutputTokens != 0 || res.DecodeSpeed() != 0 {
		t.Errorf("InputTokens, OutputTokens, DecodeSpeed = %d, %d, %v; want 500, 0, 0", res.InputTokens, res.OutputTokens, res.DecodeSpeed())
	}
	// What the engine said is kept too: it tells why there was no answer.
	if res.ResponseID != "chatcmpl-1" || res.ResponseModel != "m" || res.UsageOutputTokens != 0 {
		t.Errorf("ResponseID, ResponseModel, UsageOutputTokens = %q, %q, %d; want chatcmpl-1, m, 0", res.ResponseID, res.ResponseModel, res.UsageOutputTokens)
	}
}

// TestSendAnswerInfo: the finish reason, the response id and the model
// the engine answered with, as vLLM streams them.
func TestSendAnswerInfo(t *testing.T) {
	t.Parallel()
	finish := `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"!"},"logprobs":null,"finish_reason":"length","stop_reason":null}]}`
	srv := newServer(t, sseHandler(chatChunk("Hi"), finish, usageChunk(5, 2), done))
	res := newSender(t, srv.URL).Send(context.Background(), chatRequest("r"))
	if !res.Success {
		t.Fatalf("failed: %s", res.Error)
	}
	type info struct {
		FinishReason, ResponseID, ResponseModel, Text string
		Chunks, UsageOutputTokens, ChunkTimes         int
	}
	want := info{"length", "chatcmpl-1", "m", "Hi!", 2, 2, 2}
	got := info{res.FinishReason, res.ResponseID, res.ResponseModel, res.Text, res.Chunks, res.UsageOutputTokens, len(res.ChunkTimes)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestSendChunkTimesCapped: an answer longer than MaxChunkTimes chunks
// keeps the first MaxChunkTimes offsets, in order, and counts every chunk.
func TestSendChunkTimesCapped(t *testing.T) {
	t.Parallel()
	const n = MaxChunkTimes + 3
	var body strings.Builder
	for range n {
		body.WriteString("data: " + `{"choices":[{"delta":{"content":"t"}}]}` + "\n\n")
	}
	body.WriteString("data: [DONE]\n\n")
	srv := newServer(t, rawHandler(body.String()))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := &stepClock{t: t0, step: time.Microsecond}
	res := newSender(t, srv.URL, func(c *Config) { c.Now = clock.Now }).Send(context.Background(), chatRequest("r"))
	if !res.Success {
		t.Fatalf("failed: %s", res.Error)
	}
	if res.Chunks != n || res.OutputTokens != n || len(res.ChunkTimes) != MaxChunkTimes {
		t.Fatalf("Chunks, OutputTokens, len(ChunkTimes) = %d, %d, %d; want %d, %d, %d", res.Chunks, res.OutputTokens, len(res.ChunkTimes), n, n, MaxChunkTimes)
	}
	for i, d := range res.ChunkTimes {
		if want := time.Duration(i+1) * time.Microsecond; d != want {
			t.Fatalf("ChunkTimes[%d] = %v, want %v", i, d, want)
		}
	}
	if got, want := res.LastToken.Sub(res.Submit), time.Duration(n)*time.Microsecond; got != want {
		t.Errorf("LastToken-Submit = %v, want %v: the chunks past the cap still count", got, want)
	}
}

func TestSendContextCancelled(t *testing.T) {
	t.Parallel()
	t.Run("mid-stream", func(t *testing.T) {
		t.Parallel()
		flushed := make(chan struct{})
		srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body) // lets the server notice the client leaving
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: %s\n\n", chatChunk("first"))
			w.(http.Flusher).Flush()
			close(flushed)
			waitGone(r)
		}))
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-flushed; time.Sleep(10 * time.Millisecond); cancel() }()
		res := newSender(t, srv.URL).Send(ctx, chatRequest("r"))
		checkFailed(t, res, "context canceled")
		if res.Error != "context canceled" {
			t.Errorf("Error = %q, want exactly the context error", res.Error)
		}
	})
	t.Run("before the call, with a cause", func(t *testing.T) {
		t.Parallel()
		srv := newServer(t, sseHandler(chatChunk("x"), done))
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(errors.New("run interrupted"))
		res := newSender(t, srv.URL).Send(ctx, chatRequest("r"))
		checkFailed(t, res, "run interrupted")
	})
	t.Run("deadline during prefill", func(t *testing.T) {
		t.Parallel()
		srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			waitGone(r)
		}))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		res := newSender(t, srv.URL).Send(ctx, chatRequest("r"))
		checkFailed(t, res, "context deadline exceeded")
	})
}

// waitGone blocks until the client has gone (the handler must have read
// the body for the server to notice) or 10 s passed, so a broken client
// cannot hang srv.Close.
func waitGone(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

// --- connections ---

func TestSendReusesConnections(t *testing.T) {
	t.Parallel()
	var opened atomic.Int32
	srv := httptest.NewUnstartedServer(sseHandler(chatChunk("a"), chatChunk("b"), usageChunk(3, 2), done))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	s := newSender(t, srv.URL)
	for i := range 10 {
		if res := s.Send(context.Background(), chatRequest(fmt.Sprint(i))); !res.Success {
			t.Fatalf("request %d failed: %s", i, res.Error)
		}
	}
	if n := opened.Load(); n != 1 {
		t.Errorf("10 sequential requests opened %d connections, want 1", n)
	}
}

func TestCloseClosesIdleConnections(t *testing.T) {
	t.Parallel()
	closed := make(chan struct{}, 1)
	srv := httptest.NewUnstartedServer(sseHandler(chatChunk("a"), done))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			closed <- struct{}{}
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	s := newSender(t, srv.URL)
	if res := s.Send(context.Background(), chatRequest("r")); !res.Success {
		t.Fatalf("failed: %s", res.Error)
	}
	s.Close()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Error("the idle connection was not closed after Close")
	}
}

// TestSendConcurrent runs many requests through one Sender, some with extra
// headers, to check under -race that the shared header map is never
// written and headers do not leak between requests.
func TestSendConcurrent(t *testing.T) {
	t.Parallel()
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		id := body.Messages[0].Content
		if tp := r.Header.Get("Traceparent"); tp != "" && tp != "tp-"+id {
			t.Errorf("request %s got traceparent %q", id, tp)
		}
		sseHandler(chatChunk(id), chatChunk("|"+r.Header.Get("Traceparent")), done)(w, r)
	}))
	s := newSender(t, srv.URL)
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprint(i)
			req := Request{ID: id, Messages: []Message{{Role: "user", Content: id}}, MaxTokens: 4}
			want := id + "|"
			if i%2 == 0 {
				req.Header = http.Header{"Traceparent": {"tp-" + id}}
				want += "tp-" + id
			}
			res := s.Send(context.Background(), req)
			if !res.Success || res.Text != want || res.ID != id {
				t.Errorf("request %s: Success %v, Text %q, ID %q, Error %q; want Text %q", id, res.Success, res.Text, res.ID, res.Error, want)
			}
		}()
	}
	wg.Wait()
}

// --- construction and Result ---

func TestNew(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     Config
		wantURL string
		wantErr string
	}{
		{"normalises the URL", Config{BaseURL: "localhost:8000/", Model: "m"}, "http://localhost:8000/v1", ""},
		{"empty URL", Config{Model: "m"}, "", "base URL is empty"},
		{"empty model", Config{BaseURL: "h:1"}, "", "model is empty"},
		{"no host", Config{BaseURL: "http:///v1", Model: "m"}, "", "has no host"},
		{"bad key", Config{BaseURL: "h:1", Model: "m", APIKey: "sk-\nx"}, "", "API key contains control characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := New(tt.cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New error = %v, want it to contain %q", err, tt.wantErr)
				}
				if tt.cfg.APIKey != "" && strings.Contains(err.Error(), tt.cfg.APIKey) {
					t.Errorf("error leaks the API key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			defer s.Close()
			if s.BaseURL() != tt.wantURL {
				t.Errorf("BaseURL() = %q, want %q", s.BaseURL(), tt.wantURL)
			}
		})
	}
}

func TestResultMetrics(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tests := []struct {
		name                         string
		r                            Result
		wantTTFT, wantLat, wantSpeed float64
	}{
		{"success", Result{Success: true, Submit: at(0), FirstToken: at(300), Finish: at(2300), OutputTokens: 96}, 0.3, 2.3, 48},
		{"failure keeps latency and error", Result{Error: "boom", Submit: at(0), Finish: at(50)}, -1, 0.05, 0},
		{"no time after first token", Result{Success: true, Submit: at(0), FirstToken: at(10), Finish: at(10), OutputTokens: 1}, 0.01, 0.01, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := []float64{tt.r.TTFT(), tt.r.Latency(), tt.r.DecodeSpeed()}
			want := []float64{tt.wantTTFT, tt.wantLat, tt.wantSpeed}
			if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-9 })); diff != "" {
				t.Errorf("[TTFT Latency DecodeSpeed] (-want +got):\n%s", diff)
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestSendUsesConfiguredTransport(t *testing.T) {
	t.Parallel()
	srv := newServer(t, sseHandler(chatChunk("x"), done))
	var calls atomic.Int32
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		calls.Add(1)
		return srv.Client().Transport.RoundTrip(r)
	})
	res := newSender(t, srv.URL, func(c *Config) { c.Transport = rt }).Send(context.Background(), chatRequest("r"))
	if !res.Success || calls.Load() != 1 {
		t.Errorf("Success %v (%q), transport calls %d; want true, 1", res.Success, res.Error, calls.Load())
	}
}

func TestSendNeverPanics(t *testing.T) {
	t.Parallel()
	rt := roundTripFunc(func(*http.Request) (*http.Response, error) { panic("transport bug") })
	res := newSender(t, "localhost:1", func(c *Config) { c.Transport = rt }).Send(context.Background(), chatRequest("r"))
	checkFailed(t, res, "internal error: transport bug")
	if res.ID != "r" {
		t.Errorf("ID = %q, want r", res.ID)
	}
}
