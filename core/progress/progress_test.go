package progress

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/lmbench/lmbench/core/stats"
)

func TestLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s    Snapshot
		want string
	}{
		{
			Snapshot{Phase: PhaseWarmup, Elapsed: 1500 * time.Millisecond, Done: 1, InFlight: 2,
				DispatchLagP50Ms: math.NaN(), DispatchLagP99Ms: math.NaN()},
			"[warmup] done 1/?  failed 0  in-flight 2  elapsed 1.5s",
		},
		{
			Snapshot{Phase: PhaseMeasure, Elapsed: 4 * time.Second, Done: 12, Failed: 1, InFlight: 3, Planned: 40,
				MeanTTFTMs: 85.14, MeanDecodeSpeed: 41.23, InputThroughput: 9512.4, OutputThroughput: 310.2,
				DispatchLagP50Ms: math.NaN(), DispatchLagP99Ms: math.NaN()},
			"[measure] done 12/40  failed 1  in-flight 3  elapsed 4.0s  mean TTFT 85.1 ms  decode 41.2 tok/s  in 9512 tok/s  out 310 tok/s",
		},
		{
			Snapshot{Phase: PhaseDraining, Elapsed: time.Second, Done: 2, InFlight: 1,
				DispatchLagP50Ms: 1.25, DispatchLagP99Ms: 7},
			"[draining] done 2/?  failed 0  in-flight 1  elapsed 1.0s  mean TTFT 0.0 ms  decode 0.0 tok/s  in 0 tok/s  out 0 tok/s  dispatch lag p50 1.2 ms p99 7.0 ms",
		},
	}
	for _, tt := range tests {
		if got := Line(tt.s); got != tt.want {
			t.Errorf("Line =\n%q\nwant\n%q", got, tt.want)
		}
	}
	var b bytes.Buffer
	sink := Plain(&b)
	sink.Update(tests[1].s)
	sink.Update(tests[2].s)
	sink.Close()
	if got, want := b.String(), tests[1].want+"\n"+tests[2].want+"\n"; got != want {
		t.Errorf("Plain wrote %q, want %q", got, want)
	}
	if strings.ContainsRune(b.String(), 0x1b) {
		t.Error("Plain wrote an escape code")
	}
}

// The live dispatch lag covers the most recent LagWindow requests.
func TestLagRingKeepsRecentWindow(t *testing.T) {
	t.Parallel()
	var r Lags
	if p50, p99 := r.Percentiles(); !math.IsNaN(p50) || !math.IsNaN(p99) {
		t.Errorf("empty ring: p50 %v p99 %v, want NaN", p50, p99)
	}
	// 1000 early lags of 500 ms, then LagWindow lags of 0..LagWindow-1 ms:
	// only the latter count.
	for range 1000 {
		r.Add(500)
	}
	var recent []float64
	for i := range LagWindow {
		r.Add(float64(i))
		recent = append(recent, float64(i))
	}
	p50, p99 := r.Percentiles()
	if want := stats.Percentile(recent, 50); p50 != want {
		t.Errorf("p50 = %v, want %v", p50, want)
	}
	if want := stats.Percentile(recent, 99); p99 != want {
		t.Errorf("p99 = %v, want %v", p99, want)
	}
	r.Reset()
	r.Add(3)
	if p50, p99 := r.Percentiles(); p50 != 3 || p99 != 3 {
		t.Errorf("after reset: p50 %v p99 %v, want 3 and 3", p50, p99)
	}
}
