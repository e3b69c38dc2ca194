package analysis

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/stats"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// craftRun is a run of len(ttftMs) measured requests, one every 100 ms,
// each with the TTFT given (times scale), 5 chunks 10 ms apart after it,
// and a recorded workload and seed.
func craftRun(t *testing.T, workload string, seed int, ttftMs []float64, scale float64) *Run {
	t.Helper()
	cfg, _ := json.Marshal(map[string]any{"workload": workload, "seed": seed})
	h := record.Run{ID: fmt.Sprintf("run-%s-%g", workload, scale), Workload: workload, TagKeys: []string{"doc"}, Config: cfg, Started: t0}
	var recs []record.Record
	for i, v := range ttftMs {
		ttft := time.Duration(v * scale * float64(time.Millisecond))
		submit := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		offs := []int64{ttft.Microseconds()}
		for k := 1; k < 5; k++ {
			offs = append(offs, offs[0]+int64(k)*10_000)
		}
		lat := ttft + 40*time.Millisecond
		recs = append(recs, record.Record{
			RunID: h.ID, Workload: workload, Phase: record.Measure, RequestID: fmt.Sprintf("req%02d", i),
			Tags: map[string]string{"doc": fmt.Sprint(i % 3)}, Success: true,
			TTFT: ttft.Seconds(), Latency: lat.Seconds(), InputTokens: 100, OutputTokens: 5, Chunks: 5,
			Scheduled: submit, Submit: submit, FirstToken: submit.Add(ttft), Finish: submit.Add(lat),
			Seq: int64(i + 1), ChunkOffsetsUs: offs,
		})
	}
	r, err := NewRun(h, recs, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// spread are TTFTs with a realistic spread (ms).
var spread = []float64{12, 15, 11, 30, 14, 13, 18, 22, 12, 16, 40, 13, 15, 17, 11, 19, 14, 25, 13, 12}

func row(t *testing.T, c Comparison, key string) Row {
	t.Helper()
	for _, r := range c.Rows {
		if r.Metric.Key == key {
			return r
		}
	}
	t.Fatalf("no row %q", key)
	return Row{}
}

func TestCompareRunWithItself(t *testing.T) {
	t.Parallel()
	a := craftRun(t, "w", 42, spread, 1)
	c := Compare(a, a, Options{})
	if c.Resamples != DefaultResamples {
		t.Errorf("resamples %d, want %d", c.Resamples, DefaultResamples)
	}
	for _, r := range c.Rows {
		if r.Ratio != 1 || r.Delta != 0 {
			t.Errorf("%s: ratio %v delta %v, want 1 and 0", r.Metric.Key, r.Ratio, r.Delta)
		}
		if !(r.Lo <= 1 && 1 <= r.Hi) {
			t.Errorf("%s: interval [%v, %v] excludes 1", r.Metric.Key, r.Lo, r.Hi)
		}
		if r.Beyond {
			t.Errorf("%s: marked beyond noise", r.Metric.Key)
		}
	}
	// Said, in the text too: the zeros are by construction.
	if !c.SameRun {
		t.Errorf("SameRun false for a run compared with itself")
	}
	var text strings.Builder
	if err := WriteComparisons(&text, []*Run{a, a}, []Comparison{c}, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "A and B are the same run (run id "+a.Header.ID+")") {
		t.Errorf("the comparison does not say the runs are one:\n%s", text.String())
	}
	if Compare(a, craftRun(t, "w", 42, spread, 2), Options{}).SameRun {
		t.Errorf("SameRun for two runs")
	}
	if c.Pairing == nil {
		t.Fatalf("not paired: %s", c.PairNote)
	}
	p := c.Pairing
	if len(p.Pairs) != len(spread) || p.Median != 1 || p.P10 != 1 || p.P90 != 1 || p.Faster != 0 || p.Slower != 0 {
		t.Errorf("pairing %+v, want %d pairs of ratio 1, none faster or slower", p, len(spread))
	}
}

func TestCompareDoubledTTFT(t *testing.T) {
	t.Parallel()
	a := craftRun(t, "w", 42, spread, 1)
	b := craftRun(t, "w", 42, spread, 2)
	c := Compare(a, b, Options{})
	for _, key := range []string{"ttft_mean", "ttft_p50", "ttft_p90", "ttft_p99"} {
		r := row(t, c, key)
		if math.Abs(r.Ratio-2) > 1e-9 {
			t.Errorf("%s: ratio %v, want 2", key, r.Ratio)
		}
		if !r.Beyond || !(r.Lo > 1) {
			t.Errorf("%s: interval [%v, %v] marked %v, want it above 1 and marked", key, r.Lo, r.Hi, r.Beyond)
		}
	}
	// TPOT and ITL are the same 10 ms gaps in both: ratio 1, not marked.
	for _, key := range []string{"tpot_mean", "itl_p99"} {
		if r := row(t, c, key); math.Abs(r.Ratio-1) > 1e-9 || r.Beyond {
			t.Errorf("%s: ratio %v marked %v, want 1 unmarked", key, r.Ratio, r.Beyond)
		}
	}
	p := c.Pairing
	if p == nil {
		t.Fatalf("not paired: %s", c.PairNote)
	}
	if math.Abs(p.Median-2) > 1e-9 || math.Abs(p.P10-2) > 1e-9 || math.Abs(p.P90-2) > 1e-9 || p.Slower != len(spread) || p.FasterShare() != 0 {
		t.Errorf("pairing median %v p10 %v p90 %v slower %d faster share %v, want 2, 2, 2, %d, 0",
			p.Median, p.P10, p.P90, p.Slower, p.FasterShare(), len(spread))
	}
	if math.Abs(p.MedianLo-2) > 1e-9 || math.Abs(p.MedianHi-2) > 1e-9 {
		t.Errorf("median interval [%v, %v], want [2, 2]", p.MedianLo, p.MedianHi)
	}
}

func TestCompareIsDeterministic(t *testing.T) {
	t.Parallel()
	a := craftRun(t, "w", 42, spread, 1)
	b := craftRun(t, "w", 42, slices.Concat(spread[5:], spread[:5]), 1.1)
	text := func(seed uint64) string {
		var buf bytes.Buffer
		runs := []*Run{a, b}
		if err := WriteComparisons(&buf, runs, CompareAll(runs, Options{Seed: seed}), TextOptions{Pairs: true}); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	first := text(1)
	if again := text(1); again != first {
		t.Errorf("the same seed gave two outputs:\n%s\n---\n%s", first, again)
	}
	if other := text(2); other == first {
		t.Errorf("seeds 1 and 2 gave the same intervals:\n%s", first)
	}
}

func TestPairingNeedsWorkloadAndSeed(t *testing.T) {
	t.Parallel()
	a := craftRun(t, "w", 42, spread, 1)
	for _, tc := range []struct {
		name string
		b    *Run
		note string
	}{
		{"other workload", craftRun(t, "v", 42, spread, 1), "not paired: the workloads differ (w, v)"},
		{"other seed", craftRun(t, "w", 7, spread, 1), "not paired: the seeds differ (42, 7)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Compare(a, tc.b, Options{Resamples: MinResamples})
			if c.Pairing != nil || c.PairNote != tc.note {
				t.Errorf("pairing %v, note %q; want none, %q", c.Pairing, c.PairNote, tc.note)
			}
		})
	}
}

func TestPairUnmatchedAndFailed(t *testing.T) {
	t.Parallel()
	a := craftRun(t, "w", 42, spread[:6], 1)
	b := craftRun(t, "w", 42, spread[:6], 0.5)
	b.Records[1].Success = false                          // req01 failed in B
	b.Records = append(b.Records[:4:4], b.Records[5:]...) // req04 missing in B
	b.Records = append(b.Records, b.Records[0])           // req99 only in B
	b.Records[len(b.Records)-1].RequestID = "req99"
	p := Pair(a, b, 1, MinResamples)
	var ids []string
	for _, pr := range p.Pairs {
		ids = append(ids, pr.ID)
	}
	if want := []string{"req00", "req02", "req03", "req05"}; !slices.Equal(ids, want) {
		t.Errorf("paired %v, want %v", ids, want)
	}
	if p.OnlyA != 2 || p.OnlyB != 1 || p.Faster != 4 || p.FasterShare() != 1 {
		t.Errorf("only A %d, only B %d, faster %d (%v); want 2, 1, 4 (1)", p.OnlyA, p.OnlyB, p.Faster, p.FasterShare())
	}
}

// TestWeightedPercentile checks the resample percentile against numpy's
// linear percentile of the resample written out.
func TestWeightedPercentile(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		n := 1 + rng.IntN(30)
		var sv sortedValues
		for i := range n {
			// Repeated values and several values per owner, as pooled gaps.
			for range 1 + rng.IntN(3) {
				sv.add(float64(rng.IntN(20)), i)
			}
		}
		sv.sort()
		counts := make([]int, n)
		draw(rng, counts)
		var expanded []float64
		for j, v := range sv.v {
			for range counts[sv.owner[j]] {
				expanded = append(expanded, v)
			}
		}
		slices.Sort(expanded)
		for _, p := range []float64{0, 1, 10, 50, 90, 99, 100} {
			got := weightedPercentile(sv.v, sv.owner, counts, p)
			want := stats.Percentile(expanded, p)
			if got != want {
				t.Fatalf("trial %d p%v: %v, want %v (values %v counts %v)", trial, p, got, want, sv.v, counts)
			}
			if gotAll, wantAll := weightedPercentile(sv.v, sv.owner, nil, p), stats.Percentile(sv.v, p); gotAll != wantAll {
				t.Fatalf("trial %d p%v without counts: %v, want %v", trial, p, gotAll, wantAll)
			}
		}
	}
	if v := weightedPercentile([]float64{1, 2}, []int{0, 1}, []int{0, 0}, 50); !math.IsNaN(v) {
		t.Errorf("empty resample: %v, want NaN", v)
	}
}

// TestValuesMatchTheSummary: a point estimate is the summary's figure.
func TestValuesMatchTheSummary(t *testing.T) {
	t.Parallel()
	r := craftRun(t, "w", 42, spread, 1.3)
	m := r.Summary.Metrics
	for _, tc := range []struct {
		key  string
		want float64
	}{
		{"ttft_mean", m["ttft_ms"].Mean},
		{"ttft_p90", m["ttft_ms"].Percentiles[1].Value},
		{"ttft_p99", m["ttft_ms"].Percentiles[2].Value},
		{"tpot_mean", m["tpot_ms"].Mean},
		{"itl_p99", m["itl_ms"].Percentiles[2].Value},
		{"e2e_p99", m["e2e_ms"].Percentiles[2].Value},
		{"output_throughput", *r.Summary.Results.OutputThroughput},
	} {
		var metric Metric
		for _, h := range Headline {
			if h.Key == tc.key {
				metric = h
			}
		}
		if got := Value(r, metric); math.Abs(got-tc.want) > 1e-9*math.Abs(tc.want) {
			t.Errorf("%s: %v, the summary has %v", tc.key, got, tc.want)
		}
	}
}

func TestResamplesBudget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ asked, work, want int }{
		{0, 100, DefaultResamples},
		{500, 100, 500},
		{0, WorkBudget / 1000, 1000},
		{0, WorkBudget, MinResamples},
	} {
		if got := resamples(tc.asked, tc.work); got != tc.want {
			t.Errorf("resamples(%d, %d) = %d, want %d", tc.asked, tc.work, got, tc.want)
		}
	}
}

func TestWriteComparisonsMarksBeyondNoise(t *testing.T) {
	t.Parallel()
	a := craftRun(t, "w", 42, spread, 1)
	b := craftRun(t, "w", 42, spread, 2)
	var buf bytes.Buffer
	runs := []*Run{a, b}
	if err := WriteComparisons(&buf, runs, CompareAll(runs, Options{}), TextOptions{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	var ttft string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "TTFT mean (ms)") {
			ttft = l
		}
	}
	if !strings.Contains(ttft, "2.000") || !strings.HasSuffix(ttft, " *") {
		t.Errorf("TTFT mean line %q: want ratio 2.000 marked *\n%s", ttft, out)
	}
	for _, want := range []string{"20 requests paired by id", "median 2.000", "faster in B: 0 of 20 (0.0%)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
