package engine

import (
	"context"
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

// bound is how long a request cut by a short limit may take at most: far
// above the limits below, so a slow machine passes, and far below "hangs".
const bound = 10 * time.Second

// sendBounded sends req and fails the test if Send does not return within
// bound.
func sendBounded(t *testing.T, s *Sender, req Request) Result {
	t.Helper()
	done := make(chan Result, 1)
	go func() { done <- s.Send(context.Background(), req) }()
	select {
	case res := <-done:
		return res
	case <-time.After(bound):
		t.Fatalf("Send did not return within %v", bound)
	}
	return Result{}
}

// stallAfter writes the head of a response (headers, then each payload as
// an event, flushed) and then sends nothing until the client goes.
func stallAfter(payloads ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, p := range payloads {
			fmt.Fprintf(w, "data: %s\n\n", p)
		}
		w.(http.Flusher).Flush()
		waitGone(r)
	}
}

func limits(edit func(*Timeouts)) func(*Config) {
	return func(c *Config) { edit(&c.Timeouts) }
}

func TestSendTimeouts(t *testing.T) {
	t.Parallel()
	roleChunk := `{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`
	tests := []struct {
		name    string
		handler http.HandlerFunc
		limits  Timeouts
		want    string
	}{
		{"no headers", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			waitGone(r)
		}, Timeouts{FirstToken: 100 * time.Millisecond, Idle: time.Hour},
			"no first token within 100ms (--first-token-timeout)"},
		{"headers, then nothing", stallAfter(), Timeouts{FirstToken: 100 * time.Millisecond, Idle: time.Hour},
			"no first token within 100ms (--first-token-timeout)"},
		// Data without output is still waiting for the first token.
		{"a role chunk, then nothing", stallAfter(roleChunk), Timeouts{FirstToken: 100 * time.Millisecond, Idle: time.Millisecond},
			"no first token within 100ms (--first-token-timeout)"},
		{"output, then nothing", stallAfter(chatChunk("a"), chatChunk("b")), Timeouts{FirstToken: time.Hour, Idle: 100 * time.Millisecond},
			"no data for 100ms after 2 chunks with content (--idle-timeout)"},
		{"output, then nothing, no idle limit", stallAfter(chatChunk("a")), Timeouts{Request: 150 * time.Millisecond},
			"request not finished within 150ms (--request-timeout)"},
		{"the whole request", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			for r.Context().Err() == nil { // never ends, never idle
				fmt.Fprintf(w, "data: %s\n\n", chatChunk("x"))
				w.(http.Flusher).Flush()
				time.Sleep(5 * time.Millisecond)
			}
		}, Timeouts{FirstToken: time.Hour, Idle: time.Hour, Request: 200 * time.Millisecond},
			"request not finished within 200ms (--request-timeout)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var seen atomic.Int32
			srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				seen.Add(1)
				tt.handler(w, r)
			}))
			res := sendBounded(t, newSender(t, srv.URL, limits(func(l *Timeouts) { *l = tt.limits })), chatRequest("r"))
			checkFailed(t, res, tt.want)
			if res.Error != tt.want {
				t.Errorf("Error = %q, want exactly %q", res.Error, tt.want)
			}
			if n := seen.Load(); n != 1 {
				t.Errorf("the engine saw %d requests, want 1: a timed-out request is never retried", n)
			}
		})
	}
}

// The first-token limit covers the prefill only: a slow first token
// within it, and a long answer whose chunks keep coming, both succeed,
// though each takes longer than the idle limit.
func TestSendTimeoutsLetSlowRequestsFinish(t *testing.T) {
	t.Parallel()
	t.Run("slow first token", func(t *testing.T) {
		t.Parallel()
		srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			time.Sleep(300 * time.Millisecond) // longer than the idle limit
			sseHandler(chatChunk("a"), chatChunk("b"), done)(w, r)
		}))
		res := sendBounded(t, newSender(t, srv.URL, limits(func(l *Timeouts) {
			*l = Timeouts{Connect: time.Minute, FirstToken: time.Minute, Idle: 50 * time.Millisecond}
		})), chatRequest("r"))
		if !res.Success || res.Text != "ab" {
			t.Errorf("Success %v, Text %q, Error %q; want ab", res.Success, res.Text, res.Error)
		}
	})
	t.Run("long steady answer", func(t *testing.T) {
		t.Parallel()
		srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			for range 40 {
				fmt.Fprintf(w, "data: %s\n\n", chatChunk("x"))
				w.(http.Flusher).Flush()
				time.Sleep(20 * time.Millisecond)
			}
			fmt.Fprint(w, "data: [DONE]\n\n")
		}))
		res := sendBounded(t, newSender(t, srv.URL, limits(func(l *Timeouts) {
			*l = Timeouts{FirstToken: 500 * time.Millisecond, Idle: 500 * time.Millisecond}
		})), chatRequest("r"))
		if !res.Success || res.Chunks != 40 {
			t.Errorf("Success %v, Chunks %d, Error %q; want 40 chunks", res.Success, res.Chunks, res.Error)
		}
	})
}

func TestSendConnectTimeout(t *testing.T) {
	t.Parallel()
	var dials atomic.Int32
	hang := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		<-ctx.Done() // a SYN nobody answers
		return nil, ctx.Err()
	}
	s := newSender(t, "127.0.0.1:9", func(c *Config) {
		c.dial = hang
		c.Timeouts = Timeouts{Connect: 50 * time.Millisecond, FirstToken: time.Hour}
	})
	res := sendBounded(t, s, chatRequest("r"))
	want := "no connection to 127.0.0.1:9 within 50ms (--connect-timeout)"
	checkFailed(t, res, want)
	if res.Error != want {
		t.Errorf("Error = %q, want exactly %q", res.Error, want)
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("%d dials, want 1", n)
	}
}

// The caller's own cancellation is reported as such, not as a limit.
func TestSendConnectCancelledIsNotATimeout(t *testing.T) {
	t.Parallel()
	s := newSender(t, "127.0.0.1:9", func(c *Config) {
		c.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		c.Timeouts = Timeouts{Connect: time.Hour}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res := s.Send(ctx, chatRequest("r"))
	checkFailed(t, res, "context deadline exceeded")
}

// A request ends at [DONE]: a server (or proxy) that keeps the body open
// afterwards does not hold Send, and the client closes the connection.
func TestSendEndsAtDone(t *testing.T) {
	t.Parallel()
	gone, stop := make(chan struct{}), make(chan struct{})
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\ndata: %s\n\ndata: [DONE]\n\n", chatChunk("hi"), usageChunk(3, 1))
		w.(http.Flusher).Flush()
		select { // held open, as long as the client stays
		case <-r.Context().Done():
			close(gone)
		case <-stop:
		}
	}))
	t.Cleanup(func() { close(stop) }) // before the server closes
	// No limits at all: nothing but [DONE] ends the request.
	res := sendBounded(t, newSender(t, srv.URL), chatRequest("r"))
	if !res.Success || res.Text != "hi" || res.InputTokens != 3 {
		t.Fatalf("Success %v, Text %q, InputTokens %d, Error %q", res.Success, res.Text, res.InputTokens, res.Error)
	}
	select {
	case <-gone:
	case <-time.After(bound):
		t.Error("the client did not close the connection held open after [DONE]")
	}
}

// An engine that ends the body right after [DONE] keeps its connection
// for the next request, with limits set as lmbench sets them.
func TestSendReusesConnectionsWithLimits(t *testing.T) {
	t.Parallel()
	var opened atomic.Int32
	srv := httptest.NewUnstartedServer(sseHandler(chatChunk("a"), usageChunk(3, 1), done))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	s := newSender(t, srv.URL, func(c *Config) { c.Timeouts, c.MaxConnections = DefaultTimeouts(), 4 })
	for i := range 20 {
		if res := s.Send(context.Background(), chatRequest(fmt.Sprint(i))); !res.Success {
			t.Fatalf("request %d failed: %s", i, res.Error)
		}
	}
	if n := opened.Load(); n > 2 {
		t.Errorf("20 sequential requests opened %d connections, want 1 (2 at most, if a body's end came late)", n)
	}
}

func TestSendNotAnEventStream(t *testing.T) {
	t.Parallel()
	body := func(ctype, b string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			if ctype != "" {
				w.Header().Set("Content-Type", ctype)
			}
			io.WriteString(w, b)
		}
	}
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"OpenAI error object", body("application/json", `{"error":{"message":"The model is overloaded","type":"server_error","code":null}}`),
			"HTTP 200 with an error instead of an event stream: The model is overloaded"},
		{"vLLM error", body("application/json", `{"object":"error","message":"max_tokens must be at least 1","type":"BadRequestError","code":400}`),
			"HTTP 200 with an error instead of an event stream: max_tokens must be at least 1"},
		{"error string", body("application/json", `{"error":"quota exceeded"}`),
			"HTTP 200 with an error instead of an event stream: quota exceeded"},
		{"pretty-printed, as an event stream", body("text/event-stream", "{\n  \"error\": {\n    \"message\": \"rate limited\"\n  }\n}\n"),
			"HTTP 200 with an error instead of an event stream: rate limited"},
		{"HTML from a proxy", body("text/html; charset=utf-8", "<html><body>502 Bad Gateway</body></html>"),
			`(response Content-Type is "text/html; charset=utf-8", not text/event-stream); the body starts "<html><body>502 Bad Gateway</body></html>"`},
		{"a whole completion", body("application/json", `{"choices":[{"message":{"content":"hi"}}]}`),
			`(response Content-Type is "application/json", not text/event-stream); the body starts "{\"choices\":[{\"message\":{\"content\":\"hi\"}}]}"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, tt.handler)
			res := sendBounded(t, newSender(t, srv.URL), chatRequest("r"))
			checkFailed(t, res, tt.want)
		})
	}
}

// A request waiting for a connection slot is not submitted yet: its
// Submit comes after the request holding the slot has finished, and it
// succeeds.
func TestSendMaxConnectionsWaitsBeforeSubmit(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	arrived := make(chan string, 2)
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		id := "b"
		if strings.Contains(string(b), `"first"`) {
			id = "a"
		}
		arrived <- id
		if id == "a" {
			<-release
		}
		sseHandler(chatChunk(id), done)(w, r)
	}))
	clock := &stepClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), step: time.Microsecond}
	s := newSender(t, srv.URL, func(c *Config) { c.MaxConnections, c.Now = 1, clock.Now })
	send := func(content string) <-chan Result {
		ch := make(chan Result, 1)
		go func() {
			ch <- s.Send(context.Background(), Request{ID: content, Messages: []Message{{Role: "user", Content: content}}, MaxTokens: 1})
		}()
		return ch
	}
	a := send("first")
	if got := <-arrived; got != "a" {
		t.Fatalf("the engine saw %q first", got)
	}
	b := send("second")
	// Without the cap, b would reach the engine now.
	select {
	case got := <-arrived:
		t.Fatalf("request %q reached the engine while the only slot was taken", got)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	ra, rb := <-a, <-b
	if !ra.Success || !rb.Success {
		t.Fatalf("a: %v %q; b: %v %q; want both to succeed", ra.Success, ra.Error, rb.Success, rb.Error)
	}
	if !rb.Submit.After(ra.Finish) {
		t.Errorf("b submitted at %v, before a finished at %v: the wait for a slot must come before Submit",
			rb.Submit.Format(time.StampMicro), ra.Finish.Format(time.StampMicro))
	}
}

// A request cancelled while waiting for a slot fails with the context's
// error, at once.
func TestSendMaxConnectionsCancelledWhileWaiting(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		<-release
		sseHandler(chatChunk("a"), done)(w, r)
	}))
	defer close(release)
	s := newSender(t, srv.URL, func(c *Config) { c.MaxConnections = 1 })
	go s.Send(context.Background(), chatRequest("holder"))
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel(fmt.Errorf("run interrupted")) }()
	res := s.Send(ctx, chatRequest("waiter"))
	checkFailed(t, res, "run interrupted")
}

// The cap holds for connections, not only requests: many concurrent
// requests never have more connections open than the cap.
func TestSendMaxConnectionsCapsConnections(t *testing.T) {
	t.Parallel()
	const limit = 3
	var mu sync.Mutex
	open, most := 0, 0
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		time.Sleep(5 * time.Millisecond)
		sseHandler(chatChunk("a"), done)(w, r)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch s {
		case http.StateNew:
			open++
			most = max(most, open)
		case http.StateClosed, http.StateHijacked:
			open--
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	s := newSender(t, srv.URL, func(c *Config) { c.MaxConnections = limit })
	var wg sync.WaitGroup
	var failed atomic.Int32
	for i := range 40 {
		wg.Go(func() {
			if res := s.Send(context.Background(), chatRequest(fmt.Sprint(i))); !res.Success {
				failed.Add(1)
				t.Errorf("request %d: %s", i, res.Error)
			}
		})
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if most > limit || most == 0 {
		t.Errorf("%d connections open at once, want 1 to %d", most, limit)
	}
}

func TestNewChecksLimits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"connect", func(c *Config) { c.Timeouts.Connect = -time.Second }, "engine: Timeouts.Connect must be >= 0, got -1s"},
		{"first token", func(c *Config) { c.Timeouts.FirstToken = -1 }, "engine: Timeouts.FirstToken must be >= 0, got -1ns"},
		{"idle", func(c *Config) { c.Timeouts.Idle = -time.Minute }, "engine: Timeouts.Idle must be >= 0, got -1m0s"},
		{"request", func(c *Config) { c.Timeouts.Request = -time.Hour }, "engine: Timeouts.Request must be >= 0, got -1h0m0s"},
		{"connections", func(c *Config) { c.MaxConnections = -1 }, "engine: MaxConnections must be >= 0, got -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := Config{BaseURL: "h:1", Model: "m"}
			tt.edit(&cfg)
			if _, err := New(cfg); err == nil || err.Error() != tt.want {
				t.Errorf("New error = %v, want %q", err, tt.want)
			}
		})
	}
	s, err := New(Config{BaseURL: "h:1", Model: "m", Timeouts: DefaultTimeouts(), MaxConnections: DefaultMaxConnections()})
	if err != nil {
		t.Fatalf("New with the defaults: %v", err)
	}
	s.Close()
}

func TestConnectionsFor(t *testing.T) {
	t.Parallel()
	got := map[uint64]int{}
	for _, limit := range []uint64{0, 1, 64, 65, 1024, 20000, math.MaxUint64} {
		got[limit] = connectionsFor(limit)
	}
	want := map[uint64]int{0: 1, 1: 1, 64: 1, 65: 1, 1024: 864, 20000: 17942, math.MaxUint64: math.MaxInt32}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("connectionsFor (-want +got):\n%s", diff)
	}
	if n := DefaultMaxConnections(); n < 1 {
		t.Errorf("DefaultMaxConnections() = %d, want >= 1", n)
	}
}
