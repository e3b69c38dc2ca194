package main

// The LRU invariant the workload rests on (design document §4.5): with
// sequential dispatch and the same order in both passes, any pool larger
// than an LRU tier makes every pass-2 access miss that tier, because each
// miss evicts exactly the prefix needed next; a pool that fits hits on
// every access. The tests below check it on a small LRU model, first per
// prefix (the design document's argument), then per block on the prompts
// the plugin actually sends.

import (
	"container/list"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"testing"

	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/workload"
)

// lru is one cache tier: at most capacity entries, the least recently used
// evicted first.
type lru[K comparable] struct {
	capacity int
	order    *list.List // front = most recent
	at       map[K]*list.Element
}

func newLRU[K comparable](capacity int) *lru[K] {
	return &lru[K]{capacity: capacity, order: list.New(), at: map[K]*list.Element{}}
}

// has reports whether k is cached, without using it.
func (c *lru[K]) has(k K) bool { _, ok := c.at[k]; return ok }

// touch uses k: it becomes the most recent entry, inserted if absent, and
// the least recent entries beyond capacity are evicted.
func (c *lru[K]) touch(k K) {
	if e, ok := c.at[k]; ok {
		c.order.MoveToFront(e)
		return
	}
	c.at[k] = c.order.PushFront(k)
	for c.order.Len() > c.capacity {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.at, last.Value.(K))
	}
}

// access is a lookup followed by a use; it reports a hit.
func (c *lru[K]) access(k K) bool {
	hit := c.has(k)
	c.touch(k)
	return hit
}

func (c *lru[K]) len() int { return c.order.Len() }

func TestLRUModel(t *testing.T) {
	t.Parallel()
	// A repeated access hits.
	c := newLRU[int](2)
	if c.access(1) || !c.access(1) {
		t.Error("first access must miss, second hit")
	}
	// The least recently used entry is evicted.
	c = newLRU[int](2)
	c.access(1)
	c.access(2)
	c.access(3)
	if c.has(1) || !c.has(2) || !c.has(3) || c.len() != 2 {
		t.Errorf("after 1,2,3 in a 2-entry LRU: has 1 %v, 2 %v, 3 %v, len %d", c.has(1), c.has(2), c.has(3), c.len())
	}
	// Using an entry protects it from the next eviction.
	c = newLRU[int](2)
	c.access(1)
	c.access(2)
	c.access(1)
	c.access(3)
	if !c.has(1) || c.has(2) {
		t.Error("after 1,2,1,3: 2 should have been evicted, not 1")
	}
	// Capacity 0 keeps nothing.
	c = newLRU[int](0)
	if c.access(1) || c.access(1) || c.len() != 0 {
		t.Error("a 0-entry LRU cached something")
	}
}

// twoPassHits replays pool prefixes twice in order through an LRU of tier
// prefixes and counts the hits of the second pass.
func twoPassHits(pool, tier int) int {
	c := newLRU[int](tier)
	for i := range pool {
		c.access(i)
	}
	hits := 0
	for i := range pool {
		if c.access(i) {
			hits++
		}
	}
	return hits
}

func TestLRUInvariant(t *testing.T) {
	t.Parallel()
	// §9's cases: (pool, tier) → zero pass-2 hits.
	for _, tc := range [][2]int{{21, 20}, {40, 38}, {100, 50}, {1000, 950}} {
		if h := twoPassHits(tc[0], tc[1]); h != 0 {
			t.Errorf("pool %d over a tier of %d: %d pass-2 hits, want 0", tc[0], tc[1], h)
		}
	}
	// All hits when the pool fits: smaller than, and equal to, the tier.
	for _, tc := range [][2]int{{10, 20}, {15, 15}} {
		if h := twoPassHits(tc[0], tc[1]); h != tc[0] {
			t.Errorf("pool %d in a tier of %d: %d pass-2 hits, want all %d", tc[0], tc[1], h, tc[0])
		}
	}
	// And exhaustively for small sizes: overflow by one is already enough.
	for tier := 1; tier <= 40; tier++ {
		for pool := 1; pool <= 80; pool++ {
			want := 0
			if pool <= tier {
				want = pool
			}
			if h := twoPassHits(pool, tier); h != want {
				t.Fatalf("pool %d, tier %d: %d pass-2 hits, want %d", pool, tier, h, want)
			}
		}
	}
}

// TestAccessOrder checks what the invariant assumes of the plugin: both
// passes visit every prefix once, in the same (pool) order.
func TestAccessOrder(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: sevenOpts, Common: sevenCommon, Engine: sdktest.OutOfOrderEngine})
	order := func(sent []sdktest.Sent) []string {
		var out []string
		for _, s := range sent {
			out = append(out, s.Tags["prefix"])
		}
		return out
	}
	want := []string{"0", "1", "2", "3", "4", "5", "6"}
	if got := order(tr.Warmup()); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("pass 1 order %v", got)
	}
	if got := order(tr.Measured()); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("pass 2 order %v", got)
	}
}

// TestPoolOverflowsTier checks, over many configurations, that the pool
// the plugin sizes makes the prefix-level model miss on every pass-2
// access of a tier of thrash × tokens_per_gb tokens (floor(tier /
// prefix_tokens) prefixes), or that the plugin warns that it cannot.
func TestPoolOverflowsTier(t *testing.T) {
	t.Parallel()
	type cfg struct {
		ctx    int
		ratio  float64
		thrash float64
		tpg    int64
	}
	cases := []cfg{{8000, 0.8, 20, 50000}, {8000, 0.8, 20, 10000}, {8000, 0.8, 100, 50000}, {4000, 0.5, 10, 10000},
		{8000, 0.8, 20, 6553}, {32000, 0.9, 80, 8192}, {2000, 0.1, 0.5, 100000}, {1000, 0.5, 1, 1000}, {1000, 0.5, 1, 8192}}
	for _, r := range loadReference(t).Resolve {
		if r.Want.Error == "" {
			cases = append(cases, cfg{r.ContextLength, r.PrefixRatio, r.Thrash, r.TokensPerGB})
		}
	}
	warned := 0
	for _, tc := range cases {
		c := mustResolve(t, tc.ctx, tc.ratio, tc.thrash, tc.tpg)
		tier := int(c.tierTokens(tc.tpg)) / c.PrefixTokens
		log, logs := sdktest.CaptureLogs()
		if _, err := Definition.New(Options{ContextLength: tc.ctx, PrefixRatio: tc.ratio, Thrash: tc.thrash},
			workload.Env{Common: workload.Common{Seed: 42, TokensPerGB: tc.tpg}, Logger: *log, Content: workload.NewRegistry()}); err != nil {
			t.Fatal(err)
		}
		warning := len(logs.At(t, "warn")) > 0
		hits := twoPassHits(c.NumPrefixes, tier)
		switch {
		case warning:
			warned++
		case hits != 0:
			t.Errorf("%+v: %d prefixes over a tier of %d: %d pass-2 hits without a warning", tc, c.NumPrefixes, tier, hits)
		}
		if big := tc.tpg >= 8192 && tc.thrash >= 10; big && warning {
			t.Errorf("%+v: a realistic configuration warns", tc)
		}
	}
	if warned == 0 || warned == len(cases) {
		t.Errorf("%d of %d configurations warned; the grid should hold both kinds", warned, len(cases))
	}
}

// blockSize is the model's KV block, in tokens (words).
const blockSize = 16

// chainedBlocks cuts words into full blocks and returns each block's hash
// chained with the previous one, as vLLM's prefix cache does: a block can
// only hit if everything before it matches too.
func chainedBlocks(words []string) []uint64 {
	var out []uint64
	var prev uint64
	for i := 0; i+blockSize <= len(words); i += blockSize {
		h := fnv.New64a()
		binary.Write(h, binary.LittleEndian, prev)
		for _, w := range words[i : i+blockSize] {
			h.Write([]byte(w))
			h.Write([]byte{0})
		}
		prev = h.Sum64()
		out = append(out, prev)
	}
	return out
}

// contentBlocks hashes each full block on its own (CacheBlend-style chunk
// reuse: a chunk can hit wherever it appears).
func contentBlocks(words []string) []string {
	var out []string
	for i := 0; i+blockSize <= len(words); i += blockSize {
		out = append(out, strings.Join(words[i:i+blockSize], " "))
	}
	return out
}

// prefixCacheRun replays a transcript's requests through one block LRU of
// capacityTokens: each request hits on its longest run of leading cached
// blocks, then stores all its blocks. It returns the hit blocks of each
// pass-2 request, by prefix.
func prefixCacheRun(tr *sdktest.Transcript, capacityTokens int) map[string]int {
	c := newLRU[uint64](capacityTokens / blockSize)
	hits := map[string]int{}
	for _, s := range tr.Requests {
		blocks := chainedBlocks(strings.Fields(s.Messages[0].Content))
		n := 0
		for n < len(blocks) && c.has(blocks[n]) {
			n++
		}
		for _, b := range blocks {
			c.touch(b)
		}
		if s.Phase == "measure" {
			hits[s.Tags["prefix"]] = n
		}
	}
	return hits
}

// TestBlockLRUInvariant replays the prompts the plugin sends through a
// block-level LRU the size of the targeted tier (thrash × tokens_per_gb
// tokens): no pass-2 request hits it. A lower tier that holds the whole
// pool (the disk of GPU+CPU+disk, by the LRU inclusion property) hits on
// every prefix block of every pass-2 request, and on nothing past the
// prefix, since the breaker differs between the passes.
func TestBlockLRUInvariant(t *testing.T) {
	t.Parallel()
	// 300-token requests: 150-token prefixes (147 words: 9 full blocks).
	for _, tpg := range []int64{3000, 5715, 14286} {
		t.Run(fmt.Sprint(tpg, " tokens/GB"), func(t *testing.T) {
			t.Parallel()
			tr := sdktest.Run(t, Definition, sdktest.Options{
				Options: map[string]any{"context-length": 300, "prefix-ratio": 0.5, "thrash": 1.0},
				Common:  workload.Common{TokensPerGB: tpg},
			})
			n := len(tr.Measured())
			if n < 21 {
				t.Fatalf("%d prefixes", n)
			}
			for p, h := range prefixCacheRun(tr, int(tpg)) {
				if h != 0 {
					t.Errorf("targeted tier of %d tokens: pass-2 prefix %s hits %d blocks, want 0", tpg, p, h)
				}
			}
			// Room for both passes, so the tier never evicts.
			lower := prefixCacheRun(tr, 2*n*300)
			prefixBlocks := (150 - 3) / blockSize
			for i := range n {
				if h := lower[strconv.Itoa(i)]; h != prefixBlocks {
					t.Errorf("tier holding the pool: pass-2 prefix %d hits %d blocks, want its %d prefix blocks", i, h, prefixBlocks)
				}
			}
		})
	}
}

// TestBlendReuse checks what CacheBlend-style chunk reuse can find in the
// stream: across requests only the shared suffix's chunks repeat; no chunk
// of a prefix appears in another prefix, and no breaker chunk repeats.
func TestBlendReuse(t *testing.T) {
	t.Parallel()
	tr := sdktest.Run(t, Definition, sdktest.Options{
		Options: map[string]any{"context-length": 300, "prefix-ratio": 0.5, "thrash": 1.0},
		Common:  workload.Common{TokensPerGB: 3000},
	})
	seen := map[string]string{} // chunk -> prefix that first sent it
	for k, s := range tr.Warmup() {
		words := strings.Fields(s.Messages[0].Content)
		br, sx := -1, -1
		for i, w := range words {
			if strings.HasPrefix(w, "BR_") && br < 0 {
				br = i
			}
			if w == "SUFFIX" {
				sx = i
			}
		}
		for j, ch := range contentBlocks(words) {
			start, end := j*blockSize, (j+1)*blockSize
			first, dup := seen[ch]
			switch {
			case start >= sx: // all suffix
				if k > 0 && !dup {
					t.Errorf("%s: suffix chunk %d was not sent before", s.ID, j)
				}
			case dup:
				t.Errorf("%s: chunk %d (words %d-%d, breaker at %d) repeats a chunk of prefix %s", s.ID, j, start, end, br, first)
			}
			if !dup {
				seen[ch] = s.Tags["prefix"]
			}
		}
	}
}
