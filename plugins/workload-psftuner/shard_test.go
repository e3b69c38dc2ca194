package main

import (
	"cmp"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/workload"
)

// A sharded run is refused with the reason, by the check before any
// traffic and by Configure for a host that skips the check, in words and
// in exact mode; an unsharded one (and a 1-shard one) runs.
func TestShardRefused(t *testing.T) {
	t.Parallel()
	opts := map[string]any{"context-length": 400, "prefix-ratio": 0.5, "thrash": 0.01}
	noCheck := slices.DeleteFunc(slices.Clone(protocol.WorkloadCapabilities), func(c string) bool { return c == protocol.CheckOptions })
	for _, caps := range [][]string{nil, noCheck} {
		for _, tokens := range []protocol.TokenCounter{nil, &sdktest.FakeTokenizer{}} {
			_, err := sdktest.RunE(Definition, sdktest.Options{
				Options: opts, Common: workload.Common{Shard: protocol.Shard{Index: 1, Count: 3}},
				HostCapabilities: caps, Tokens: tokens,
			})
			var ce *sdktest.ConfigError
			if !errors.As(err, &ce) || len(ce.Errors) != 1 {
				t.Fatalf("capabilities %v, tokenizer %v: error %v, want one configuration error", caps, tokens != nil, err)
			}
			msg := ce.Errors[0].Message
			for _, want := range []string{"cannot be sharded (--shard 1/3)", "one request at a time", "3 requests in flight", "Run it unsharded"} {
				if !strings.Contains(msg, want) {
					t.Errorf("capabilities %v: refusal %q does not say %q", caps, msg, want)
				}
			}
		}
	}
	for _, s := range []protocol.Shard{{}, {Index: 0, Count: 1}} {
		if _, err := sdktest.RunE(Definition, sdktest.Options{Options: opts, Common: workload.Common{Shard: s}}); err != nil {
			t.Errorf("shard %+v: %v", s, err)
		}
	}
}

// shardedHits is twoPassHits for a pool split by prefix index among
// len(pace) shards running at once, each sending its own prefixes one at
// a time, pass 1 then pass 2, one request every pace[s] time units: the
// tier sees the shards' accesses merged by time.
func shardedHits(pool, tier int, pace []float64) int {
	type access struct {
		at     float64
		shard  int
		prefix int
		pass2  bool
	}
	var all []access
	n := len(pace)
	for s := range n {
		k := 0
		for _, pass2 := range []bool{false, true} {
			for i := s; i < pool; i += n {
				all = append(all, access{float64(k) * pace[s], s, i, pass2})
				k++
			}
		}
	}
	slices.SortStableFunc(all, func(a, b access) int {
		if c := cmp.Compare(a.at, b.at); c != 0 {
			return c
		}
		return cmp.Compare(a.shard, b.shard)
	})
	c := newLRU[int](tier)
	hits := 0
	for _, a := range all {
		if c.access(a.prefix) && a.pass2 {
			hits++
		}
	}
	return hits
}

// Why a split is refused rather than faked: split over shards at exactly
// one pace the merged order is the pool's and pass 2 still misses
// throughout, but one shard 10% faster than the others (its requests
// answered sooner, its machine less loaded) brings its prefixes back while
// the tier still holds them.
func TestShardsBreakTheReplayOrder(t *testing.T) {
	t.Parallel()
	pool, tier := 105, 100 // the 1.05 overflow
	if h := twoPassHits(pool, tier); h != 0 {
		t.Fatalf("unsharded: %d pass-2 hits, want 0", h)
	}
	if h := shardedHits(pool, tier, []float64{1, 1, 1}); h != 0 {
		t.Errorf("3 shards at one pace: %d pass-2 hits, want 0", h)
	}
	if h := shardedHits(pool, tier, []float64{1 / 1.1, 1, 1}); h == 0 {
		t.Error("3 shards, one 10% faster: no pass-2 hit; the refusal's reason would not hold")
	} else {
		t.Logf("3 shards, one 10%% faster: %d of %d pass-2 requests hit the tier they should miss", h, pool)
	}
}
