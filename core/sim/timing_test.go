package sim

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Timing tests assert lower bounds, which load cannot break (a timer never
// fires early), and ratios with wide margins, never tight upper bounds.

// ttft sends a streaming chat request and returns its time to first token
// and the whole stream as parsed.
func ttft(t *testing.T, url, content string) (time.Duration, streamed) {
	t.Helper()
	start := time.Now()
	resp := post(t, t.Context(), url+"/v1/chat/completions",
		chatBody(content, `"max_tokens":2,"stream":true,"stream_options":{"include_usage":true}`))
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	r := bufio.NewReader(resp.Body)
	first := firstEvent(t, r).Sub(start)
	rest, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	// firstEvent consumed the role and first token chunks; what is left
	// must still parse as a stream.
	return first, summarise(t, parseSSE(t, string(rest)))
}

func TestPrefixCacheCutsTimeToFirstToken(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	// A cold prefill of 400ms dwarfs the cost of moving 4,000 words through
	// HTTP, JSON and the tokenizer, even under the race detector on a
	// loaded machine.
	cfg.PrefillPerToken = 100 * time.Microsecond
	cfg.DecodePerToken = time.Millisecond
	_, url := startServer(t, cfg)
	doc := words("doc", 4000) // 250 blocks of 16

	cold, first := ttft(t, url, doc+" what is the first word?")
	warm, second := ttft(t, url, doc+" and the last one?")

	if minCold := 4005 * cfg.PrefillPerToken; cold < minCold {
		t.Errorf("cold time to first token %v, want >= %v (the prefill cost)", cold, minCold)
	}
	if got := first.usage.PromptTokensDetails.CachedTokens; got != 0 {
		t.Errorf("first request: cached_tokens = %d, want 0", got)
	}
	if got, want := second.usage.PromptTokensDetails.CachedTokens, 4000; got != want {
		t.Errorf("second request over the same document: cached_tokens = %d, want %d", got, want)
	}
	if warm >= cold/2 {
		t.Errorf("warm time to first token %v, want < half the cold %v", warm, cold)
	}
	t.Logf("cold %v, warm %v", cold, warm)
}

func TestIdenticalPromptHitsAllButLastBlock(t *testing.T) {
	t.Parallel()
	_, url := startServer(t, fastConfig())
	for _, tt := range []struct {
		tokens, wantCached int
	}{
		{40, 32},  // 2 full blocks + 8: both full blocks hit
		{48, 32},  // 3 full blocks: the one holding the last token is recomputed
		{15, 0},   // no full block
		{17, 16},  // one full block, then the last token
		{16, 0},   // one block, holding the last token
		{100, 96}, // 6 full blocks + 4
	} {
		prompt := words(fmt.Sprint("n", tt.tokens, "-"), tt.tokens)
		body := fmt.Sprintf(`{"prompt":%q,"max_tokens":1}`, prompt)
		postRead(t, url+"/v1/completions", body)
		_, resp := postRead(t, url+"/v1/completions", body)
		var c chunk
		if err := json.Unmarshal([]byte(resp), &c); err != nil {
			t.Fatal(err)
		}
		if got := c.Usage.PromptTokensDetails.CachedTokens; got != tt.wantCached {
			t.Errorf("identical %d-token prompt sent twice: cached_tokens = %d, want %d", tt.tokens, got, tt.wantCached)
		}
	}
}

func TestPrefillIsSerialised(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.PrefillPerToken = 50 * time.Microsecond
	cfg.DecodePerToken = time.Millisecond
	cfg.GPUGB, cfg.CPUGB = 0, 0
	_, url := startServer(t, cfg)

	const n, promptTokens = 4, 1000
	prefill := promptTokens * cfg.PrefillPerToken // 50ms each
	start := time.Now()
	firsts := make([]time.Duration, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			body := fmt.Sprintf(`{"prompt":%q,"max_tokens":2,"stream":true}`, words(fmt.Sprint("p", i, "-"), promptTokens))
			resp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(body))
			if err != nil {
				t.Errorf("request %d: %v", i, err)
				return
			}
			defer resp.Body.Close()
			r := bufio.NewReader(resp.Body)
			firsts[i] = firstEvent(t, r).Sub(start)
			_, _ = io.Copy(io.Discard, r)
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	slices.Sort(firsts)
	// Run concurrently, all four would see their first token after about one
	// prefill; serialised, the k-th cannot before k+1 prefills.
	for k, got := range firsts {
		if want := time.Duration(k+1) * prefill; got < want {
			t.Errorf("request %d to get its first token waited %v, want >= %d prefills (%v); all: %v",
				k+1, got, k+1, want, firsts)
		}
	}
}

func TestDecodesRunConcurrently(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.PrefillPerToken = 0
	cfg.DecodePerToken = time.Hour // the second token never comes
	_, url := startServer(t, cfg)

	// If decoding held the GPU, the second request would wait forever.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for i := range 3 {
		resp := post(t, ctx, url+"/v1/completions", fmt.Sprintf(`{"prompt":"r%d","max_tokens":2,"stream":true}`, i))
		// Each request gets its first token while the others are decoding.
		firstEvent(t, bufio.NewReader(resp.Body))
		wg.Go(func() {
			defer resp.Body.Close()
			_, _ = io.Copy(io.Discard, resp.Body)
		})
	}
	m := metrics(t, url)
	if m["vllm:num_requests_running"] != 3 || m["vllm:num_requests_waiting"] != 0 {
		t.Errorf("three requests decoding: running %v, waiting %v; want 3, 0",
			m["vllm:num_requests_running"], m["vllm:num_requests_waiting"])
	}
	cancel()
	wg.Wait()
}

func TestTimeScaleZeroNeverSleeps(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.PrefillPerToken = time.Second
	cfg.DecodePerToken = time.Second
	cfg.TimeScale = 0
	_, url := startServer(t, cfg)
	start := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // fail, not hang, if it sleeps
	defer cancel()
	resp := post(t, ctx, url+"/v1/chat/completions", chatBody(words("w", 200), `"max_tokens":100,"stream":true`))
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the stream: %v (after %v)", err, time.Since(start))
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if got := summarise(t, parseSSE(t, string(body))); got.tokens != 100 {
		t.Errorf("%d tokens, want 100", got.tokens)
	}
	// At time scale 1 this costs 200s of prefill and 99s of decode.
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("took %v at time scale 0, want no delays", elapsed)
	}
}

// TestThousandSimultaneousStreams holds 1,000 streams open at once: every
// one has its first token before any gets its second (the decode gate), so
// all are decoding together; then all finish, byte-exact.
func TestThousandSimultaneousStreams(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.TimeScale = 0.001 // 36 tokens x 50µs of prefill each: 1.8µs
	s, url := startServer(t, cfg)
	gate := make(chan struct{})
	s.engine.decodeGate = gate
	var openGate sync.Once
	defer openGate.Do(func() { close(gate) }) // never leave streams hanging

	const n, maxTokens = 1000, 4
	var want string // tokens 1.. (token 0 is read separately)
	for k := 1; k < maxTokens; k++ {
		want += outputToken(k)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	defer client.CloseIdleConnections()

	rests := make([]string, n)
	errs := make([]error, n)
	var first, done sync.WaitGroup
	first.Add(n)
	for i := range n {
		done.Go(func() {
			firstDone := false
			defer func() {
				if !firstDone {
					first.Done()
				}
			}()
			path, body := "/v1/chat/completions", chatBody(fmt.Sprintf("shared prefix %s request %d", words("s", 32), i),
				fmt.Sprintf(`"max_tokens":%d,"stream":true,"stream_options":{"include_usage":true}`, maxTokens))
			if i%2 == 1 {
				path, body = "/v1/completions", fmt.Sprintf(
					`{"prompt":"shared prefix %s request %d","max_tokens":%d,"stream":true,"stream_options":{"include_usage":true}}`,
					words("s", 32), i, maxTokens)
			}
			resp, err := client.Post(url+path, "application/json", strings.NewReader(body))
			if err != nil {
				errs[i] = err
				return
			}
			defer resp.Body.Close()
			r := bufio.NewReader(resp.Body)
			firstEvent(t, r)
			firstDone = true
			first.Done()
			b, err := io.ReadAll(r)
			if err != nil {
				errs[i] = err
				return
			}
			rests[i] = string(b)
		})
	}
	allFirst := make(chan struct{})
	go func() { first.Wait(); close(allFirst) }()
	select {
	case <-allFirst:
	case <-time.After(2 * time.Minute):
		t.Fatal("the 1,000 streams did not all get their first token within 2 minutes")
	}
	m := metrics(t, url)
	if m["vllm:num_requests_running"] != n || m["vllm:num_requests_waiting"] != 0 {
		t.Errorf("all %d streams past their first token: running %v, waiting %v; want %d, 0",
			n, m["vllm:num_requests_running"], m["vllm:num_requests_waiting"], n)
	}
	openGate.Do(func() { close(gate) })
	done.Wait()

	for i := range n {
		if errs[i] != nil {
			t.Errorf("request %d: %v", i, errs[i])
			continue
		}
		got := summarise(t, parseSSE(t, rests[i]))
		if got.text != want || got.tokens != maxTokens-1 || got.finish != "length" || got.usage == nil ||
			got.usage.PromptTokens != 36 || got.usage.CompletionTokens != maxTokens {
			t.Errorf("request %d: got %+v, want tokens 1.. %q, 36 prompt tokens", i, got, want)
		}
	}
	wantMetrics := map[string]float64{
		"vllm:num_requests_running":       0,
		"vllm:num_requests_waiting":       0,
		"vllm:generation_tokens_total":    n * maxTokens,
		"vllm:prompt_tokens_total":        n * 36,
		"vllm:prefix_cache_queries_total": n * 36,
		"vllm:request_success_total":      n,
		// All but the first to reach the GPU share the 32-token (two-block)
		// prefix "shared prefix s0 .. s29".
		"vllm:prefix_cache_hits_total":           (n - 1) * 32,
		"vllm:time_to_first_token_seconds_count": n,
	}
	if diff := cmp.Diff(wantMetrics, pick(metrics(t, url), wantMetrics)); diff != "" {
		t.Errorf("/metrics after %d streams (-want +got):\n%s", n, diff)
	}
}
