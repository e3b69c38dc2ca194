package bench

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lmbench/lmbench/core/stats"
	workloadv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/workload/v1"
)

// recordingSink keeps every snapshot and checks the Close contract.
type recordingSink struct {
	mu            sync.Mutex
	snaps         []Snapshot
	closed        int
	afterClose    int
	stdout        *bytes.Buffer
	stdoutAtClose int
}

func (r *recordingSink) Update(s Snapshot) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed > 0 {
		r.afterClose++
	}
	r.snaps = append(r.snaps, s)
}

func (r *recordingSink) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed++
	r.stdoutAtClose = r.stdout.Len()
}

func (r *recordingSink) checkClosedBeforeSummary(t *testing.T) {
	t.Helper()
	if r.closed != 1 || r.afterClose != 0 {
		t.Errorf("Close called %d times, %d updates after it; want once, none after", r.closed, r.afterClose)
	}
	if r.stdoutAtClose != 0 || r.stdout.Len() == 0 {
		t.Errorf("stdout held %d bytes at Close and %d at the end; want the summary printed after Close",
			r.stdoutAtClose, r.stdout.Len())
	}
}

func TestExecuteFeedsSnapshots(t *testing.T) {
	t.Parallel()
	for _, scheduled := range []bool{true, false} {
		name := "unscheduled"
		if scheduled {
			name = "scheduled"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			measure := []*workloadv1.Request{chat("a", nil), chat("b", nil), chat("c", nil)}
			if scheduled {
				for _, r := range measure {
					scheduledAt(r, 0)
				}
			}
			snd := &fakeSender{outcomes: map[string]outcome{
				"w": {wait: 30 * time.Millisecond},
				"a": {wait: 10 * time.Millisecond}, "b": {wait: 40 * time.Millisecond}, "c": {wait: 60 * time.Millisecond},
			}}
			p, stdout := plan(t, batches([]*workloadv1.Request{chat("w", nil)}, measure), snd)
			sink := &recordingSink{stdout: stdout}
			p.Progress, p.ProgressEvery, p.Planned = sink, 2*time.Millisecond, 3
			if _, err := Execute(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			sink.checkClosedBeforeSummary(t)

			var warm, meas, withLag int
			var lastElapsed time.Duration
			for _, s := range sink.snaps {
				switch s.Phase {
				case PhaseWarmup:
					warm++
					if s.Planned != 0 || s.MeanTTFTMs != 0 || s.HasDispatchLag() {
						t.Errorf("warmup snapshot shows measured figures: %+v", s)
					}
				case PhaseMeasure:
					meas++
					if s.Planned != 3 || s.Done+s.InFlight > 3 || s.InFlight < 0 || s.Elapsed < lastElapsed {
						t.Errorf("measure snapshot inconsistent (previous elapsed %v): %+v", lastElapsed, s)
					}
					lastElapsed = s.Elapsed
					if s.Done > 0 && math.Abs(s.MeanTTFTMs-100) > 1 {
						t.Errorf("mean TTFT = %v ms, want the fake engine's 100 ms: %+v", s.MeanTTFTMs, s)
					}
					if s.HasDispatchLag() {
						withLag++
						if s.DispatchLagP50Ms < 0 || s.DispatchLagP99Ms < s.DispatchLagP50Ms {
							t.Errorf("dispatch lag p50 %v p99 %v", s.DispatchLagP50Ms, s.DispatchLagP99Ms)
						}
					}
				case PhaseStarting:
				default:
					t.Errorf("unexpected phase %q", s.Phase)
				}
			}
			if warm == 0 || meas == 0 {
				t.Fatalf("%d warmup and %d measure snapshots, want both", warm, meas)
			}
			if scheduled && withLag == 0 {
				t.Error("no measure snapshot carries dispatch lag although every request was scheduled")
			}
			if !scheduled && withLag > 0 {
				t.Errorf("%d snapshots carry dispatch lag without a schedule", withLag)
			}
		})
	}
}

// After Ctrl-C the snapshots say the run is draining its in-flight
// requests.
func TestExecuteSnapshotsDraining(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wl := &fakeWorkload{step: func(r *workloadv1.StepRequest) (*workloadv1.StepResponse, error) {
		if r.Phase == workloadv1.Phase_PHASE_WARMUP {
			return &workloadv1.StepResponse{Next: done()}, nil
		}
		return &workloadv1.StepResponse{Requests: []*workloadv1.Request{chat("r1", nil)},
			Next: &workloadv1.StepResponse_WakeAtNs{WakeAtNs: int64(time.Hour)}}, nil
	}}
	snd := &fakeSender{outcomes: map[string]outcome{"r1": {beforeAnswer: func() {
		cancel()
		time.Sleep(200 * time.Millisecond) // still in flight after Ctrl-C
	}}}}
	p, stdout := plan(t, wl, snd)
	sink := &recordingSink{stdout: stdout}
	p.Progress, p.ProgressEvery = sink, 2*time.Millisecond
	res, err := Execute(ctx, p)
	if err != nil || !res.Interrupted {
		t.Fatalf("Execute = %+v, %v; want interrupted", res, err)
	}
	sink.checkClosedBeforeSummary(t)
	draining := 0
	for _, s := range sink.snaps {
		if s.Phase == PhaseDraining && s.InFlight == 1 {
			draining++
		}
	}
	if draining == 0 {
		t.Errorf("no draining snapshot with the request in flight: %+v", sink.snaps)
	}
}

func TestPlainLine(t *testing.T) {
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
		if got := PlainLine(tt.s); got != tt.want {
			t.Errorf("PlainLine =\n%q\nwant\n%q", got, tt.want)
		}
	}
	var b bytes.Buffer
	sink := PlainProgress(&b)
	sink.Update(tests[1].s)
	sink.Update(tests[2].s)
	sink.Close()
	if got, want := b.String(), tests[1].want+"\n"+tests[2].want+"\n"; got != want {
		t.Errorf("PlainProgress wrote %q, want %q", got, want)
	}
	if strings.ContainsRune(b.String(), 0x1b) {
		t.Error("PlainProgress wrote an escape code")
	}
}

// BenchmarkSnapshot is the cost of one progress snapshot (taken once a
// second) deep into a long scheduled run.
func BenchmarkSnapshot(b *testing.B) {
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			start := time.Now()
			o := &observer{stats: stats.NewCollector(start)}
			o.PhaseStarted(workloadv1.Phase_PHASE_MEASURE, start)
			for i := range n {
				lag := float64(i%7) / 1000
				o.stats.Add(stats.Sample{Success: true, TTFT: 0.05, Latency: 1, DecodeSpeed: 100, ITL: 0.01, DispatchLag: lag,
					InputTokens: 100, OutputTokens: 10, Finish: start.Add(time.Duration(i) * time.Millisecond)})
				o.scheduled.Store(true)
				o.lags.add(lag * 1000)
			}
			now := start.Add(time.Hour)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				s := o.snapshot(now, n, false)
				if !s.HasDispatchLag() {
					b.Fatal("no dispatch lag")
				}
			}
		})
	}
}

// The live dispatch lag covers the most recent LagWindow requests.
func TestLagRingKeepsRecentWindow(t *testing.T) {
	t.Parallel()
	var r lagRing
	if p50, p99 := r.percentiles(); !math.IsNaN(p50) || !math.IsNaN(p99) {
		t.Errorf("empty ring: p50 %v p99 %v, want NaN", p50, p99)
	}
	// 1000 early lags of 500 ms, then LagWindow lags of 0..LagWindow-1 ms:
	// only the latter count.
	for range 1000 {
		r.add(500)
	}
	var recent []float64
	for i := range LagWindow {
		r.add(float64(i))
		recent = append(recent, float64(i))
	}
	p50, p99 := r.percentiles()
	if want := stats.Percentile(recent, 50); p50 != want {
		t.Errorf("p50 = %v, want %v", p50, want)
	}
	if want := stats.Percentile(recent, 99); p99 != want {
		t.Errorf("p99 = %v, want %v", p99, want)
	}
	r.reset()
	r.add(3)
	if p50, p99 := r.percentiles(); p50 != 3 || p99 != 3 {
		t.Errorf("after reset: p50 %v p99 %v, want 3 and 3", p50, p99)
	}
}
