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
	"github.com/lmbench/lmbench/sdk/protocol"
)

// watchSink passes snapshots on to a sink and signals the first snapshot
// that matches each condition, so a fake engine can answer once the
// progress display has seen what a test needs (not after a sleep).
type watchSink struct {
	ProgressSink
	mu      sync.Mutex
	watches []*snapshotWatch
}

type snapshotWatch struct {
	match func(Snapshot) bool
	ch    chan struct{}
	fired bool
}

func watch(s ProgressSink) *watchSink { return &watchSink{ProgressSink: s} }

// when returns a channel closed at the first snapshot matching match.
func (w *watchSink) when(match func(Snapshot) bool) chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	sw := &snapshotWatch{match: match, ch: make(chan struct{})}
	w.watches = append(w.watches, sw)
	return sw.ch
}

func (w *watchSink) Update(s Snapshot) {
	w.ProgressSink.Update(s)
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, sw := range w.watches {
		if !sw.fired && sw.match(s) {
			sw.fired = true
			close(sw.ch)
		}
	}
}

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
		t.Run(fmt.Sprint("scheduled=", scheduled), func(t *testing.T) {
			t.Parallel()
			measure := []protocol.Request{chat("a", nil), chat("b", nil), chat("c", nil)}
			if scheduled {
				for i := range measure {
					measure[i] = scheduledAt(measure[i], 0)
				}
			}
			rec := &recordingSink{}
			sink := watch(rec)
			// Each answer waits for a snapshot: w for one of warmup, a for
			// one of measure, b and c for one showing a's figures (its
			// dispatch lag too, when scheduled). The 30 s bound only keeps
			// a broken feed from hanging the test.
			seenA := sink.when(func(s Snapshot) bool {
				return s.Phase == PhaseMeasure && s.Done >= 1 && s.MeanTTFTMs > 0 && (!scheduled || s.HasDispatchLag())
			})
			const bound = 30 * time.Second
			snd := &fakeSender{outcomes: map[string]answer{
				"w": {hold: sink.when(func(s Snapshot) bool { return s.Phase == PhaseWarmup }), wait: bound},
				"a": {hold: sink.when(func(s Snapshot) bool { return s.Phase == PhaseMeasure }), wait: bound},
				"b": {hold: seenA, wait: bound},
				"c": {hold: seenA, wait: bound},
			}}
			p, stdout := plan(t, batches([]protocol.Request{chat("w", nil)}, measure), snd)
			rec.stdout = stdout
			p.Progress, p.ProgressEvery, p.Planned = sink, 2*time.Millisecond, 3
			if _, err := Execute(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			rec.checkClosedBeforeSummary(t)

			var warm, meas, withTTFT, withLag int
			var lastElapsed time.Duration
			for _, s := range rec.snaps {
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
					// A snapshot may count a request done before its sample
					// is in the stats (0 then); once shown, the mean is the
					// fake engine's 100 ms.
					if s.MeanTTFTMs != 0 {
						withTTFT++
						if math.Abs(s.MeanTTFTMs-100) > 1 {
							t.Errorf("mean TTFT = %v ms, want the fake engine's 100 ms: %+v", s.MeanTTFTMs, s)
						}
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
			if warm == 0 || meas == 0 || withTTFT == 0 {
				t.Fatalf("%d warmup and %d measure snapshots, %d with a mean TTFT; want all", warm, meas, withTTFT)
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
	wl := &fakeWorkload{step: func(r protocol.StepRequest) (protocol.StepResponse, error) {
		if r.Phase == protocol.Warmup {
			return protocol.StepResponse{Next: nextDone}, nil
		}
		return protocol.StepResponse{Requests: []protocol.Request{chat("r1", nil)}, Next: wakeAt(time.Hour)}, nil
	}}
	rec := &recordingSink{}
	sink := watch(rec)
	draining := sink.when(func(s Snapshot) bool { return s.Phase == PhaseDraining && s.InFlight == 1 })
	snd := &fakeSender{outcomes: map[string]answer{"r1": {beforeAnswer: func() {
		cancel()
		// Still in flight after Ctrl-C, until a snapshot has shown it.
		select {
		case <-draining:
		case <-time.After(30 * time.Second):
		}
	}}}}
	p, stdout := plan(t, wl, snd)
	rec.stdout = stdout
	p.Progress, p.ProgressEvery = sink, 2*time.Millisecond
	res, err := Execute(ctx, p)
	if err != nil || !res.Interrupted {
		t.Fatalf("Execute = %+v, %v; want interrupted", res, err)
	}
	rec.checkClosedBeforeSummary(t)
	n := 0
	for _, s := range rec.snaps {
		if s.Phase == PhaseDraining && s.InFlight == 1 {
			n++
		}
	}
	if n == 0 {
		t.Errorf("no draining snapshot with the request in flight: %+v", rec.snaps)
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
			o := &observer{live: stats.NewLive(start)}
			o.PhaseStarted(protocol.Measure, start)
			for i := range n {
				lag := float64(i%7) / 1000
				o.live.Add(stats.Sample{Success: true, TTFT: 0.05, Latency: 1, DecodeSpeed: 100, ITL: 0.01, DispatchLag: lag,
					InputTokens: 100, OutputTokens: 10, Finish: start.Add(time.Duration(i) * time.Millisecond)})
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
