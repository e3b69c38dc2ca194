// Command bareclient is the yardstick of lmbench's overhead benchmark: the
// least a Go client can do to send long-doc-qa's measured requests one at
// a time (1 in flight) and read each answer to its end. It builds the same
// bodies lmbench sends (same documents, questions, max_tokens, stream
// options), posts them with net/http, reads the SSE stream line by line
// until [DONE], and prints the requests per second over the measured
// requests. scripts/sequential-bench.sh runs it beside lmbench.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8000/v1/chat/completions", "chat completions endpoint")
	model := flag.String("model", "lmbench-sim", "model name")
	docs := flag.Int("docs", 100, "documents")
	queries := flag.Int("queries", 20, "questions per document (measured requests = docs x queries)")
	length := flag.Int("length", 2000, "document length in words")
	maxTokens := flag.Int("max-tokens", 128, "max_tokens")
	flag.Parse()

	questions := []string{"What is this document about?", "Summarize the key points.", "What is the main topic discussed?", "Provide a brief overview."}
	body := strings.Repeat("hi ", *length-1) + "hi"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	send := func(content string, max int) error {
		b, _ := json.Marshal(map[string]any{
			"model": *model, "messages": []map[string]string{{"role": "user", "content": content}},
			"stream": true, "max_tokens": max, "temperature": 0.0, "stream_options": map[string]bool{"include_usage": true},
		})
		resp, err := client.Post(*url, "application/json", bytes.NewReader(b))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if bytes.Equal(sc.Bytes(), []byte("data: [DONE]")) {
				return nil
			}
		}
		return fmt.Errorf("stream ended without [DONE]: %v", sc.Err())
	}
	doc := func(d int) string { return fmt.Sprintf("Document %d: %s", d, body) }
	for d := range *docs { // warmup, as long-doc-qa's: each document once, 1 output token
		if err := send(doc(d), 1); err != nil {
			fmt.Fprintln(os.Stderr, "warmup:", err)
			os.Exit(1)
		}
	}
	start := time.Now()
	n := 0
	for q := range *queries {
		for d := range *docs {
			if err := send(doc(d)+fmt.Sprintf("\n\nQuestion %d: %s", q, questions[q%len(questions)]), *maxTokens); err != nil {
				fmt.Fprintln(os.Stderr, "measure:", err)
				os.Exit(1)
			}
			n++
		}
	}
	el := time.Since(start).Seconds()
	fmt.Printf("requests %d elapsed_s %.3f req_per_s %.1f\n", n, el, float64(n)/el)
}
