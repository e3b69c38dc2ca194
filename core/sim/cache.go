package sim

import (
	"container/list"
	"encoding/binary"
	"hash/fnv"
	"sync"
)

// blockHash identifies a block of tokens together with everything before
// it: the hash of block k covers the hash of block k-1, so equal hashes
// mean equal prefixes, not merely equal blocks.
type blockHash uint64

// blockHashes returns the chained hashes of the full blocks of tokens; a
// trailing partial block has no hash and is never cached.
func blockHashes(tokens []string, blockSize int) []blockHash {
	hashes := make([]blockHash, 0, len(tokens)/blockSize)
	var prev blockHash
	var buf [binary.MaxVarintLen64]byte
	for start := 0; start+blockSize <= len(tokens); start += blockSize {
		h := fnv.New64a()
		binary.LittleEndian.PutUint64(buf[:8], uint64(prev))
		h.Write(buf[:8])
		for _, tok := range tokens[start : start+blockSize] {
			// A length prefix keeps ["ab","c"] and ["a","bc"] apart.
			n := binary.PutUvarint(buf[:], uint64(len(tok)))
			h.Write(buf[:n])
			h.Write([]byte(tok))
		}
		prev = blockHash(h.Sum64())
		hashes = append(hashes, prev)
	}
	return hashes
}

// Chunk hashes, for blending, depend on a block's tokens only, not on what
// precedes it: a polynomial hash over per-token hashes, so the hash of
// every window of blockSize tokens is computed in one pass (a rolling
// hash, as rsync finds moved blocks).
const rollBase = 1099511628211 // an odd 64-bit multiplier (the FNV prime)

func tokenHash(tok string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(tok))
	return h.Sum64()
}

// windowHashes returns the chunk hash of tokens[i:i+blockSize] for every i
// from 0 to len(tokens)-blockSize.
func windowHashes(tokens []string, blockSize int) []uint64 {
	if len(tokens) < blockSize {
		return nil
	}
	th := make([]uint64, len(tokens))
	for i, tok := range tokens {
		th[i] = tokenHash(tok)
	}
	top := uint64(1) // rollBase^(blockSize-1)
	for range blockSize - 1 {
		top *= rollBase
	}
	out := make([]uint64, 0, len(tokens)-blockSize+1)
	var h uint64
	for i := range blockSize {
		h = h*rollBase + th[i]
	}
	out = append(out, h)
	for i := blockSize; i < len(tokens); i++ {
		h = (h-th[i-blockSize]*top)*rollBase + th[i]
		out = append(out, h)
	}
	return out
}

// alignedChunks returns the chunk hashes of the full blocks of tokens (the
// windows that start on a block boundary).
func alignedChunks(windows []uint64, blockSize int) []uint64 {
	out := make([]uint64, 0, len(windows)/blockSize+1)
	for i := 0; i < len(windows); i += blockSize {
		out = append(out, windows[i])
	}
	return out
}

// key names a cached block: a prefix block by its chained hash, or (with
// blending) a chunk by its content hash. Both take a block of capacity.
type key struct {
	hash  uint64
	chunk bool
}

// lru is one tier's set of blocks, least recently used evicted first. It is
// not safe for concurrent use; kvCache locks around it.
type lru struct {
	capacity int                   // in blocks
	order    *list.List            // of key; front = most recently used
	items    map[key]*list.Element // key -> its place in order
}

func newLRU(capacity int) *lru {
	if capacity <= 0 {
		return nil
	}
	return &lru{capacity: capacity, order: list.New(), items: make(map[key]*list.Element)}
}

func (l *lru) has(k key) bool {
	if l == nil {
		return false
	}
	_, ok := l.items[k]
	return ok
}

// touch makes k the most recently used block, inserting it if absent, and
// returns the blocks evicted to make room and whether k was inserted.
func (l *lru) touch(k key, evicted []key) (inserted bool, _ []key) {
	if el, ok := l.items[k]; ok {
		l.order.MoveToFront(el)
		return false, evicted
	}
	l.items[k] = l.order.PushFront(k)
	for l.order.Len() > l.capacity {
		oldest := l.order.Back()
		l.order.Remove(oldest)
		victim := oldest.Value.(key)
		delete(l.items, victim)
		evicted = append(evicted, victim)
	}
	return true, evicted
}

func (l *lru) remove(k key) {
	if el, ok := l.items[k]; ok {
		l.order.Remove(el)
		delete(l.items, k)
	}
}

func (l *lru) len() int {
	if l == nil {
		return 0
	}
	return l.order.Len()
}

func (l *lru) clear() {
	if l != nil {
		l.order.Init()
		clear(l.items)
	}
}

// Tiers, fastest first.
type tier int

const (
	tierGPU tier = iota
	tierCPU
	tierDisk
	numTiers
	tierNone tier = -1
)

var tierNames = [numTiers]string{"gpu", "cpu", "disk"}

// tierCounters are one tier's cumulative counts, in blocks.
type tierCounters struct {
	hits      int64 // prefix blocks found here
	blendHits int64 // blended chunks found here
	stored    int64 // blocks inserted (written through, promoted or demoted in)
	demotedIn int64 // blocks demoted into this tier from the one above
	promoted  int64 // blocks loaded from this tier into the GPU
	evicted   int64 // blocks evicted from this tier
}

// kvCache is the tiered KV cache: a GPU tier (vLLM's prefix cache) over a
// CPU and a disk tier (LMCache's). It is safe for concurrent use.
//
// Every block a request uses ends up in the GPU tier and is written through
// to the first lower tier that is on (the offload tier), as LMCache stores
// KV as it is computed; so with a CPU tier at least as large as the GPU
// tier, the GPU holds a subset of the CPU. A block evicted from a tier is
// demoted to the next tier on below it (if not already there), a block
// evicted from the last tier is dropped. A block found below the offload
// tier is moved up: removed there, written through to the offload tier.
type kvCache struct {
	mu        sync.Mutex
	blockSize int
	tiers     [numTiers]*lru // nil: off
	offload   tier           // first lower tier on, or tierNone
	counters  [numTiers]tierCounters
}

func newKVCache(cfg Config) *kvCache {
	c := &kvCache{blockSize: cfg.BlockSize, offload: tierNone}
	for t, gb := range [numTiers]float64{cfg.GPUGB, cfg.CPUGB, cfg.DiskGB} {
		if gb > 0 {
			c.tiers[t] = newLRU(cfg.tierBlocks(gb))
		}
	}
	for t := tierCPU; t < numTiers; t++ {
		if c.tiers[t] != nil {
			c.offload = t
			break
		}
	}
	return c
}

// find returns the fastest tier holding k. The caller holds mu.
func (c *kvCache) find(k key) tier {
	for t, l := range c.tiers {
		if l.has(k) {
			return tier(t)
		}
	}
	return tierNone
}

// hit is a cached block a request reuses.
type hit struct {
	key  key
	from tier
}

// lookupResult is what the cache holds of one prompt.
type lookupResult struct {
	prefix      []hit // leading blocks found, in order
	blend       []hit // blended chunks found after the prefix
	blendTokens int   // tokens covered by blend (len(blend) × block size)
}

// tokensFrom returns how many tokens of hits come from tier t.
func tokensFrom(hits []hit, t tier, blockSize int) int {
	n := 0
	for _, h := range hits {
		if h.from == t {
			n += blockSize
		}
	}
	return n
}

// lookup finds the longest run of leading blocks of hashes (chained block
// hashes, at most matchable of them) held by any tier; then, if windows
// (the chunk hash of every token window, nil without blending) is given,
// scans the prompt from the end of that prefix up to limit tokens for
// chunks held by any tier, greedily left to right. It changes nothing;
// commit does.
func (c *kvCache) lookup(hashes []blockHash, matchable int, windows []uint64, limit int) lookupResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	var r lookupResult
	for _, h := range hashes[:matchable] {
		k := key{hash: uint64(h)}
		t := c.find(k)
		if t == tierNone {
			break
		}
		r.prefix = append(r.prefix, hit{k, t})
	}
	if windows == nil {
		return r
	}
	for i := len(r.prefix) * c.blockSize; i+c.blockSize <= limit && i < len(windows); {
		k := key{hash: windows[i], chunk: true}
		if t := c.find(k); t != tierNone {
			r.blend = append(r.blend, hit{k, t})
			r.blendTokens += c.blockSize
			i += c.blockSize
			continue
		}
		i++
	}
	return r
}

// commit records that a request used hits and computed the rest of its
// blocks: counts the hits, then makes every block of the prompt (hashes,
// plus chunks when blending) the most recently used in the GPU tier and the
// offload tier. Blocks are touched last first, so a prompt's head outlives
// its tail: evicting a head block would strand every block after it, since
// their hashes chain through it (vLLM frees blocks in the same order).
func (c *kvCache) commit(r lookupResult, hashes []blockHash, chunks []uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, h := range r.prefix {
		c.counters[h.from].hits++
		c.take(h)
	}
	for _, h := range r.blend {
		c.counters[h.from].blendHits++
		c.take(h)
	}
	keys := make([]key, 0, len(hashes)+len(chunks))
	for _, h := range hashes {
		keys = append(keys, key{hash: uint64(h)})
	}
	for _, h := range chunks {
		keys = append(keys, key{hash: h, chunk: true})
	}
	// The offload tier first, so that GPU victims demoted to it are found
	// there already and keep their place.
	for _, t := range []tier{c.offload, tierGPU} {
		if t == tierNone || c.tiers[t] == nil {
			continue
		}
		for i := len(keys) - 1; i >= 0; i-- {
			c.put(t, keys[i], true)
		}
	}
}

// take counts a hit found below the GPU as loaded, and moves a block found
// below the offload tier up (the write-through that follows puts it in the
// offload tier). The caller holds mu.
func (c *kvCache) take(h hit) {
	if h.from == tierGPU || h.from == c.offload {
		// Refresh it where it is before anything new is inserted, so the
		// write-through cannot evict a block this request just hit.
		c.tiers[h.from].touch(h.key, nil)
	}
	if h.from == tierGPU {
		return
	}
	c.counters[h.from].promoted++
	if h.from != c.offload {
		c.tiers[h.from].remove(h.key)
	}
}

// put inserts k into tier t, or (touch) makes it the most recently used
// there, and demotes what that evicts. The caller holds mu.
func (c *kvCache) put(t tier, k key, touch bool) {
	l := c.tiers[t]
	if !touch && l.has(k) {
		return
	}
	inserted, evicted := l.touch(k, nil)
	if inserted {
		c.counters[t].stored++
	}
	for _, v := range evicted {
		c.counters[t].evicted++
		if below := c.below(t); below != tierNone {
			if !c.tiers[below].has(v) {
				c.counters[below].demotedIn++
			}
			c.put(below, v, false)
		}
	}
}

// below returns the next tier on below t, or tierNone.
func (c *kvCache) below(t tier) tier {
	for u := t + 1; u < numTiers; u++ {
		if c.tiers[u] != nil {
			return u
		}
	}
	return tierNone
}

// tierState is a snapshot of one tier for /metrics and /status.
type tierState struct {
	name           string
	on             bool
	capacityBlocks int
	usedBlocks     int
	counters       tierCounters
}

func (c *kvCache) snapshot() [numTiers]tierState {
	c.mu.Lock()
	defer c.mu.Unlock()
	var s [numTiers]tierState
	for t, l := range c.tiers {
		s[t] = tierState{name: tierNames[t], on: l != nil, usedBlocks: l.len(), counters: c.counters[t]}
		if l != nil {
			s[t].capacityBlocks = l.capacity
		}
	}
	return s
}

// reset empties the given tiers (counters are kept: they are cumulative).
func (c *kvCache) reset(tiers ...tier) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range tiers {
		c.tiers[t].clear()
	}
}
