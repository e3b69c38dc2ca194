package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// chatEngine is an OpenAI-compatible streaming server that gives every
// request its own answer ("reply <n>"), so a test can tell which answers a
// later request carries.
type chatEngine struct {
	mu    sync.Mutex
	calls []chatCall
	fail  func(messages []chatMessage) bool
	srv   *httptest.Server
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatCall struct {
	Messages  []chatMessage
	MaxTokens int
	Answer    string // "" when failed
}

func newChatEngine(t *testing.T, fail func([]chatMessage) bool) *chatEngine {
	e := &chatEngine{fail: fail}
	e.srv = httptest.NewServer(http.HandlerFunc(e.serve))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *chatEngine) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v1/models" {
		w.Write([]byte(`{"object":"list","data":[{"id":"chat-model","object":"model"}]}`))
		return
	}
	if r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	var body struct {
		Messages  []chatMessage `json:"messages"`
		MaxTokens int           `json:"max_tokens"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	failed := e.fail != nil && e.fail(body.Messages)
	e.mu.Lock()
	answer := fmt.Sprintf("reply %d", len(e.calls))
	if failed {
		answer = ""
	}
	e.calls = append(e.calls, chatCall{Messages: body.Messages, MaxTokens: body.MaxTokens, Answer: answer})
	e.mu.Unlock()
	if failed {
		http.Error(w, `{"error":{"message":"boom"}}`, 500)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	// The answer in two chunks: the client must concatenate them.
	head, tail, _ := strings.Cut(answer, " ")
	for _, c := range []string{head + " ", tail} {
		b, _ := json.Marshal(c)
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%s}}]}\n\n", b)
		fl.Flush()
	}
	fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":2}}\n\n")
	fmt.Fprint(w, "data: [DONE]\n\n")
	fl.Flush()
}

func (e *chatEngine) recorded() []chatCall {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.calls)
}

// sessionOf reads the session number from a request's system prompt.
func sessionOf(t *testing.T, msgs []chatMessage) int {
	t.Helper()
	var i int
	if len(msgs) == 0 || msgs[0].Role != "system" {
		t.Fatalf("request without a system prompt: %+v", msgs)
	}
	if _, err := fmt.Sscanf(msgs[0].Content, "Session %d.", &i); err != nil {
		t.Fatalf("system prompt %q: %v", trunc(msgs[0].Content), err)
	}
	return i
}

// TestMultiRoundChatEndToEnd runs multi-round-chat through the real
// binaries: 3 sessions, 20 requests per second for 1 s. It checks the
// warmup, the k/qps schedule recorded in the journal, and that every later
// round of a session carries the session's earlier answers, with the one
// failed answer carried as an empty turn.
func TestMultiRoundChatEndToEnd(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	// Session 1's second measured round (4 + 2 messages) fails.
	eng := newChatEngine(t, func(m []chatMessage) bool {
		return len(m) == 6 && strings.HasPrefix(m[0].Content, "Session 1.")
	})
	out := t.TempDir()
	r := lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--workload", "multi-round-chat",
		"--mrc-qps", "20", "--mrc-duration", "1", "--mrc-shared-prompt-length", "20",
		"--mrc-chat-history-length", "30", "--mrc-user-input-length", "4", "--mrc-output-length", "7",
		"--tokens-per-gb-kvcache", "150", "--kv-cache-volume", "1", "--no-interactive", "-q", "--json", "--output-dir", out)
	if r.code != 1 || !strings.Contains(r.stderr, "measured requests failed") {
		t.Fatalf("exit %d (want 1: one request failed)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	calls := eng.recorded()
	if len(calls) < 3+15 || len(calls) > 3+20 {
		t.Fatalf("engine saw %d requests, want 3 warmup + about 20 measured", len(calls))
	}

	// Warmup: one request per session, in order, ending in "Hello", max_tokens 1.
	for i, c := range calls[:3] {
		want := []chatMessage{
			{"system", fmt.Sprintf("Session %d. You are a helpful assistant. %s", i, strings.TrimSpace(strings.Repeat("help ", 13)))},
			{"user", fmt.Sprintf("[Session %d history] %s", i, strings.TrimSpace(strings.Repeat("hi ", 27)))},
			{"assistant", "Understood, I have read the context above."},
			{"user", "Hello"},
		}
		if !slices.Equal(c.Messages, want) || c.MaxTokens != 1 {
			t.Errorf("warmup %d: max_tokens %d, messages %+v", i, c.MaxTokens, c.Messages)
		}
	}

	// Measured: round-robin over sessions; each round carries the
	// session's earlier rounds with the answers the engine gave, in order.
	query := "tell tell tell tell"
	answers := map[int][]string{} // session → its answers so far
	for k, c := range calls[3:] {
		s := sessionOf(t, c.Messages)
		if s != k%3 || c.MaxTokens != 7 {
			t.Errorf("measured request %d: session %d, max_tokens %d; want session %d, 7", k, s, c.MaxTokens, k%3)
		}
		want := slices.Clone(calls[s].Messages[:3]) // the warmup's system, history, acknowledgement
		for _, a := range answers[s] {
			want = append(want, chatMessage{"user", query}, chatMessage{"assistant", a})
		}
		want = append(want, chatMessage{"user", query})
		if !slices.Equal(c.Messages, want) {
			t.Fatalf("measured request %d (session %d, round %d) carries\n%+v\nwant\n%+v", k, s, len(answers[s]), c.Messages, want)
		}
		answers[s] = append(answers[s], c.Answer)
	}
	if len(answers[1]) < 3 || answers[1][1] != "" {
		t.Errorf("session 1's answers %q: want the failed second round recorded as empty and the session going on", answers[1])
	}

	// The journal: tags, and each measured request scheduled at k/20 s
	// after the first, sent no earlier than scheduled.
	_, recs := readJournal(t, filepath.Join(out, "bench_journal.jsonl"))
	type rec struct {
		k                  int
		scheduled, submit  int64
		session, round, id string
		success            bool
	}
	var measured []rec
	for _, m := range recs {
		if m["phase"] != "PHASE_MEASURE" {
			continue
		}
		id := m["request_id"].(string)
		var s, k int
		if _, err := fmt.Sscanf(id, "s%d_r%d", &s, &k); err != nil {
			t.Fatalf("request id %q: %v", id, err)
		}
		tags := m["tags"].(map[string]any)
		sch, _ := strconv.ParseInt(m["scheduled_unix_ns"].(string), 10, 64)
		sub, _ := strconv.ParseInt(m["submit_unix_ns"].(string), 10, 64)
		ok, _ := m["success"].(bool)
		measured = append(measured, rec{k, sch, sub, tags["session"].(string), tags["round"].(string), id, ok})
	}
	if len(measured) != len(calls)-3 {
		t.Fatalf("journal has %d measured requests, the engine saw %d", len(measured), len(calls)-3)
	}
	slices.SortFunc(measured, func(a, b rec) int { return a.k - b.k })
	failed := 0
	for i, m := range measured {
		if m.k != i || m.session != strconv.Itoa(i%3) || m.round != strconv.Itoa(i/3) {
			t.Errorf("journal record %d: %s session %s round %s", i, m.id, m.session, m.round)
		}
		offset := time.Duration(m.scheduled - measured[0].scheduled)
		if want := time.Duration(i) * 50 * time.Millisecond; offset < want-time.Microsecond || offset > want+time.Microsecond {
			t.Errorf("%s scheduled at +%v, want +%v (k/qps)", m.id, offset, want)
		}
		if m.submit < m.scheduled {
			t.Errorf("%s sent %v before it was due", m.id, time.Duration(m.scheduled-m.submit))
		}
		if !m.success {
			failed++
			if m.id != "s1_r4" {
				t.Errorf("%s failed, want only s1_r4", m.id)
			}
		}
	}
	if failed != 1 {
		t.Errorf("%d failed requests in the journal, want 1", failed)
	}

	// Dispatch lag reaches the summary.
	var summary struct {
		Results map[string]float64 `json:"results"`
	}
	b, err := os.ReadFile(filepath.Join(out, "bench_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &summary); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"mean_dispatch_lag_ms", "p50_dispatch_lag_ms", "p99_dispatch_lag_ms"} {
		if v, ok := summary.Results[k]; !ok || v < 0 {
			t.Errorf("bench_summary.json %s = %v (present %v)", k, v, ok)
		}
	}
	// The banner (spec §2.6).
	for _, line := range []string{" Workload: multi-round-chat", "Concurrent users:", "QPS:", "20.0", "Duration:", "1.0s"} {
		if !strings.Contains(r.stdout, line) {
			t.Errorf("stdout lacks %q:\n%s", line, r.stdout)
		}
	}
}
