package stats

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/lmbench/lmbench/core/failure"
	"github.com/lmbench/lmbench/core/record"
)

var nan = math.NaN()

// answer is a successful measured request submitted at t0 (and due then):
// first token after ttft seconds, finished after latency seconds, with
// out output tokens and chunks arriving at the given µs after submit.
func answer(ttft, latency float64, out int64, offsetsUs ...int64) record.Record {
	r := record.Record{
		Phase: record.Measure, Success: true, TTFT: ttft, Latency: latency, OutputTokens: out,
		Scheduled: t0, Submit: t0, FirstToken: at(ttft), Finish: at(latency), ChunkOffsetsUs: offsetsUs,
	}
	if latency > ttft {
		r.DecodeSpeed = float64(out) / (latency - ttft)
	}
	return r
}

func failed(latency float64) record.Record {
	return record.Record{Phase: record.Measure, TTFT: -1, Latency: latency, Scheduled: t0, Submit: t0, Finish: at(latency)}
}

func build(ps []float64, opt Options, recs ...record.Record) Final {
	b := NewBuilder(t0, len(recs), opt)
	for i := range recs {
		b.Add(&recs[i])
	}
	return b.Final(ps)
}

func TestTPOTAndDecodeSpeedPerRecord(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		r            record.Record
		tpot, decode float64 // seconds, tokens/s; NaN = not defined
	}{
		{"1 output token: neither defined", answer(0.1, 0.1005, 1), nan, nan},
		{"2 output tokens: latency - ttft", answer(0.1, 0.13, 2), 0.03, 2 / 0.03},
		{"5 output tokens: over 4 gaps", answer(0.2, 1.0, 5), 0.2, 5 / 0.8},
		{"failed", failed(0.5), nan, nan},
		{"finish at the first token: no decode time", answer(0.2, 0.2, 3), 0, nan},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tpot, ok := tt.r.TPOT()
			if !ok {
				tpot = nan
			}
			got := []float64{tpot, DecodeSpeed(&tt.r)}
			if diff := cmp.Diff([]float64{tt.tpot, tt.decode}, got, approx, cmpopts.EquateNaNs()); diff != "" {
				t.Errorf("[TPOT, decode speed] (-want +got):\n%s", diff)
			}
		})
	}
}

// The values 2, 4, 4, 4, 5, 5, 7, 9 have mean 5 and (population)
// standard deviation 2; the percentiles are numpy's linear ones
// (np.percentile(v, [50, 90, 99.9]) = 4.5, 7.6, 8.986).
func TestDescribe(t *testing.T) {
	t.Parallel()
	ps := []float64{50, 90, 99.9}
	got := describe([]float64{2, 4, 4, 4, 5, 5, 7, 9}, ps)
	want := Dist{N: 8, Mean: 5, Std: 2, Median: 4.5, Percentiles: []Quantile{{50, 4.5}, {90, 7.6}, {99.9, 8.986}}}
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("describe (-want +got):\n%s", diff)
	}
	one := describe([]float64{42}, ps)
	if diff := cmp.Diff(Dist{N: 1, Mean: 42, Std: 0, Median: 42, Percentiles: []Quantile{{50, 42}, {90, 42}, {99.9, 42}}}, one); diff != "" {
		t.Errorf("describe of one value (-want +got):\n%s", diff)
	}
	none := describe(nil, ps)
	if none.Defined() || !math.IsNaN(none.Mean) || !math.IsNaN(none.Std) || !math.IsNaN(none.Median) || !math.IsNaN(none.Percentiles[2].Value) {
		t.Errorf("describe of nothing = %+v, want N 0 and NaN everywhere", none)
	}
}

func TestBuilderMetrics(t *testing.T) {
	t.Parallel()
	ps := []float64{50, 90, 99}
	// Three answers: TTFTs 100, 200, 300 ms; a 1-token answer (no TPOT,
	// no gap) and a failure (in nothing but the counts).
	recs := []record.Record{
		answer(0.1, 0.13, 4, 100_000, 110_000, 120_000, 130_000), // gaps 10, 10, 10 ms; TPOT 10 ms
		answer(0.2, 0.26, 3, 200_000, 205_000, 260_000),          // gaps 5, 55 ms; TPOT 30 ms
		answer(0.3, 0.3001, 1, 300_000),                          // TPOT n/a, no gaps
		failed(0.05),
	}
	f := build(ps, Options{}, recs...)

	dist := func(n int, mean, std float64, q ...float64) Dist {
		d := Dist{N: n, Mean: mean, Std: std, Median: q[0]}
		for i, p := range ps {
			d.Percentiles = append(d.Percentiles, Quantile{p, q[i]})
		}
		return d
	}
	tests := []struct {
		name string
		got  Dist
		want Dist
	}{
		// np.std([100, 200, 300]) = 81.64965809277261; percentiles as np.percentile
		{"TTFT", f.TTFT, dist(3, 200, 81.64965809277261, 200, 280, 298)},
		// TPOT: (130-100)/3 = 10 and (260-200)/2 = 30 ms; the 1-token answer has none.
		{"TPOT", f.TPOT, dist(2, 20, 10, 20, 28, 29.8)},
		// Pooled over both answers: 5, 10, 10, 10, 55 (not each answer's mean gap).
		{"ITL pooled", f.ITL, dist(5, 18, 18.601075237738275, 10, 37, 53.2)},
		// E2E: 130, 260, 300.1 ms.
		{"E2E", f.E2E, dist(3, 230.0333333333333, 72.6039637730307, 260, 292.08, 299.298)},
		// Due at submit: the same as from submit.
		{"TTFT from scheduled", f.TTFTFromScheduled, dist(3, 200, 81.64965809277261, 200, 280, 298)},
		{"E2E from scheduled", f.E2EFromScheduled, dist(3, 230.0333333333333, 72.6039637730307, 260, 292.08, 299.298)},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.got, approx); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	if f.ITLMethod != ITLExact || !slices.Equal(f.Percentiles, ps) {
		t.Errorf("ITL method %q, percentiles %v; want exact, %v", f.ITLMethod, f.Percentiles, ps)
	}
	// The original's numbers still come from the Collector; decode speed
	// only where defined (the 1-token answer is left out), the
	// per-request mean ITL as before (0 = none).
	if f.TotalRequests != 4 || f.SuccessfulRequests != 3 || !near(f.MeanTTFTMs, 200) {
		t.Errorf("total %d, successful %d, mean TTFT %v; want 4, 3, 200", f.TotalRequests, f.SuccessfulRequests, f.MeanTTFTMs)
	}
	if want := (4/0.03 + 3/0.06) / 2; !near(f.MeanDecodeSpeed, want) {
		t.Errorf("mean decode = %v, want %v (the 1-token answer left out)", f.MeanDecodeSpeed, want)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }

func TestBuilderFromTheSchedule(t *testing.T) {
	t.Parallel()
	// Both due 5 ms before they were sent (a burst the client queued).
	a, b := answer(0.1, 0.2, 2), answer(0.3, 0.4, 2)
	a.Scheduled, b.Scheduled = t0.Add(-5*time.Millisecond), t0.Add(-5*time.Millisecond)
	unscheduled := answer(0.5, 0.6, 2) // a journal without schedule: left out
	unscheduled.Scheduled = time.Time{}
	f := build([]float64{50}, Options{}, a, b, unscheduled, failed(1))
	want := []float64{2, 205, 205, 2, 305}
	got := []float64{float64(f.TTFTFromScheduled.N), f.TTFTFromScheduled.Percentiles[0].Value, f.TTFTFromScheduled.Mean,
		float64(f.E2EFromScheduled.N), f.E2EFromScheduled.Median}
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("[TTFT-from-due N, p50, mean; E2E-from-due N, median] (-want +got):\n%s", diff)
	}
	// Dispatch lag stays the original's: explicitly scheduled requests only.
	if !math.IsNaN(f.MeanDispatchLagMs) {
		t.Errorf("dispatch lag %v without an explicit schedule, want NaN", f.MeanDispatchLagMs)
	}
}

// Not defined is NaN (n/a), never 0.
func TestBuilderNotDefined(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		recs    []record.Record
		defined map[string]bool
	}{
		{"nothing succeeded", []record.Record{failed(0.1), failed(0.2)},
			map[string]bool{"ttft": false, "tpot": false, "itl": false, "e2e": false, "due": false, "decode": false}},
		{"1-token answers (random-prefill)", []record.Record{answer(0.1, 0.1001, 1, 100_000), answer(0.2, 0.2001, 1, 200_000)},
			map[string]bool{"ttft": true, "tpot": false, "itl": false, "e2e": true, "due": true, "decode": false}},
		{"2 tokens in one chunk: TPOT, no gaps", []record.Record{answer(0.1, 0.2, 2, 100_000)},
			map[string]bool{"ttft": true, "tpot": true, "itl": false, "e2e": true, "due": true, "decode": true}},
		{"no records", nil,
			map[string]bool{"ttft": false, "tpot": false, "itl": false, "e2e": false, "due": false, "decode": false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := build([]float64{50, 99}, Options{}, tt.recs...)
			got := map[string]bool{
				"ttft": f.TTFT.Defined(), "tpot": f.TPOT.Defined(), "itl": f.ITL.Defined(), "e2e": f.E2E.Defined(),
				"due": f.TTFTFromScheduled.Defined() && f.E2EFromScheduled.Defined(), "decode": !math.IsNaN(f.MeanDecodeSpeed),
			}
			if diff := cmp.Diff(tt.defined, got); diff != "" {
				t.Errorf("defined (-want +got):\n%s", diff)
			}
			for name, d := range map[string]Dist{"ttft": f.TTFT, "tpot": f.TPOT, "itl": f.ITL, "e2e": f.E2E} {
				if d.Defined() {
					continue
				}
				vals := []float64{d.Mean, d.Std, d.Median}
				for _, q := range d.Percentiles {
					vals = append(vals, q.Value)
				}
				for _, v := range vals {
					if !math.IsNaN(v) {
						t.Errorf("%s is not defined but has %v, want NaN: %+v", name, v, d)
					}
				}
			}
			// The original's figures follow the same rule.
			if !tt.defined["ttft"] && (!math.IsNaN(f.MeanTTFTMs) || !math.IsNaN(f.P99TTFTMs) || !math.IsNaN(f.MeanRequestLatencyMs)) {
				t.Errorf("mean TTFT %v, p99 %v, mean latency %v; want NaN", f.MeanTTFTMs, f.P99TTFTMs, f.MeanRequestLatencyMs)
			}
			if !tt.defined["decode"] && (!math.IsNaN(f.P50DecodeSpeed) || !math.IsNaN(f.P99DecodeSpeed)) {
				t.Errorf("decode p50 %v, p99 %v; want NaN", f.P50DecodeSpeed, f.P99DecodeSpeed)
			}
			if !tt.defined["itl"] && !math.IsNaN(f.MeanITLMs) {
				t.Errorf("per-request mean ITL %v with no gap, want NaN", f.MeanITLMs)
			}
		})
	}
}

func TestBuilderCache(t *testing.T) {
	t.Parallel()
	warm := answer(0.1, 0.2, 2)
	warm.Phase, warm.InputTokens = record.Warmup, 1000
	hit := answer(0.1, 0.2, 2)
	hit.InputTokens, hit.CachedTokens = 1000, 960
	miss := answer(0.1, 0.2, 2)
	miss.InputTokens = 500
	f := build(nil, Options{}, warm, hit, miss, failed(0.1))
	want := struct{ Warmup, Measure Cache }{
		Warmup:  Cache{Requests: 1, PromptTokens: 1000},
		Measure: Cache{Requests: 3, PromptTokens: 1500, CachedTokens: 960, RequestsWithCache: 1},
	}
	if diff := cmp.Diff(want, f.Cache); diff != "" {
		t.Errorf("cache (-want +got):\n%s", diff)
	}
	if r := f.Cache.Measure.Ratio(); !near(r, 0.64) {
		t.Errorf("measure ratio = %v, want 0.64", r)
	}
	if r := f.Cache.Warmup.Ratio(); r != 0 {
		t.Errorf("warmup ratio = %v, want 0 (prompt tokens, none cached)", r)
	}
	if r := (Cache{}).Ratio(); !math.IsNaN(r) {
		t.Errorf("ratio without prompt tokens = %v, want NaN", r)
	}
	// Warmup records count in the cache block only.
	if f.TotalRequests != 3 || f.TotalInputTokens != 1500 {
		t.Errorf("measured requests %d, input tokens %d; want 3, 1500", f.TotalRequests, f.TotalInputTokens)
	}
	if got := f.Percentiles; !slices.Equal(got, []float64{50, 90, 99}) {
		t.Errorf("percentiles with nil = %v, want the default 50, 90, 99", got)
	}
}

// gapRecords are answers whose chunk gaps (µs) follow a skewed,
// deterministic pattern: mostly 1–20 ms, every 10th 50 ms longer, some 0.
func gapRecords(answers, chunks int) []record.Record {
	var recs []record.Record
	x := uint64(12345)
	for range answers {
		offs := make([]int64, chunks)
		t := int64(80_000)
		for i := range offs {
			offs[i] = t
			x = x*6364136223846793005 + 1442695040888963407
			gap := int64(x>>40) % 20_000
			if i%10 == 9 {
				gap += 50_000
			}
			if i%37 == 0 {
				gap = 0
			}
			t += gap
		}
		r := answer(0.08, float64(t)/1e6, int64(chunks), offs...)
		recs = append(recs, r)
	}
	return recs
}

func pooledGapsMs(recs []record.Record) []float64 {
	var v []float64
	for _, r := range recs {
		for i := 1; i < len(r.ChunkOffsetsUs); i++ {
			v = append(v, float64(r.ChunkOffsetsUs[i]-r.ChunkOffsetsUs[i-1])/1000)
		}
	}
	slices.Sort(v)
	return v
}

// Past the budget the ITL percentiles come from the sketch, within its
// stated relative accuracy of the exact ones; mean and std stay exact.
func TestPooledITLSwitchesToSketch(t *testing.T) {
	t.Parallel()
	ps := []float64{1, 10, 50, 90, 95, 99, 99.9, 100}
	recs := gapRecords(40, 250) // 9,960 gaps
	gaps := pooledGapsMs(recs)
	exact := describe(gaps, ps)

	t.Run("within the budget: exact", func(t *testing.T) {
		t.Parallel()
		f := build(ps, Options{ITLBudget: len(gaps)}, recs...)
		if f.ITLMethod != ITLExact {
			t.Errorf("method %q, want %q", f.ITLMethod, ITLExact)
		}
		if diff := cmp.Diff(exact, f.ITL); diff != "" {
			t.Errorf("ITL (-exact +got):\n%s", diff)
		}
	})
	t.Run("one past the budget: sketch", func(t *testing.T) {
		t.Parallel()
		f := build(ps, Options{ITLBudget: len(gaps) - 1}, recs...)
		if f.ITLMethod != ITLSketch || f.ITLMethod != "sketch (±0.1%)" {
			t.Errorf("method %q, want %q", f.ITLMethod, "sketch (±0.1%)")
		}
	})
	for _, budget := range []int{1, 16, 1000} {
		f := build(ps, Options{ITLBudget: budget}, recs...)
		if f.ITLMethod != ITLSketch {
			t.Fatalf("budget %d: method %q, want the sketch", budget, f.ITLMethod)
		}
		if f.ITL.N != len(gaps) || !near(f.ITL.Mean, exact.Mean) || math.Abs(f.ITL.Std-exact.Std) > 1e-9*exact.Std {
			t.Errorf("budget %d: N %d, mean %v, std %v; want the exact %d, %v, %v", budget, f.ITL.N, f.ITL.Mean, f.ITL.Std, exact.N, exact.Mean, exact.Std)
		}
		check := func(what string, got, want float64) {
			if math.Abs(got-want) > SketchAccuracy*math.Abs(want)+1e-12 {
				t.Errorf("budget %d: %s = %v, exact %v: off by %.4f%%, more than the stated ±%v%%",
					budget, what, got, want, 100*math.Abs(got-want)/want, SketchAccuracy*100)
			}
		}
		check("median", f.ITL.Median, exact.Median)
		for i, q := range f.ITL.Percentiles {
			check("p"+FormatPercentile(q.P), q.Value, exact.Percentiles[i].Value)
		}
	}
	// The accuracy is not met by chance: the exact percentiles are spread
	// far wider than ±0.1% (a wrong rank would show).
	if exact.Percentiles[5].Value < 1.5*exact.Percentiles[3].Value {
		t.Fatalf("test data too flat: p90 %v, p99 %v", exact.Percentiles[3].Value, exact.Percentiles[5].Value)
	}
}

func TestParsePercentiles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    []float64
		wantErr string
	}{
		{"50,90,99", []float64{50, 90, 99}, ""},
		{DefaultPercentiles, []float64{50, 90, 99}, ""},
		{"99.9, 50 ,95,99,90", []float64{50, 90, 95, 99, 99.9}, ""},
		{"99,50,99,50", []float64{50, 99}, ""},
		{"100", []float64{100}, ""},
		{"0.001", []float64{0.001}, ""},
		{"0", nil, `each percentile must be in (0, 100], got 0 (in "0")`},
		{"50,100.5", nil, `each percentile must be in (0, 100], got 100.5 (in "50,100.5")`},
		{"-1", nil, "got -1"},
		{"inf", nil, "got inf"},
		{"NaN", nil, `"NaN" is not a number`},
		{"p99", nil, `"p99" is not a number (in "p99")`},
		{"", nil, `want a comma list of percentiles in (0, 100] like 50,90,99, got ""`},
		{"50,,90", nil, `got "50,,90"`},
		{"50,", nil, `got "50,"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParsePercentiles(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParsePercentiles(%q) = %v, %v; want an error containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if back, _ := ParsePercentiles(FormatPercentiles(got)); !slices.Equal(back, got) {
				t.Errorf("FormatPercentiles(%v) = %q reads back as %v", got, FormatPercentiles(got), back)
			}
		})
	}
}

// Each phase's failures are grouped by kind, apart.
func TestBuilderFailures(t *testing.T) {
	t.Parallel()
	warmFail := failed(0.1)
	warmFail.Phase, warmFail.RequestID, warmFail.Error = record.Warmup, "w1", "HTTP 500: boom"
	warmOK := answer(0.1, 0.2, 2)
	warmOK.Phase = record.Warmup
	refused := failed(0.1)
	refused.RequestID, refused.Error = "m1", "dial tcp 127.0.0.1:1: connect: connection refused"
	refused2 := refused
	refused2.RequestID = "m2"
	f := build(nil, Options{}, warmOK, warmFail, answer(0.1, 0.2, 2), refused, refused2)
	want := struct{ Warmup, Measure failure.Breakdown }{
		Warmup: failure.Breakdown{Requests: 2, Failed: 1, Kinds: []failure.Count{
			{Kind: failure.Classify("HTTP 500"), Count: 1, Example: "HTTP 500: boom", ExampleRequest: "w1"}}},
		Measure: failure.Breakdown{Requests: 3, Failed: 2, Kinds: []failure.Count{
			{Kind: failure.Refused, Count: 2, Example: refused.Error, ExampleRequest: "m1"}}},
	}
	if diff := cmp.Diff(want, f.Failures); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
}
