package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/protocol"
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
	n := s.Share(o.NumInflightRequests)
	if s.Sharded() && o.NumInflightRequests < s.Count { // every shard refuses, not only those left without
		return 0, option.Errorf("num-inflight-requests",
			"num_inflight_requests %d cannot be divided among %d shards (--shard %s): each shard needs at least one in flight; give at least %d",
			o.NumInflightRequests, s.Count, s, s.Count)
	}
	return n, nil
}

// shardBanner is the banner's Shard line: "1/3: permutations 1, 4, 7, …
// (4 of 10), 1 of 2 in flight".
func shardBanner(s protocol.Shard, perms, inflight, runInflight int) string {
	var owned []string
	for k := s.Index; k < perms && len(owned) < 3; k += s.Count {
		owned = append(owned, strconv.Itoa(k))
	}
	list := strings.Join(owned, ", ")
	if s.Owned(perms) > len(owned) {
		list += ", …"
	}
	if len(owned) == 0 {
		list = "none"
	}
	return fmt.Sprintf("%s: permutations %s (%d of %d), %d of %d in flight", s, list, s.Owned(perms), perms, inflight, runInflight)
}
