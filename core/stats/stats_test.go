package stats

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var approx = cmpopts.EquateApprox(0, 1e-9)

var t0 = time.Date(2026, 3, 27, 12, 0, 0, 0, time.UTC)

// at returns t0 plus s seconds.
func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func success(ttft, decode, latency float64) Sample {
	return Sample{Success: true, TTFT: ttft, DecodeSpeed: decode, Latency: latency, DispatchLag: math.NaN(), Finish: at(latency)}
}

func failedSample() Sample {
	return Sample{TTFT: -1, Latency: 0.05, DispatchLag: math.NaN(), Finish: at(0.05)}
}

func TestPercentile(t *testing.T) {
	t.Parallel()
	seq := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(i + 1)
		}
		return v
	}
	tests := []struct {
		name   string
		values []float64
		p      float64
		want   float64
	}{
		{"empty", nil, 50, 0},
		{"single", []float64{42}, 99, 42},
		{"even count p50", []float64{1, 2, 3, 4}, 50, 2.5},
		{"odd count p50", seq(5), 50, 3},
		{"1..100 p90", seq(100), 90, 90.1},
		{"1..100 p99", seq(100), 99, 99.01},
		{"p0 is min", []float64{3, 7, 9}, 0, 3},
		{"p100 is max", []float64{3, 7, 9}, 100, 9},
		{"p below 0 clamps", []float64{3, 7, 9}, -5, 3},
		{"p above 100 clamps", []float64{3, 7, 9}, 120, 9},
		{"ten TTFTs p50", []float64{100, 200, 300, 400, 500, 600, 700, 800, 900, 1000}, 50, 550},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Percentile(tt.values, tt.p); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tt.values, tt.p, got, tt.want)
			}
		})
	}
	if got := Percentile([]float64{1, 2}, math.NaN()); !math.IsNaN(got) {
		t.Errorf("Percentile with NaN p = %v, want NaN", got)
	}
}

// currentTests are sample sets with the running numbers at now.
var currentTests = []struct {
	name    string
	samples []Sample
	now     float64 // seconds after t0
	want    Aggregated
}{
	{
		name: "empty is all zero",
		now:  0,
		want: Aggregated{},
	},
	{
		name: "now before start: elapsed 0",
		now:  -1,
		want: Aggregated{},
	},
	{
		name:    "single success, now past its finish (the live clock does not stop)",
		samples: []Sample{withTokens(success(0.3, 48, 2.0), 10000, 128)},
		now:     4,
		want: Aggregated{
			TotalRequests: 1, SuccessfulRequests: 1, ElapsedTime: 4,
			MeanTTFTMs: 300, MeanDecodeSpeed: 48, MeanRequestLatencyMs: 2000,
			InputThroughput: 2500, OutputThroughput: 32, TotalInputTokens: 10000, TotalOutputTokens: 128,
		},
	},
	{
		name:    "single failure: counted, not averaged",
		samples: []Sample{failedSample()},
		now:     1,
		want:    Aggregated{TotalRequests: 1, FailedRequests: 1, ElapsedTime: 1},
	},
	{
		name:    "two results",
		samples: []Sample{success(0.2, 40, 1.0), success(0.4, 60, 3.0)},
		now:     2,
		want: Aggregated{
			TotalRequests: 2, SuccessfulRequests: 2, ElapsedTime: 2,
			MeanTTFTMs: 300, MeanDecodeSpeed: 50, MeanRequestLatencyMs: 2000,
		},
	},
	{
		name:    "mixed: means over successful only, tokens over all (Q7)",
		samples: []Sample{withTokens(success(0.1, 10, 1.0), 100, 10), withTokens(failedSample(), 50, 5), withTokens(success(0.3, 30, 3.0), 100, 10)},
		now:     5,
		want: Aggregated{
			TotalRequests: 3, SuccessfulRequests: 2, FailedRequests: 1, ElapsedTime: 5,
			MeanTTFTMs: 200, MeanDecodeSpeed: 20, MeanRequestLatencyMs: 2000,
			InputThroughput: 50, OutputThroughput: 5, TotalInputTokens: 250, TotalOutputTokens: 25,
		},
	},
}

func TestLiveCurrent(t *testing.T) {
	t.Parallel()
	for _, tt := range currentTests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := NewLive(t0)
			for _, s := range tt.samples {
				l.Add(s)
			}
			if diff := cmp.Diff(tt.want, l.Current(at(tt.now)), approx); diff != "" {
				t.Errorf("Current (-want +got):\n%s", diff)
			}
			total, failed := l.Counts()
			if total != tt.want.TotalRequests || failed != tt.want.FailedRequests {
				t.Errorf("Counts = %d, %d; want %d, %d", total, failed, tt.want.TotalRequests, tt.want.FailedRequests)
			}
		})
	}
}

// TestLiveMatchesFinal: the progress display and the summary agree. For
// the same samples, Live.Current at the summary's clock (the latest
// Finish) gives exactly Collector.Final's Aggregated.
func TestLiveMatchesFinal(t *testing.T) {
	t.Parallel()
	type set struct {
		name    string
		samples []Sample
	}
	var sets []set
	for _, tt := range currentTests {
		sets = append(sets, set{tt.name, tt.samples})
	}
	sets = append(sets,
		set{"ten TTFTs out of order", tenTTFTs()},
		set{"finishes out of order", outOfOrderFinishes()},
		set{"samples without Finish", []Sample{{Success: true, TTFT: 0.1, DispatchLag: math.NaN()}}},
		set{"ITL", itlSamples()},
		set{"dispatch lag", lagSamples()},
		set{"undefined decode speed", []Sample{success(0.1, 10, 1), success(0.2, math.NaN(), 1)}},
	)
	for _, tt := range sets {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, l := NewCollector(t0), NewLive(t0)
			clock := t0 // where Final's clock stops
			for _, s := range tt.samples {
				c.Add(s)
				l.Add(s)
				if s.Finish.After(clock) {
					clock = s.Finish
				}
			}
			// Where the summary says "not defined" (NaN: a mean over no
			// request), the running numbers say 0 (changed deliberately,
			// issue 12: Final's were 0 too).
			final := c.Final().Aggregated
			for _, v := range []*float64{&final.MeanTTFTMs, &final.MeanDecodeSpeed, &final.MeanRequestLatencyMs} {
				if math.IsNaN(*v) {
					*v = 0
				}
			}
			if diff := cmp.Diff(final, l.Current(clock)); diff != "" {
				t.Errorf("Live.Current vs Collector.Final().Aggregated (-final +live):\n%s", diff)
			}
		})
	}
}

func withTokens(s Sample, in, out int) Sample {
	s.InputTokens, s.OutputTokens = in, out
	return s
}

func TestCollectorFinal(t *testing.T) {
	t.Parallel()
	t.Run("single result: every percentile is the value", func(t *testing.T) {
		t.Parallel()
		c := NewCollector(t0)
		c.Add(success(0.3, 48, 2.0))
		f := c.Final()
		got := []float64{f.P50TTFTMs, f.P90TTFTMs, f.P99TTFTMs, f.P50DecodeSpeed, f.P99DecodeSpeed, f.P50RequestLatencyMs, f.P99RequestLatencyMs}
		if diff := cmp.Diff([]float64{300, 300, 300, 48, 48, 2000, 2000}, got, approx); diff != "" {
			t.Errorf("percentiles (-want +got):\n%s", diff)
		}
	})
	t.Run("ten TTFTs 0.1..1.0 give p50 550 ms", func(t *testing.T) {
		t.Parallel()
		c := NewCollector(t0)
		for _, s := range tenTTFTs() {
			c.Add(s)
		}
		f := c.Final()
		got := []float64{f.P50TTFTMs, f.P90TTFTMs, f.P99TTFTMs, f.P50DecodeSpeed, f.P90RequestLatencyMs}
		if diff := cmp.Diff([]float64{550, 910, 991, 5.5, 9100}, got, approx); diff != "" {
			t.Errorf("[p50 p90 p99 TTFT, p50 decode, p90 latency] (-want +got):\n%s", diff)
		}
	})
	// Changed deliberately (issue 12): these were 0, which read as "0 ms".
	t.Run("no successful requests: means and percentiles not defined (NaN)", func(t *testing.T) {
		t.Parallel()
		c := NewCollector(t0)
		c.Add(failedSample())
		c.Add(failedSample())
		f := c.Final()
		nan := math.NaN()
		want := Final{
			Aggregated: Aggregated{TotalRequests: 2, FailedRequests: 2, ElapsedTime: 0.05,
				MeanTTFTMs: nan, MeanDecodeSpeed: nan, MeanRequestLatencyMs: nan},
			P50TTFTMs: nan, P90TTFTMs: nan, P99TTFTMs: nan,
			P50DecodeSpeed: nan, P90DecodeSpeed: nan, P99DecodeSpeed: nan,
			P50RequestLatencyMs: nan, P90RequestLatencyMs: nan, P99RequestLatencyMs: nan,
			MeanITLMs: nan, P50ITLMs: nan, P90ITLMs: nan, P99ITLMs: nan,
			MeanDispatchLagMs: nan, P50DispatchLagMs: nan, P99DispatchLagMs: nan,
		}
		if diff := cmp.Diff(want, f, approx, cmpopts.EquateNaNs()); diff != "" {
			t.Errorf("Final (-want +got):\n%s", diff)
		}
	})
	t.Run("undefined decode speeds (NaN) are left out of the decode figures only", func(t *testing.T) {
		t.Parallel()
		c := NewCollector(t0)
		c.Add(success(0.1, 10, 1))
		c.Add(success(0.3, math.NaN(), 1))
		f := c.Final()
		got := []float64{f.MeanDecodeSpeed, f.P99DecodeSpeed, f.MeanTTFTMs}
		if diff := cmp.Diff([]float64{10, 10, 200}, got, approx); diff != "" {
			t.Errorf("[mean decode, p99 decode, mean TTFT] (-want +got):\n%s", diff)
		}
	})
	t.Run("failed TTFT of -1 never reaches the percentiles", func(t *testing.T) {
		t.Parallel()
		c := NewCollector(t0)
		c.Add(success(0.5, 10, 1))
		c.Add(failedSample())
		if f := c.Final(); f.P50TTFTMs != 500 || f.MeanTTFTMs != 500 {
			t.Errorf("P50, mean TTFT = %v, %v; want 500, 500", f.P50TTFTMs, f.MeanTTFTMs)
		}
	})
}

// tenTTFTs are successes with TTFTs 1.0 down to 0.1 s: out of order, as
// Final must sort.
func tenTTFTs() []Sample {
	var v []Sample
	for i := 10; i >= 1; i-- {
		v = append(v, success(float64(i)/10, float64(i), float64(i)))
	}
	return v
}

// outOfOrderFinishes are two successes, the later-finishing one added
// first: 150 output tokens by t0+7.5s.
func outOfOrderFinishes() []Sample {
	a, b := success(0.1, 10, 1), success(0.1, 10, 1)
	a.Finish, b.Finish = at(7.5), at(3)
	a.OutputTokens, b.OutputTokens = 100, 50
	return []Sample{a, b}
}

func TestFinalClockStopsAtLastFinish(t *testing.T) {
	t.Parallel()
	c := NewCollector(t0)
	for _, s := range outOfOrderFinishes() {
		c.Add(s)
	}
	first := c.Final()
	if first.ElapsedTime != 7.5 || math.Abs(first.OutputThroughput-20) > 1e-9 {
		t.Errorf("ElapsedTime, OutputThroughput = %v, %v; want 7.5, 20", first.ElapsedTime, first.OutputThroughput)
	}
	time.Sleep(5 * time.Millisecond)
	// EquateNaNs: no ITL or dispatch lag here, so those are NaN (issue 12).
	if diff := cmp.Diff(first, c.Final(), cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("second Final differs (-first +second):\n%s", diff)
	}

	t.Run("no samples: zero elapsed", func(t *testing.T) {
		t.Parallel()
		if f := NewCollector(t0).Final(); f.ElapsedTime != 0 || f.OutputThroughput != 0 {
			t.Errorf("ElapsedTime, OutputThroughput = %v, %v; want 0, 0", f.ElapsedTime, f.OutputThroughput)
		}
	})
	t.Run("samples without Finish: zero elapsed", func(t *testing.T) {
		t.Parallel()
		c := NewCollector(t0)
		c.Add(Sample{Success: true, TTFT: 0.1, DispatchLag: math.NaN()})
		if f := c.Final(); f.ElapsedTime != 0 {
			t.Errorf("ElapsedTime = %v, want 0", f.ElapsedTime)
		}
	})
	t.Run("monotonic readings", func(t *testing.T) {
		t.Parallel()
		start := time.Now()
		c := NewCollector(start)
		s := success(0.1, 1, 1)
		s.Finish = start.Add(250 * time.Millisecond)
		c.Add(s)
		if f := c.Final(); math.Abs(f.ElapsedTime-0.25) > 1e-9 {
			t.Errorf("ElapsedTime = %v, want 0.25", f.ElapsedTime)
		}
	})
}

// itlSamples are four successes with ITLs of 10 to 40 ms, one without
// ITL and a failure whose ITL must be ignored.
func itlSamples() []Sample {
	var v []Sample
	for _, itl := range []float64{0.010, 0.020, 0.030, 0.040} {
		s := success(0.1, 50, 1)
		s.ITL = itl
		v = append(v, s)
	}
	noITL := success(0.1, 50, 1) // one content chunk: no ITL
	failed := failedSample()
	failed.ITL = 5 // ignored: failed
	return append(v, noITL, failed)
}

func TestFinalITL(t *testing.T) {
	t.Parallel()
	c := NewCollector(t0)
	for _, s := range itlSamples() {
		c.Add(s)
	}

	f := c.Final()
	got := []float64{f.MeanITLMs, f.P50ITLMs, f.P90ITLMs, f.P99ITLMs}
	if diff := cmp.Diff([]float64{25, 25, 37, 39.7}, got, approx); diff != "" {
		t.Errorf("[mean p50 p90 p99] ITL ms (-want +got):\n%s", diff)
	}
}

// lagSamples are five dispatched requests, one failed, lagging -2 to
// 97 ms, and one without a schedule.
func lagSamples() []Sample {
	var v []Sample
	for _, lag := range []float64{-0.002, 0, 0.001, 0.004} {
		s := success(0.1, 50, 1)
		s.DispatchLag = lag
		v = append(v, s)
	}
	late := failedSample() // failed requests were still dispatched: they count
	late.DispatchLag = 0.097
	unscheduled := success(0.1, 50, 1) // NaN: no schedule, not counted
	return append(v, late, unscheduled)
}

func TestFinalDispatchLag(t *testing.T) {
	t.Parallel()
	c := NewCollector(t0)
	for _, s := range lagSamples() {
		c.Add(s)
	}

	f := c.Final()
	got := []float64{f.MeanDispatchLagMs, f.P50DispatchLagMs, f.P99DispatchLagMs}
	if diff := cmp.Diff([]float64{20, 1, 93.28}, got, approx); diff != "" {
		t.Errorf("[mean p50 p99] dispatch lag ms (-want +got):\n%s", diff)
	}

	// Changed deliberately (issue 12): no schedule, no ITL is "n/a", not 0.
	if f := NewCollector(t0).Final(); !math.IsNaN(f.MeanDispatchLagMs) || !math.IsNaN(f.P99DispatchLagMs) || !math.IsNaN(f.MeanITLMs) {
		t.Errorf("empty collector: lag mean %v, p99 %v, ITL mean %v; want NaN (not defined)", f.MeanDispatchLagMs, f.P99DispatchLagMs, f.MeanITLMs)
	}
}

func TestLiveReset(t *testing.T) {
	t.Parallel()
	l := NewLive(t0)
	for range 5 {
		s := withTokens(success(0.9, 9, 9), 1000, 100)
		s.ITL, s.DispatchLag, s.Finish = 0.5, 0.5, at(30)
		l.Add(s)
	}
	l.Add(failedSample())

	start2 := at(60)
	l.Reset(start2)
	if diff := cmp.Diff(Aggregated{}, l.Current(start2)); diff != "" {
		t.Errorf("after Reset, Current(start) (-want +got):\n%s", diff)
	}
	if total, failed := l.Counts(); total != 0 || failed != 0 {
		t.Errorf("after Reset, Counts = %d, %d; want 0, 0", total, failed)
	}
	if got := l.Current(start2.Add(50 * time.Millisecond)).ElapsedTime; math.Abs(got-0.05) > 1e-9 {
		t.Errorf("elapsed 50 ms after Reset = %v, want 0.05 (clock restarted)", got)
	}
	if got := l.Current(at(59)).ElapsedTime; got != 0 {
		t.Errorf("elapsed before the new start = %v, want 0", got)
	}

	s := withTokens(success(0.2, 40, 1), 10, 2)
	s.ITL, s.Finish = 0.01, start2.Add(2*time.Second)
	l.Add(s)
	want := Aggregated{
		TotalRequests: 1, SuccessfulRequests: 1, ElapsedTime: 2,
		MeanTTFTMs: 200, MeanDecodeSpeed: 40, MeanRequestLatencyMs: 1000,
		InputThroughput: 5, OutputThroughput: 1, TotalInputTokens: 10, TotalOutputTokens: 2,
	}
	if diff := cmp.Diff(want, l.Current(start2.Add(2*time.Second)), approx); diff != "" {
		t.Errorf("Current after Reset uses only new data (-want +got):\n%s", diff)
	}
}

// TestLiveConstantMemory: Add keeps sums, not samples, so however long
// the run, Live does not grow. One run of many Adds, not AllocsPerRun per
// Add: it rounds down, and amortized appends (a Collector's) average 0.
func TestLiveConstantMemory(t *testing.T) {
	l := NewLive(t0)
	s := withTokens(success(0.3, 48, 2), 10000, 128)
	s.ITL, s.DispatchLag = 0.02, 0.001
	f := failedSample()
	f.DispatchLag = 0.003
	if allocs := testing.AllocsPerRun(1, func() {
		for range 100_000 {
			l.Add(s)
			l.Add(f)
		}
	}); allocs != 0 {
		t.Errorf("200,000 Live.Adds allocated %v times, want 0", allocs)
	}
}

func TestCollectorConcurrentAdds(t *testing.T) {
	t.Parallel()
	c := NewCollector(t0)
	var wg sync.WaitGroup
	for g := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				if (g+i)%4 == 0 {
					c.Add(withTokens(failedSample(), 1, 0))
				} else {
					c.Add(withTokens(success(0.1, 10, 1), 1, 1))
				}
			}
		}()
	}
	wg.Wait()
	f := c.Final()
	if f.TotalRequests != 1000 || f.SuccessfulRequests != 750 || f.FailedRequests != 250 || f.TotalInputTokens != 1000 {
		t.Errorf("total, ok, failed, input tokens = %d, %d, %d, %d; want 1000, 750, 250, 1000",
			f.TotalRequests, f.SuccessfulRequests, f.FailedRequests, f.TotalInputTokens)
	}
}

// TestCollectorReadersAndWriters: Final and writers make progress
// together.
func TestCollectorReadersAndWriters(t *testing.T) {
	t.Parallel()
	c := NewCollector(t0)
	var writes, reads atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					c.Add(success(0.1, 10, 1))
					writes.Add(1)
				}
			}
		})
	}
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				_ = c.Final()
				reads.Add(1)
			}
		}
	})
	deadline := time.Now().Add(5 * time.Second)
	for (writes.Load() < 1000 || reads.Load() < 10) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if writes.Load() < 1000 || reads.Load() < 10 {
		t.Errorf("writes, reads = %d, %d; want both to progress (>= 1000, >= 10)", writes.Load(), reads.Load())
	}
	if f := c.Final(); f.TotalRequests != int(writes.Load()) || f.SuccessfulRequests != f.TotalRequests {
		t.Errorf("Final: %d total, %d successful; want %d written, all successful", f.TotalRequests, f.SuccessfulRequests, writes.Load())
	}
}

// TestLiveReadersAndWriters: the progress display's reads and the
// writers make progress together, and Reset mid-stream is safe (run with
// -race).
func TestLiveReadersAndWriters(t *testing.T) {
	t.Parallel()
	l := NewLive(t0)
	var writes, reads atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					l.Add(success(0.1, 10, 1))
					writes.Add(1)
				}
			}
		})
	}
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				if a := l.Current(at(1)); a.TotalRequests != a.SuccessfulRequests+a.FailedRequests {
					t.Errorf("Current mid-stream: %d total != %d successful + %d failed", a.TotalRequests, a.SuccessfulRequests, a.FailedRequests)
				}
				_, _ = l.Counts()
				reads.Add(1)
			}
		}
	})
	progressed := func(total func() int64) {
		deadline := time.Now().Add(5 * time.Second)
		for (total() < 1000 || reads.Load() < 10) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
	progressed(writes.Load)
	before := writes.Load() // at most the Adds that precede Reset
	l.Reset(t0)             // while writing
	progressed(func() int64 { n, _ := l.Counts(); return int64(n) })
	close(stop)
	wg.Wait()
	if writes.Load() < 1000 || reads.Load() < 10 {
		t.Errorf("writes, reads = %d, %d; want both to progress (>= 1000, >= 10)", writes.Load(), reads.Load())
	}
	total, failed := l.Counts()
	if total < 1000 || failed != 0 || int64(total) > writes.Load()-before {
		t.Errorf("after Reset: %d counted, %d failed; want 1000 to %d (written after Reset), none failed",
			total, failed, writes.Load()-before)
	}
}

func BenchmarkAdd(b *testing.B) {
	s := withTokens(success(0.3, 48, 2), 10000, 128)
	s.ITL, s.DispatchLag = 0.02, 0.001
	b.Run("live", func(b *testing.B) {
		l := NewLive(t0)
		b.ReportAllocs()
		for b.Loop() {
			l.Add(s)
		}
	})
	b.Run("serial", func(b *testing.B) {
		c := NewCollector(t0)
		b.ReportAllocs()
		for b.Loop() {
			c.Add(s)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		c := NewCollector(t0)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				c.Add(s)
			}
		})
	})
}

func BenchmarkFinal(b *testing.B) {
	c := NewCollector(t0)
	for i := range 100_000 {
		s := success(float64(i%997)/1000, float64(i%89), float64(i%1009)/100)
		s.ITL, s.DispatchLag = float64(i%31)/1000, float64(i%7)/1000
		c.Add(s)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = c.Final()
	}
}
