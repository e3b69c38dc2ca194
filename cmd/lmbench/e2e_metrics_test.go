package main

// End-to-end tests of the summary's metrics (issue 12): vLLM's TPOT and
// pooled ITL against a server that records when it sent each chunk, "n/a"
// where a figure has no data, the cache block and --percentiles.

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lmbench/lmbench/core/record"
)

// stallEngine is an OpenAI-compatible server whose answers stream chunks
// base apart, every tenth gap stall longer: a periodic decode stall. It
// records, per answer, when each chunk left it (after the flush), so a
// test compares lmbench's gaps with the ones the server produced.
type stallEngine struct {
	srv           *httptest.Server
	chunks        int
	base, stall   time.Duration
	mu            sync.Mutex
	sent          map[string][]time.Time // prompt -> send time of each chunk
	cached, input map[string]int         // prompt -> usage reported
}

func newStallEngine(t *testing.T, chunks int, base, stall time.Duration) *stallEngine {
	e := &stallEngine{chunks: chunks, base: base, stall: stall,
		sent: map[string][]time.Time{}, cached: map[string]int{}, input: map[string]int{}}
	e.srv = httptest.NewServer(http.HandlerFunc(e.serve))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *stallEngine) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/tokenize" { // an engine without one: lengths stay in words
		http.NotFound(w, r)
		return
	}
	if r.URL.Path == "/v1/models" {
		w.Write([]byte(`{"object":"list","data":[{"id":"stall-model","object":"model"}]}`))
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	prompt := promptOf(body)
	n := min(int(body["max_tokens"].(float64)), e.chunks)
	words := len(strings.Fields(prompt))
	cached := 0
	if n > 1 { // measured questions: the document is in the prefix cache
		cached = words / 2
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	times := make([]time.Time, 0, n)
	next := time.Now()
	for i := range n {
		if i > 0 {
			gap := e.base
			if i%10 == 0 { // every tenth gap
				gap += e.stall
			}
			next = next.Add(gap)
			time.Sleep(time.Until(next))
		}
		fmt.Fprintf(w, "data: {\"id\":\"cmpl-1\",\"model\":\"stall-model\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t%d \"}}]}\n\n", i)
		fl.Flush()
		times = append(times, time.Now())
	}
	fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n")
	fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"prompt_tokens_details\":{\"cached_tokens\":%d}}}\n\n",
		words, n, cached)
	fmt.Fprint(w, "data: [DONE]\n\n")
	fl.Flush()
	e.mu.Lock()
	e.sent[prompt], e.cached[prompt], e.input[prompt] = times, cached, words
	e.mu.Unlock()
}

// linearQuantile is DuckDB's quantile_cont (numpy's linear percentile),
// written out here so the check does not lean on core/stats: sorted
// values, q in [0, 1].
func linearQuantile(sorted []float64, q float64) float64 {
	h := float64(len(sorted)-1) * q
	lo := math.Floor(h)
	hi := math.Min(lo+1, float64(len(sorted)-1))
	return sorted[int(lo)] + (h-lo)*(sorted[int(hi)]-sorted[int(lo)])
}

// metric is a bench_summary.json metrics object; nil = null.
type metric map[string]*float64

type summaryDoc struct {
	Results map[string]*float64 `json:"results"`
	Metrics struct {
		Percentiles    []float64 `json:"percentiles"`
		TTFT           metric    `json:"ttft_ms"`
		TPOT           metric    `json:"tpot_ms"`
		ITL            metric    `json:"itl_ms"`
		ITLPercentiles *string   `json:"itl_percentiles"`
		E2E            metric    `json:"e2e_ms"`
		TTFTDue        metric    `json:"ttft_from_scheduled_ms"`
		E2EDue         metric    `json:"e2e_from_scheduled_ms"`
	} `json:"metrics"`
	Cache map[string]map[string]*float64 `json:"cache"`
}

func readSummary(t *testing.T, dir string) summaryDoc {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "bench_summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc summaryDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("bench_summary.json: %v\n%s", err, b)
	}
	return doc
}

func near(got *float64, want, tol float64) bool {
	return got != nil && math.Abs(*got-want) <= tol
}

// summaryLine returns the value of the terminal summary's line label.
func summaryLine(stdout, label string) (string, bool) {
	for _, l := range strings.Split(stdout, "\n") {
		if v, ok := strings.CutPrefix(l, label+":"); ok {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// TestStalledDecodeEndToEnd: with a server whose streams stall every
// tenth gap, lmbench's pooled ITL p99 is within 0.5 ms of the p99 of the
// gaps the server produced; TPOT is (latency − TTFT)/(n − 1) per request;
// the pooled ITL percentiles are the linear quantiles of the journal's
// chunk offsets' differences (as examples/analysis.sql computes them);
// the cache block adds up the usage the server reported.
//
// Not parallel: it runs while the parallel tests wait, so the machine is
// as quiet as it gets for a comparison of two clocks' gaps.
// itlTolerance bounds |lmbench's pooled ITL p99 − the server's| in ms.
const itlTolerance = 5.0

func TestStalledDecodeEndToEnd(t *testing.T) {
	needBinaries(t)
	const chunks = 101 // 100 gaps an answer, 10 of them stalled
	eng := newStallEngine(t, chunks, 5*time.Millisecond, 50*time.Millisecond)
	out := t.TempDir()
	r := lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--workload", "long-doc-qa",
		"--tokens-per-gb-kvcache", "8192", "--kv-cache-volume", "1", "--ldqa-document-length", "2000",
		"--ldqa-num-inflight-requests", "4", "--percentiles", "99,50,90,99.9,95",
		"--no-interactive", "-q", "--json", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	doc := readSummary(t, out)
	recs := readJournal(t, filepath.Join(out, record.JournalName)).Records

	var measured []record.Record
	for _, rec := range recs {
		if rec.Phase == record.Measure {
			measured = append(measured, rec)
		}
	}
	if len(measured) != 8 {
		t.Fatalf("%d measured records, want 8", len(measured))
	}

	// The server's own gaps, pooled over the measured answers (the
	// warmups have one chunk: no gap).
	eng.mu.Lock()
	var serverGaps []float64
	var prompt, cached int
	for p, times := range eng.sent {
		for i := 1; i < len(times); i++ {
			serverGaps = append(serverGaps, float64(times[i].Sub(times[i-1]))/float64(time.Millisecond))
		}
		prompt += eng.input[p]
		if len(times) > 1 {
			cached += eng.cached[p]
		}
	}
	eng.mu.Unlock()
	slices.Sort(serverGaps)
	if len(serverGaps) != 8*(chunks-1) {
		t.Fatalf("the server produced %d gaps, want %d", len(serverGaps), 8*(chunks-1))
	}

	// The journal's gaps, as analysis.sql computes them: consecutive
	// differences of each successful measured request's chunk offsets.
	var gaps []float64
	for _, rec := range measured {
		if !rec.Success || rec.OutputTokens != chunks || len(rec.ChunkOffsetsUs) != chunks || rec.ChunkOffsetsTruncated {
			t.Fatalf("%s: success %v, %d output tokens, %d chunk offsets (truncated %v); want %d of each",
				rec.RequestID, rec.Success, rec.OutputTokens, len(rec.ChunkOffsetsUs), rec.ChunkOffsetsTruncated, chunks)
		}
		for i := 1; i < len(rec.ChunkOffsetsUs); i++ {
			gaps = append(gaps, float64(rec.ChunkOffsetsUs[i]-rec.ChunkOffsetsUs[i-1])/1000)
		}
	}
	slices.Sort(gaps)

	if doc.Metrics.ITLPercentiles == nil || *doc.Metrics.ITLPercentiles != "exact" {
		t.Errorf("itl_percentiles = %v, want exact", doc.Metrics.ITLPercentiles)
	}
	if !slices.Equal(doc.Metrics.Percentiles, []float64{50, 90, 95, 99, 99.9}) {
		t.Errorf("percentiles = %v, want 50, 90, 95, 99, 99.9 (--percentiles sorted)", doc.Metrics.Percentiles)
	}
	for _, p := range doc.Metrics.Percentiles {
		key := "p" + strings.TrimSuffix(fmt.Sprint(p), ".0")
		if want := linearQuantile(gaps, p/100); !near(doc.Metrics.ITL[key], want, 1e-9) {
			t.Errorf("itl_ms.%s = %v, the journal's pooled gaps give %v", key, deref(doc.Metrics.ITL[key]), want)
		}
	}
	if n := doc.Metrics.ITL["count"]; !near(n, float64(len(gaps)), 0) {
		t.Errorf("itl_ms.count = %v, want %d gaps", deref(n), len(gaps))
	}

	// The decode stall is in the pooled p99 (a per-request mean would
	// spread it over its answer), as the server produced it.
	serverP99 := linearQuantile(serverGaps, 0.99)
	if serverP99 < 50 {
		t.Fatalf("server p99 gap %v ms: the stall is not in it", serverP99)
	}
	// On a quiet machine the two agree within 0.5 ms; the test allows
	// itlTolerance, so a loaded machine's scheduling jitter between the
	// two processes cannot fail it, while a per-request mean (about 10 ms
	// here) or a missed stall would still be far off.
	if got := doc.Metrics.ITL["p99"]; !near(got, serverP99, itlTolerance) {
		t.Errorf("pooled ITL p99 = %v ms, the server's gaps' p99 = %v ms: more than %v ms apart (%s)",
			deref(got), serverP99, itlTolerance, gapAgreement(eng, measured))
	} else {
		t.Logf("pooled ITL p99 %v ms, the server's %v ms", deref(got), serverP99)
	}

	// TPOT per request, from the journal, and its figures in the summary.
	var tpots []float64
	for _, rec := range measured {
		tpots = append(tpots, (rec.Latency-rec.TTFT)/float64(rec.OutputTokens-1)*1000)
	}
	slices.Sort(tpots)
	var sum float64
	for _, v := range tpots {
		sum += v
	}
	if got := doc.Metrics.TPOT["mean"]; !near(got, sum/float64(len(tpots)), 1e-9) {
		t.Errorf("tpot_ms.mean = %v, want %v", deref(got), sum/float64(len(tpots)))
	}
	for _, q := range []struct {
		key string
		p   float64
	}{{"median", 0.5}, {"p50", 0.5}, {"p90", 0.9}, {"p99.9", 0.999}} {
		if got, want := doc.Metrics.TPOT[q.key], linearQuantile(tpots, q.p); !near(got, want, 1e-9) {
			t.Errorf("tpot_ms.%s = %v, the journal gives %v", q.key, deref(got), want)
		}
	}

	// The cache block adds up what the server reported.
	m := doc.Cache["measure"]
	if !near(m["cached_tokens"], float64(cached), 0) || !near(m["requests_with_cached_tokens"], 8, 0) ||
		!near(m["requests"], 8, 0) || !near(m["cached_ratio"], float64(cached)/deref(m["prompt_tokens"]), 1e-12) {
		t.Errorf("cache.measure = %v, the server reported %d cached tokens on 8 requests", derefMap(m), cached)
	}
	if w := doc.Cache["warmup"]; !near(w["requests"], 4, 0) || !near(w["cached_tokens"], 0, 0) || !near(w["cached_ratio"], 0, 0) {
		t.Errorf("cache.warmup = %v, want 4 requests, none cached", derefMap(w))
	}
	if got := deref(m["prompt_tokens"]) + deref(doc.Cache["warmup"]["prompt_tokens"]); got != float64(prompt) {
		t.Errorf("prompt tokens over both phases = %v, the server reported %d", got, prompt)
	}

	// The terminal shows the same, with the configured percentiles.
	for label, want := range map[string]string{
		"ITL percentiles":   "exact",
		"ITL P99 (ms)":      fmt.Sprintf("%.2f", *doc.Metrics.ITL["p99"]),
		"TPOT P99.9 (ms)":   fmt.Sprintf("%.2f", *doc.Metrics.TPOT["p99.9"]),
		"TTFT P95 (ms)":     fmt.Sprintf("%.2f", *doc.Metrics.TTFT["p95"]),
		"Measured requests": "8",
	} {
		if got, ok := summaryLine(r.stdout, label); !ok || got != want {
			t.Errorf("terminal %q = %q (present %v), want %q\n%s", label, got, ok, want, r.stdout)
		}
	}
}

// gapAgreement says how far apart lmbench's and the server's view of each
// gap were (client − server, ms), to tell a measurement error from a
// machine too busy to keep time.
func gapAgreement(eng *stallEngine, measured []record.Record) string {
	eng.mu.Lock()
	defer eng.mu.Unlock()
	var diffs []float64
	for _, rec := range measured {
		var d, q int
		fmt.Sscanf(rec.RequestID, "doc%d_q%d", &d, &q)
		for p, times := range eng.sent {
			i := strings.LastIndex(p, "\n\nQuestion ")
			if i < 0 {
				continue // a warmup
			}
			var pd, pq int
			fmt.Sscanf(p, "Document %d:", &pd)
			fmt.Sscanf(p[i:], "\n\nQuestion %d:", &pq)
			if pd != d || pq != q {
				continue
			}
			for i := 1; i < len(times) && i < len(rec.ChunkOffsetsUs); i++ {
				c := float64(rec.ChunkOffsetsUs[i]-rec.ChunkOffsetsUs[i-1]) / 1000
				diffs = append(diffs, c-float64(times[i].Sub(times[i-1]))/float64(time.Millisecond))
			}
		}
	}
	if len(diffs) == 0 {
		return "no gap matched"
	}
	slices.Sort(diffs)
	return fmt.Sprintf("per gap, client − server: %d gaps, min %.3f, p1 %.3f, median %.3f, p99 %.3f, max %.3f ms",
		len(diffs), diffs[0], linearQuantile(diffs, 0.01), linearQuantile(diffs, 0.5), linearQuantile(diffs, 0.99), diffs[len(diffs)-1])
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func derefMap(m map[string]*float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		out[k] = deref(v)
	}
	return out
}

// One output token (random-prefill): decode speed, TPOT and ITL are not
// defined, so they print n/a and are null; TTFT is defined.
func TestOneTokenAnswersPrintNA(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t)
	out := t.TempDir()
	r := lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--workload", "random-prefill",
		"--rp-num-requests", "5", "--rp-request-length", "20", "--tokens-per-gb-kvcache", "1000",
		"--no-interactive", "-q", "--json", "--output-dir", out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, label := range []string{"Mean decode (tok/s)", "P50 decode (tok/s)", "P99 decode (tok/s)",
		"Mean ITL (ms)", "P99 ITL (ms)", "ITL mean (ms)", "ITL P99 (ms)", "TPOT mean (ms)", "TPOT P50 (ms)"} {
		if got, ok := summaryLine(r.stdout, label); got != "n/a" {
			t.Errorf("%s = %q (present %v), want n/a\n%s", label, got, ok, r.stdout)
		}
	}
	if got, _ := summaryLine(r.stdout, "Mean TTFT (ms)"); got == "n/a" || got == "" {
		t.Errorf("Mean TTFT (ms) = %q, want a number", got)
	}
	doc := readSummary(t, out)
	for _, k := range []string{"mean_decode_speed", "p50_decode_speed", "p99_decode_speed", "mean_itl_ms", "p99_itl_ms"} {
		if v, ok := doc.Results[k]; !ok || v != nil {
			t.Errorf("results.%s = %v (present %v), want null", k, deref(v), ok)
		}
	}
	if doc.Metrics.ITL["p99"] != nil || doc.Metrics.TPOT["mean"] != nil || !near(doc.Metrics.ITL["count"], 0, 0) {
		t.Errorf("itl_ms %v, tpot_ms %v; want count 0 and nulls", derefMap(doc.Metrics.ITL), derefMap(doc.Metrics.TPOT))
	}
	if doc.Results["mean_ttft_ms"] == nil || doc.Metrics.TTFT["p99"] == nil || doc.Metrics.E2E["mean"] == nil {
		t.Errorf("TTFT / E2E are null with 5 successful requests: %v", derefMap(doc.Results))
	}
	// Burst: every request was due when the phase started.
	if doc.Metrics.TTFTDue["mean"] == nil || *doc.Metrics.TTFTDue["mean"] < *doc.Metrics.TTFT["mean"] {
		t.Errorf("ttft_from_scheduled_ms.mean = %v, want at least the TTFT from submit %v",
			deref(doc.Metrics.TTFTDue["mean"]), deref(doc.Metrics.TTFT["mean"]))
	}
}

// Every request fails: TTFT is n/a in the terminal and null in the JSON,
// the original's keys included.
func TestAllFailedPrintsNA(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t, func(f *fakeEngine) { f.fail = func(map[string]any) bool { return true } })
	out := t.TempDir()
	r := lmbench(t, nil, "run", "--engine-url", eng.srv.URL, "--workload", "random-prefill",
		"--rp-num-requests", "3", "--rp-request-length", "20", "--tokens-per-gb-kvcache", "1000",
		"--no-interactive", "-q", "--json", "--output-dir", out)
	if r.code != 1 || !strings.Contains(r.stderr, "3 of 3 measured requests failed") {
		t.Fatalf("exit %d, want 1 with 3 of 3 failed\n%s", r.code, r.stderr)
	}
	for _, label := range []string{"Mean TTFT (ms)", "P50 TTFT (ms)", "P99 TTFT (ms)", "TTFT mean (ms)", "E2E P99 (ms)"} {
		if got, ok := summaryLine(r.stdout, label); got != "n/a" {
			t.Errorf("%s = %q (present %v), want n/a\n%s", label, got, ok, r.stdout)
		}
	}
	if got, _ := summaryLine(r.stdout, "Failed requests"); got != "3" {
		t.Errorf("Failed requests = %q, want 3", got)
	}
	doc := readSummary(t, out)
	for _, k := range []string{"mean_ttft_ms", "p50_ttft_ms", "p99_ttft_ms", "mean_request_latency_ms"} {
		if v, ok := doc.Results[k]; !ok || v != nil {
			t.Errorf("results.%s = %v (present %v), want null", k, deref(v), ok)
		}
	}
	if doc.Metrics.TTFT["mean"] != nil || !near(doc.Metrics.TTFT["count"], 0, 0) {
		t.Errorf("metrics.ttft_ms = %v, want count 0 and nulls", derefMap(doc.Metrics.TTFT))
	}
}

func TestPercentilesValidation(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newFakeEngine(t)
	base := []string{"run", "--engine-url", eng.srv.URL, "--workload", "random-prefill", "--rp-num-requests", "1",
		"--tokens-per-gb-kvcache", "1000", "--no-interactive", "-q", "--output-dir", t.TempDir()}
	tests := map[string]struct {
		env  []string
		args []string
		want string
	}{
		"zero":         {nil, []string{"--percentiles", "0,50"}, `--percentiles: each percentile must be in (0, 100], got 0 (in "0,50")`},
		"above 100":    {nil, []string{"--percentiles", "50,101"}, `--percentiles: each percentile must be in (0, 100], got 101 (in "50,101")`},
		"not a number": {nil, []string{"--percentiles", "p99"}, `--percentiles: "p99" is not a number (in "p99")`},
		"empty item":   {nil, []string{"--percentiles", "50,,99"}, `--percentiles: want a comma list of percentiles in (0, 100] like 50,90,99, got "50,,99"`},
		"variable":     {[]string{"LMBENCH_PERCENTILES=-5"}, nil, `LMBENCH_PERCENTILES: each percentile must be in (0, 100], got -5 (in "-5")`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := lmbench(t, tc.env, append(slices.Clone(base), tc.args...)...)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, want 2 with %q\nstderr: %s", r.code, tc.want, r.stderr)
			}
		})
	}
}
