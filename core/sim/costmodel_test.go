package sim

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lmbench/lmbench/core/sim/prefixcache"
)

func TestPrefillCost(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig() // 50µs prefill, 5µs CPU load, 20µs disk load, 0.15 recompute
	tests := []struct {
		computed, blended, cpu, disk int
		want                         time.Duration
	}{
		{0, 0, 0, 0, 0},
		{1000, 0, 0, 0, 50 * time.Millisecond},
		{1000, 0, 1000, 0, 55 * time.Millisecond},
		{1000, 0, 0, 1000, 70 * time.Millisecond},
		{0, 1000, 0, 0, 7500 * time.Microsecond}, // 150 recomputed
		{100, 1000, 1000, 0, 5*time.Millisecond + 7500*time.Microsecond + 5*time.Millisecond}, // blended from CPU: load too
	}
	for _, tt := range tests {
		if got := cfg.prefillCost(tt.computed, tt.computed, tt.blended, tt.cpu, tt.disk); got != tt.want {
			t.Errorf("prefillCost(computed %d, blended %d, cpu %d, disk %d) = %v, want %v",
				tt.computed, tt.blended, tt.cpu, tt.disk, got, tt.want)
		}
	}
}

// gen runs one prompt through e and fails the test on error.
func gen(t *testing.T, e *engine, prompt string) generation {
	t.Helper()
	g, err := e.generate(t.Context(), tokenize(prompt), 1, 0, nil, func(int, string) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestCostModelByTier follows one document through the tiers: a cold
// prefill, a GPU hit, a CPU hit once the GPU has evicted it, a disk hit once
// the CPU has too, each costing what the model says.
func TestCostModelByTier(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.TimeScale = 0
	cfg.TokensPerGB = 1024
	cfg.GPUGB, cfg.CPUGB, cfg.DiskGB = 1, 2, 8 // 1,024 / 2,048 / 8,192 tokens
	e := newEngine(cfg)
	doc := func(name string) string { return words(name, 1024) } // 64 blocks: fills the GPU
	q := " question here"

	g := gen(t, e, doc("a")+q)
	if g.cachedTokens != 0 || g.prefillCost != 1026*cfg.PrefillPerToken {
		t.Errorf("cold: cached %d, cost %v; want 0, %v", g.cachedTokens, g.prefillCost, 1026*cfg.PrefillPerToken)
	}
	g = gen(t, e, doc("a")+q+" again")
	if g.cachedBy != [prefixcache.NumTiers]int{1024, 0, 0} || g.prefillCost != 3*cfg.PrefillPerToken {
		t.Errorf("GPU hit: cached by tier %v, cost %v; want [1024 0 0], %v", g.cachedBy, g.prefillCost, 3*cfg.PrefillPerToken)
	}
	gen(t, e, doc("b")+q) // the GPU now holds b; the CPU a and b
	g = gen(t, e, doc("a")+q)
	if want := 1024*cfg.CPULoadPerToken + 2*cfg.PrefillPerToken; g.cachedBy != [prefixcache.NumTiers]int{0, 1024, 0} || g.prefillCost != want {
		t.Errorf("CPU hit: cached by tier %v, cost %v; want [0 1024 0], %v", g.cachedBy, g.prefillCost, want)
	}
	gen(t, e, doc("c")+q) // CPU: a, c ... b demoted to disk
	gen(t, e, doc("d")+q) // CPU: c, d; a demoted to disk
	g = gen(t, e, doc("a")+q)
	if want := 1024*cfg.DiskLoadPerToken + 2*cfg.PrefillPerToken; g.cachedBy != [prefixcache.NumTiers]int{0, 0, 1024} || g.prefillCost != want {
		t.Errorf("disk hit: cached by tier %v, cost %v; want [0 0 1024], %v", g.cachedBy, g.prefillCost, want)
	}
	if g.cachedTokens != 1024 {
		t.Errorf("disk hit: cachedTokens %d, want 1024 (usage counts hits from every tier)", g.cachedTokens)
	}
}

func TestBlendCostAndAccounting(t *testing.T) {
	t.Parallel()
	cfg := fastConfig()
	cfg.Blend = true
	_, url := startServer(t, cfg)
	shared := words("shared", 320) // 20 blocks
	send := func(prefix string) usage {
		status, body := postRead(t, url+"/v1/completions",
			fmt.Sprintf(`{"prompt":%q,"max_tokens":1,"stream":true,"stream_options":{"include_usage":true}}`, prefix+" "+shared+" end"))
		if status != http.StatusOK {
			t.Fatalf("status %d: %s", status, body)
		}
		return *summarise(t, parseSSE(t, body)).usage
	}
	send(words("first", 16))       // one block of its own, then the shared text
	u := send(words("second", 16)) // a different first block: no prefix hit
	if u.PromptTokensDetails.CachedTokens != 0 {
		t.Errorf("cached_tokens = %d, want 0 (blended tokens are not prefix hits)", u.PromptTokensDetails.CachedTokens)
	}
	want := map[string]float64{
		`lmbench_sim:kv_blend_hit_tokens_total{tier="gpu"}`:  320,
		`lmbench_sim:kv_prefix_hit_tokens_total{tier="gpu"}`: 0,
		"lmbench_sim:blend_recomputed_tokens_total":          48, // 15% of 320
		"lmbench_sim:prefill_computed_tokens_total":          337 + 17,
	}
	if got := pick(metrics(t, url), want); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("/metrics: got %v, want %v", got, want)
	}
}

// TestTimeToFirstTokenGrowsWithQueuePosition queues requests while the GPU
// is busy: served in arrival order, the k-th waits for k prefills.
func TestTimeToFirstTokenGrowsWithQueuePosition(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.PrefillPerToken = 100 * time.Microsecond
	cfg.GPUGB, cfg.CPUGB = 0, 0
	s, url := startServer(t, cfg)
	const n, tokens = 5, 300 // 30ms each
	prefill := tokens * cfg.PrefillPerToken

	// Hold the GPU slot from here, so the requests queue in a known order
	// however long sending them takes.
	if err := s.engine.gpu.acquire(t.Context()); err != nil {
		t.Fatal(err)
	}
	released := false
	defer func() {
		if !released {
			s.engine.gpu.release()
		}
	}()

	firsts := make([]time.Time, n)
	var wg sync.WaitGroup
	for i := range n {
		body := fmt.Sprintf(`{"prompt":%q,"max_tokens":1,"stream":true}`, words(fmt.Sprint("p", i, "-"), tokens))
		wg.Go(func() {
			resp := post(t, t.Context(), url+"/v1/completions", body)
			defer resp.Body.Close()
			r := bufio.NewReader(resp.Body)
			firsts[i] = firstEvent(t, r)
			_, _ = io.Copy(io.Discard, r)
		})
		// The next one arrives after this one is queued.
		waitFor(t, "request to queue", func() bool {
			s.engine.gpu.mu.Lock()
			defer s.engine.gpu.mu.Unlock()
			return s.engine.gpu.waiters.Len() == i+1
		})
	}
	start := time.Now()
	released = true
	s.engine.gpu.release()
	wg.Wait()
	// Lower bounds only (a timer never fires early): the k-th to arrive
	// waits for k+1 prefills after the GPU is free.
	for k := range n {
		want := time.Duration(k+1) * prefill
		if got := firsts[k].Sub(start); got < want {
			t.Errorf("request %d (queue position %d) got its first token after %v, want >= %v: served out of order or concurrently",
				k, k+1, got, want)
		}
	}
}

func TestResetPrefixCache(t *testing.T) {
	t.Parallel()
	_, url := startServer(t, fastConfig())
	body := fmt.Sprintf(`{"prompt":%q,"max_tokens":1}`, words("r", 100))
	cached := func() string {
		_, b := postRead(t, url+"/v1/completions", body)
		i := strings.Index(b, `"cached_tokens":`)
		return b[i : strings.IndexByte(b[i:], '}')+i]
	}
	cached()
	if got := cached(); got != `"cached_tokens":96` {
		t.Fatalf("second request: %s, want 96", got)
	}
	if status, _ := postRead(t, url+"/reset_prefix_cache", ""); status != http.StatusOK {
		t.Fatalf("reset: status %d", status)
	}
	// The GPU tier is empty, the CPU tier still has it.
	if got := cached(); got != `"cached_tokens":96` {
		t.Errorf("after resetting the GPU tier: %s, want 96 (from the CPU tier)", got)
	}
	m := metrics(t, url)
	if m[`lmbench_sim:kv_prefix_hit_tokens_total{tier="cpu"}`] != 96 {
		t.Errorf("CPU-tier hits %v, want 96", m[`lmbench_sim:kv_prefix_hit_tokens_total{tier="cpu"}`])
	}
	if status, _ := postRead(t, url+"/reset_prefix_cache?tiers=all", ""); status != http.StatusOK {
		t.Fatalf("reset all: status %d", status)
	}
	if got := cached(); got != `"cached_tokens":0` {
		t.Errorf("after resetting every tier: %s, want 0", got)
	}
	if status, b := postRead(t, url+"/reset_prefix_cache?tiers=l3", ""); status != http.StatusBadRequest || !strings.Contains(b, `tiers: expected gpu or all, got \"l3\"`) {
		t.Errorf("bad tiers: status %d, body %s", status, b)
	}
}

// TestSlowHitsFault: with Faults.SlowHits a hit is still reported cached
// but costs what a cold prefill of the whole prompt costs.
func TestSlowHitsFault(t *testing.T) {
	t.Parallel()
	for _, slow := range []bool{false, true} {
		cfg := DefaultConfig()
		cfg.TimeScale = 0
		cfg.Faults.SlowHits = slow
		e := newEngine(cfg)
		prompt := words("doc", 1024) + " question"
		gen(t, e, prompt)
		g := gen(t, e, prompt)
		want := 1 * cfg.PrefillPerToken // only the last block's token past the 1,024 cached
		if slow {
			want = 1025 * cfg.PrefillPerToken
		}
		if g.cachedTokens != 1024 || g.prefillCost != want {
			t.Errorf("slow hits %v: cached %d, cost %v; want 1024, %v", slow, g.cachedTokens, g.prefillCost, want)
		}
	}
}

// TestPrefillCostGrowthAndOverhead: the fixed overhead is paid once, and
// every computed token costs more as the prompt grows.
func TestPrefillCostGrowthAndOverhead(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.PrefillOverhead = 3 * time.Millisecond
	cfg.PrefillGrowth = 10 * time.Microsecond // per 1,000 prompt tokens
	// 2,000-token prompt, 1,000 computed: 3ms + 1000 x (50 + 20)µs = 73ms;
	// 1,000 from the CPU tier at 5µs: 5ms more.
	if got, want := cfg.prefillCost(2000, 1000, 0, 1000, 0), 78*time.Millisecond; got != want {
		t.Errorf("prefillCost = %v, want %v", got, want)
	}
}

// TestDecodeStepGrowsWithBatch: each other decoding request adds
// DecodePerSeq to the gap, and none adds nothing by default.
func TestDecodeStepGrowsWithBatch(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	e := newEngine(cfg)
	e.decoding.Store(5)
	if got := e.decodeStep(); got != 10*time.Millisecond {
		t.Errorf("default decode step with 5 decoding = %v, want 10ms", got)
	}
	cfg.DecodePerSeq = 2 * time.Millisecond
	e = newEngine(cfg)
	for _, tt := range []struct {
		running int64
		want    time.Duration
	}{{0, 10 * time.Millisecond}, {1, 10 * time.Millisecond}, {5, 18 * time.Millisecond}} {
		e.decoding.Store(tt.running)
		if got := e.decodeStep(); got != tt.want {
			t.Errorf("decode step with %d decoding = %v, want %v", tt.running, got, tt.want)
		}
	}
}

// TestMaxNumSeqs: with two places, a third request waits until one of
// the first two finishes, and gets in then.
func TestMaxNumSeqs(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.MaxNumSeqs = 2
	e := newEngine(cfg)
	var leaves []func()
	for range 2 {
		leave, err := e.admit(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		leaves = append(leaves, leave)
	}
	got := make(chan error, 1)
	go func() {
		_, err := e.admit(t.Context())
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("third request admitted beside two (err %v); want it held", err)
	case <-time.After(50 * time.Millisecond):
	}
	leaves[0]()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}
