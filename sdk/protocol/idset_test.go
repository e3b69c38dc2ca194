package protocol

import (
	"math/rand/v2"
	"testing"
)

func TestIDSetAgreesWithAMap(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{0, 1000} { // in memory; spilling to a file early and often
		testIDSet(t, &idSet{memLimit: limit})
	}
	// Hash 0 is a valid hash (the file marks empty slots with 0).
	s := idSet{memLimit: 256}
	for h := range uint64(2000) {
		s.add(h)
	}
	for h := range uint64(2000) {
		if !s.has(h) {
			t.Fatalf("has(%d) = false after add", h)
		}
	}
	if s.has(5000) || s.disk == nil {
		t.Errorf("has(5000) = %v, disk %v", s.has(5000), s.disk)
	}
	s.close()
}

func testIDSet(t *testing.T, s *idSet) {
	t.Helper()
	defer s.close()
	r := rand.New(rand.NewPCG(1, 2))
	ref := map[uint64]bool{}
	for i := range 20000 {
		h := r.Uint64N(30000) // many repeats
		if got, want := s.has(h), ref[h]; got != want {
			t.Fatalf("step %d: has(%d) = %v, want %v", i, h, got, want)
		}
		if !ref[h] {
			s.add(h)
			ref[h] = true
		}
	}
	if s.memLimit > 0 && s.disk == nil {
		t.Errorf("memLimit %d: nothing spilled to the file", s.memLimit)
	}
}

func BenchmarkIDSetAdd(b *testing.B) {
	var s idSet
	defer s.close()
	r := rand.New(rand.NewPCG(1, 2))
	for b.Loop() {
		h := r.Uint64()
		if !s.has(h) {
			s.add(h)
		}
	}
}
