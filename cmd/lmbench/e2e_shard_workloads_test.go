package main

// End to end: each sharding workload run as 3 shards (separate lmbench
// processes with a common --start-at) and merged sends exactly the
// requests of one unsharded run of the same plan and seed: the same ids,
// tags, prompt lengths (the engine's and the stated ones) and output
// lengths.

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/core/record"
)

// shardedRequest is what a request's plan decides, as the journal has it.
type shardedRequest struct {
	Tags          map[string]string
	Success       bool
	Input, Output int64
	Stated        int64
}

func planOf(t *testing.T, c *record.Contents) map[string]shardedRequest {
	t.Helper()
	out := map[string]shardedRequest{}
	for _, r := range c.Records {
		if r.Phase != record.Measure {
			continue
		}
		tags := maps.Clone(r.Tags)
		delete(tags, "shard") // the merge's own tag
		out[r.RequestID] = shardedRequest{tags, r.Success, r.InputTokens, r.OutputTokens, r.StatedPromptTokens}
	}
	return out
}

func TestShardedWorkloadsMergeToTheUnshardedRun(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	const shards = 3
	trace, err := filepath.Abs(traceFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		// --rp-rate: the global schedule, split by request.
		{"random-prefill", []string{"--workload", "random-prefill", "--rp-num-requests", "20", "--rp-request-length", "200", "--rp-rate", "40", "--rp-arrival", "poisson"}},
		// Closed loop, split by document, the in-flight limit divided.
		{"long-doc-qa", []string{"--workload", "long-doc-qa", "--ldqa-document-length", "500", "--ldqa-query-per-document", "3", "--ldqa-num-inflight-requests", "4"}},
		// Sessions whose rounds carry their answers, on the QPS schedule.
		{"multi-round-chat", []string{"--workload", "multi-round-chat", "--mrc-shared-prompt-length", "200", "--mrc-chat-history-length", "400",
			"--mrc-user-input-length", "20", "--mrc-output-length", "10", "--mrc-qps", "20", "--mrc-duration", "1.5"}},
		// The trace's own times, split by request.
		{"trace-replay", []string{"--workload", "trace-replay", "--tr-trace", trace, "--tr-speedup", "40", "--tr-max-requests", "60"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			// The engine's tokenizer (subword): exact lengths where a
			// workload counts tokens. No delays: no closed-loop request
			// waits long enough to change what is sent before the end.
			engine := func() string {
				_, url := startSim(t, "--time-scale", "0", "--tokenizer-mode", "subword")
				return url
			}
			common := append([]string{"--kv-cache-volume", "1", "--tokens-per-gb-kvcache", "8192", "--seed", "7"}, tc.args...)
			run := func(url, out string, extra ...string) result {
				args := append([]string{"run", "--engine-url", url, "--output-dir", out}, common...)
				return lmbench(t, nil, append(args, extra...)...)
			}
			whole := filepath.Join(dir, "whole")
			if r := run(engine(), whole); r.code != 0 {
				t.Fatalf("unsharded run: exit %d\n%s", r.code, r.stderr)
			}
			url := engine()
			start := strconv.FormatInt(time.Now().Add(3*time.Second).Unix()+1, 10)
			codes := make(chan string, shards)
			for i := range shards {
				go func() {
					r := run(url, filepath.Join(dir, "shards", fmt.Sprint(i)), "--shard", fmt.Sprintf("%d/%d", i, shards), "--start-at", start)
					if r.code != 0 {
						codes <- fmt.Sprintf("shard %d/%d: exit %d\n%s", i, shards, r.code, r.stderr)
						return
					}
					codes <- ""
				}()
			}
			for range shards {
				if msg := <-codes; msg != "" {
					t.Fatal(msg)
				}
			}
			merged := filepath.Join(dir, "merged")
			if r := lmbench(t, nil, "merge", "--output-dir", merged, "--no-report", filepath.Join(dir, "shards")); r.code != 0 {
				t.Fatalf("merge: exit %d\n%s", r.code, r.stderr)
			}
			w := readJournal(t, filepath.Join(whole, "bench_journal.jsonl"))
			m := readJournal(t, filepath.Join(merged, "bench_journal.jsonl"))
			want, got := planOf(t, w), planOf(t, m)
			if len(want) == 0 {
				t.Fatal("the unsharded run measured nothing")
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("merged requests (-unsharded +merged):\n%s", d)
			}
			if n := len(m.Run.Merged); n != shards {
				t.Errorf("the merged run names %d shards, want %d", n, shards)
			}
			if w.Summary == nil || m.Summary == nil {
				t.Fatalf("summaries: unsharded %v, merged %v", w.Summary != nil, m.Summary != nil)
			}
			if w.Summary.Total != m.Summary.Total || w.Summary.Successful != m.Summary.Successful {
				t.Errorf("merged summary: %d requests, %d successful; unsharded %d, %d",
					m.Summary.Total, m.Summary.Successful, w.Summary.Total, w.Summary.Successful)
			}
			ids := slices.Sorted(maps.Keys(got))
			t.Logf("%d requests, from %s to %s", len(ids), ids[0], ids[len(ids)-1])
		})
	}
}
