package bench

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/lmbench/lmbench/core/progress"
	"github.com/lmbench/lmbench/core/stats"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// watchSink passes snapshots on to a sink and signals the first snapshot
// that matches each condition, so a fake engine can answer once the
// progress display has seen what a test needs (not after a sleep).
type watchSink struct {
	progress.Sink
	mu      sync.Mutex
	watches []*snapshotWatch
}

type snapshotWatch struct {
	match func(progress.Snapshot) bool
	ch    chan struct{}
	fired bool
}

func watch(s progress.Sink) *watchSink { return &watchSink{Sink: s} }

// when returns a channel closed at the first snapshot matching match.
func (w *watchSink) when(match func(progress.Snapshot) bool) chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	sw := &snapshotWatch{match: match, ch: make(chan struct{})}
	w.watches = append(w.watches, sw)
	return sw.ch
}

func (w *watchSink) Update(s progress.Snapshot) {
	w.Sink.Update(s)
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
	snaps         []progress.Snapshot
	closed        int
	afterClose    int
	stdout        *bytes.Buffer
	stdoutAtClose int
}

func (r *recordingSink) Update(s progress.Snapshot) {
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
			seenA := sink.when(func(s progress.Snapshot) bool {
				return s.Phase == progress.PhaseMeasure && s.Done >= 1 && s.MeanTTFTMs > 0 && (!scheduled || s.HasDispatchLag())
			})
			const bound = 30 * time.Second
			snd := &fakeSender{outcomes: map[string]answer{
				"w": {hold: sink.when(func(s progress.Snapshot) bool { return s.Phase == progress.PhaseWarmup }), wait: bound},
				"a": {hold: sink.when(func(s progress.Snapshot) bool { return s.Phase == progress.PhaseMeasure }), wait: bound},
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
				case progress.PhaseWarmup:
					warm++
					if s.Planned != 0 || s.MeanTTFTMs != 0 || s.HasDispatchLag() {
						t.Errorf("warmup snapshot shows measured figures: %+v", s)
					}
				case progress.PhaseMeasure:
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
				case progress.PhaseStarting:
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
	draining := sink.when(func(s progress.Snapshot) bool { return s.Phase == progress.PhaseDraining && s.InFlight == 1 })
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
		if s.Phase == progress.PhaseDraining && s.InFlight == 1 {
			n++
		}
	}
	if n == 0 {
		t.Errorf("no draining snapshot with the request in flight: %+v", rec.snaps)
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
				o.lags.Add(lag * 1000)
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
