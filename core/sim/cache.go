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

// prefixCache is an LRU set of KV blocks, modelling one tier of KV memory
// (the GPU). It is safe for concurrent use. A nil *prefixCache is a cache
// that is off: it never hits and stores nothing.
type prefixCache struct {
	mu       sync.Mutex
	capacity int                         // in blocks
	lru      *list.List                  // of blockHash; front = most recently used
	blocks   map[blockHash]*list.Element // block -> its place in lru
}

// newPrefixCache returns a cache holding capacityTokens/blockSize blocks,
// or nil (off) when that is zero.
func newPrefixCache(capacityTokens, blockSize int) *prefixCache {
	capacity := capacityTokens / blockSize
	if capacity <= 0 {
		return nil
	}
	return &prefixCache{
		capacity: capacity,
		lru:      list.New(),
		blocks:   make(map[blockHash]*list.Element),
	}
}

// match returns how many leading blocks of hashes are cached. It does not
// change recency; store does that once the prefill that used them is done.
func (c *prefixCache) match(hashes []blockHash) int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, h := range hashes {
		if _, ok := c.blocks[h]; !ok {
			break
		}
		n++
	}
	return n
}

// store inserts the blocks of one prompt, or marks them most recently used,
// evicting the least recently used blocks beyond capacity. Blocks are
// touched last-first, so a prompt's head outlives its tail: evicting a head
// block would strand every block after it, since their hashes chain
// through it (vLLM frees blocks in the same order for the same reason).
func (c *prefixCache) store(hashes []blockHash) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(hashes) - 1; i >= 0; i-- {
		h := hashes[i]
		if el, ok := c.blocks[h]; ok {
			c.lru.MoveToFront(el)
			continue
		}
		c.blocks[h] = c.lru.PushFront(h)
		if c.lru.Len() > c.capacity {
			oldest := c.lru.Back()
			c.lru.Remove(oldest)
			delete(c.blocks, oldest.Value.(blockHash))
		}
	}
}

// len returns the number of cached blocks.
func (c *prefixCache) len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}
