package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/workload"
)

// sevenDocs sizes a run to 7 documents of 100 tokens (words), so neither 2
// nor 3 shards divide them evenly.
var sevenDocs = workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 700, Seed: 3}

// The shards together warm and ask exactly what the unsharded run does,
// each question once, in both orders and with exact lengths.
func TestSharding(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		opts   map[string]any
		common workload.Common
		tokens bool
	}{
		{name: "random", opts: map[string]any{"document-length": 100, "query-per-document": 3, "num-inflight-requests": 4}, common: sevenDocs},
		{name: "tile", opts: map[string]any{"document-length": 100, "query-per-document": 2, "shuffle-policy": "tile", "num-inflight-requests": 3}, common: sevenDocs},
		{name: "exact", opts: map[string]any{"document-length": 200, "query-per-document": 2, "num-inflight-requests": 5},
			common: workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 1_500, Seed: 3}, tokens: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := sdktest.Options{Options: tc.opts, Common: tc.common, Engine: sdktest.OutOfOrderEngine}
			if tc.tokens {
				o.Tokens = &sdktest.FakeTokenizer{}
			}
			for _, n := range []int{2, 3} {
				sdktest.CheckSharding(t, Definition, o, n)
			}
		})
	}
}

// A shard owns every question about its documents, asks them in the
// unsharded order, warms only its documents and keeps its part of the
// in-flight limit.
func TestShardPart(t *testing.T) {
	t.Parallel()
	opts := map[string]any{"document-length": 100, "query-per-document": 3, "num-inflight-requests": 5}
	whole := sdktest.Run(t, Definition, sdktest.Options{Options: opts, Common: sevenDocs, Engine: sdktest.OutOfOrderEngine})
	for i, tc := range []struct {
		docs     []string
		inFlight int
	}{
		{[]string{"0", "3", "6"}, 2},
		{[]string{"1", "4"}, 2},
		{[]string{"2", "5"}, 1},
	} {
		common := sevenDocs
		common.Shard = workload.Shard{Index: i, Count: 3}
		tr := sdktest.Run(t, Definition, sdktest.Options{Options: opts, Common: common, Engine: sdktest.OutOfOrderEngine})
		owns := func(s sdktest.Sent) bool {
			for _, d := range tc.docs {
				if s.Tags["doc"] == d {
					return true
				}
			}
			return false
		}
		var warmDocs, wantIDs []string
		for _, s := range tr.Warmup() {
			warmDocs = append(warmDocs, s.Tags["doc"])
		}
		if d := cmp.Diff(tc.docs, warmDocs); d != "" {
			t.Errorf("shard %d/3 warms documents (-want +got):\n%s", i, d)
		}
		for _, s := range whole.Measured() {
			if owns(s) {
				wantIDs = append(wantIDs, s.ID)
			}
		}
		if d := cmp.Diff(wantIDs, sdktest.IDs(tr.Measured())); d != "" {
			t.Errorf("shard %d/3 asks (-want the unsharded order filtered +got):\n%s", i, d)
		}
		if tr.Planned != 3*len(tc.docs) {
			t.Errorf("shard %d/3 plans %d requests, want %d", i, tr.Planned, 3*len(tc.docs))
		}
		if got := tr.MaxInFlight(workload.Measure); got != tc.inFlight {
			t.Errorf("shard %d/3 has up to %d in flight, want its share %d of 5", i, got, tc.inFlight)
		}
		want := []workload.Field{
			{Label: "Shard", Value: fmt.Sprintf("%d/3: documents %s (%d of 7)", i, joinDocs(tc.docs), len(tc.docs))},
			{Label: "Shard's max inflight", Value: fmt.Sprint(tc.inFlight)},
		}
		if d := cmp.Diff(want, tr.Banner[len(tr.Banner)-2:]); d != "" {
			t.Errorf("shard %d/3 banner ends (-want +got):\n%s", i, d)
		}
	}
}

func joinDocs(docs []string) string {
	out := docs[0]
	for _, d := range docs[1:] {
		out += ", " + d
	}
	return out
}

// PrecheckShard divides the in-flight limit as New does.
func TestPrecheckShard(t *testing.T) {
	t.Parallel()
	var p workload.ShardPrechecker = Options{NumInflightRequests: 3}
	for _, tc := range []struct {
		shard workload.Shard
		ok    bool
	}{{workload.Shard{Index: 2, Count: 3}, true}, {workload.Shard{Index: 3, Count: 4}, false}, {workload.Shard{Index: 0, Count: 4}, false}} {
		err := p.PrecheckShard(tc.shard)
		var fe *option.FieldError
		if tc.ok != (err == nil) || (err != nil && (!errors.As(err, &fe) || fe.Option != "num-inflight-requests")) {
			t.Errorf("PrecheckShard(%v) of a limit of 3 = %v, want ok %v or an error naming num-inflight-requests", tc.shard, err, tc.ok)
		}
	}
}

// An in-flight limit smaller than the shard count leaves a shard none: it
// is refused naming the flag, in the check before any traffic and, for
// an older host, in New; so is a shard without a document.
func TestShardErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		opts   map[string]any
		common workload.Common
		want   string
	}{
		{
			name:   "in-flight limit",
			opts:   map[string]any{"document-length": 100, "num-inflight-requests": 2},
			common: workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 700, Shard: workload.Shard{Index: 2, Count: 3}},
			want:   "num-inflight-requests: 2 in flight cannot be divided among 3 shards (--shard 2/3): it is the whole run's limit, each shard needs at least 1; raise it to 3 or use fewer shards",
		},
		{
			name:   "documents",
			opts:   map[string]any{"document-length": 100, "num-inflight-requests": 4},
			common: workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 200, Shard: workload.Shard{Index: 2, Count: 4}},
			want:   "document-length: 2 documents (--kv-cache-volume × tokens per GB / document length) cannot be split among 4 shards (--shard 2/4): each shard needs at least one; raise --kv-cache-volume, lower --ldqa-document-length or use fewer shards",
		},
	} {
		sdktest.CheckRefused(t, Definition, sdktest.Options{Options: tc.opts, Common: tc.common}, tc.want)
	}
}
