package main

import (
	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/workload"
)

// A sharded run (lmbench run --shard I/N) splits trace-replay by request
// ordinal within the replayed window: shard I sends the window's
// requests I, I+N, I+2N, …, each at its own time in the trace, so the
// shards together replay the trace's arrivals. No request waits for or
// carries another's answer; the blocks requests share are shared in the
// engine's cache whichever shard sends them, so shared_blocks and the
// reuse check count them over the whole window.

// PrecheckShard refuses a window with fewer requests than shards, before
// any network traffic (workload.ShardPrechecker).
func (o Options) PrecheckShard(s workload.Shard) error {
	_, sel, _, err := o.load()
	if err != nil {
		return err
	}
	return o.checkShard(s, len(sel))
}

func (o Options) checkShard(s workload.Shard, n int) error {
	if s.Sharded() && n < s.Count { // every shard refuses, not only those left without
		return option.Errorf("trace", "%d requests of %s are in the window to replay: they cannot be split among %d shards (--shard %s), each needs at least one; widen the window or use fewer shards",
			n, o.Trace, s.Count, s)
	}
	return nil
}
