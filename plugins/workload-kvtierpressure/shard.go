package main

import (
	"fmt"

	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/workload"
)

// A sharded run (lmbench run --shard I/N) splits both phases by request
// index, with the unsharded run's ids, documents and tags: shard I sends
// warm-up sweep requests I, I+N, … and measured requests I, I+N, … with
// its share of --ktp-num-inflight-requests. A measured request draws its
// documents from the whole pool, so no document grouping keeps a shard's
// reads to its own documents; splitting the sweep too keeps "every
// document stored once" for the run as a whole, as the shards' measured
// phases read what all the sweeps stored. The resident tag comes from the
// capacity model over the whole run's stream, and each shard's tier check
// (a log line) covers its own requests.

// PrecheckShard refuses a shard left with no in-flight slot, before any
// network traffic.
func (o Options) PrecheckShard(s protocol.Shard) error {
	_, err := inflightShare(o, s)
	return err
}

// inflightShare is the shard's part of --ktp-num-inflight-requests.
func inflightShare(o Options, s protocol.Shard) (int, error) {
	return workload.Divide(s, "num-inflight-requests", o.NumInflightRequests, "in flight")
}

// shardBanner is the banner's Shard line: "1/3: measured requests 1, 4,
// 7, 10, … (67 of 200), warm-up requests 1, 4 (2 of 5), 3 of 8 in flight".
func shardBanner(s protocol.Shard, measured, sweep, inflight, runInflight int) string {
	return fmt.Sprintf("%s: measured requests %s, warm-up requests %s, %d of %d in flight",
		s, workload.OwnedList(s, measured), workload.OwnedList(s, sweep), inflight, runInflight)
}
