package protocol

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is one part of a run split over several processes (lmbench run
// --shard I/N): Index in [0, Count). The zero value, and Count 1, is the
// whole run.
//
// A workload splits its plan by index: the shard owns the sessions,
// documents or requests whose ordinal k has k mod Count == Index (Owns).
// It builds the plan from the run's seed exactly as an unsharded run does
// and keeps its part, so the shards' parts together are the unsharded
// plan, request ids included; an open-loop schedule keeps the global due
// times, so the aggregate arrival process is the one requested. A
// run-wide count (concurrency, a number of users in flight) is divided
// with Share. Seed gives a seed of the shard's own for randomness that is
// not part of the plan.
type Shard struct {
	Index, Count int
}

// Sharded reports whether the run is split (Count > 1).
func (s Shard) Sharded() bool { return s.Count > 1 }

// Owns reports whether ordinal k belongs to this shard: every k for an
// unsharded run.
func (s Shard) Owns(k int) bool {
	if s.Count <= 1 {
		return true
	}
	return k%s.Count == s.Index
}

// Owned is how many of the ordinals 0..n-1 this shard owns.
func (s Shard) Owned(n int) int {
	if s.Count <= 1 {
		return n
	}
	return s.Share(n)
}

// Share is this shard's part of a run-wide count n: n/Count, one more for
// the first n mod Count shards, so the parts sum to n. It is 0 when n <
// Count for the shards past n; a workload whose part must be positive
// says so (Check).
func (s Shard) Share(n int) int {
	if s.Count <= 1 {
		return n
	}
	q := n / s.Count
	if s.Index < n%s.Count {
		q++
	}
	return q
}

// Seed derives the shard's own seed from the run's (splitmix64 of the
// seed and the shard): the run's seed itself when unsharded.
func (s Shard) Seed(seed int64) int64 {
	if s.Count <= 1 {
		return seed
	}
	z := uint64(seed) + 0x9e3779b97f4a7c15*uint64(s.Index+1) + uint64(s.Count)<<32
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return int64(z ^ (z >> 31))
}

// String is "I/N" ("" when unsharded).
func (s Shard) String() string {
	if s.Count <= 1 {
		return ""
	}
	return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count)
}

// Check says what is wrong with the shard ("" when it is valid).
func (s Shard) Check() error {
	switch {
	case s.Count == 0 && s.Index == 0:
		return nil
	case s.Count < 1:
		return fmt.Errorf("shard count %d: expected at least 1", s.Count)
	case s.Index < 0 || s.Index >= s.Count:
		return fmt.Errorf("shard index %d: expected 0 to %d for %d shards", s.Index, s.Count-1, s.Count)
	}
	return nil
}

// ParseShard reads "I/N" (I in 0..N-1, N ≥ 1).
func ParseShard(v string) (Shard, error) {
	i, n, ok := strings.Cut(strings.TrimSpace(v), "/")
	if !ok {
		return Shard{}, fmt.Errorf("%q: expected I/N, the shard's index (from 0) and the number of shards, e.g. 0/3", v)
	}
	idx, err1 := strconv.Atoi(strings.TrimSpace(i))
	cnt, err2 := strconv.Atoi(strings.TrimSpace(n))
	if err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("%q: expected I/N with whole numbers, e.g. 0/3", v)
	}
	s := Shard{Index: idx, Count: cnt}
	if cnt < 1 {
		return Shard{}, fmt.Errorf("%q: the number of shards must be at least 1", v)
	}
	if err := s.Check(); err != nil {
		return Shard{}, fmt.Errorf("%q: %w", v, err)
	}
	return s, nil
}
