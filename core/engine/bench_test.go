package engine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// BenchmarkSend measures one whole request against a local server that
// streams 128 content chunks, a usage chunk and [DONE] (vLLM's format).
// "buffered" writes the response at once, so the figure is mostly our own
// cost; "flushed" flushes each chunk as an engine does.
func BenchmarkSend(b *testing.B) {
	var sb strings.Builder
	for i := range 128 {
		fmt.Fprintf(&sb, "data: %s\n\n", chatChunk(fmt.Sprintf(" tok%d", i)))
	}
	fmt.Fprintf(&sb, "data: %s\n\ndata: [DONE]\n\n", usageChunk(1000, 128))
	stream := sb.String()
	lines := strings.SplitAfter(stream, "\n\n")

	handlers := []struct {
		name string
		h    http.HandlerFunc
	}{
		{"buffered", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, stream)
		}},
		{"flushed", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			f := w.(http.Flusher)
			for _, l := range lines {
				_, _ = io.WriteString(w, l)
				f.Flush()
			}
		}},
	}
	req := Request{
		ID:        "bench",
		Messages:  []Message{{Role: "system", Content: "You are a helpful assistant."}, {Role: "user", Content: strings.Repeat("hi ", 2000)}},
		MaxTokens: 128,
	}
	for _, hc := range handlers {
		b.Run(hc.name, func(b *testing.B) {
			srv := httptest.NewServer(hc.h)
			defer srv.Close()
			s, err := New(Config{BaseURL: srv.URL, Model: "Qwen/Qwen3-8B"})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if res := s.Send(ctx, req); !res.Success || res.Chunks != 128 {
					b.Fatalf("Success %v, Chunks %d, Error %q", res.Success, res.Chunks, res.Error)
				}
			}
		})
	}
}

// BenchmarkChunkTimes is what recording Result.ChunkTimes costs per
// request: a whole 128-chunk stream (vLLM's format, ids, usage, [DONE])
// read from memory and turned into a Result, with the times recorded
// ("with", as Send does) and without (the limit set to 0). The difference
// is the cost; the HTTP round trip around it is left out (BenchmarkSend).
func BenchmarkChunkTimes(b *testing.B) {
	var sb strings.Builder
	for i := range 128 {
		fmt.Fprintf(&sb, "data: %s\n\n", chatChunk(fmt.Sprintf(" tok%d", i)))
	}
	fmt.Fprintf(&sb, "data: %s\n\ndata: [DONE]\n\n", usageChunk(1000, 128))
	body := []byte(sb.String())
	for _, bc := range []struct {
		name     string
		maxTimes int
	}{{"with", MaxChunkTimes}, {"without", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			r := bytes.NewReader(body)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				r.Reset(body)
				st := getStream(r, false, time.Now)
				st.submit, st.maxTimes = time.Now(), bc.maxTimes
				if err := st.run(); err != nil {
					b.Fatal(err)
				}
				var res Result
				st.fill(&res)
				putStream(st)
				if !res.Success || res.Chunks != 128 || len(res.ChunkTimes) != min(128, bc.maxTimes) {
					b.Fatalf("Success %v, Chunks %d, %d times", res.Success, res.Chunks, len(res.ChunkTimes))
				}
			}
		})
	}
}

// BenchmarkParseChunk measures decoding one data payload and appending its
// content, the per-token cost of Send.
func BenchmarkParseChunk(b *testing.B) {
	cases := []struct {
		name, payload string
		completion    bool
	}{
		{"chat", chatChunk(" token"), false},
		{"chat-escaped", chatChunk("line\n\"quoted\""), false},
		{"reasoning", `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"reasoning_content":" think"},"logprobs":null,"finish_reason":null}]}`, false},
		{"tool-call-args", vllmToolArgs, false},
		{"completions", textChunk(" token"), true},
		{"usage", `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":10000,"total_tokens":10128,"completion_tokens":128,"prompt_tokens_details":{"cached_tokens":9984}}}`, false},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			st := getStream(nil, c.completion, nil)
			defer putStream(st)
			payload := []byte(c.payload)
			b.SetBytes(int64(len(payload)))
			b.ReportAllocs()
			for b.Loop() {
				st.text, st.calls = st.text[:0], st.calls[:0]
				if _, err := st.decode(payload); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAppendBody(b *testing.B) {
	prefix := []byte(`{"model":"Qwen/Qwen3-8B",`)
	req := Request{Messages: []Message{{Role: "user", Content: strings.Repeat("Document 0: hi hi hi\n", 2500)}}, MaxTokens: 128}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = appendBody(make([]byte, 0, bodySize(prefix, req)), prefix, req)
	}
}
