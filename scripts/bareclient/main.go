// Command bareclient is the yardstick of lmbench's performance scripts:
// the least a Go client can do to send the same requests lmbench sends and
// read each answer to its end. It builds the bodies lmbench's workloads
// build (same prompts, max_tokens, stream options), posts them with
// net/http and reads the SSE stream line by line until [DONE].
//
// Three schedules, as lmbench's workloads have them:
//
//   - sequential (the default): long-doc-qa's warmup (each document once,
//     1 output token), then its measured questions one at a time;
//   - burst: random-prefill's prompts all at once (-n of them);
//   - rate: random-prefill's prompts on an open loop, prompt k due at
//     k / -rate seconds from the start.
//
// It prints one line: the measured requests, the elapsed seconds and the
// rate (fields 2, 4 and 6: scripts/sequential-bench.sh reads the sixth),
// then client-side TTFT (from just before the request is written to the
// first content chunk) p50/p99, dispatch lag (start of the write minus
// the due time) p99 and the achieved send rate. scripts/perf.sh and
// scripts/sequential-bench.sh run it beside lmbench.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

type client struct {
	url, model string
	http       *http.Client
}

type sample struct {
	ttft, lag time.Duration
	submit    time.Time
}

func main() {
	url := flag.String("url", "http://127.0.0.1:8000/v1/chat/completions", "chat completions endpoint")
	model := flag.String("model", "lmbench-sim", "model name")
	mode := flag.String("mode", "sequential", "sequential (long-doc-qa), burst or rate (random-prefill)")
	docs := flag.Int("docs", 100, "sequential: documents")
	queries := flag.Int("queries", 20, "sequential: questions per document (measured requests = docs x queries)")
	length := flag.Int("length", 2000, "prompt length in words (sequential: the document's)")
	maxTokens := flag.Int("max-tokens", 128, "sequential: max_tokens of a measured question")
	n := flag.Int("n", 200, "burst, rate: prompts")
	rate := flag.Float64("rate", 1000, "rate: prompts per second")
	flag.Parse()

	c := &client{url: *url, model: *model}
	var (
		got   []sample
		start time.Time
		err   error
	)
	switch *mode {
	case "sequential":
		c.http = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
		start, got, err = c.sequential(*docs, *queries, *length, *maxTokens)
	case "burst", "rate":
		c.http = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1024}}
		r := *rate
		if *mode == "burst" {
			r = 0
		}
		start, got, err = c.open(*n, *length, r)
	default:
		err = fmt.Errorf("-mode: must be sequential, burst or rate, got %q", *mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bareclient:", err)
		os.Exit(1)
	}
	summarize(start, got)
}

// sequential is long-doc-qa with one request in flight.
func (c *client) sequential(docs, queries, length, maxTokens int) (time.Time, []sample, error) {
	questions := []string{"What is this document about?", "Summarize the key points.", "What is the main topic discussed?", "Provide a brief overview."}
	body := strings.Repeat("hi ", length-1) + "hi"
	doc := func(d int) string { return fmt.Sprintf("Document %d: %s", d, body) }
	for d := range docs {
		if _, err := c.send(doc(d), 1, time.Time{}); err != nil {
			return time.Time{}, nil, fmt.Errorf("warmup: %w", err)
		}
	}
	start := time.Now()
	out := make([]sample, 0, docs*queries)
	for q := range queries {
		for d := range docs {
			s, err := c.send(doc(d)+fmt.Sprintf("\n\nQuestion %d: %s", q, questions[q%len(questions)]), maxTokens, time.Time{})
			if err != nil {
				return time.Time{}, nil, fmt.Errorf("measure: %w", err)
			}
			out = append(out, s)
		}
	}
	return start, out, nil
}

// open is random-prefill: n prompts of max_tokens 1, all at once (rate 0)
// or prompt k due at k/rate seconds, each on its own goroutine.
func (c *client) open(n, length int, rate float64) (time.Time, []sample, error) {
	body := strings.Repeat("hi ", max(length-10, 1)-1) + "hi"
	out := make([]sample, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := time.Now()
	for k := range n {
		due := start
		if rate > 0 {
			due = start.Add(time.Duration(float64(k) / rate * float64(time.Second)))
			time.Sleep(time.Until(due))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[k], errs[k] = c.send("Request "+strconv.Itoa(k)+": "+body, 1, due)
		}()
	}
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			return time.Time{}, nil, fmt.Errorf("prompt %d: %w", k, err)
		}
	}
	return start, out, nil
}

// send posts one streamed chat request and reads it to [DONE]; due, if
// set, is when it should have been sent.
func (c *client) send(content string, maxTokens int, due time.Time) (sample, error) {
	b, _ := json.Marshal(map[string]any{
		"model": c.model, "messages": []map[string]string{{"role": "user", "content": content}},
		"stream": true, "max_tokens": maxTokens, "temperature": 0.0, "stream_options": map[string]bool{"include_usage": true},
	})
	s := sample{submit: time.Now()}
	if !due.IsZero() {
		s.lag = s.submit.Sub(due)
	}
	resp, err := c.http.Post(c.url, "application/json", bytes.NewReader(b))
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return s, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if s.ttft == 0 && bytes.Contains(line, []byte(`"content":"`)) && !bytes.Contains(line, []byte(`"content":""`)) {
			s.ttft = time.Since(s.submit)
		}
		if bytes.Equal(line, []byte("data: [DONE]")) {
			return s, nil
		}
	}
	return s, fmt.Errorf("stream ended without [DONE]: %v", sc.Err())
}

func summarize(start time.Time, got []sample) {
	el := time.Since(start).Seconds()
	var ttft, lag []float64
	first, last := got[0].submit, got[0].submit
	for _, s := range got {
		ttft = append(ttft, s.ttft.Seconds()*1e3)
		lag = append(lag, s.lag.Seconds()*1e3)
		if s.submit.Before(first) {
			first = s.submit
		}
		if s.submit.After(last) {
			last = s.submit
		}
	}
	achieved := "n/a" // one request, or all at once: no rate
	if span := last.Sub(first).Seconds(); len(got) > 1 && span > 0 {
		achieved = fmt.Sprintf("%.1f", float64(len(got)-1)/span)
	}
	fmt.Printf("requests %d elapsed_s %.3f req_per_s %.1f ttft_p50_ms %.3f ttft_p99_ms %.3f lag_p99_ms %.3f achieved_per_s %s\n",
		len(got), el, float64(len(got))/el, quantile(ttft, 50), quantile(ttft, 99), quantile(lag, 99), achieved)
}

// quantile is the nearest-rank percentile p of v, as scripts/perf.sh
// computes lmbench's from its journal.
func quantile(v []float64, p float64) float64 {
	slices.Sort(v)
	return v[min(len(v)-1, int(p/100*float64(len(v))))]
}
