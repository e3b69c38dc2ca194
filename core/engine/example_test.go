package engine_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/lmbench/lmbench/core/engine"
)

func Example() {
	// A stand-in engine that streams two tokens and its usage.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"delta":{"content":"Hello"}}]}`+"\n\n")
		io.WriteString(w, `data: {"choices":[{"delta":{"content":" world"}}]}`+"\n\n")
		io.WriteString(w, `data: {"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":2}}`+"\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()

	s, err := engine.New(engine.Config{BaseURL: srv.URL, Model: "my-model"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	res := s.Send(context.Background(), engine.Request{
		ID:        "q0",
		Messages:  []engine.Message{{Role: "user", Content: "Say hello"}},
		MaxTokens: 16,
	})
	fmt.Println(res.Success, res.Text, res.InputTokens, res.OutputTokens, res.TTFT() > 0)
	// Output: true Hello world 12 2 true
}
