package main

import (
	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/workload"
)

// A sharded run (lmbench run --shard I/N) splits long-doc-qa by document:
// shard I warms and asks about documents I, I+N, I+2N, …, so a document's
// warmup and every question about it go to one shard, whose engine-side
// cache they test. Its questions go in the unsharded order filtered to its
// documents, and --ldqa-num-inflight-requests is the whole run's, divided
// among the shards (Shard.Share).

// PrecheckShard refuses an in-flight limit too small to divide, before
// any network traffic (workload.ShardPrechecker).
func (o Options) PrecheckShard(s workload.Shard) error { return o.checkShard(s) }

func (o Options) checkShard(s workload.Shard) error {
	_, err := workload.Divide(s, "num-inflight-requests", o.NumInflightRequests, "in flight")
	return err
}

// checkDocuments refuses a shard that owns no document of the n derived.
func checkDocuments(s workload.Shard, n int) error {
	if s.Sharded() && n < s.Count { // every shard refuses, not only those left without
		return option.Errorf("document-length",
			"%d documents (--kv-cache-volume × tokens per GB / document length) cannot be split among %d shards (--shard %s): each shard needs at least one; raise --kv-cache-volume, lower --ldqa-document-length or use fewer shards",
			n, s.Count, s)
	}
	return nil
}
