package main

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/workload"
)

var noLookAhead = slices.DeleteFunc(slices.Clone(protocol.WorkloadCapabilities), func(c string) bool { return c == protocol.LookAhead })

// The shards together send the unsharded run's sweep and measured
// requests, each measured one once, with the same documents and resident
// tags: uniform and skewed access, one document per request, in-flight
// counts that divide and that do not, with and without a host that holds
// requests for a slot.
func TestSharding(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		o      sdktest.Options
		shards int
	}{
		{"uniform", withOpts(small(), "num-inflight-requests", 3), 3},
		{"two shards", small(), 2},
		{"skewed", withOpts(small(), "access-skew", 1.2, "num-inflight-requests", 5, "num-requests", 17), 3},
		{"one document", withOpts(small(), "docs-per-request", 1, "num-inflight-requests", 4), 3},
		{"no look-ahead", func() sdktest.Options { o := small(); o.HostCapabilities = noLookAhead; return o }(), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sdktest.CheckSharding(t, Definition, tc.o, tc.shards)
		})
	}
}

// A shard keeps its share of the in-flight requests, plans its own part,
// sends its part of the sweep, and says which in the banner.
func TestShardPart(t *testing.T) {
	t.Parallel()
	o := withOpts(small(), "num-inflight-requests", 5)
	o.Common.Shard = protocol.Shard{Index: 1, Count: 3}
	o.HostCapabilities = noLookAhead // in flight = what one Step sends
	tr := sdktest.Run(t, Definition, o)
	if tr.Planned != 4 {
		t.Errorf("planned %d, want the shard's 4 of 12", tr.Planned)
	}
	var warm []string
	for _, s := range tr.Warmup() {
		warm = append(warm, s.ID)
	}
	// A pool of 10 in pairs: sweep requests warm0 to warm4.
	if d := cmp.Diff([]string{"warm1", "warm4"}, warm); d != "" {
		t.Errorf("shard 1/3's sweep (-want +got):\n%s", d)
	}
	most := 0
	for _, s := range tr.Measured() {
		inFlight := 0
		for _, r := range tr.Measured() {
			if r.Offset <= s.Offset && s.Offset < r.Offset+sdktest.DefaultEngine(r).Latency {
				inFlight++
			}
		}
		most = max(most, inFlight)
	}
	if most != 2 {
		t.Errorf("at most %d measured requests in flight at once, want the shard's 2 of 5", most)
	}
	i := slices.IndexFunc(tr.Banner, func(f workload.Field) bool { return f.Label == "Shard" })
	if i < 0 {
		t.Fatalf("banner has no Shard line: %v", tr.Banner)
	}
	if want := "1/3: measured requests 1, 4, 7, 10 (4 of 12), warm-up requests 1, 4 (2 of 5), 2 of 5 in flight"; tr.Banner[i].Value != want {
		t.Errorf("Shard line %q, want %q", tr.Banner[i].Value, want)
	}
}

// More shards than in-flight requests leave one without a slot: the check
// before any traffic says so, naming the option, and so does Configure
// for a host that skips the check.
func TestShardInflightTooFew(t *testing.T) {
	t.Parallel()
	o := withOpts(small(), "num-inflight-requests", 3)
	o.Common.Shard = protocol.Shard{Index: 3, Count: 4}
	sdktest.CheckRefused(t, Definition, o,
		"num-inflight-requests: 3 in flight cannot be divided among 4 shards (--shard 3/4): it is the whole run's limit, each shard needs at least 1; raise it to 4 or use fewer shards")
}
