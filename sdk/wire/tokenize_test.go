package wire_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"

	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/wire"
)

// countingWorkload counts its queries through cfg.Tokens in Configure,
// as a workload sizing itself does.
type countingWorkload struct {
	workloadFake
	mu      sync.Mutex
	queries []protocol.TokenQuery
	got     []protocol.TokenCounts
	errs    []error
	noTok   bool // Configure found no counter
}

func (w *countingWorkload) Configure(ctx context.Context, c protocol.WorkloadConfig) (protocol.Configured, error) {
	if c.Tokens == nil {
		w.noTok = true
		return protocol.Configured{}, nil
	}
	for _, q := range w.queries {
		got, err := c.Tokens.CountTokens(ctx, q)
		w.mu.Lock()
		w.got, w.errs = append(w.got, got), append(w.errs, err)
		w.mu.Unlock()
	}
	return protocol.Configured{}, nil
}

func (w *countingWorkload) errsSnapshot() []error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]error(nil), w.errs...)
}

// lengthCounter counts bytes (texts) and messages times ten (chats).
type lengthCounter struct {
	calls atomic.Int32
	err   error
}

func (l *lengthCounter) CountTokens(_ context.Context, q protocol.TokenQuery) (protocol.TokenCounts, error) {
	l.calls.Add(1)
	if l.err != nil {
		return protocol.TokenCounts{}, l.err
	}
	var c protocol.TokenCounts
	for _, s := range q.Texts {
		c.Texts = append(c.Texts, len(s))
	}
	for _, ch := range q.Chats {
		c.Chats = append(c.Chats, 10*len(ch.Messages))
	}
	return c, nil
}

func TestTokenizerOverGRPC(t *testing.T) {
	t.Parallel()
	w := &countingWorkload{queries: []protocol.TokenQuery{
		{Texts: []string{"abc", "hello world"}},
		{Chats: []protocol.Chat{{Messages: []protocol.ChatMessage{{Role: "user", Content: "x"}, {Role: "assistant", Content: "y"}}}}},
		{}, // nothing to count: answered without a round trip
	}}
	conn := serve(t, func(s *grpc.Server) { wire.RegisterWorkload(s, w) })
	counter := &lengthCounter{}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := wire.WorkloadClient(conn).Configure(ctx, protocol.WorkloadConfig{Tokens: counter}); err != nil {
		t.Fatal(err)
	}
	want := []protocol.TokenCounts{{Texts: []int{3, 11}}, {Chats: []int{20}}, {}}
	if d := cmp.Diff(want, w.got); d != "" {
		t.Errorf("counts through the stream (-want +got):\n%s", d)
	}
	for i, err := range w.errs {
		if err != nil {
			t.Errorf("query %d: %v", i, err)
		}
	}
	if n := counter.calls.Load(); n != 2 {
		t.Errorf("host counter called %d times, want 2 (the empty query stays in the plugin)", n)
	}
}

func TestTokenizerOverGRPCHostError(t *testing.T) {
	t.Parallel()
	w := &countingWorkload{queries: []protocol.TokenQuery{{Texts: []string{"abc"}}}}
	conn := serve(t, func(s *grpc.Server) { wire.RegisterWorkload(s, w) })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	counter := &lengthCounter{err: errors.New("engine /tokenize: HTTP 500")}
	if _, err := wire.WorkloadClient(conn).Configure(ctx, protocol.WorkloadConfig{Tokens: counter}); err != nil {
		t.Fatal(err)
	}
	if len(w.errs) != 1 || w.errs[0] == nil || !strings.Contains(w.errs[0].Error(), "engine /tokenize: HTTP 500") {
		t.Errorf("plugin saw %v, want the host's error", w.errs)
	}
}

func TestTokenizerAbsent(t *testing.T) {
	t.Parallel()
	w := &countingWorkload{}
	conn := serve(t, func(s *grpc.Server) { wire.RegisterWorkload(s, w) })
	if _, err := wire.WorkloadClient(conn).Configure(context.Background(), protocol.WorkloadConfig{}); err != nil {
		t.Fatal(err)
	}
	if !w.noTok {
		t.Error("Configure without a host counter got one")
	}
}

// blockingCounter never answers until released; it reports each query.
type blockingCounter struct{ got chan struct{} }

func (b *blockingCounter) CountTokens(ctx context.Context, _ protocol.TokenQuery) (protocol.TokenCounts, error) {
	b.got <- struct{}{}
	<-ctx.Done()
	return protocol.TokenCounts{}, ctx.Err()
}

// When the connection to the host goes away mid-query, the plugin's
// pending count fails with the reason instead of waiting for ever.
func TestTokenizerStreamEndFailsPendingQuery(t *testing.T) {
	t.Parallel()
	w := &countingWorkload{queries: []protocol.TokenQuery{{Texts: []string{"abc"}}}}
	conn := serve(t, func(s *grpc.Server) { wire.RegisterWorkload(s, w) })
	counter := &blockingCounter{got: make(chan struct{}, 1)}
	done := make(chan error, 1)
	go func() {
		_, err := wire.WorkloadClient(conn).Configure(context.Background(), protocol.WorkloadConfig{Tokens: counter})
		done <- err
	}()
	select {
	case <-counter.got: // the query reached the host
	case <-time.After(10 * time.Second):
		t.Fatal("the query never reached the host")
	}
	conn.Close() // the host goes away
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Configure did not return after the connection closed")
	}
	// The plugin side saw its count fail (Configure's answer may not
	// have reached a closed connection, but the workload ran on).
	deadline := time.Now().Add(10 * time.Second)
	for len(w.errsSnapshot()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	errs := w.errsSnapshot()
	if len(errs) != 1 || errs[0] == nil || !strings.Contains(errs[0].Error(), "tokenizer") {
		t.Errorf("plugin's count ended with %v, want a tokenizer error", errs)
	}
}
