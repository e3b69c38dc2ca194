package sim

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/core/sim/prefixcache"
)

func TestStartRefusesNonLoopback(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{":0", "0.0.0.0:0", "[::]:0", "192.0.2.1:0", "example.com:0", "127.0.0.1"} {
		s, err := New(fastConfig(), nopLogger())
		if err != nil {
			t.Fatal(err)
		}
		if url, err := s.Start(addr); err == nil {
			t.Errorf("Start(%q) = %q, nil; want an error", addr, url)
		}
		s.Close()
	}
}

func TestStartOnLoopback(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"127.0.0.1:0", "localhost:0"} {
		s, err := New(fastConfig(), nopLogger())
		if err != nil {
			t.Fatal(err)
		}
		url, err := s.Start(addr)
		if err != nil {
			t.Fatalf("Start(%q): %v", addr, err)
		}
		if !strings.HasPrefix(url, "http://127.0.0.1:") && !strings.HasPrefix(url, "http://[::1]:") {
			t.Errorf("Start(%q) = %q, want http://127.0.0.1:PORT or http://[::1]:PORT", addr, url)
		}
		if status, _ := get(t, url+"/health"); status != http.StatusOK {
			t.Errorf("GET /health: status %d", status)
		}
		if _, err := s.Start(addr); err == nil {
			t.Errorf("second Start(%q): nil error, want one", addr)
		}
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if _, err := s.Start(addr); err == nil {
			t.Errorf("Start(%q) after Close: nil error, want one", addr)
		}
	}
}

func TestCloseCancelsStreams(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.PrefillPerToken = 0
	cfg.DecodePerToken = time.Hour
	s, err := New(cfg, nopLogger())
	if err != nil {
		t.Fatal(err)
	}
	url, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	resp := post(t, t.Context(), url+"/v1/completions", `{"prompt":"a","max_tokens":5,"stream":true}`)
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	firstEvent(t, r)

	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return with a stream in flight")
	}
	rest, _ := io.ReadAll(r) // ends with an error or EOF, not after an hour
	if strings.Contains(string(rest), "[DONE]") {
		t.Errorf("stream cut by Close ended with [DONE]: %q", rest)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestCloseCancelsRequestsUnderAnotherServer(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.PrefillPerToken = time.Hour
	s, err := New(cfg, nopLogger())
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()

	done := make(chan int, 1)
	go func() {
		resp, err := http.Post(ts.URL+"/v1/completions", "application/json", strings.NewReader(`{"prompt":"a"}`))
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	waitFor(t, "the request to reach the GPU", func() bool { return s.engine.stats.running.Load() == 1 })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if status := <-done; status != http.StatusServiceUnavailable {
		t.Errorf("request cancelled by Close: status %d, want 503", status)
	}
	if status, _ := postRead(t, ts.URL+"/v1/completions", `{"prompt":"a"}`); status != http.StatusServiceUnavailable {
		t.Errorf("request after Close: status %d, want 503", status)
	}
}

func TestMetricsCountCacheTokens(t *testing.T) {
	t.Parallel()
	_, url := startServer(t, fastConfig())
	doc := words("d", 160) // 10 blocks
	for _, q := range []string{"first question", "second question here"} {
		if status, body := postRead(t, url+"/v1/chat/completions", chatBody(doc+" "+q, `"max_tokens":3`)); status != 200 {
			t.Fatalf("status %d: %s", status, body)
		}
	}
	want := map[string]float64{
		"vllm:num_requests_running":                          0,
		"vllm:num_requests_waiting":                          0,
		"vllm:prefix_cache_queries_total":                    162 + 163,
		"vllm:prefix_cache_hits_total":                       160,
		"vllm:prompt_tokens_total":                           162 + 163,
		"vllm:generation_tokens_total":                       6,
		"vllm:request_success_total":                         2,
		"vllm:time_to_first_token_seconds_count":             2,
		`vllm:time_to_first_token_seconds_bucket{le="+Inf"}`: 2,
		`lmbench_sim:kv_prefix_hit_tokens_total{tier="gpu"}`: 160,
		`lmbench_sim:kv_prefix_hit_tokens_total{tier="cpu"}`: 0,
		`lmbench_sim:kv_used_tokens{tier="gpu"}`:             160, // both prompts: the same 10 full blocks
		`lmbench_sim:kv_capacity_tokens{tier="gpu"}`:         8 * 8192,
		`lmbench_sim:kv_capacity_tokens{tier="cpu"}`:         32 * 8192,
		`lmbench_sim:kv_capacity_tokens{tier="disk"}`:        0,
		"lmbench_sim:prefill_computed_tokens_total":          162 + 3,
		`lmbench_sim:faults_total{kind="http_500"}`:          0,
	}
	if diff := cmp.Diff(want, pick(metrics(t, url), want)); diff != "" {
		t.Errorf("/metrics (-want +got):\n%s", diff)
	}
}

func TestMetricsWithCachingOff(t *testing.T) {
	t.Parallel()
	cfg := fastConfig()
	cfg.GPUGB, cfg.CPUGB = 0, 0
	_, url := startServer(t, cfg)
	for range 2 {
		status, body := postRead(t, url+"/v1/completions", fmt.Sprintf(`{"prompt":%q,"max_tokens":1}`, words("d", 64)))
		if status != http.StatusOK {
			t.Fatalf("status %d: %s", status, body)
		}
		if !strings.Contains(body, `"cached_tokens":0`) {
			t.Errorf("caching off: want cached_tokens 0 in %s", body)
		}
	}
	m := metrics(t, url)
	if m["vllm:prefix_cache_hits_total"] != 0 || m["vllm:prefix_cache_queries_total"] != 0 {
		t.Errorf("caching off: hits %v, queries %v; want 0, 0",
			m["vllm:prefix_cache_hits_total"], m["vllm:prefix_cache_queries_total"])
	}
}

func TestDisconnectFreesTheGPU(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.PrefillPerToken = time.Second // 10 tokens: a 10s prefill
	_, url := startServer(t, cfg)

	gauges := func(running, waiting float64) func() bool {
		return func() bool {
			m := metrics(t, url)
			return m["vllm:num_requests_running"] == running && m["vllm:num_requests_waiting"] == waiting
		}
	}
	send := func(ctx context.Context, wg *sync.WaitGroup, prompt string) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/completions",
			strings.NewReader(fmt.Sprintf(`{"prompt":%q,"stream":true}`, prompt)))
		wg.Go(func() {
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		})
	}

	var wg sync.WaitGroup
	ctxA, cancelA := context.WithCancel(t.Context())
	defer cancelA()
	send(ctxA, &wg, words("a", 10))
	waitFor(t, "A prefilling", gauges(1, 0))

	ctxB, cancelB := context.WithCancel(t.Context())
	defer cancelB()
	send(ctxB, &wg, words("b", 10))
	waitFor(t, "B queued behind A", gauges(1, 1))

	cancelA() // A hangs up mid-prefill; B gets the GPU
	waitFor(t, "B prefilling after A left", gauges(1, 0))

	cancelB() // B hangs up while prefilling
	waitFor(t, "an idle engine", gauges(0, 0))
	wg.Wait()
}

// TestMetricsLedger: a request's cached_tokens is the sum of the
// increments of vLLM's GPU and external prefix-hit counters, and the
// latency histograms count one observation per request (ITL: per gap).
func TestMetricsLedger(t *testing.T) {
	t.Parallel()
	s, url := startServer(t, fastConfig())
	doc := words("d", 160) // 10 blocks
	cached := func(q string) float64 {
		t.Helper()
		status, body := postRead(t, url+"/v1/chat/completions", chatBody(doc+" "+q, `"max_tokens":4`))
		if status != http.StatusOK {
			t.Fatalf("status %d: %s", status, body)
		}
		var resp struct {
			Usage usage `json:"usage"`
		}
		if err := json.Unmarshal([]byte(body), &resp); err != nil {
			t.Fatal(err)
		}
		return float64(resp.Usage.PromptTokensDetails.CachedTokens)
	}
	hits := func() float64 {
		m := metrics(t, url)
		return m["vllm:prefix_cache_hits_total"] + m["vllm:external_prefix_cache_hits_total"]
	}
	var sum float64
	sum += cached("cold")
	sum += cached("warm from the GPU tier")
	s.engine.cache.Reset(prefixcache.GPU)
	sum += cached("warm from the CPU tier")
	m := metrics(t, url)
	want := map[string]float64{
		"vllm:prefix_cache_hits_total":                       160,
		"vllm:external_prefix_cache_hits_total":              160,
		"vllm:external_prefix_cache_queries_total":           161 + (165 - 160) + 165,
		"lmcache:num_hit_tokens_total":                       160,
		"lmcache:num_retrieve_requests_total":                3,
		"vllm:num_preemptions_total":                         0,
		"vllm:time_to_first_token_seconds_count":             3,
		"vllm:inter_token_latency_seconds_count":             3 * 3,
		"vllm:e2e_request_latency_seconds_count":             3,
		`vllm:e2e_request_latency_seconds_bucket{le="+Inf"}`: 3,
		`lmbench_sim:resets_total{cleared="true"}`:           0,
	}
	if diff := cmp.Diff(want, pick(m, want)); diff != "" {
		t.Errorf("/metrics (-want +got):\n%s", diff)
	}
	if got := hits(); got != sum {
		t.Errorf("GPU + external prefix hits = %v, want the sum of cached_tokens %v", got, sum)
	}
	if got, want := m["vllm:kv_cache_usage_perc"], 160.0/(8*8192); got != want {
		t.Errorf("kv_cache_usage_perc = %v, want %v (10 blocks of 8 GB)", got, want)
	}
}

func TestMetricsWithoutLowerTiers(t *testing.T) {
	t.Parallel()
	cfg := fastConfig()
	cfg.CPUGB = 0
	_, url := startServer(t, cfg)
	m := metrics(t, url)
	for _, name := range []string{"vllm:external_prefix_cache_hits_total", "lmcache:num_hit_tokens_total"} {
		if _, ok := m[name]; ok {
			t.Errorf("%s served with no CPU or disk tier", name)
		}
	}
	if _, ok := m["vllm:prefix_cache_hits_total"]; !ok {
		t.Error("vllm:prefix_cache_hits_total missing")
	}
}
