package sim

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

func nopLogger() zerolog.Logger { return zerolog.Nop() }

// fastConfig is DefaultConfig with no delays.
func fastConfig() Config {
	cfg := DefaultConfig()
	cfg.TimeScale = 0
	return cfg
}

// startServer starts a Server on a free loopback port, closed when the test
// ends, and returns it with its base URL.
func startServer(t *testing.T, cfg Config) (*Server, string) {
	t.Helper()
	s, err := New(cfg, nopLogger())
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	// Deterministic ids and timestamps for golden files.
	s.now = func() time.Time { return time.Unix(1700000000, 0) }
	s.newID = func() string { return "0123456789abcdef" }
	url, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, url
}

// post sends body as JSON and returns the response; the caller closes it.
func post(t *testing.T, ctx context.Context, url, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	return resp
}

// postRead sends body and returns the status and whole response body.
func postRead(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp := post(t, context.Background(), url, body)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading response: %v", err)
	}
	return resp.StatusCode, string(b)
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading response: %v", err)
	}
	return resp.StatusCode, string(b)
}

// chunk is a streamed chunk or whole response, chat or text, as a client
// decodes it.
type chunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Choices []struct {
		Delta *struct {
			Role    *string `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		Message *struct {
			Content string `json:"content"`
		} `json:"message"`
		Text         *string `json:"text"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usage `json:"usage"`
}

// parseSSE splits a whole event stream into its data payloads, failing on
// anything that is not a `data: ...\n\n` event or on a missing [DONE].
func parseSSE(t *testing.T, body string) []chunk {
	t.Helper()
	if !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Fatalf("stream does not end with data: [DONE]:\n%s", body)
	}
	events := strings.Split(strings.TrimSuffix(body, "data: [DONE]\n\n"), "\n\n")
	events = events[:len(events)-1] // after the last separator
	chunks := make([]chunk, 0, len(events))
	for _, ev := range events {
		payload, ok := strings.CutPrefix(ev, "data: ")
		if !ok || strings.Contains(payload, "\n") {
			t.Fatalf("malformed event %q", ev)
		}
		var c chunk
		if err := json.Unmarshal([]byte(payload), &c); err != nil {
			t.Fatalf("event %q: %v", ev, err)
		}
		chunks = append(chunks, c)
	}
	return chunks
}

// streamed is what a client makes of a parsed stream.
type streamed struct {
	text   string
	tokens int    // chunks carrying output text
	finish string // the finish_reason seen
	usage  *usage
}

func summarise(t *testing.T, chunks []chunk) streamed {
	t.Helper()
	var s streamed
	for _, c := range chunks {
		if c.Usage != nil {
			s.usage = c.Usage
		}
		for _, ch := range c.Choices {
			var text *string
			if ch.Delta != nil {
				text = ch.Delta.Content
			} else {
				text = ch.Text
			}
			if text != nil && *text != "" {
				s.text += *text
				s.tokens++
			}
			if ch.FinishReason != nil {
				s.finish = *ch.FinishReason
			}
		}
	}
	return s
}

// firstEvent reads events from r up to and including the first one that
// carries output text, and returns when it arrived. It is safe to call from
// any goroutine.
func firstEvent(t *testing.T, r *bufio.Reader) time.Time {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Errorf("reading stream: %v", err)
			return time.Time{}
		}
		if strings.Contains(line, `"content":"`) && !strings.Contains(line, `"content":""`) ||
			strings.Contains(line, `"text":"`) {
			arrived := time.Now()
			if blank, err := r.ReadString('\n'); err != nil || blank != "\n" {
				t.Errorf("event not followed by a blank line: %q, %v", blank, err)
			}
			return arrived
		}
	}
}

// metrics scrapes /metrics into series -> value. A series is the metric
// name plus its labels other than engine and model_name, e.g.
// `lmbench_sim:kv_used_tokens{tier="gpu"}` or `vllm:prompt_tokens_total`.
func metrics(t *testing.T, baseURL string) map[string]float64 {
	t.Helper()
	status, body := get(t, baseURL+"/metrics")
	if status != http.StatusOK {
		t.Fatalf("GET /metrics: status %d", status)
	}
	m := make(map[string]float64)
	for line := range strings.Lines(body) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			t.Fatalf("/metrics: malformed line %q", line)
		}
		name, labels, _ := strings.Cut(fields[0], "{")
		var keep []string
		for l := range strings.SplitSeq(strings.TrimSuffix(labels, "}"), ",") {
			if l != "" && !strings.HasPrefix(l, "engine=") && !strings.HasPrefix(l, "model_name=") &&
				!strings.HasPrefix(l, "finished_reason=") {
				keep = append(keep, l)
			}
		}
		if len(keep) > 0 {
			name += "{" + strings.Join(keep, ",") + "}"
		}
		v, err := strconv.ParseFloat(fields[1], 64)
		if err != nil {
			t.Fatalf("/metrics: line %q: %v", line, err)
		}
		if _, dup := m[name]; dup {
			t.Fatalf("/metrics: series %s twice", name)
		}
		m[name] = v
	}
	return m
}

// pick returns the series of m named in want (NaN for a missing one), to
// compare with want.
func pick(m, want map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(want))
	for k := range want {
		v, ok := m[k]
		if !ok {
			v = math.NaN()
		}
		out[k] = v
	}
	return out
}

// waitFor polls cond until it holds or 10s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// words returns n distinct words starting with prefix, space-separated.
func words(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s%d", prefix, i)
	}
	return b.String()
}

// chatBody returns a chat request for one user message.
func chatBody(content string, extra string) string {
	msg, _ := json.Marshal(content)
	if extra != "" {
		extra = "," + extra
	}
	return fmt.Sprintf(`{"model":"lmbench-sim","messages":[{"role":"user","content":%s}]%s}`, msg, extra)
}

// tokenize is a prompt's tokens with the default (words) tokenizer.
func tokenize(text string) []string { return strings.Fields(text) }
