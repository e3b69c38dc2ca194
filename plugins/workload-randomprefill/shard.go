package main

import (
	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/workload"
)

// A sharded run (lmbench run --shard I/N) splits random-prefill by request
// ordinal: shard I sends requests I, I+N, I+2N, … with the prompts an
// unsharded run gives them. The prompts share no prefix, so no request
// depends on another; at --rp-rate each keeps its due time in the global
// schedule, so the shards together send the requested arrival process.

// PrecheckShard refuses a shard with no request to send, before any
// network traffic (workload.ShardPrechecker).
func (o Options) PrecheckShard(s workload.Shard) error { return o.checkShard(s) }

func (o Options) checkShard(s workload.Shard) error {
	if s.Sharded() && o.NumRequests < s.Count { // every shard refuses, not only those left without
		return option.Errorf("num-requests", "%d requests cannot be split among %d shards (--shard %s): each shard needs at least one; raise --rp-num-requests to %d or use fewer shards",
			o.NumRequests, s.Count, s, s.Count)
	}
	return nil
}

// ownedPos is the position of owned ordinal k among the shard's own
// (k itself when unsharded).
func ownedPos(s workload.Shard, k int) int {
	if !s.Sharded() {
		return k
	}
	return k / s.Count
}
