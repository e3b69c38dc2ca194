package overhead

import (
	"math"
	"runtime"
	"runtime/metrics"
	"slices"
	"time"

	"github.com/DataDog/sketches-go/ddsketch"

	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/report"
	"github.com/lmbench/lmbench/core/stats"
)

// The overhead certificate: while the measured phase runs, a cheap probe
// samples the client (how late a ticker's ticks are received, the
// process's CPU time, Go's GC pauses); at the end the measured records add
// each request's dispatch lag and the send spread of requests due
// together; a verdict bounds the latency the client added, or warns that
// it was saturated.

const (
	// LoopProbePeriod is how often the probe's ticker fires.
	LoopProbePeriod = 5 * time.Millisecond
	// SaturatedCPUPercent: a client using more of the machine's CPUs than
	// this during the measured phase was saturated.
	SaturatedCPUPercent = 80.0
	// SaturatedLagMs: a client whose dispatch lag (or event-loop lag) p99
	// exceeds this many milliseconds was saturated.
	SaturatedLagMs = 10.0
	// loopLagAccuracy is the relative accuracy of the event-loop lag's
	// p99 (a sketch keeps the probe's memory flat however long the run).
	loopLagAccuracy = 0.01
)

// gcPauseMetric is the runtime's histogram of stop-the-world pauses for
// the GC.
const gcPauseMetric = "/sched/pauses/total/gc:seconds"

// Probe samples the client while the measured phase runs.
type Probe struct {
	start      time.Time
	cpu0       time.Duration
	cpuOK      bool
	gc0        []metrics.Sample
	lags       *loopLags // owned by the probe's goroutine until done
	quit, done chan struct{}
	result     *ProbeResult // set by the first Stop
	numCPU     int
}

// ProbeResult is what the probe saw over the phase, for the certificate.
type ProbeResult struct {
	wall   time.Duration
	cpu    time.Duration
	cpuOK  bool // the platform reports the process's CPU time
	numCPU int
	gc     gcPauses
	lags   *loopLags
}

// StartProbe starts sampling now.
func StartProbe() *Probe {
	p := &Probe{
		lags: newLoopLags(), quit: make(chan struct{}), done: make(chan struct{}),
		gc0: []metrics.Sample{{Name: gcPauseMetric}}, numCPU: runtime.NumCPU(),
	}
	metrics.Read(p.gc0)
	p.cpu0, p.cpuOK = processCPU()
	p.start = time.Now()
	go p.sample()
	return p
}

// sample records, at every tick, how late it was received: the ticker
// sends the time the tick was due.
func (p *Probe) sample() {
	defer close(p.done)
	t := time.NewTicker(LoopProbePeriod)
	defer t.Stop()
	for {
		select {
		case due := <-t.C:
			p.lags.add(ms(time.Since(due)))
		case <-p.quit:
			return
		}
	}
}

// Stop ends the sampling and returns what the probe saw; later calls
// return the same. A nil probe (no measured phase) saw nothing.
func (p *Probe) Stop() *ProbeResult {
	if p == nil {
		return nil
	}
	if p.result != nil {
		return p.result
	}
	wall := time.Since(p.start)
	cpu, cpuOK := processCPU()
	gc1 := []metrics.Sample{{Name: gcPauseMetric}}
	metrics.Read(gc1)
	close(p.quit)
	<-p.done
	p.result = &ProbeResult{wall: wall, cpu: cpu - p.cpu0, cpuOK: cpuOK && p.cpuOK, numCPU: p.numCPU,
		gc: gcPausesBetween(histogram(p.gc0[0]), histogram(gc1[0])), lags: p.lags}
	return p.result
}

// loopLags are the probe's samples of event-loop lag, in milliseconds: a
// sketch for the p99, the count and the maximum exactly.
type loopLags struct {
	sketch *ddsketch.DDSketch
	n      int
	max    float64
}

func newLoopLags() *loopLags {
	s, _ := ddsketch.LogUnboundedDenseDDSketch(loopLagAccuracy) // cannot fail: the accuracy is in (0, 1)
	return &loopLags{sketch: s, max: math.NaN()}
}

// add takes one sample; a tick is never received before it was due, so a
// negative reading (none on a monotonic clock) counts as 0.
func (l *loopLags) add(v float64) {
	v = max(v, 0)
	_ = l.sketch.Add(v) // cannot fail: v is finite and not negative
	l.n++
	if l.n == 1 || v > l.max {
		l.max = v
	}
}

// p99 is the samples' 99th percentile (within loopLagAccuracy), NaN
// without samples.
func (l *loopLags) p99() float64 {
	if l == nil || l.n == 0 {
		return math.NaN()
	}
	v, err := l.sketch.GetValueAtQuantile(0.99)
	if err != nil {
		return math.NaN()
	}
	return min(v, l.max) // the sketch's bucket may end past the largest sample
}

// gcPauses are the GC's stop-the-world pauses over an interval: their
// number (-1: the runtime does not report them) and upper bounds of their
// total and of the longest, in milliseconds.
type gcPauses struct {
	n              int64
	totalMs, maxMs float64
}

// histogram is s's histogram, nil when the runtime does not report it.
func histogram(s metrics.Sample) *metrics.Float64Histogram {
	if s.Value.Kind() != metrics.KindFloat64Histogram {
		return nil
	}
	return s.Value.Float64Histogram()
}

// gcPausesBetween is the difference of two readings of gcPauseMetric (in
// seconds; nil: not reported). The histogram does not keep pauses, only
// how many fell in each bucket: each is counted at its bucket's upper
// bound (the lower one for the last, open bucket), so total and max are
// upper bounds, within the bucket's width (a quarter of its value at
// most).
func gcPausesBetween(h0, h1 *metrics.Float64Histogram) gcPauses {
	if h0 == nil || h1 == nil {
		return gcPauses{n: -1, totalMs: math.NaN(), maxMs: math.NaN()}
	}
	g := gcPauses{maxMs: math.NaN()}
	for i, c := range h1.Counts {
		if i < len(h0.Counts) {
			c -= h0.Counts[i]
		}
		if c == 0 {
			continue
		}
		at := h1.Buckets[i+1]
		if math.IsInf(at, 1) {
			at = h1.Buckets[i]
		}
		at = max(at, 0) * 1000
		g.n += int64(c)
		g.totalMs += float64(c) * at
		g.maxMs = at // buckets ascend
	}
	return g
}

// clientLags accumulates, from a run's measured records (fed like
// finals), every request's dispatch lag and the send spread of the
// requests due at the same instant.
type clientLags struct {
	lagsMs []float64
	groups map[int64]*sendGroup // by scheduled time, Unix ns
}

// sendGroup is the requests due at one instant.
type sendGroup struct {
	n           int
	first, last int64 // submit times, Unix ns
}

func newClientLags() *clientLags { return &clientLags{groups: map[int64]*sendGroup{}} }

func (c *clientLags) add(r *record.Record) error {
	if r.Phase != record.Measure || r.Submit.IsZero() || r.Scheduled.IsZero() {
		return nil
	}
	c.lagsMs = append(c.lagsMs, ms(r.Submit.Sub(r.Scheduled)))
	due, sub := r.Scheduled.UnixNano(), r.Submit.UnixNano()
	g := c.groups[due]
	if g == nil {
		c.groups[due] = &sendGroup{n: 1, first: sub, last: sub}
		return nil
	}
	g.n++
	g.first, g.last = min(g.first, sub), max(g.last, sub)
	return nil
}

// certificate builds the run's overhead certificate from the probe (nil:
// none ran) and the records' lags, with its verdict.
func certificate(pr *ProbeResult, c *clientLags) *report.Overhead {
	nan := math.NaN()
	o := &report.Overhead{
		PhaseSeconds: nan, LoopPeriodMs: ms(LoopProbePeriod), LoopLagP99Ms: nan, LoopLagMaxMs: nan,
		CPUSeconds: nan, CPUCorePercent: nan, CPUMachinePercent: nan, CPUs: runtime.NumCPU(),
		GCPauses: -1, GCPauseTotalMs: nan, GCPauseMaxMs: nan, StepP99Ms: nan, StepMaxMs: nan,
	}
	if pr != nil {
		o.PhaseSeconds, o.CPUs = pr.wall.Seconds(), pr.numCPU
		o.LoopSamples, o.LoopLagP99Ms, o.LoopLagMaxMs = pr.lags.n, pr.lags.p99(), pr.lags.max
		if pr.cpuOK {
			o.CPUSeconds = pr.cpu.Seconds()
			o.CPUCorePercent, o.CPUMachinePercent = cpuShares(pr.cpu, pr.wall, pr.numCPU)
		}
		o.GCPauses, o.GCPauseTotalMs, o.GCPauseMaxMs = pr.gc.n, pr.gc.totalMs, pr.gc.maxMs
	}
	lags := slices.Clone(c.lagsMs)
	slices.Sort(lags)
	o.Requests = len(lags)
	o.DispatchLagP50Ms, o.DispatchLagP99Ms, o.DispatchLagMaxMs = pctOf(lags, 50), pctOf(lags, 99), pctOf(lags, 100)
	var spreads []float64
	for _, g := range c.groups {
		if g.n >= 2 {
			spreads = append(spreads, float64(g.last-g.first)/1e6)
		}
	}
	slices.Sort(spreads)
	o.SpreadGroups = len(spreads)
	o.SendSpreadP99Ms, o.SendSpreadMaxMs = pctOf(spreads, 99), pctOf(spreads, 100)
	o.Verdict = verdict(o)
	return o
}

// cpuShares are cpu over wall as a percentage of one core and of n CPUs;
// NaN without a duration.
func cpuShares(cpu, wall time.Duration, n int) (core, machine float64) {
	if wall <= 0 || n < 1 {
		return math.NaN(), math.NaN()
	}
	core = 100 * cpu.Seconds() / wall.Seconds()
	return core, core / float64(n)
}

// verdict judges o: saturated when the client used more than
// SaturatedCPUPercent of the machine or a p99 lag (dispatch or event
// loop) exceeded SaturatedLagMs. Figures that are not defined cross no
// threshold.
func verdict(o *report.Overhead) report.Verdict {
	v := report.Verdict{CPUThresholdPercent: SaturatedCPUPercent, LagThresholdMs: SaturatedLagMs}
	v.CPUOver = o.CPUMachinePercent > SaturatedCPUPercent
	v.LagOver = o.DispatchLagP99Ms > SaturatedLagMs || o.LoopLagP99Ms > SaturatedLagMs
	v.Saturated = v.CPUOver || v.LagOver
	v.StepSlow = o.DispatchLagP99Ms > SaturatedLagMs && o.StepMaxMs > SaturatedLagMs && o.StepMaxMs >= o.DispatchLagP99Ms/2
	d, l := o.DispatchLagP99Ms, o.LoopLagP99Ms
	switch {
	case math.IsNaN(d) && math.IsNaN(l):
		v.BoundMs, v.InflationMs = math.NaN(), math.NaN()
	case math.IsNaN(d):
		v.BoundMs, v.InflationMs = l, l
	case math.IsNaN(l):
		v.BoundMs, v.InflationMs = d, d
	default:
		v.BoundMs, v.InflationMs = max(d, l), d+l
	}
	return v
}

// pctOf is stats.Percentile of ascending values (p 100: the maximum), NaN
// without values.
func pctOf(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	return stats.Percentile(sorted, p)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// WithSteps adds to o how long workload took to answer its measured
// Steps (milliseconds each) and judges o again: dispatch lag that the
// Steps explain is the plugin's, not the client's.
func WithSteps(o *report.Overhead, workload string, stepsMs []float64) {
	if o == nil {
		return
	}
	xs := slices.Clone(stepsMs)
	slices.Sort(xs)
	o.Workload, o.Steps = workload, len(xs)
	o.StepP99Ms, o.StepMaxMs = pctOf(xs, 99), pctOf(xs, 100)
	o.Verdict = verdict(o)
}

// Certificate is a run's overhead certificate: the probe's figures (nil:
// no measured phase ran) with the measured records' lags, read back from
// the journal (scan) as the final numbers are.
func Certificate(scan func(fn func(*record.Record) error) (record.Run, error), pr *ProbeResult) (*report.Overhead, error) {
	c := newClientLags()
	_, err := scan(c.add)
	return certificate(pr, c), err
}
