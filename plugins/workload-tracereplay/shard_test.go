package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/workload"
)

// chainTrace is a Mooncake trace of n requests 250 ms apart whose hash
// ids chain: request i opens with ids 0..i%4, then ids of its own, so
// requests share prefixes of different lengths across any split.
func chainTrace(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	own := int64(100)
	for i := range n {
		var ids []string
		for k := range i%4 + 1 {
			ids = append(ids, fmt.Sprint(k))
		}
		for range 2 {
			ids = append(ids, fmt.Sprint(own))
			own++
		}
		input := 4*len(ids) - i%3 // the last block partial for some
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": %d, "output_length": %d, "hash_ids": [%s]}`+"\n",
			250*i, input, 1+i%5, strings.Join(ids, ", "))
	}
	return writeTrace(t, "chain.jsonl", b.String())
}

// The shards together replay the unsharded run's requests, each once with
// the same prompt, tags and output length, at the trace's own times.
func TestSharding(t *testing.T) {
	t.Parallel()
	chain := map[string]any{"trace": chainTrace(t, 23), "block-size": 4}
	for name, opts := range map[string]map[string]any{
		"mooncake":        chain,
		"sped up":         with(chain, "speedup", 4.0, "ignore-eos", false),
		"window":          with(chain, "start", 1.0, "duration", 3.0),
		"max requests":    with(chain, "start", 0.5, "max-requests", 10),
		"csv":             {"trace": "testdata/small.csv", "block-size": 4},
		"small mooncake":  smallTrace(),
		"window of three": with(chain, "max-requests", 3),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, n := range []int{2, 3} {
				sdktest.CheckSharding(t, Definition, sdktest.Options{Options: opts}, n)
			}
		})
	}
}

// A shard plans and announces its part; shared_blocks and the reuse
// check count the blocks an earlier request of the whole window sent,
// whichever shard sent it.
func TestShardPart(t *testing.T) {
	t.Parallel()
	log, logs := sdktest.CaptureLogs()
	shard := workload.Shard{Index: 1, Count: 2}
	// The engine caches what the trace says is shared.
	engine := func(s sdktest.Sent) sdktest.Reply {
		r := sdktest.DefaultEngine(s)
		n, _ := strconv.Atoi(s.Tags["shared_blocks"])
		r.CachedTokens = 4 * n
		return r
	}
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: smallTrace(), Common: workload.Common{Shard: shard}, Logger: log, Engine: engine})
	whole := sdktest.Run(t, Definition, sdktest.Options{Options: smallTrace()})
	var want []string
	for k, s := range whole.Measured() {
		if shard.Owns(k) {
			want = append(want, s.ID)
		}
	}
	if d := cmp.Diff(want, sdktest.IDs(tr.Measured())); d != "" {
		t.Errorf("shard 1/2 sends (-want +got):\n%s", d)
	}
	if tr.Planned != 2 {
		t.Errorf("Planned = %d, want 2 of 5", tr.Planned)
	}
	if got, want := tr.Banner[len(tr.Banner)-1], (workload.Field{Label: "Shard", Value: "1/2: requests 1, 3 (2 of 5)"}); got != want {
		t.Errorf("last banner field %+v, want %+v", got, want)
	}
	// Lines 2 and 4 each open with hash ids 1 and 2, which line 1 (shard
	// 0's) sent in full: 2 blocks each.
	line := "Trace reuse: the engine reported 16 cached tokens over 2 successful requests; the trace shares 16 in full 4-token blocks (measured/expected 100.0%)"
	if !slices.Contains(logs.At(t, "info"), line) {
		t.Errorf("no info log %q in %v", line, logs.Lines(t))
	}
}

// PrecheckShard reads the trace and refuses a window too small to split.
func TestPrecheckShard(t *testing.T) {
	t.Parallel()
	var p workload.ShardPrechecker = Options{Trace: "testdata/small.jsonl", Format: "auto", Speedup: 1, BlockSize: 4}
	if err := p.PrecheckShard(workload.Shard{Index: 4, Count: 5}); err != nil {
		t.Errorf("shard 4/5 of 5 requests: %v", err)
	}
	if err := p.PrecheckShard(workload.Shard{Index: 5, Count: 6}); err == nil {
		t.Error("shard 5/6 of 5 requests passes PrecheckShard")
	}
}

// A window with fewer requests than shards leaves a shard none: refused
// naming --tr-trace, before any traffic and with an older host.
func TestShardWithoutRequests(t *testing.T) {
	t.Parallel()
	opts := with(smallTrace(), "max-requests", 2)
	sdktest.CheckRefused(t, Definition, sdktest.Options{Options: opts, Common: workload.Common{Shard: workload.Shard{Index: 2, Count: 3}}},
		"trace: 2 requests of testdata/small.jsonl are in the window to replay: they cannot be split among 3 shards (--shard 2/3), each needs at least one; widen the window or use fewer shards")
}
