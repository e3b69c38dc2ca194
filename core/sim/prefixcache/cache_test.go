package prefixcache

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// hashesOf returns the block hashes of a space-separated prompt.
func hashesOf(prompt string, blockSize int) []BlockHash {
	return BlockHashes(strings.Fields(prompt), blockSize)
}

func TestBlockHashes(t *testing.T) {
	t.Parallel()
	if got := len(hashesOf("a b c d e", 2)); got != 2 {
		t.Errorf("5 tokens in blocks of 2: %d hashes, want 2 (the partial block has none)", got)
	}
	if got := len(hashesOf("a", 2)); got != 0 {
		t.Errorf("1 token in blocks of 2: %d hashes, want 0", got)
	}
	abcd := hashesOf("a b c d", 2)
	if again := hashesOf("a  b\nc d", 2); abcd[0] != again[0] || abcd[1] != again[1] {
		t.Error("same tokens, different whitespace: hashes differ, want equal")
	}
	// Block "c d" after "a b" is not block "c d" after "x y", nor "c d" first.
	if xycd := hashesOf("x y c d", 2); xycd[1] == abcd[1] {
		t.Error("same block content after a different prefix: same hash, want different (hashes must chain)")
	}
	if cd := hashesOf("c d", 2); cd[0] == abcd[1] {
		t.Error("same block content at a different position: same hash, want different")
	}
	// Token boundaries count: "ab c" is not "a bc".
	if hashesOf("ab c", 2)[0] == hashesOf("a bc", 2)[0] {
		t.Error(`blocks ["ab","c"] and ["a","bc"] hash equal, want different`)
	}
}

func TestWindowHashesAreContentHashes(t *testing.T) {
	t.Parallel()
	toks := strings.Fields("x a b c y a b c")
	w := WindowHashes(toks, 3)
	if len(w) != 6 {
		t.Fatalf("8 tokens, windows of 3: %d hashes, want 6", len(w))
	}
	if w[1] != w[5] {
		t.Error(`window "a b c" at 1 and at 5: hashes differ, want equal (chunk hashes ignore position)`)
	}
	if w[0] == w[1] || w[1] == w[2] {
		t.Error("different windows hash equal")
	}
	// Rolling equals direct.
	for i := range w {
		if direct := WindowHashes(toks[i:i+3], 3)[0]; direct != w[i] {
			t.Errorf("window %d: rolling hash %x, direct %x", i, w[i], direct)
		}
	}
	if got := AlignedChunks(w, 3); !cmp.Equal(got, []uint64{w[0], w[3]}) {
		t.Errorf("aligned chunks = %x, want windows 0 and 3", got)
	}
}

// testCache returns a cache of 2-token blocks with the given tier sizes
// in blocks (0: off).
func testCache(gpu, cpu, disk int) *Cache {
	return New(2, [NumTiers]int{gpu, cpu, disk})
}

// use runs one prompt through the cache as the engine does (every block
// but the one holding the last token can hit) and returns what it found.
func use(c *Cache, prompt string, blend bool) Result {
	toks := strings.Fields(prompt)
	hashes := BlockHashes(toks, c.blockSize)
	var windows, chunks []uint64
	if blend {
		windows = WindowHashes(toks, c.blockSize)
		chunks = AlignedChunks(windows, c.blockSize)
	}
	matchable := min((len(toks)-1)/c.blockSize, len(hashes))
	r := c.Lookup(hashes, matchable, windows, len(toks)-1)
	c.Commit(r, hashes, chunks)
	return r
}

// tiersOf lists the tier each prefix block of prompt is in ("-": none).
func tiersOf(c *Cache, prompt string) string {
	var out []string
	for _, h := range hashesOf(prompt, c.blockSize) {
		if t := c.tierOf(h); t == None {
			out = append(out, "-")
		} else {
			out = append(out, names[t])
		}
	}
	return strings.Join(out, " ")
}

func TestGPUTierLRU(t *testing.T) {
	t.Parallel()
	c := testCache(3, 0, 0)
	p1, p2, p3, p4 := "a1 a1 a2 a2 x", "b1 b1 b2 b2 x", "c1 c1 x", "d1 d1 x"

	use(c, p1, false)
	use(c, p2, false)
	// 4 blocks into 3: p1's tail goes first; its head outlives it.
	if got, want := tiersOf(c, p1), "gpu -"; got != want {
		t.Errorf("after p1, p2: p1 blocks in %q, want %q", got, want)
	}
	if r := use(c, p1, false); len(r.Prefix) != 1 {
		t.Errorf("p1 again: %d prefix blocks hit, want 1 (its head)", len(r.Prefix))
	}
	// p1 is now most recent; p2's tail, then its head made room.
	if got, want := tiersOf(c, p2), "gpu -"; got != want {
		t.Errorf("after re-using p1: p2 blocks in %q, want %q", got, want)
	}
	use(c, p3, false) // evicts the least recent: p2's head
	if got, want := tiersOf(c, p2), "- -"; got != want {
		t.Errorf("after p3: p2 blocks in %q, want %q", got, want)
	}
	use(c, p1, false) // refresh: now p3 is the least recent
	use(c, p4, false)
	if got, want := tiersOf(c, p3), "-"; got != want {
		t.Errorf("after refreshing p1 and storing p4: p3 in %q, want %q", got, want)
	}
	if got, want := tiersOf(c, p1), "gpu gpu"; got != want {
		t.Errorf("p1 in %q, want %q", got, want)
	}
	s := c.Snapshot()
	if s[GPU].UsedBlocks != 3 || s[CPU].On || s[Disk].On {
		t.Errorf("snapshot %+v: want 3 GPU blocks used, CPU and disk off", s)
	}
	if s[GPU].Counters.Evicted == 0 || s[GPU].Counters.Promoted != 0 {
		t.Errorf("GPU counters %+v: want evictions and no loads", s[GPU].Counters)
	}
}

func TestLongPromptKeepsItsHead(t *testing.T) {
	t.Parallel()
	c := testCache(10, 0, 0)
	var prompt []string
	for i := range 41 { // 20 full blocks, twice the capacity, and a last token
		prompt = append(prompt, fmt.Sprint("t", i))
	}
	p := strings.Join(prompt, " ")
	use(c, p, false)
	if r := use(c, p, false); len(r.Prefix) != 10 {
		t.Errorf("prompt of 20 blocks in a 10-block cache hits %d blocks, want 10 (its head)", len(r.Prefix))
	}
}

func TestCacheOff(t *testing.T) {
	t.Parallel()
	c := testCache(0, 0, 0)
	if c.on() {
		t.Fatal("all tiers 0: on() = true")
	}
	use(c, "a b c d e", false)
	if r := use(c, "a b c d e", false); len(r.Prefix) != 0 {
		t.Errorf("cache off: %d blocks hit, want 0", len(r.Prefix))
	}
}

func TestDemotionAndPromotion(t *testing.T) {
	t.Parallel()
	// GPU 2 blocks, CPU 4, disk 8. Each prompt: 2 full blocks + 1 token.
	c := testCache(2, 4, 8)
	p := func(i int) string { return fmt.Sprintf("p%d p%d q%d q%d x", i, i, i, i) }
	use(c, p(1), false)
	use(c, p(2), false)
	// GPU holds p2; everything is written through to CPU.
	for i, want := range []string{"", "cpu cpu", "gpu gpu"} {
		if i > 0 && tiersOf(c, p(i)) != want {
			t.Errorf("after p1, p2: p%d in %q, want %q", i, tiersOf(c, p(i)), want)
		}
	}
	use(c, p(3), false)
	use(c, p(4), false)
	// CPU (4 blocks) now holds p3, p4: p1 and p2 were demoted to disk.
	for i, want := range []string{"", "disk disk", "disk disk", "cpu cpu", "gpu gpu"} {
		if i > 0 && tiersOf(c, p(i)) != want {
			t.Errorf("after p1..p4: p%d in %q, want %q", i, tiersOf(c, p(i)), want)
		}
	}
	// p1 again: a disk hit, loaded and promoted to the GPU and the CPU
	// (leaving disk); the CPU's least recent, p3, is demoted to disk.
	r := use(c, p(1), false)
	if len(r.Prefix) != 2 || r.Prefix[0].From != Disk || r.Prefix[1].From != Disk {
		t.Errorf("p1 again: prefix hits %v, want 2 from disk", r.Prefix)
	}
	for i, want := range []string{"", "gpu gpu", "disk disk", "disk disk", "cpu cpu"} {
		if i > 0 && tiersOf(c, p(i)) != want {
			t.Errorf("after p1 again: p%d in %q, want %q", i, tiersOf(c, p(i)), want)
		}
	}
	// p4 again: a CPU Hit (the GPU evicted it for p1).
	if r := use(c, p(4), false); r.Prefix[0].From != CPU || r.Prefix[1].From != CPU {
		t.Errorf("p4 again: hits from %v, want the CPU tier", r.Prefix)
	}
	s := c.Snapshot()
	want := map[string]Counters{
		// gpu: 6 uses of 2 blocks, all inserted; the last 2 remain.
		"gpu": {Hits: 0, Stored: 12, Evicted: 10},
		// cpu: p1..p4 written (8), p1 promoted back (2); p1, p2, p3
		// evicted; nothing demoted in (GPU victims were there already).
		"cpu": {Hits: 2, Promoted: 2, Stored: 10, Evicted: 6},
		// disk: p1, p2, p3 demoted in; p1 loaded and moved up.
		"disk": {Hits: 2, Promoted: 2, Stored: 6, DemotedIn: 6},
	}
	got := map[string]Counters{}
	for _, ts := range s {
		got[ts.Name] = ts.Counters
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tier counters (-want +got):\n%s", diff)
	}
	if s[GPU].UsedBlocks != 2 || s[CPU].UsedBlocks != 4 || s[Disk].UsedBlocks != 4 {
		t.Errorf("used blocks gpu %d cpu %d disk %d, want 2, 4, 4",
			s[GPU].UsedBlocks, s[CPU].UsedBlocks, s[Disk].UsedBlocks)
	}
}

func TestGPUEvictionDemotesToCPUWhenMissing(t *testing.T) {
	t.Parallel()
	// A GPU larger than the CPU: the CPU drops blocks the GPU still holds;
	// when the GPU evicts them later they are demoted to the CPU.
	c := testCache(4, 2, 0)
	use(c, "a a b b x", false) // gpu: a b; cpu: a b
	use(c, "c c d d x", false) // gpu: a b c d; cpu: c d (a, b dropped: no disk)
	if got := tiersOf(c, "a a b b"); got != "gpu gpu" {
		t.Fatalf("a b in %q, want gpu gpu", got)
	}
	use(c, "e e f f x", false) // gpu evicts b then a: demoted into the CPU
	if got := tiersOf(c, "a a b b"); got != "cpu cpu" {
		t.Errorf("after the GPU evicted a b: in %q, want cpu cpu (demoted)", got)
	}
	if d := c.Snapshot()[CPU].Counters.DemotedIn; d != 2 {
		t.Errorf("cpu demotedIn = %d, want 2", d)
	}
}

// psfPool returns n prompts laid out as prefix-suffix-tuner's: a unique
// prefix, a fresh breaker each time, then a suffix shared by all.
func psfPool(n, prefixBlocks, suffixBlocks, pass int) []string {
	suffix := strings.TrimSpace(strings.Repeat("s ", suffixBlocks*2)) // block size 2
	var out []string
	for i := range n {
		prefix := words(fmt.Sprintf("P%d-", i), prefixBlocks*2)
		breaker := words(fmt.Sprintf("B%d-%d-", pass, i), 2)
		out = append(out, prefix+" "+breaker+" "+suffix+" end")
	}
	return out
}

// TestPrefixSuffixBaselines checks the model gives prefix-suffix-tuner its
// intended outcome: a pool 5% over the targeted tier, replayed in the same
// order, misses that tier on every pass-2 request.
func TestPrefixSuffixBaselines(t *testing.T) {
	t.Parallel()
	const n, prefixBlocks, suffixBlocks = 21, 8, 2
	perPrompt := prefixBlocks + 1 + suffixBlocks // full blocks: + the breaker's
	tierSize := n * perPrompt * 100 / 105        // the pool overflows it by 5%
	run := func(gpu, cpu, disk int, blend bool) (prefixFrom, blendFrom [NumTiers]int, misses int) {
		c := testCache(gpu, cpu, disk)
		for _, p := range psfPool(n, prefixBlocks, suffixBlocks, 1) {
			use(c, p, blend)
		}
		for _, p := range psfPool(n, prefixBlocks, suffixBlocks, 2) {
			r := use(c, p, blend)
			if len(r.Prefix) == 0 {
				misses++
			}
			for _, h := range r.Prefix {
				prefixFrom[h.From]++
			}
			for _, h := range r.Blend {
				blendFrom[h.From]++
			}
		}
		return prefixFrom, blendFrom, misses
	}

	// Baseline 1: GPU only, sized to the pool's target: no pass-2 hits.
	pf, bf, misses := run(tierSize, 0, 0, false)
	if misses != n || pf != [NumTiers]int{} || bf != [NumTiers]int{} {
		t.Errorf("baseline 1: %d of %d misses, prefix hits %v, blend hits %v; want all misses", misses, n, pf, bf)
	}
	// Baseline 2: a small GPU, the CPU targeted, a big disk: every prefix
	// from disk, nothing blended.
	pf, bf, misses = run(tierSize/4, tierSize, 10*tierSize, false)
	if misses != 0 || pf != [NumTiers]int{0, 0, n * prefixBlocks} || bf != [NumTiers]int{} {
		t.Errorf("baseline 2: %d misses, prefix hits by tier %v, blend %v; want every prefix block from disk (%d)",
			misses, pf, bf, n*prefixBlocks)
	}
	// Baseline 3: the same with blending: the suffix is blended, from the
	// GPU (every request used it last).
	pf, bf, misses = run(tierSize/4, tierSize, 10*tierSize, true)
	if misses != 0 || pf != [NumTiers]int{0, 0, n * prefixBlocks} || bf != [NumTiers]int{n * suffixBlocks, 0, 0} {
		t.Errorf("baseline 3: %d misses, prefix hits by tier %v, blend %v; want prefixes from disk, %d suffix blocks blended from the GPU",
			misses, pf, bf, n*suffixBlocks)
	}
}

func TestBlendFindsChunksAnywhereAfterThePrefix(t *testing.T) {
	t.Parallel()
	c := testCache(100, 0, 0)
	use(c, "a b c d e f g h x", true) // chunks: ab cd ef gh
	// Shared prefix "a b", then "zz", then "c d e f" at an odd offset, then
	// new tokens.
	r := use(c, "a b zz c d e f q r s", true)
	if len(r.Prefix) != 1 {
		t.Errorf("%d prefix blocks, want 1 (a b)", len(r.Prefix))
	}
	if len(r.Blend) != 2 || r.BlendTokens != 4 {
		t.Errorf("blend %v (%d tokens), want chunks c d and e f (4 tokens)", r.Blend, r.BlendTokens)
	}
	// Without blending, nothing after the prefix is found.
	c2 := testCache(100, 0, 0)
	use(c2, "a b c d e f g h x", false)
	if r := use(c2, "a b zz c d e f q r s", false); len(r.Prefix) != 1 || len(r.Blend) != 0 {
		t.Errorf("no blend: prefix %d blend %d, want 1, 0", len(r.Prefix), len(r.Blend))
	}
	// The block holding the last token is never blended.
	c3 := testCache(100, 0, 0)
	use(c3, "u v a b x", true)
	if r := use(c3, "w a b", true); len(r.Blend) != 0 {
		t.Errorf("chunk holding the last token blended: %v", r.Blend)
	}
	s := c.Snapshot()[GPU].Counters
	if s.BlendHits != 2 || s.Hits != 1 {
		t.Errorf("GPU counters %+v, want 1 prefix Hit and 2 blend hits", s)
	}
}

// BenchmarkCacheUse measures the cache's work for one 8,000-token prompt
// (hashing, lookup, commit), with and without blending, on a cache already
// holding 64 other prompts.
func BenchmarkCacheUse(b *testing.B) {
	for _, blend := range []bool{false, true} {
		b.Run(fmt.Sprintf("blend=%v", blend), func(b *testing.B) {
			c := New(16, [NumTiers]int{8 << 13 / 16, 32 << 13 / 16, 0}) // the engine's default 8 and 32 GB tiers
			for i := range 64 {
				use(c, words(fmt.Sprintf("warm%d-", i), 8000), blend)
			}
			prompt := words("bench", 8000)
			b.ReportAllocs()
			for b.Loop() {
				use(c, prompt, blend)
			}
		})
	}
}

// on reports whether any tier is on.
func (c *Cache) on() bool {
	for _, l := range c.tiers {
		if l != nil {
			return true
		}
	}
	return false
}

// tierOf reports the fastest tier holding a prefix block.
func (c *Cache) tierOf(h BlockHash) Tier {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.find(key{hash: uint64(h)})
}

// words returns n distinct words: prefix0 prefix1 ...
func words(prefix string, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = prefix + strconv.Itoa(i)
	}
	return strings.Join(w, " ")
}
