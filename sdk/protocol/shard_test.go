package protocol

import "testing"

func TestShardOwnsPartitions(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7} {
		for _, total := range []int{0, 1, 5, 100} {
			seen := make([]int, total)
			sum := 0
			for i := range n {
				s := Shard{Index: i, Count: n}
				owned := 0
				for k := range total {
					if s.Owns(k) {
						seen[k]++
						owned++
					}
				}
				if got := s.Owned(total); got != owned {
					t.Errorf("shard %v of %d: Owned = %d, counted %d", s, total, got, owned)
				}
				sum += s.Share(total)
			}
			for k, c := range seen {
				if c != 1 {
					t.Fatalf("%d shards: ordinal %d owned %d times", n, k, c)
				}
			}
			if sum != total {
				t.Errorf("%d shards: shares of %d sum to %d", n, total, sum)
			}
		}
	}
}

func TestShardSeedDiffers(t *testing.T) {
	if got := (Shard{}).Seed(42); got != 42 {
		t.Errorf("unsharded seed = %d, want 42", got)
	}
	seen := map[int64]bool{}
	for i := range 4 {
		s := Shard{Index: i, Count: 4}.Seed(42)
		if seen[s] || s == 42 {
			t.Errorf("shard %d/4: seed %d repeats", i, s)
		}
		seen[s] = true
	}
}

func TestParseShard(t *testing.T) {
	for in, want := range map[string]Shard{"0/3": {0, 3}, " 2/3 ": {2, 3}, "0/1": {0, 1}} {
		got, err := ParseShard(in)
		if err != nil || got != want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"3/3", "-1/3", "1", "a/3", "0/0", "1/0"} {
		if _, err := ParseShard(in); err == nil {
			t.Errorf("ParseShard(%q): no error", in)
		}
	}
}
