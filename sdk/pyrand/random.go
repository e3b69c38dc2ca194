package pyrand

import (
	"fmt"
	"math/bits"
)

// Random is CPython's random.Random seeded with an integer. The zero value
// is not usable; call New.
type Random struct {
	mt mt19937
}

// New returns the equivalent of random.Random(seed). As in CPython, the key
// is the 32-bit little-endian words of |seed| (so seed and -seed give the same
// stream) fed to MT19937's init_by_array.
func New(seed int64) *Random {
	abs := uint64(seed)
	if seed < 0 {
		abs = -abs // also right for math.MinInt64
	}
	key := []uint32{uint32(abs)}
	if hi := uint32(abs >> 32); hi != 0 {
		key = append(key, hi)
	}
	r := &Random{}
	r.mt.initByArray(key)
	return r
}

// Random returns random.random(): a float64 in [0, 1) with 53 random bits.
func (r *Random) Random() float64 {
	a := r.mt.uint32() >> 5
	b := r.mt.uint32() >> 6
	return (float64(a)*67108864.0 + float64(b)) * (1.0 / 9007199254740992.0)
}

// GetRandBits returns random.getrandbits(k) for 0 <= k <= 64. Like CPython it
// draws one 32-bit word per started 32 bits, low word first, and keeps the
// top bits of the last word.
func (r *Random) GetRandBits(k int) uint64 {
	switch {
	case k < 0 || k > 64:
		panic(fmt.Sprintf("pyrand: GetRandBits: k must be in [0, 64], got %d", k))
	case k == 0:
		return 0
	case k <= 32:
		return uint64(r.mt.uint32() >> (32 - k))
	}
	low := uint64(r.mt.uint32())
	high := uint64(r.mt.uint32() >> (64 - k))
	return high<<32 | low
}

// RandBelow returns random._randbelow(n) (the getrandbits variant): draw
// bit_length(n) bits until the value is below n. n must be > 0.
func (r *Random) RandBelow(n int) int {
	if n <= 0 {
		panic(fmt.Sprintf("pyrand: RandBelow: n must be > 0, got %d", n))
	}
	k := bits.Len64(uint64(n))
	for {
		if v := r.GetRandBits(k); v < uint64(n) {
			return int(v)
		}
	}
}

// RandRange returns random.randrange(start, stop) (step 1): an int in
// [start, stop). It panics if the range is empty.
func (r *Random) RandRange(start, stop int) int {
	if stop <= start {
		panic(fmt.Sprintf("pyrand: RandRange: empty range [%d, %d)", start, stop))
	}
	return start + r.RandBelow(stop-start)
}

// RandInt returns random.randint(a, b): an int in [a, b], both ends included.
func (r *Random) RandInt(a, b int) int {
	return r.RandRange(a, b+1)
}

// Choice returns the index random.choice(seq) picks from a sequence of
// length n. It panics if n <= 0, as CPython raises IndexError.
func (r *Random) Choice(n int) int {
	if n <= 0 {
		panic("pyrand: Choice: cannot choose from an empty sequence")
	}
	return r.RandBelow(n)
}

// Shuffle performs random.shuffle on a sequence of length n, calling swap
// with the same (i, j) pairs in the same order as CPython.
func (r *Random) Shuffle(n int, swap func(i, j int)) {
	for i := n - 1; i > 0; i-- {
		j := r.RandBelow(i + 1)
		swap(i, j)
	}
}

// Choices returns the indices random.choices(population, k=k) picks from a
// population of length n, without weights: floor(random() * n), k times.
func (r *Random) Choices(n, k int) []int {
	if n <= 0 && k > 0 {
		panic("pyrand: Choices: cannot choose from an empty population")
	}
	fn := float64(n)
	out := make([]int, k)
	for i := range out {
		out[i] = int(r.Random() * fn) // non-negative, so truncation is floor
	}
	return out
}

// Sample returns random.sample(range(n), k): k distinct ints in [0, n) in
// selection order. As CPython does, it tracks the remaining pool when n is
// small compared to k and the already selected values otherwise; the two
// methods consume the stream differently, so the choice matters.
func (r *Random) Sample(n, k int) []int {
	if k < 0 || k > n {
		panic(fmt.Sprintf("pyrand: Sample: k must be in [0, n=%d], got %d", n, k))
	}
	out := make([]int, k)
	if n <= sampleSetSize(k) {
		pool := make([]int, n)
		for i := range pool {
			pool[i] = i
		}
		for i := range k {
			j := r.RandBelow(n - i)
			out[i] = pool[j]
			pool[j] = pool[n-i-1]
		}
		return out
	}
	selected := make(map[int]struct{}, k)
	for i := range k {
		j := r.RandBelow(n)
		for {
			if _, dup := selected[j]; !dup {
				break
			}
			j = r.RandBelow(n)
		}
		selected[j] = struct{}{}
		out[i] = j
	}
	return out
}

// sampleSetSize is CPython's threshold: 21 + 4**ceil(log(3k, 4)) for k > 5.
// 3k is never a power of 4, so the ceiling is the smallest m with 4**m > 3k;
// computing it in integers avoids depending on libm's log. It agrees with
// CPython's float computation for every k below 3.7e14 (checked), far beyond
// any sample that fits in memory.
func sampleSetSize(k int) int {
	size := 21
	if k > 5 {
		p := 1
		for p <= 3*k {
			p *= 4
		}
		size += p
	}
	return size
}
