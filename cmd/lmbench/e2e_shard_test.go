package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/lmbench/lmbench/core/record"
)

// startBarrier runs lmbench barrier for n shards on a free port and
// returns its URL.
func startBarrier(t *testing.T, n int) string {
	url, _ := startBarrierLog(t, n)
	return url
}

// startBarrierLog is startBarrier, with the rest of what the barrier
// prints (a line at each join).
func startBarrierLog(t *testing.T, n int) (string, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "lmbench"), "barrier", "--shards", fmt.Sprint(n), "--listen", "127.0.0.1:0", "--lead", "500ms", "--timeout", "5m")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	br := bufio.NewReader(stdout)
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatalf("lmbench barrier: %v", err)
	}
	// lmbench barrier: run …, waiting for N shards on http://127.0.0.1:P
	i := strings.Index(line, "http://")
	if i < 0 {
		t.Fatalf("lmbench barrier printed %q", line)
	}
	rest := &lockedBuffer{}
	go io.Copy(rest, br)
	return strings.TrimSpace(line[i:]), rest
}

// runShards runs n shards of the same run at once (each its own process
// and output directory under dir) and waits for all.
func runShards(t *testing.T, dir string, n int, start []string, args ...string) {
	t.Helper()
	var wg sync.WaitGroup
	res := make([]result, n)
	for i := range n {
		wg.Go(func() {
			a := append(slices.Clone(args), "--shard", fmt.Sprintf("%d/%d", i, n), "--output-dir", filepath.Join(dir, fmt.Sprintf("shard-%d", i)))
			res[i] = lmbench(t, nil, append(a, start...)...)
		})
	}
	wg.Wait()
	for i, r := range res {
		if r.code != 0 {
			t.Fatalf("shard %d/%d: exit %d\n%s", i, n, r.code, r.stderr)
		}
	}
}

// measuredByID is a journal's measured records by request id.
func measuredByID(t *testing.T, path string) map[string]record.Record {
	t.Helper()
	out := map[string]record.Record{}
	for _, r := range readJournal(t, path).Records {
		if r.Phase == record.Measure {
			if _, dup := out[r.RequestID]; dup {
				t.Errorf("%s: request %s twice", path, r.RequestID)
			}
			out[r.RequestID] = r
		}
	}
	return out
}

// Three shards of a run, through a barrier, against one engine (lmbench
// sim in its own process: its tokenizer counts the prompts), then lmbench
// merge, give the unsharded run's measured requests — the same ids, each
// with the same prompt length as the engine counted it — and the same
// counts in the summary; the merged files carry every record once, each
// tagged with its shard.
func TestShardedRunMergesToTheUnshardedRun(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"long-doc-permutator", []string{"--workload", "long-doc-permutator", "--ldp-num-contexts", "3", "--ldp-context-length", "60",
			"--ldp-system-prompt-length", "10", "--ldp-num-permutations", "7", "--ldp-num-inflight-requests", "3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, url := startSim(t, "--tokenizer-mode", "subword")
			common := append([]string{"run", "--engine-url", url, "--tokens-per-gb-kvcache", "8192", "--kv-cache-volume", "1",
				"--seed", "11", "--no-interactive", "-q", "--json"}, tc.args...)
			dir := t.TempDir()
			whole := filepath.Join(dir, "whole")
			if r := lmbench(t, nil, append(common, "--output-dir", whole)...); r.code != 0 {
				t.Fatalf("unsharded run: exit %d\n%s", r.code, r.stderr)
			}
			shards := filepath.Join(dir, "shards")
			runShards(t, shards, 3, []string{"--barrier", startBarrier(t, 3)}, common...)
			// The merged run beside the shards, as on a shared volume: a
			// second merge of the same directory passes over it.
			merged := filepath.Join(shards, "merged")
			for range 2 {
				m := lmbench(t, nil, "merge", "-o", merged, shards)
				if m.code != 0 || !strings.Contains(m.stdout, "Merged 3 shards of run") {
					t.Fatalf("merge: exit %d\n%s\n%s", m.code, m.stdout, m.stderr)
				}
			}

			want := measuredByID(t, filepath.Join(whole, record.JournalName))
			got := measuredByID(t, filepath.Join(merged, record.JournalName))
			wantIDs, gotIDs := mapKeys(want), mapKeys(got)
			if !slices.Equal(wantIDs, gotIDs) {
				t.Fatalf("merged request ids %v, unsharded %v", gotIDs, wantIDs)
			}
			for id, w := range want {
				g := got[id]
				if g.InputTokens != w.InputTokens || g.OutputTokens != w.OutputTokens || g.Success != w.Success {
					t.Errorf("%s: merged %d in / %d out / success %v, unsharded %d / %d / %v", id,
						g.InputTokens, g.OutputTokens, g.Success, w.InputTokens, w.OutputTokens, w.Success)
				}
			}
			ws, ms := readSummaryMap(t, whole), readSummaryMap(t, merged)
			for _, k := range []string{"total_requests", "successful_requests", "failed_requests", "total_input_tokens", "total_output_tokens"} {
				if a, b := ws["results"].(map[string]any)[k], ms["results"].(map[string]any)[k]; a != b {
					t.Errorf("results.%s: merged %v, unsharded %v", k, b, a)
				}
			}
			if st := ms["run"].(map[string]any)["status"]; st != "completed" {
				t.Errorf("merged status %v", st)
			}
			parts, _ := ms["shards"].([]any)
			if len(parts) != 3 {
				t.Fatalf("merged summary lists %d shards, want 3", len(parts))
			}
			for i, p := range parts {
				p := p.(map[string]any)
				clock := p["clock"].(map[string]any)
				if p["index"] != float64(i) || p["status"] != "completed" || !strings.HasPrefix(clock["reference"].(string), "barrier http://") || clock["samples"] != 8.0 {
					t.Errorf("shard %d in the summary: %v", i, p)
				}
			}
			rows := readCSV(t, filepath.Join(merged, "bench_results.csv"))
			col := slices.Index(rows[0], "tag_shard")
			if col < 0 || len(rows)-1 != len(want) {
				t.Fatalf("merged CSV: %d rows, header %v; want %d rows and a shard column", len(rows)-1, rows[0], len(want))
			}
			seen := map[string]int{}
			for _, row := range rows[1:] {
				seen[row[col]]++
			}
			if len(seen) != 3 || seen["0"] == 0 || seen["1"] == 0 || seen["2"] == 0 {
				t.Errorf("merged CSV: rows by shard %v, want shards 0, 1 and 2", seen)
			}
			for _, f := range []string{"bench_results.parquet", "report.html"} {
				if _, err := os.Stat(filepath.Join(merged, f)); err != nil {
					t.Errorf("merged %s: %v", f, err)
				}
			}
		})
	}
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Merging refuses what is not one whole run, before writing anything:
// a shard missing, and the shards of two runs.
func TestMergeRefusesIncompleteRuns(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	_, url := startSim(t)
	dir := t.TempDir()
	common := []string{"run", "--engine-url", url, "--workload", "long-doc-permutator", "--ldp-num-contexts", "2", "--ldp-context-length", "20",
		"--ldp-num-permutations", "3", "--ldp-num-inflight-requests", "3", "--tokens-per-gb-kvcache", "8192", "--kv-cache-volume", "1",
		"--no-interactive", "-q", "--json"}
	start := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339Nano)
	for i := range 2 {
		a := append(slices.Clone(common), "--shard", fmt.Sprintf("%d/3", i), "--start-at", start, "--output-dir", filepath.Join(dir, fmt.Sprint(i)))
		if r := lmbench(t, nil, a...); r.code != 0 {
			t.Fatalf("shard %d: exit %d\n%s", i, r.code, r.stderr)
		}
	}
	r := lmbench(t, nil, "merge", "-o", filepath.Join(dir, "m"), dir)
	if r.code == 0 || !strings.Contains(r.stderr, "shard 2/3 missing (2 of 3 found)") {
		t.Errorf("merge without shard 2: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "m", record.JournalName)); err == nil {
		t.Error("a refused merge wrote a journal")
	}
	r = lmbench(t, nil, "merge", "--partial", "-o", filepath.Join(dir, "p"), filepath.Join(dir, "0"), filepath.Join(dir, "1"))
	if r.code != 1 || !strings.Contains(r.stderr, "the merged run is aborted: shard 2/3 missing from the merge") {
		t.Errorf("partial merge: exit %d\n%s", r.code, r.stderr)
	}
	// Another run's shard 2 (another start: another run id).
	other := time.Now().Add(time.Second).UTC().Format(time.RFC3339Nano)
	a := append(slices.Clone(common), "--shard", "2/3", "--start-at", other, "--output-dir", filepath.Join(dir, "2"))
	if r := lmbench(t, nil, a...); r.code != 0 {
		t.Fatalf("other shard: exit %d\n%s", r.code, r.stderr)
	}
	r = lmbench(t, nil, "merge", "-o", filepath.Join(dir, "m"), filepath.Join(dir, "0"), filepath.Join(dir, "1"), filepath.Join(dir, "2"))
	if r.code == 0 || !strings.Contains(r.stderr, "merge the shards of one run") {
		t.Errorf("merge of two runs: exit %d\n%s", r.code, r.stderr)
	}
}

// Bad shard options are refused before the engine is contacted, naming
// the flag; a workload that cannot split its plan is refused too.
func TestShardOptionErrors(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	e := newFakeEngine(t)
	base := []string{"run", "--engine-url", e.srv.URL, "--tokens-per-gb-kvcache", "1000", "--kv-cache-volume", "1", "--no-interactive", "-q"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--workload", "random-prefill", "--shard", "3/3", "--start-at", "1796140000"}, `--shard: "3/3": shard index 3: expected 0 to 2 for 3 shards`},
		{[]string{"--workload", "random-prefill", "--shard", "0-3"}, `--shard: "0-3": expected I/N`},
		{[]string{"--workload", "random-prefill", "--shard", "0/3"}, "a sharded run needs a common start"},
		{[]string{"--workload", "random-prefill", "--shard", "0/3", "--start-at", "tomorrow"}, `--start-at: "tomorrow": expected an RFC 3339 time`},
		{[]string{"--workload", "random-prefill", "--shard", "0/3", "--barrier", "lmbench-barrier:7070"}, "--barrier: \"lmbench-barrier:7070\": expected the barrier's http://"},
		{[]string{"--workload", "random-prefill", "--start-at", "1796140000"}, "--start-at: only for a sharded run"},
		{[]string{"--workload", "random-prefill", "--shard", "0/3", "--start-at", "1796140000", "--max-concurrency", "2"}, "--max-concurrency: 2 cannot be divided among 3 shards"},
		{[]string{"--workload", "prefix-suffix-tuner", "--shard", "0/2", "--start-at", "1796140000"}, "prefix-suffix-tuner"},
	} {
		r := lmbench(t, nil, append(slices.Clone(base), tc.args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error with %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	if n := len(e.requests()); n != 0 {
		t.Errorf("the engine got %d requests from refused runs", n)
	}
}

// Three shards of a Poisson schedule at 40 req/s, each sending every
// third request of the global schedule, make up the requested process:
// the merged run's scheduled send times have the schedule's rate and gap
// CV (what lmbench decides, whatever the machine's load), every request
// reaches the engine, and the merged summary sets the run's rate, not a
// shard's, against what was achieved. How closely the sends kept to the
// schedule on this machine is logged, not asserted (a busy machine is
// late; scripts/dispatch-lag-bench.sh measures it).
func TestShardedPoissonKeepsRateAndCV(t *testing.T) {
	needBinaries(t)
	const rate, n, seed = 40.0, 360, 3
	e := newArrivalEngine(t, nil)
	dir := t.TempDir()
	// Room for three processes to start on a busy machine: a shard that
	// starts after the common start schedules from its own start (its
	// lateness is recorded), which is not the case under test.
	start := time.Now().Add(10 * time.Second).UTC().Format(time.RFC3339Nano)
	runShards(t, dir, 3, []string{"--start-at", start}, "run", "--engine-url", e.srv.URL, "--workload", "random-prefill",
		"--rp-rate", fmt.Sprint(rate), "--rp-arrival", "poisson", "--rp-num-requests", fmt.Sprint(n), "--rp-request-length", "16",
		"--seed", fmt.Sprint(seed), "--tokens-per-gb-kvcache", "1000", "--kv-cache-volume", "1", "--no-interactive", "-q", "--json")
	got, engineRate, engineCV := e.gaps()
	if got != n {
		t.Fatalf("the engine got %d requests, want %d", got, n)
	}

	merged := filepath.Join(dir, "merged")
	if m := lmbench(t, nil, "merge", "--no-report", "-o", merged, dir); m.code != 0 {
		t.Fatalf("merge: exit %d\n%s", m.code, m.stderr)
	}
	var scheduled []time.Time
	mj := readJournal(t, filepath.Join(merged, record.JournalName))
	for _, sh := range mj.Run.Merged {
		if sh.Lateness > 100*time.Millisecond {
			t.Skipf("shard %d/%d started %v after the common start (the machine was too busy to start it in 10 s): its schedule is its own start's, so the merged schedule is not the run's", sh.Index, sh.Count, sh.Lateness)
		}
	}
	for _, r := range mj.Records {
		if r.Phase == record.Measure {
			scheduled = append(scheduled, r.Scheduled)
		}
	}
	if len(scheduled) != n {
		t.Fatalf("the merged journal has %d measured requests, want %d", len(scheduled), n)
	}
	schedRate, schedCV := timeGaps(scheduled)
	wantCV := scheduleCV(t, "poisson", rate, 1, seed, n)
	if math.Abs(schedRate-rate)/rate > 0.03 || math.Abs(schedCV-wantCV) > 0.06 {
		t.Errorf("merged schedule: %.3f req/s, gap CV %.4f; want within 3%% of %v req/s and 0.06 of the schedule's CV %.4f", schedRate, schedCV, rate, wantCV)
	}
	t.Logf("three shards: scheduled %.2f req/s, gap CV %.3f; the engine saw %.2f req/s, gap CV %.3f (schedule CV %.3f)",
		schedRate, schedCV, engineRate, engineCV, wantCV)
	load := readSummaryMap(t, merged)["load"].(map[string]any)
	if load["requested_rate"] != rate {
		t.Errorf("merged requested_rate = %v, want the run's %v", load["requested_rate"], rate)
	}
	if a, ok := load["achieved_send_rate"].(float64); !ok || !(a > 0) {
		t.Errorf("merged achieved_send_rate = %v, want a figure", load["achieved_send_rate"])
	}
	shard := readSummaryMap(t, filepath.Join(dir, "shard-1"))["load"].(map[string]any)
	if r, ok := shard["requested_rate"].(float64); !ok || math.Abs(r-rate/3) > 1e-9 {
		t.Errorf("shard 1/3's requested_rate = %v, want its part, %v", shard["requested_rate"], rate/3)
	}
}

// A shard that stops before its measured phase (here refused before it
// contacts anything: a bad option) tells the barrier, and the shards
// waiting for it stop at once, saying which shard and why, instead of
// waiting out the barrier's timeout; the barrier exits 1.
func TestShardStoppingEarlyStopsTheOthers(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	e := newArrivalEngine(t, nil)
	url := startBarrier(t, 3)
	base := []string{"run", "--engine-url", e.srv.URL, "--workload", "random-prefill", "--rp-request-length", "16",
		"--tokens-per-gb-kvcache", "1000", "--kv-cache-volume", "1", "--no-interactive", "-q", "--barrier", url}
	var wg sync.WaitGroup
	res := make([]result, 3)
	for i := range 3 {
		wg.Go(func() {
			n := "30"
			if i == 2 {
				n = "0" // refused
			}
			res[i] = lmbench(t, nil, append(slices.Clone(base), "--rp-num-requests", n, "--shard", fmt.Sprintf("%d/3", i),
				"--output-dir", filepath.Join(t.TempDir(), fmt.Sprint(i)))...)
		})
	}
	wg.Wait()
	if res[2].code == 0 || !strings.Contains(res[2].stderr, "--rp-num-requests") {
		t.Errorf("shard 2: exit %d\n%s", res[2].code, res[2].stderr)
	}
	for i := range 2 {
		if res[i].code != 1 || !strings.Contains(res[i].stderr, "shard 2/3 left before the measured phase: --rp-num-requests") {
			t.Errorf("shard %d: exit %d\n%s", i, res[i].code, res[i].stderr)
		}
	}
	if n, _ := e.seen(); n != 0 {
		t.Errorf("the engine got %d requests", n)
	}
}

// Shards that share no volume: each uploads its output directory to
// S3-compatible storage (here an in-memory S3 server, gofakes3, in this
// process), and lmbench merge reads their journals back from an s3:// URL
// and uploads the merged files. The credentials stay in the environment.
func TestShardsThroughObjectStorage(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	mem := s3mem.New()
	if err := mem.CreateBucket("bench"); err != nil {
		t.Fatal(err)
	}
	s3 := httptest.NewServer(gofakes3.New(mem).Server())
	defer s3.Close()
	const secret = "s3-secret-e2e-5521"
	env := []string{"AWS_ENDPOINT_URL=" + s3.URL, "AWS_ACCESS_KEY_ID=bench-key", "AWS_SECRET_ACCESS_KEY=" + secret, "AWS_REGION=us-east-1"}
	e := newArrivalEngine(t, nil)
	dir := t.TempDir()
	start := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339Nano)
	var wg sync.WaitGroup
	res := make([]result, 2)
	for i := range 2 {
		wg.Go(func() {
			res[i] = lmbench(t, env, "run", "--engine-url", e.srv.URL, "--workload", "random-prefill", "--rp-num-requests", "10",
				"--rp-request-length", "16", "--tokens-per-gb-kvcache", "1000", "--kv-cache-volume", "1", "--no-interactive", "-q", "--json",
				"--shard", fmt.Sprintf("%d/2", i), "--start-at", start, "--output-dir", filepath.Join(dir, fmt.Sprint(i)),
				"--upload-to", fmt.Sprintf("s3://bench/run-1/shard-%d", i))
		})
	}
	wg.Wait()
	for i, r := range res {
		if r.code != 0 || !strings.Contains(r.stdout, "Uploaded ") {
			t.Fatalf("shard %d: exit %d\n%s\n%s", i, r.code, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout+r.stderr, secret) {
			t.Errorf("shard %d printed the secret", i)
		}
	}
	merged := filepath.Join(dir, "merged")
	m := lmbench(t, env, "merge", "--no-report", "-o", merged, "--upload-to", "s3://bench/run-1/merged", "s3://bench/run-1")
	if m.code != 0 || !strings.Contains(m.stdout, "Merged 2 shards") {
		t.Fatalf("merge: exit %d\n%s\n%s", m.code, m.stdout, m.stderr)
	}
	if got := len(measuredByID(t, filepath.Join(merged, record.JournalName))); got != 10 {
		t.Errorf("merged %d measured requests, want 10", got)
	}
	obj, err := mem.HeadObject("bench", "run-1/merged/"+record.JournalName)
	if err != nil || obj == nil {
		t.Errorf("the merged journal is not in the bucket: %v", err)
	}
	// A second merge of the same prefix passes over the merged run.
	m = lmbench(t, env, "merge", "--no-report", "-o", filepath.Join(dir, "again"), "s3://bench/run-1")
	if m.code != 0 {
		t.Errorf("second merge: exit %d\n%s", m.code, m.stderr)
	}
	for _, f := range []string{"bench_summary.json", record.JournalName, "bench_results.csv"} {
		b, err := os.ReadFile(filepath.Join(merged, f))
		if err != nil || strings.Contains(string(b), secret) || strings.Contains(string(b), "bench-key") {
			t.Errorf("%s: %v, or it holds a credential", f, err)
		}
	}
	// Bad URLs are refused before anything runs.
	r := lmbench(t, env, "run", "--engine-url", e.srv.URL, "--workload", "random-prefill", "--tokens-per-gb-kvcache", "1000",
		"--no-interactive", "-q", "--upload-to", "https://bench/x")
	if r.code == 0 || !strings.Contains(r.stderr, `--upload-to: "https://bench/x": expected s3://bucket/prefix`) {
		t.Errorf("bad --upload-to: exit %d\n%s", r.code, r.stderr)
	}
}

// A shard killed (SIGKILL: it can post nothing) while it waits at the
// barrier is noticed by its closed connection: the shard that arrives
// next is told, naming it, instead of waiting out the barrier's timeout.
func TestShardKilledAtTheBarrier(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	e := newArrivalEngine(t, nil)
	url, blog := startBarrierLog(t, 2)
	args := func(i int) []string {
		return []string{"run", "--engine-url", e.srv.URL, "--workload", "random-prefill", "--rp-num-requests", "10", "--rp-request-length", "16",
			"--tokens-per-gb-kvcache", "1000", "--kv-cache-volume", "1", "--no-interactive", "-q", "--barrier", url,
			"--shard", fmt.Sprintf("%d/2", i), "--output-dir", filepath.Join(t.TempDir(), fmt.Sprint(i))}
	}
	victim, _, _ := startLmbench(t, nil, args(0)...)
	waitFor(t, "shard 0 at the barrier", func() bool { return strings.Contains(blog.String(), "shard 0/2 at the start gate") })
	victim.Process.Kill()
	victim.Wait()
	waitFor(t, "the barrier to notice", func() bool { return strings.Contains(blog.String(), "shard 0/2 stopped before its measured phase") })
	r := lmbench(t, nil, args(1)...)
	const want = "shard 0/2 left before the measured phase: its connection to the barrier closed while it waited at the start gate"
	if r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("shard 1: exit %d\n%s", r.code, r.stderr)
	}
	if n, _ := e.seen(); n != 0 {
		t.Errorf("the engine got %d requests", n)
	}
}
