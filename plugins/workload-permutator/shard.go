package main

import (
	"fmt"

	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/workload"
)

// A sharded run (lmbench run --shard I/N) splits the permutations by
// index: shard I sends permutations I, I+N, I+2N, … of the unsharded
// run's list, with the same ids and text, and keeps its share of
// --ldp-num-inflight-requests in flight. Every permutation carries every
// context, so each shard sends the one dummy warmup request and registers
// the contexts itself; its first permutation finds no context its own
// shard has sent (up to N cold requests where an unsharded run has one).

// PrecheckShard refuses a shard left with no in-flight slot, before any
// network traffic.
func (o Options) PrecheckShard(s protocol.Shard) error {
	_, err := inflightShare(o, s)
	return err
}

// inflightShare is the shard's part of --ldp-num-inflight-requests.
func inflightShare(o Options, s protocol.Shard) (int, error) {
	return workload.Divide(s, "num-inflight-requests", o.NumInflightRequests, "in flight")
}

// shardBanner is the banner's Shard line: "1/3: permutations 1, 4, 7,
// 10, … (4 of 10), 1 of 2 in flight".
func shardBanner(s protocol.Shard, perms, inflight, runInflight int) string {
	return fmt.Sprintf("%s: permutations %s, %d of %d in flight", s, workload.OwnedList(s, perms), inflight, runInflight)
}
