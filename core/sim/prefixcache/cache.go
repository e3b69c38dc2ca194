// Package prefixcache is the simulated engine's tiered KV cache: chained
// block hashes (a block hits only after every block before it), LRU GPU,
// CPU and disk tiers with write-through, demotion and promotion, and the
// chunk lookup of CacheBlend-style reuse. It models what is cached, not
// when: core/sim charges the time.
package prefixcache

import (
	"container/list"
	"encoding/binary"
	"hash/fnv"
	"sync"
)

// BlockHash identifies a block of tokens together with everything before
// it: the hash of block k covers the hash of block k-1, so equal hashes
// mean equal prefixes, not merely equal blocks.
type BlockHash uint64

// BlockHashes returns the chained hashes of the full blocks of tokens; a
// trailing partial block has no hash and is never cached.
func BlockHashes(tokens []string, blockSize int) []BlockHash {
	hashes := make([]BlockHash, 0, len(tokens)/blockSize)
	var prev BlockHash
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
		prev = BlockHash(h.Sum64())
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

// WindowHashes returns the chunk hash of tokens[i:i+blockSize] for every i
// from 0 to len(tokens)-blockSize.
func WindowHashes(tokens []string, blockSize int) []uint64 {
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

// AlignedChunks returns the chunk hashes of the full blocks of tokens (the
// windows that start on a block boundary).
func AlignedChunks(windows []uint64, blockSize int) []uint64 {
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
// not safe for concurrent use; Cache locks around it.
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

// Tier is one tier of the cache; the tiers, fastest first.
type Tier int

const (
	GPU Tier = iota
	CPU
	Disk
	NumTiers
	None Tier = -1
)

var names = [NumTiers]string{"gpu", "cpu", "disk"}

// Counters are one tier's cumulative counts, in blocks.
type Counters struct {
	Hits      int64 // prefix blocks found here
	BlendHits int64 // blended chunks found here
	Stored    int64 // blocks inserted (written through, promoted or demoted in)
	DemotedIn int64 // blocks demoted into this tier from the one above
	Promoted  int64 // blocks loaded from this tier into the GPU
	Evicted   int64 // blocks evicted from this tier
}

// Cache is the tiered KV cache: a GPU tier (vLLM's prefix cache) over a
// CPU and a disk tier (LMCache's). It is safe for concurrent use.
//
// Every block a request uses ends up in the GPU tier and is written through
// to the first lower tier that is on (the offload tier), as LMCache stores
// KV as it is computed; so with a CPU tier at least as large as the GPU
// tier, the GPU holds a subset of the CPU. A block evicted from a tier is
// demoted to the next tier on below it (if not already there), a block
// evicted from the last tier is dropped. A block found below the offload
// tier is moved up: removed there, written through to the offload tier.
type Cache struct {
	mu        sync.Mutex
	blockSize int
	tiers     [NumTiers]*lru // nil: off
	offload   Tier           // first lower tier on, or None
	counters  [NumTiers]Counters
}

// New returns an empty cache of blockSize-token blocks whose tiers hold
// the given numbers of blocks (0: the tier is off).
func New(blockSize int, blocks [NumTiers]int) *Cache {
	c := &Cache{blockSize: blockSize, offload: None}
	for t, n := range blocks {
		if n > 0 {
			c.tiers[t] = newLRU(n)
		}
	}
	for t := CPU; t < NumTiers; t++ {
		if c.tiers[t] != nil {
			c.offload = t
			break
		}
	}
	return c
}

// find returns the fastest tier holding k. The caller holds mu.
func (c *Cache) find(k key) Tier {
	for t, l := range c.tiers {
		if l.has(k) {
			return Tier(t)
		}
	}
	return None
}

// Hit is a cached block a request reuses.
type Hit struct {
	key  key
	From Tier // the fastest tier holding it
	// At is a blended chunk's first token in the prompt (0 for a prefix
	// block: its place is its index).
	At int
}

// Hash identifies the block's or chunk's content: the same for every
// prompt that holds it.
func (h Hit) Hash() uint64 { return h.key.hash }

// Result is what the cache holds of one prompt.
type Result struct {
	Prefix      []Hit // leading blocks found, in order
	Blend       []Hit // blended chunks found after the prefix
	BlendTokens int   // tokens covered by Blend (len(Blend) × block size)
}

// TokensFrom returns how many tokens of hits come from tier t.
func TokensFrom(hits []Hit, t Tier, blockSize int) int {
	n := 0
	for _, h := range hits {
		if h.From == t {
			n += blockSize
		}
	}
	return n
}

// Lookup finds the longest run of leading blocks of hashes (chained block
// hashes, at most matchable of them) held by any tier; then, if windows
// (the chunk hash of every token window, nil without blending) is given,
// scans the prompt from the end of that prefix up to limit tokens for
// chunks held by any tier, greedily left to right. It changes nothing;
// Commit does.
func (c *Cache) Lookup(hashes []BlockHash, matchable int, windows []uint64, limit int) Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	var r Result
	for _, h := range hashes[:matchable] {
		k := key{hash: uint64(h)}
		t := c.find(k)
		if t == None {
			break
		}
		r.Prefix = append(r.Prefix, Hit{key: k, From: t})
	}
	if windows == nil {
		return r
	}
	for i := len(r.Prefix) * c.blockSize; i+c.blockSize <= limit && i < len(windows); {
		k := key{hash: windows[i], chunk: true}
		if t := c.find(k); t != None {
			r.Blend = append(r.Blend, Hit{key: k, From: t, At: i})
			r.BlendTokens += c.blockSize
			i += c.blockSize
			continue
		}
		i++
	}
	return r
}

// Commit records that a request used hits and computed the rest of its
// blocks: counts the hits, then makes every block of the prompt (hashes,
// plus chunks when blending) the most recently used in the GPU tier and the
// offload tier. Blocks are touched last first, so a prompt's head outlives
// its tail: evicting a head block would strand every block after it, since
// their hashes chain through it (vLLM frees blocks in the same order).
func (c *Cache) Commit(r Result, hashes []BlockHash, chunks []uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, h := range r.Prefix {
		c.counters[h.From].Hits++
		c.take(h)
	}
	for _, h := range r.Blend {
		c.counters[h.From].BlendHits++
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
	for _, t := range []Tier{c.offload, GPU} {
		if t == None || c.tiers[t] == nil {
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
func (c *Cache) take(h Hit) {
	if h.From == GPU || h.From == c.offload {
		// Refresh it where it is before anything new is inserted, so the
		// write-through cannot evict a block this request just hit.
		c.tiers[h.From].touch(h.key, nil)
	}
	if h.From == GPU {
		return
	}
	c.counters[h.From].Promoted++
	if h.From != c.offload {
		c.tiers[h.From].remove(h.key)
	}
}

// put inserts k into tier t, or (touch) makes it the most recently used
// there, and demotes what that evicts. The caller holds mu.
func (c *Cache) put(t Tier, k key, touch bool) {
	l := c.tiers[t]
	if !touch && l.has(k) {
		return
	}
	inserted, evicted := l.touch(k, nil)
	if inserted {
		c.counters[t].Stored++
	}
	for _, v := range evicted {
		c.counters[t].Evicted++
		if below := c.below(t); below != None {
			if !c.tiers[below].has(v) {
				c.counters[below].DemotedIn++
			}
			c.put(below, v, false)
		}
	}
}

// below returns the next tier on below t, or None.
func (c *Cache) below(t Tier) Tier {
	for u := t + 1; u < NumTiers; u++ {
		if c.tiers[u] != nil {
			return u
		}
	}
	return None
}

// On reports whether tier t is on.
func (c *Cache) On(t Tier) bool { return c.tiers[t] != nil }

// State is a snapshot of one tier for /metrics and /status.
type State struct {
	Name           string
	On             bool
	CapacityBlocks int
	UsedBlocks     int
	Counters       Counters
}

// Snapshot returns the state of every tier.
func (c *Cache) Snapshot() [NumTiers]State {
	c.mu.Lock()
	defer c.mu.Unlock()
	var s [NumTiers]State
	for t, l := range c.tiers {
		s[t] = State{Name: names[t], On: l != nil, UsedBlocks: l.len(), Counters: c.counters[t]}
		if l != nil {
			s[t].CapacityBlocks = l.capacity
		}
	}
	return s
}

// reset empties the given tiers (counters are kept: they are cumulative).
func (c *Cache) Reset(tiers ...Tier) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range tiers {
		c.tiers[t].clear()
	}
}
