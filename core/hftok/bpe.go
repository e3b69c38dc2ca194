package hftok

import "unicode/utf8"

// bpe is a BPE model: a vocabulary and ranked merges, applied per word
// as the tokenizers crate does (models/bpe/word.rs): a priority queue of
// candidate merges ordered by rank, then by position, so equal ranks
// merge leftmost first, each merge re-checked against the symbols it
// joins when popped. The cost is O(n log n) in the word's characters.
type bpe struct {
	vocab  map[string]uint32
	merges map[uint64]uint64 // left<<32|right → rank<<32|merged id

	unk          uint32
	hasUnk       bool
	fuseUnk      bool
	byteFallback bool
	byteIDs      [256]int32 // <0xNN>'s id, -1 when not in the vocabulary
	ignoreMerges bool
	prefix       string // continuing_subword_prefix
	suffix       string // end_of_word_suffix
}

// symbol is one piece of a word during merging, linked to its
// neighbours; a merged-away symbol has size 0.
type symbol struct {
	id         uint32
	prev, next int32
	size       int32
}

// candidate is a merge waiting in the queue.
type candidate struct {
	rank uint32
	pos  int32
	id   uint32
}

func (a candidate) before(b candidate) bool {
	return a.rank < b.rank || a.rank == b.rank && a.pos < b.pos
}

// queue is a binary min-heap of candidates (container/heap without the
// interface calls, which cost a third of the time on long words).
type queue []candidate

func (q *queue) push(c candidate) {
	h := append(*q, c)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].before(h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	*q = h
}

func (q *queue) pop() candidate {
	h := *q
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && h[l].before(h[m]) {
			m = l
		}
		if r < n && h[r].before(h[m]) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*q = h
	return top
}

func pairKey(a, b uint32) uint64 { return uint64(a)<<32 | uint64(b) }

// word is the scratch space of one tokenize call, reused.
type word struct {
	syms []symbol
	q    queue
	key  []byte
}

// tokenize appends the ids of one pre-tokenized word to out.
func (m *bpe) tokenize(w *word, s string, out []uint32) []uint32 {
	if s == "" {
		return out
	}
	if m.ignoreMerges {
		if id, ok := m.vocab[s]; ok {
			return append(out, id)
		}
	}
	m.symbols(w, s)
	m.mergeAll(w)
	if len(w.syms) == 0 {
		return out
	}
	for i := int32(0); i >= 0; i = w.syms[i].next {
		out = append(out, w.syms[i].id)
	}
	return out
}

// symbols splits s into its characters' ids (with the subword prefix
// and word suffix), falling back to <0xNN> bytes, then to the unknown
// token, as the tokenizers crate's BPE::merge_word does.
func (m *bpe) symbols(w *word, s string) {
	w.syms = w.syms[:0]
	add := func(id uint32, size int) {
		n := int32(len(w.syms))
		w.syms = append(w.syms, symbol{id: id, prev: n - 1, next: n + 1, size: int32(size)})
	}
	unkSize := 0 // pending unknown run, for fuse_unk
	flushUnk := func() {
		if unkSize > 0 {
			add(m.unk, unkSize)
			unkSize = 0
		}
	}
	for i := 0; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		ch := s[i : i+size]
		key := ch
		if (i > 0 && m.prefix != "") || (i+size == len(s) && m.suffix != "") {
			w.key = w.key[:0]
			if i > 0 {
				w.key = append(w.key, m.prefix...)
			}
			w.key = append(w.key, ch...)
			if i+size == len(s) {
				w.key = append(w.key, m.suffix...)
			}
			key = string(w.key)
		}
		i += size
		if id, ok := m.vocab[key]; ok {
			flushUnk()
			add(id, size)
			continue
		}
		if m.byteFallback && m.bytesKnown(ch) {
			flushUnk()
			for j := 0; j < len(ch); j++ {
				add(uint32(m.byteIDs[ch[j]]), 1)
			}
			continue
		}
		if !m.hasUnk {
			continue // the crate drops a character it cannot encode
		}
		if !m.fuseUnk {
			flushUnk()
		}
		unkSize += size
	}
	flushUnk()
	if len(w.syms) > 0 {
		w.syms[len(w.syms)-1].next = -1
	}
}

func (m *bpe) bytesKnown(ch string) bool {
	for j := 0; j < len(ch); j++ {
		if m.byteIDs[ch[j]] < 0 {
			return false
		}
	}
	return true
}

// mergeAll applies the merges, lowest rank first, leftmost on ties.
func (m *bpe) mergeAll(w *word) {
	syms := w.syms
	w.q = w.q[:0]
	for i := 0; i+1 < len(syms); i++ {
		if v, ok := m.merges[pairKey(syms[i].id, syms[i+1].id)]; ok {
			w.q.push(candidate{rank: uint32(v >> 32), pos: int32(i), id: uint32(v)})
		}
	}
	for len(w.q) > 0 {
		top := w.q.pop()
		cur := &syms[top.pos]
		if cur.size == 0 || cur.next < 0 {
			continue
		}
		nextPos := cur.next
		right := syms[nextPos]
		if v, ok := m.merges[pairKey(cur.id, right.id)]; !ok || uint32(v) != top.id {
			continue
		}
		cur.id = top.id
		cur.size += right.size
		cur.next = right.next
		syms[nextPos].size = 0
		if right.next >= 0 {
			syms[right.next].prev = top.pos
		}
		if cur.prev >= 0 {
			if v, ok := m.merges[pairKey(syms[cur.prev].id, cur.id)]; ok {
				w.q.push(candidate{rank: uint32(v >> 32), pos: cur.prev, id: uint32(v)})
			}
		}
		if cur.next >= 0 {
			if v, ok := m.merges[pairKey(cur.id, syms[cur.next].id)]; ok {
				w.q.push(candidate{rank: uint32(v >> 32), pos: top.pos, id: uint32(v)})
			}
		}
	}
}
