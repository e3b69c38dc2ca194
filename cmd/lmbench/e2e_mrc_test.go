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

	"github.com/lmbench/lmbench/core/record"
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

// roundOf reads a measured request's round from its length: system,
// history and acknowledgement, two messages per earlier round, the query.
func roundOf(t *testing.T, msgs []chatMessage) int {
	t.Helper()
	if len(msgs) < 4 || len(msgs)%2 != 0 {
		t.Fatalf("a measured request with %d messages: %+v", len(msgs), msgs)
	}
	return (len(msgs) - 4) / 2
}

// TestMultiRoundChatEndToEnd runs multi-round-chat through the real
// binaries: 3 sessions, 10 requests per second for 2 s. It checks the
// warmup, the k/qps schedule recorded in the journal, and that every later
// round of a session carries the session's earlier answers, with the one
// failed answer carried as an empty turn.
//
// Requests of different sessions race to the engine (each is sent on its
// own connection), so nothing here depends on the order the engine saw
// them in across sessions: calls are grouped by session (the system
// prompt) and round (the message count), journal records by request id.
// Within a session the order is guaranteed: a session's next round is
// sent only once its previous one was answered.
func TestMultiRoundChatEndToEnd(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	const (
		sessions = 3
		qps      = 10
		planned  = 20 // due times k/qps before the 2 s duration
		// failing is the one request the engine fails: session 1's
		// second measured round (4 + 2 messages), request s1_r4.
		failingSession, failingRound, failingID = 1, 1, "s1_r4"
		// minMeasured: session 1 must get past the failure (its round 2 is
		// request 7, due at 0.7 s) for the test to show it goes on. With an
		// engine answering at once, every planned request is sent; this
		// leaves 1.3 s for load.
		minMeasured = 8
	)
	eng := newChatEngine(t, func(m []chatMessage) bool {
		return len(m) == 4+2*failingRound && strings.HasPrefix(m[0].Content, fmt.Sprintf("Session %d.", failingSession))
	})
	out := t.TempDir()
	r := lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--workload", "multi-round-chat",
		"--mrc-qps", strconv.Itoa(qps), "--mrc-duration", "2", "--mrc-shared-prompt-length", "20",
		"--mrc-chat-history-length", "30", "--mrc-user-input-length", "4", "--mrc-output-length", "7",
		"--tokens-per-gb-kvcache", "150", "--kv-cache-volume", "1", "--no-interactive", "-q", "--json", "--output-dir", out)
	if r.code != 1 || !strings.Contains(r.stderr, "measured requests failed") {
		t.Fatalf("exit %d (want 1: one request failed)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	// The engine's calls by session, each session's in the order it saw them.
	warmups := map[int][]chatCall{}
	rounds := map[int][]chatCall{}
	measuredCalls := 0
	for _, c := range eng.recorded() {
		s := sessionOf(t, c.Messages)
		if s < 0 || s >= sessions {
			t.Fatalf("request for session %d, want 0..%d", s, sessions-1)
		}
		if c.Messages[len(c.Messages)-1] == (chatMessage{"user", "Hello"}) {
			if len(rounds[s]) > 0 {
				t.Errorf("session %d: warmup after %d measured rounds", s, len(rounds[s]))
			}
			warmups[s] = append(warmups[s], c)
			continue
		}
		rounds[s] = append(rounds[s], c)
		measuredCalls++
	}

	// Warmup: one request per session, ending in "Hello", max_tokens 1.
	for s := range sessions {
		want := []chatMessage{
			{"system", fmt.Sprintf("Session %d. You are a helpful assistant. %s", s, strings.TrimSpace(strings.Repeat("help ", 13)))},
			{"user", fmt.Sprintf("[Session %d history] %s", s, strings.TrimSpace(strings.Repeat("hi ", 27)))},
			{"assistant", "Understood, I have read the context above."},
			{"user", "Hello"},
		}
		if len(warmups[s]) != 1 {
			t.Fatalf("session %d: %d warmup requests, want 1", s, len(warmups[s]))
		}
		if c := warmups[s][0]; !slices.Equal(c.Messages, want) || c.MaxTokens != 1 {
			t.Errorf("session %d warmup: max_tokens %d, messages %+v", s, c.MaxTokens, c.Messages)
		}
	}

	// Measured: each session's rounds arrive in order, and each carries
	// the session's earlier rounds with the answers the engine gave.
	query := "tell tell tell tell"
	for s := range sessions {
		var answers []string
		for i, c := range rounds[s] {
			if got := roundOf(t, c.Messages); got != i || c.MaxTokens != 7 {
				t.Errorf("session %d, measured request %d: round %d, max_tokens %d; want round %d, 7", s, i, got, c.MaxTokens, i)
			}
			want := slices.Clone(warmups[s][0].Messages[:3]) // system, history, acknowledgement
			for _, a := range answers {
				want = append(want, chatMessage{"user", query}, chatMessage{"assistant", a})
			}
			want = append(want, chatMessage{"user", query})
			if !slices.Equal(c.Messages, want) {
				t.Fatalf("session %d round %d carries\n%+v\nwant\n%+v", s, i, c.Messages, want)
			}
			answers = append(answers, c.Answer)
		}
		if s == failingSession && (len(answers) <= failingRound+1 || answers[failingRound] != "") {
			t.Errorf("session %d's answers %q: want the failed round %d recorded as empty and the session going on",
				s, answers, failingRound)
		}
	}

	// The journal: request k is s<k%3>_r<k>, tagged with its session and
	// its round in that session, scheduled k/qps after the first and sent
	// no earlier than scheduled.
	type rec struct {
		k int
		r record.Record
	}
	var measured []rec
	for _, m := range readJournal(t, filepath.Join(out, record.JournalName)).Records {
		if m.Phase != record.Measure {
			continue
		}
		var s, k int
		if _, err := fmt.Sscanf(m.RequestID, "s%d_r%d", &s, &k); err != nil {
			t.Fatalf("request id %q: %v", m.RequestID, err)
		}
		if s != k%sessions {
			t.Errorf("%s: request %d is session %d's, want round-robin session %d", m.RequestID, k, s, k%sessions)
		}
		measured = append(measured, rec{k: k, r: m})
	}
	if len(measured) != measuredCalls {
		t.Fatalf("journal has %d measured requests, the engine saw %d", len(measured), measuredCalls)
	}
	if len(measured) < minMeasured || len(measured) > planned {
		t.Fatalf("%d measured requests, want %d..%d (%d due in the duration)", len(measured), minMeasured, planned, planned)
	}
	t.Logf("%d of the %d due requests sent", len(measured), planned)
	slices.SortFunc(measured, func(a, b rec) int { return a.k - b.k })
	perSession := map[string]int{}
	failed := 0
	for i, m := range measured {
		if m.k != i {
			t.Fatalf("journal record %s where request %d was expected: want requests 0..%d, each once", m.r.RequestID, i, len(measured)-1)
		}
		session, round := strconv.Itoa(i%sessions), strconv.Itoa(i/sessions)
		if m.r.Tags["session"] != session || m.r.Tags["round"] != round {
			t.Errorf("%s: tags session %q round %q, want %s and %s", m.r.RequestID, m.r.Tags["session"], m.r.Tags["round"], session, round)
		}
		perSession[session]++
		offset := m.r.Scheduled.Sub(measured[0].r.Scheduled)
		if want := time.Duration(i) * time.Second / qps; offset < want-time.Microsecond || offset > want+time.Microsecond {
			t.Errorf("%s scheduled at +%v, want +%v (k/qps)", m.r.RequestID, offset, want)
		}
		if !m.r.ExplicitSchedule {
			t.Errorf("%s: schedule not marked as the workload's", m.r.RequestID)
		}
		if m.r.Submit.Before(m.r.Scheduled) {
			t.Errorf("%s sent %v before it was due", m.r.RequestID, m.r.Scheduled.Sub(m.r.Submit))
		}
		if !m.r.Success {
			failed++
			if m.r.RequestID != failingID {
				t.Errorf("%s failed, want only %s", m.r.RequestID, failingID)
			}
		}
	}
	if failed != 1 {
		t.Errorf("%d failed requests in the journal, want 1", failed)
	}
	for s := range sessions {
		if got, want := perSession[strconv.Itoa(s)], len(rounds[s]); got != want {
			t.Errorf("session %d: %d measured requests in the journal, the engine saw %d", s, got, want)
		}
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
	if got := summary.Results["total_requests"]; got != float64(len(measured)) {
		t.Errorf("summary total_requests %v, journal %d", got, len(measured))
	}
	// The banner (spec §2.6).
	for _, line := range []string{" Workload: multi-round-chat", "Concurrent users:", "QPS:", "10.0", "Duration:", "2.0s"} {
		if !strings.Contains(r.stdout, line) {
			t.Errorf("stdout lacks %q:\n%s", line, r.stdout)
		}
	}
}
