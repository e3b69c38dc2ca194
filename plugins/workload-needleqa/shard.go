package main

import (
	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/workload"
)

// A sharded run (lmbench run --shard I/N) splits needle-qa by document:
// shard I warms and asks about documents I, I+N, I+2N, … With the
// permuted variant a prompt carries a group of documents, so the unit is
// the group: shard I owns groups I, I+N, …, and warms and asks about all
// their documents. --nqa-num-inflight-requests is the whole run's,
// divided among the shards (Shard.Share).

// PrecheckShard refuses a split that leaves a shard without work, before
// any network traffic (workload.ShardPrechecker).
func (o Options) PrecheckShard(s workload.Shard) error {
	if _, err := workload.Divide(s, "num-inflight-requests", o.InFlight, "in flight"); err != nil {
		return err
	}
	return o.checkShard(s)
}

// units is how many documents, or groups of them, there are to split.
func (o Options) units() int {
	if o.Variant == variantPermuted {
		return max(o.Documents/max(o.DocsPerPrompt, 1), 1)
	}
	return o.Documents
}

func (o Options) checkShard(s workload.Shard) error {
	if s.Sharded() && o.units() < s.Count {
		return option.Errorf("documents", "%d %s cannot be split among %d shards (--shard %s): each shard needs at least one",
			o.units(), map[bool]string{true: "groups of documents", false: "documents"}[o.Variant == variantPermuted], s.Count, s)
	}
	return nil
}

// owns reports whether this shard warms and asks about document d.
func (w *needleQA) owns(d int) bool {
	unit := d
	if w.o.Variant == variantPermuted {
		unit = w.group(d)[0] / w.o.DocsPerPrompt
	}
	return w.shard.Owns(unit)
}
