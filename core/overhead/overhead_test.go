package overhead

import (
	"math"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/report"
)

func TestLoopLagsOnInjectedSamples(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	tests := []struct {
		name     string
		samples  []float64
		n        int
		p99, max float64 // p99 within loopLagAccuracy
	}{
		{"none", nil, 0, nan, nan},
		{"one", []float64{2.5}, 1, 2.5, 2.5},
		{"a stalled tail", append(repeat(0.2, 980), repeat(40, 20)...), 1000, 40, 40},
		{"uniform 1..1000", seq(1, 1000), 1000, 990, 1000},
		{"a negative reading counts as 0", []float64{-3, -1}, 2, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := newLoopLags()
			for _, v := range tt.samples {
				l.add(v)
			}
			if l.n != tt.n || !sameFloat(l.max, tt.max) {
				t.Errorf("n %d max %v, want %d %v", l.n, l.max, tt.n, tt.max)
			}
			if got := l.p99(); !withinRel(got, tt.p99, loopLagAccuracy) {
				t.Errorf("p99 %v, want %v ±%v", got, tt.p99, loopLagAccuracy)
			}
		})
	}
}

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func seq(from, to int) []float64 {
	var out []float64
	for i := from; i <= to; i++ {
		out = append(out, float64(i))
	}
	return out
}

func sameFloat(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }

func withinRel(got, want, rel float64) bool {
	if math.IsNaN(want) || want == 0 {
		return sameFloat(got, want)
	}
	return math.Abs(got-want) <= rel*math.Abs(want)
}

func TestCPUShares(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cpu, wall     time.Duration
		n             int
		core, machine float64
	}{
		{1500 * time.Millisecond, time.Second, 2, 150, 75},
		{500 * time.Millisecond, 2 * time.Second, 4, 25, 6.25},
		{0, time.Second, 1, 0, 0},
		{time.Second, 0, 2, math.NaN(), math.NaN()}, // no phase to divide by
	}
	for _, tt := range tests {
		core, machine := cpuShares(tt.cpu, tt.wall, tt.n)
		if !sameFloat(core, tt.core) || !sameFloat(machine, tt.machine) {
			t.Errorf("cpuShares(%v, %v, %d) = %v, %v; want %v, %v", tt.cpu, tt.wall, tt.n, core, machine, tt.core, tt.machine)
		}
	}
}

func TestGCPausesBetween(t *testing.T) {
	t.Parallel()
	buckets := []float64{math.Inf(-1), 0, 1e-6, 2e-6, 1e-3, 2e-3, math.Inf(1)}
	before := &metrics.Float64Histogram{Counts: []uint64{0, 5, 1, 0, 0, 0}, Buckets: buckets}
	tests := []struct {
		name  string
		after *metrics.Float64Histogram
		want  gcPauses
	}{
		{"none since", before, gcPauses{n: 0, totalMs: 0, maxMs: math.NaN()}},
		{
			// Two new pauses in [1µs, 2µs), one in [1ms, 2ms): counted at
			// the buckets' upper bounds.
			"three since", &metrics.Float64Histogram{Counts: []uint64{0, 5, 3, 0, 1, 0}, Buckets: buckets},
			gcPauses{n: 3, totalMs: 2*0.002 + 2, maxMs: 2},
		},
		{
			// The open last bucket counts at its lower bound.
			"one past the last bound", &metrics.Float64Histogram{Counts: []uint64{0, 5, 1, 0, 0, 1}, Buckets: buckets},
			gcPauses{n: 1, totalMs: 2, maxMs: 2},
		},
	}
	for _, tt := range tests {
		got := gcPausesBetween(before, tt.after)
		if got.n != tt.want.n || !withinRel(got.totalMs, tt.want.totalMs, 1e-12) || !sameFloat(got.maxMs, tt.want.maxMs) {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
	if got := gcPausesBetween(nil, before); got.n != -1 || !math.IsNaN(got.totalMs) || !math.IsNaN(got.maxMs) {
		t.Errorf("not reported: %+v, want n -1 and NaNs", got)
	}
}

// at is a wall time d after a fixed instant.
func at(d time.Duration) time.Time { return time.Unix(1_700_000_000, 0).Add(d) }

func TestCertificateLagAndSpreadFromRecords(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	recs := []record.Record{
		// A burst: three requests due at the phase start (their Step's due
		// time), sent 1, 2 and 5 ms later.
		{Phase: record.Measure, Scheduled: at(0), Submit: at(1 * ms)},
		{Phase: record.Measure, Scheduled: at(0), Submit: at(2 * ms)},
		{Phase: record.Measure, Scheduled: at(0), Submit: at(5 * ms), Success: false},
		// Two due together later: spread 3 ms (the burst's is 4 ms).
		{Phase: record.Measure, Scheduled: at(100 * ms), Submit: at(100 * ms), ExplicitSchedule: true},
		{Phase: record.Measure, Scheduled: at(100 * ms), Submit: at(103 * ms), ExplicitSchedule: true},
		// Alone at its instant: a lag, no spread.
		{Phase: record.Measure, Scheduled: at(200 * ms), Submit: at(200*ms + 500*time.Microsecond), ExplicitSchedule: true},
		// Not counted: warmup, and a request never submitted.
		{Phase: record.Warmup, Scheduled: at(0), Submit: at(900 * ms)},
		{Phase: record.Measure, Scheduled: at(0)},
	}
	c := newClientLags()
	for i := range recs {
		if err := c.add(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	o := certificate(nil, c)
	// Lags 0, 0.5, 1, 2, 3, 5 ms: numpy's p50 is 1.5, p99 4.9.
	got := []float64{float64(o.Requests), o.DispatchLagP50Ms, o.DispatchLagP99Ms, o.DispatchLagMaxMs,
		float64(o.SpreadGroups), o.SendSpreadP99Ms, o.SendSpreadMaxMs}
	want := []float64{6, 1.5, 4.9, 5, 2, 3.99, 4}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-9 })); diff != "" {
		t.Errorf("requests, lag p50/p99/max, groups, spread p99/max (-want +got):\n%s", diff)
	}
	// Without a probe its figures are not defined; the verdict rests on the lags.
	if o.LoopSamples != 0 || !math.IsNaN(o.LoopLagP99Ms) || !math.IsNaN(o.CPUMachinePercent) || o.GCPauses != -1 {
		t.Errorf("probe figures without a probe: %+v", o)
	}
	if o.Verdict.Saturated || !near(o.Verdict.BoundMs, 4.9) {
		t.Errorf("verdict %+v, want not saturated, bound 4.9 ms", o.Verdict)
	}
}

func TestCertificateWithoutAnything(t *testing.T) {
	t.Parallel()
	o := certificate(nil, newClientLags())
	for name, v := range map[string]float64{
		"dispatch p50": o.DispatchLagP50Ms, "dispatch p99": o.DispatchLagP99Ms, "spread p99": o.SendSpreadP99Ms,
		"loop p99": o.LoopLagP99Ms, "cpu": o.CPUSeconds, "bound": o.Verdict.BoundMs,
	} {
		if !math.IsNaN(v) {
			t.Errorf("%s = %v, want NaN (not defined)", name, v)
		}
	}
	if o.Verdict.Saturated || !strings.Contains(o.Text(), "n/a") {
		t.Errorf("verdict %+v %q", o.Verdict, o.Text())
	}
}

func TestCertificateFromAProbe(t *testing.T) {
	t.Parallel()
	l := newLoopLags()
	for _, v := range append(repeat(0.1, 99), 3) {
		l.add(v)
	}
	pr := &ProbeResult{wall: 2 * time.Second, cpu: time.Second, cpuOK: true, numCPU: 2,
		gc: gcPauses{n: 4, totalMs: 0.5, maxMs: 0.25}, lags: l}
	o := certificate(pr, newClientLags())
	want := report.Overhead{
		PhaseSeconds: 2, LoopSamples: 100, LoopPeriodMs: 5, LoopLagMaxMs: 3,
		CPUSeconds: 1, CPUCorePercent: 50, CPUMachinePercent: 25, CPUs: 2,
		GCPauses: 4, GCPauseTotalMs: 0.5, GCPauseMaxMs: 0.25,
	}
	got := *o
	got.LoopLagP99Ms, got.Verdict = 0, report.Verdict{}
	nan := math.NaN()
	want.DispatchLagP50Ms, want.DispatchLagP99Ms, want.DispatchLagMaxMs = nan, nan, nan
	want.SendSpreadP99Ms, want.SendSpreadMaxMs = nan, nan
	want.StepP99Ms, want.StepMaxMs = nan, nan
	if diff := cmp.Diff(want, got, cmp.Comparer(sameFloat)); diff != "" {
		t.Errorf("certificate (-want +got):\n%s", diff)
	}
	// p99 of 99 samples at 0.1 ms and one at 3 ms: rank 98.01 of 0..99,
	// the sketch's value there (within 1%), at most the maximum.
	if o.LoopLagP99Ms < 0.099 || o.LoopLagP99Ms > 3 {
		t.Errorf("loop p99 %v", o.LoopLagP99Ms)
	}
}

func TestVerdictThresholds(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	tests := []struct {
		name               string
		cpu, dispatch, lp  float64 // CPU % of the machine, dispatch and loop lag p99 (ms)
		saturated, cpuOver bool
		lagOver            bool
		bound, inflation   float64
		text               string
	}{
		{"idle", 12, 0.4, 0.9, false, false, false, 0.9, 1.3, "Client-added latency at most 0.90 ms at p99"},
		{"at the thresholds is not over", SaturatedCPUPercent, SaturatedLagMs, SaturatedLagMs, false, false, false, 10, 20,
			"Client-added latency at most 10.00 ms at p99"},
		{"cpu over", 80.5, 1, 2, true, true, false, 2, 3, "CPU 80.50% of the machine > 80%"},
		{"dispatch lag over", 30, 10.01, 2, true, false, true, 10.01, 12.01, "dispatch lag p99 10.01 ms > 10 ms"},
		{"event-loop lag over", 30, 1, 25, true, false, true, 25, 26, "event-loop lag p99 25.00 ms > 10 ms"},
		{"both", 95, 300, 12, true, true, true, 300, 312, "inflated by up to 312.00 ms at p99"},
		{"no cpu figure crosses nothing", nan, 1, 1, false, false, false, 1, 2, "at most 1.00 ms"},
		{"a lag without the other", 10, nan, 4, false, false, false, 4, 4, "at most 4.00 ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := &report.Overhead{CPUMachinePercent: tt.cpu, DispatchLagP99Ms: tt.dispatch, LoopLagP99Ms: tt.lp}
			v := verdict(o)
			want := report.Verdict{Saturated: tt.saturated, CPUOver: tt.cpuOver, LagOver: tt.lagOver,
				BoundMs: tt.bound, InflationMs: tt.inflation,
				CPUThresholdPercent: SaturatedCPUPercent, LagThresholdMs: SaturatedLagMs}
			if diff := cmp.Diff(want, v, cmp.Comparer(func(a, b float64) bool { return sameFloat(a, b) || math.Abs(a-b) < 1e-9 })); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
			o.Verdict = v
			text := o.Text()
			if !strings.Contains(text, tt.text) || strings.HasPrefix(text, "WARNING") != tt.saturated {
				t.Errorf("text %q, want it to contain %q (warning: %v)", text, tt.text, tt.saturated)
			}
		})
	}
}

// TestSlowStepIsThePlugins: dispatch lag the workload's Steps explain is
// laid at the plugin's door, by name, with the Step figures; lag its
// Steps do not explain (fast Steps, a busy client) is the client's.
func TestSlowStepIsThePlugins(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name           string
		dispatch, loop float64 // lag p99s, ms
		steps          []float64
		slow           bool
		text           string
	}{
		{"a 30 s Step", 29000, 1, append(repeat(0.2, 50), 30000), true,
			"WARNING: workload slowpoke took up to 30.0 s to answer Step; the lag is the plugin's, not the client's: " +
				"requests went out as late as its Steps answered (Step p99 15000.10 ms over 51 steps; dispatch lag p99 29000.00 ms)"},
		{"a slow Step and a busy loop", 29000, 40, []float64{30000}, true,
			"requests went out as late as its Steps answered (Step p99 30000.00 ms over 1 steps; dispatch lag p99 29000.00 ms); " +
				"the client was saturated (dispatch lag p99"},
		{"fast Steps", 300, 1, repeat(0.2, 50), false, "WARNING: the client was saturated (dispatch lag p99 300.00 ms > 10 ms)"},
		{"no lag to explain", 2, 1, []float64{30000}, false, "Client-added latency at most 2.00 ms at p99"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := &report.Overhead{CPUMachinePercent: 10, DispatchLagP99Ms: tt.dispatch, LoopLagP99Ms: tt.loop}
			WithSteps(o, "slowpoke", tt.steps)
			if o.Verdict.StepSlow != tt.slow || !strings.Contains(o.Text(), tt.text) {
				t.Errorf("step slow %v, text %q; want %v and %q", o.Verdict.StepSlow, o.Text(), tt.slow, tt.text)
			}
		})
	}
}

// The probe as Execute uses it: stop returns what it saw, once; a nil
// probe (no measured phase) saw nothing. No timing is asserted.
func TestOverheadProbeStop(t *testing.T) {
	t.Parallel()
	p := StartProbe()
	r := p.Stop()
	if r == nil || r.lags == nil || r.numCPU < 1 || r.wall < 0 || r.gc.n < 0 {
		t.Fatalf("result %+v", r)
	}
	if p.Stop() != r {
		t.Error("a second stop returned another result")
	}
	var none *Probe
	if none.Stop() != nil {
		t.Error("a nil probe returned a result")
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b)) }
