package main

import (
	"testing"

	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/workload"
)

// The shards together send the unsharded run's prompts, each once; at a
// rate each keeps its due time in the global schedule, and with the
// engine's tokenizer each shard's exact prompts are the unsharded ones.
func TestSharding(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		opts   map[string]any
		tokens bool
	}{
		{name: "all at once", opts: map[string]any{"num-requests": 10, "request-length": 30}},
		{name: "constant rate", opts: map[string]any{"num-requests": 10, "request-length": 30, "rate": 4.0}},
		{name: "poisson", opts: map[string]any{"num-requests": 11, "request-length": 30, "rate": 4.0, "arrival": "poisson"}},
		{name: "exact", opts: map[string]any{"num-requests": 12, "request-length": 40}, tokens: true},
		{name: "exact at a rate", opts: map[string]any{"num-requests": 12, "request-length": 40, "rate": 8.0, "arrival": "gamma", "burstiness": 0.5}, tokens: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := sdktest.Options{Options: tc.opts, Common: workload.Common{Seed: 5}}
			if tc.tokens {
				o.Tokens = &sdktest.FakeTokenizer{}
			}
			for _, n := range []int{2, 3} {
				sdktest.CheckSharding(t, Definition, o, n)
			}
		})
	}
}

// A shard plans and announces its own part; the rate stays the run's.
func TestShardPlanAndBanner(t *testing.T) {
	t.Parallel()
	opts := map[string]any{"num-requests": 10, "request-length": 30, "rate": 4.0}
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: opts, Common: workload.Common{Shard: workload.Shard{Index: 1, Count: 3}}})
	if tr.Planned != 3 || len(tr.Measured()) != 3 {
		t.Errorf("shard 1/3 of 10 requests plans %d and sends %d, want 3 and 3", tr.Planned, len(tr.Measured()))
	}
	if tr.RequestedRate != 4 {
		t.Errorf("RequestedRate = %v, want the run's 4", tr.RequestedRate)
	}
	want := workload.Field{Label: "Shard", Value: "1/3: requests 1, 4, 7 (3 of 10)"}
	if got := tr.Banner[len(tr.Banner)-1]; got != want {
		t.Errorf("last banner field %+v, want %+v", got, want)
	}
	whole := sdktest.Run(t, Definition, sdktest.Options{Options: opts})
	for _, f := range whole.Banner {
		if f.Label == "Shard" {
			t.Errorf("an unsharded run shows %+v", f)
		}
	}
}

// PrecheckShard refuses what New refuses: a shard with no request.
func TestPrecheckShard(t *testing.T) {
	t.Parallel()
	var p workload.ShardPrechecker = Options{NumRequests: 4}
	if err := p.PrecheckShard(workload.Shard{Index: 3, Count: 4}); err != nil {
		t.Errorf("shard 3/4 of 4 requests: %v", err)
	}
	if err := p.PrecheckShard(workload.Shard{Index: 4, Count: 5}); err == nil {
		t.Error("shard 4/5 of 4 requests passes PrecheckShard")
	}
}

// A shard with no request to send is refused, naming --rp-num-requests,
// in the check before any traffic and, for an older host, in New.
func TestShardWithoutRequests(t *testing.T) {
	t.Parallel()
	sdktest.CheckRefused(t, Definition, sdktest.Options{
		Options: map[string]any{"num-requests": 2, "request-length": 30},
		Common:  workload.Common{Shard: workload.Shard{Index: 2, Count: 3}},
	}, "num-requests: 2 requests cannot be split among 3 shards (--shard 2/3): each shard needs at least one; raise --rp-num-requests to 3 or use fewer shards")
}
