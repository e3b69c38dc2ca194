package main

// End-to-end tests of the engine's own metrics (issue 13): the real
// binaries scrape the built-in engine's /metrics, keep the samples and put
// per-phase figures in the summary; an engine without /metrics prints n/a
// and the run still succeeds.

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lmbench/lmbench/core/record"
)

// engineSummary is bench_summary.json's engine_metrics block, the parts
// the tests read (null figures decode as nil).
type engineSummary struct {
	URL      string   `json:"url"`
	Engine   *string  `json:"engine"`
	Scrapes  int      `json:"scrapes"`
	Failed   int      `json:"failed_scrapes"`
	Error    *string  `json:"first_error"`
	Verdicts []string `json:"verdicts"`
	Warmup   enginePhaseSummary
	Measure  enginePhaseSummary
	Reset    *struct {
		When    string `json:"when"`
		Status  *int   `json:"status"`
		Cleared string `json:"cleared"`
		Detail  string `json:"detail"`
	} `json:"reset"`
}

type enginePhaseSummary struct {
	Hits     *float64 `json:"prefix_cache_hits"`
	External *float64 `json:"external_prefix_cache_hits"`
	Queries  *float64 `json:"prefix_cache_queries"`
	TTFT     struct {
		Count *float64 `json:"count"`
		P50   *float64 `json:"p50"`
	} `json:"ttft_ms"`
	Journal *float64 `json:"journal_cached_tokens"`
}

func readEngineSummary(t *testing.T, dir string) (*engineSummary, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "bench_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Engine *engineSummary `json:"engine_metrics"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Engine, doc.Engine != nil
}

// journalCached sums the journal's cached_tokens per phase, with the
// number of requests.
func journalCached(t *testing.T, dir string) (cached map[record.Phase]float64, n map[record.Phase]int) {
	t.Helper()
	c := readJournal(t, filepath.Join(dir, record.JournalName))
	cached, n = map[record.Phase]float64{}, map[record.Phase]int{}
	for _, r := range c.Records {
		cached[r.Phase] += float64(r.CachedTokens)
		n[r.Phase]++
	}
	return cached, n
}

// TestEngineMetricsAgreeWithTheJournal runs long-doc-qa on the built-in
// engine: the per-phase deltas of the engine's prefix-hit counters (GPU
// plus connector) agree with the journal's cached_tokens within one block
// per request (the simulator's agree exactly), with a GPU tier that holds
// every document and with one that spills to the CPU tier; and the same for
// prefix-suffix-tuner.
func TestEngineMetricsAgreeWithTheJournal(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	ldqa := []string{"--workload", "long-doc-qa", "--kv-cache-volume", "0.5", "--ldqa-document-length", "500",
		"--ldqa-query-per-document", "2"}
	// prefix-suffix-tuner thrashing a small GPU tier, its pool held by the
	// CPU tier: every measured hit is the connector's.
	psf := []string{"--workload", "prefix-suffix-tuner", "--psf-context-length", "400", "--psf-prefix-ratio", "0.5",
		"--psf-thrash", "0.5", "--sim-gpu-gb", "0.5", "--sim-cpu-gb", "8"}
	for name, args := range map[string][]string{
		"long-doc-qa":              slices.Concat(ldqa, []string{"--sim-gpu-gb", "8"}),
		"long-doc-qa/spill-to-cpu": slices.Concat(ldqa, []string{"--sim-gpu-gb", "0.25"}),
		// 64-token blocks: the host aligns the declared reuse to the
		// built-in engine's block without --block-size.
		"long-doc-qa/block-64": slices.Concat(ldqa, []string{"--sim-block-size", "64"}),
		"prefix-suffix-tuner":  psf,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			r := lmbench(t, nil, append(append([]string{"run", "--engine-url", "builtin"}, args...),
				"--sim-tokens-per-gb", "4096", "--sim-time-scale", "0",
				"--no-interactive", "-q", "--json", "--output-dir", out)...)
			if r.code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			e, ok := readEngineSummary(t, out)
			if !ok || e.Engine == nil || *e.Engine != "vllm" || e.Failed != 0 {
				t.Fatalf("engine_metrics = %+v, want vLLM's metrics, no failed scrape", e)
			}
			cached, n := journalCached(t, out)
			const block = 16
			for _, ph := range []struct {
				name  record.Phase
				stats enginePhaseSummary
			}{{record.Warmup, e.Warmup}, {record.Measure, e.Measure}} {
				if ph.stats.Hits == nil || ph.stats.External == nil {
					t.Fatalf("%s: prefix hits %v, connector hits %v; want both", ph.name, ph.stats.Hits, ph.stats.External)
				}
				engine := *ph.stats.Hits + *ph.stats.External
				if d := math.Abs(engine - cached[ph.name]); d > float64(block*n[ph.name]) {
					t.Errorf("%s: engine counted %v hit tokens, the journal %v cached tokens over %d requests",
						ph.name, engine, cached[ph.name], n[ph.name])
				}
				if ph.stats.TTFT.Count == nil || int(*ph.stats.TTFT.Count) != n[ph.name] {
					t.Errorf("%s: engine TTFT count %v, want %d", ph.name, ph.stats.TTFT.Count, n[ph.name])
				}
			}
			// The summary's ledger says the same.
			l := readLedger(t, out)
			if l.Warmup.Agrees != "yes" || l.Measure.Agrees != "yes" || len(l.Verdicts) != 0 {
				t.Errorf("cache_ledger: warmup %+v, measure %+v, verdicts %q; want both agreeing, no verdict",
					l.Warmup, l.Measure, l.Verdicts)
			}
			if cached[record.Measure] == 0 {
				t.Error("the measured questions found nothing cached: the test proves nothing")
			}
			// long-doc-qa declares the document as each question's
			// reusable prefix: on the built-in engine (a token is a word)
			// it is exactly what was found.
			if strings.HasPrefix(name, "long-doc-qa") && (l.Measure.Declared != n[record.Measure] ||
				l.Measure.Expected == nil || *l.Measure.Expected != cached[record.Measure]) {
				t.Errorf("measured: %d declared, expected %v cached tokens; want %d, %v",
					l.Measure.Declared, l.Measure.Expected, n[record.Measure], cached[record.Measure])
			}
			if (name == "long-doc-qa/spill-to-cpu" || name == "prefix-suffix-tuner") && *e.Measure.External == 0 {
				t.Error("no connector hit measured: the CPU tier was not exercised")
			}
			if !strings.Contains(r.stdout, "Engine P50 TTFT (ms)") || !strings.Contains(r.stdout, "lmbench P50 TTFT (ms)") {
				t.Errorf("terminal summary lacks the engine's TTFT beside lmbench's:\n%s", r.stdout)
			}
			points := metricPoints(t, filepath.Join(out, "bench_metrics.jsonl"))
			want := []string{"run_start", "warmup_end", "measure_start", "measure_end", "run_end"}
			if strings.Join(points, ",") != strings.Join(want, ",") {
				t.Errorf("bench_metrics.jsonl points %v, want %v", points, want)
			}
		})
	}
}

// metricPoints returns the point of every sample in a bench_metrics.jsonl
// (after checking its header), interval samples left out.
func metricPoints(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	var points []string
	for i := 0; sc.Scan(); i++ {
		var l map[string]any
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s line %d: %v", path, i+1, err)
		}
		if i == 0 {
			if l["schema"] != "lmbench.bench_metrics/1" {
				t.Fatalf("%s: header %v", path, l)
			}
			continue
		}
		if p := l["point"].(string); p != "interval" {
			points = append(points, p)
		}
	}
	return points
}

// TestDeclaredReuseShortIsFlagged: long-doc-qa on a GPU tier too small
// for its documents finds less than it declared, and the ledger says so.
func TestDeclaredReuseShortIsFlagged(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	out := t.TempDir()
	r := lmbench(t, nil, "run", "--engine-url", "builtin", "--workload", "long-doc-qa",
		"--kv-cache-volume", "0.5", "--ldqa-document-length", "500", "--ldqa-query-per-document", "2",
		"--sim-tokens-per-gb", "4096", "--sim-time-scale", "0", "--sim-gpu-gb", "0.1", "--sim-cpu-gb", "0",
		"--no-interactive", "-q", "--json", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	l := readLedger(t, out)
	if l.Measure.Short == 0 || !hasVerdict(l, "found more than a block less cached than long-doc-qa expected") {
		t.Errorf("a cache too small: measure %+v, verdicts %q; want short requests flagged", l.Measure, l.Verdicts)
	}
	if l.Measure.Agrees != "yes" {
		t.Errorf("the engine's counters still agree with the requests: agrees %q", l.Measure.Agrees)
	}
}

// TestEngineMetricsNAWithoutEndpoint: an engine with no /metrics gives
// n/a figures, one warning, and a run that succeeds.
func TestEngineMetricsNAWithoutEndpoint(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t)
	out := t.TempDir()
	r := lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--workload", "random-prefill",
		"--tokens-per-gb-kvcache", "8192", "--kv-cache-volume", "0.01", "--rp-num-requests", "3",
		"--reset-cache", "before-warmup", "--no-interactive", "-q", "--json", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	// No /reset_prefix_cache either: the reset is reported failed, the
	// run goes on.
	l := readLedger(t, out)
	if l.Reset == nil || l.Reset.Cleared != "no" || l.Reset.Status == nil || *l.Reset.Status != 404 ||
		!hasVerdict(l, "VLLM_SERVER_DEV_MODE=1") {
		t.Errorf("reset on an engine without the endpoint: %+v, verdicts %q", l.Reset, l.Verdicts)
	}
	want := "Engine metrics: n/a (GET " + eng.srv.URL + "/metrics: 404"
	if !strings.Contains(strings.ReplaceAll(r.stdout, "\n  ", " "), want) {
		t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
	}
	if got := strings.Count(r.stderr, "scrape failed"); got != 1 {
		t.Errorf("the failed scrape was logged %d times, want once:\n%s", got, r.stderr)
	}
	e, ok := readEngineSummary(t, out)
	if !ok {
		t.Fatal("no engine_metrics in bench_summary.json")
	}
	if e.Engine != nil || e.Scrapes == 0 || e.Failed != e.Scrapes || e.Error == nil || e.Measure.Hits != nil || e.Measure.TTFT.P50 != nil {
		t.Errorf("engine_metrics = %+v; want every scrape failed, figures null", e)
	}
}

// TestNoMetrics: --no-metrics leaves no samples file and no block; a bad
// --metrics-url fails before any request, naming the flag.
func TestNoMetrics(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t)
	out := t.TempDir()
	args := []string{"run", "--engine-url", eng.srv.URL, "--workload", "random-prefill",
		"--tokens-per-gb-kvcache", "8192", "--kv-cache-volume", "0.01", "--rp-num-requests", "2",
		"--no-interactive", "-q", "--json", "--output-dir", out}
	r := lmbench(t, nil, append(args, "--no-metrics")...)
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "bench_metrics.jsonl")); !os.IsNotExist(err) {
		t.Errorf("--no-metrics: bench_metrics.jsonl exists (%v)", err)
	}
	if _, ok := readEngineSummary(t, out); ok {
		t.Error("--no-metrics: engine_metrics in the summary")
	}
	before := len(eng.requests())
	r = lmbench(t, nil, append(args, "--metrics-url", "localhost:8000/metrics")...)
	if r.code == 0 || !strings.Contains(r.stderr, "--metrics-url") || !strings.Contains(r.stderr, `got "localhost:8000/metrics"`) {
		t.Errorf("bad --metrics-url: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if got := len(eng.requests()); got != before {
		t.Errorf("bad --metrics-url: %d requests sent", got-before)
	}
}
