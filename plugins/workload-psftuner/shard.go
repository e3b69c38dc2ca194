package main

import (
	"fmt"

	"github.com/lmbench/lmbench/sdk/protocol"
)

// prefix-suffix-tuner refuses a sharded run (lmbench run --shard I/N)
// rather than split its plan, because no split keeps what it measures:
//
//   - it is one request at a time by design, so its TTFT is the cost of a
//     read from one tier and nothing else; N shards put N requests in flight
//     at once, each one's prefill and tier reads competing with the others';
//   - pass 2 misses the targeted tier only because it replays pass 1's exact
//     order over a pool 1.05 times the tier: under LRU each miss evicts the
//     prefix needed next. Shards progress at their own pace, so the
//     aggregate order is only roughly the pool's: in an LRU model of three
//     shards (shard_test.go), one running 7% faster than the others brings
//     prefixes back while the tier still holds them, and at 10% all of its
//     pass 2 hits where the workload promises misses.
//
// One request in flight needs no second machine, so nothing is lost by
// running it whole. Definition.Shards is set so that the plugin is handed
// the shard and can say this; the SDK's refusal of a workload without the
// capability cannot say why.
func (o Options) PrecheckShard(s protocol.Shard) error { return refuseShard(s) }

func refuseShard(s protocol.Shard) error {
	if !s.Sharded() {
		return nil
	}
	return fmt.Errorf("prefix-suffix-tuner cannot be sharded (--shard %s): it sends one request at a time and pass 2 misses the targeted tier only by replaying pass 1's exact order; "+
		"%d shards would put %d requests in flight at once and interleave the order, so pass-2 requests could hit the tier they are meant to miss. "+
		"Run it unsharded: one request in flight needs no second machine", s, s.Count, s.Count)
}
