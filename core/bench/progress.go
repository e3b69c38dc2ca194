package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/lmbench/lmbench/core/stats"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// Snapshot is what a progress display shows, taken about once a second.
type Snapshot struct {
	Phase   string        // "starting", "warmup", "measure", "draining"
	Elapsed time.Duration // of the current phase
	Done    int           // finished requests of the current phase (failed included)
	Failed  int
	// InFlight is the number of requests sent and not yet finished.
	InFlight int
	Planned  int // measured requests planned, 0 = unknown (always 0 outside measure)
	// The live numbers of the measured phase (0 before it).
	MeanTTFTMs, MeanDecodeSpeed, InputThroughput, OutputThroughput float64
	// DispatchLagP50Ms and DispatchLagP99Ms cover the last LagWindow
	// explicitly scheduled measured requests (the summary covers all);
	// NaN when there was none.
	DispatchLagP50Ms, DispatchLagP99Ms float64
}

// HasDispatchLag reports whether the snapshot carries dispatch lag figures.
func (s Snapshot) HasDispatchLag() bool {
	return !math.IsNaN(s.DispatchLagP50Ms) && !math.IsNaN(s.DispatchLagP99Ms)
}

// ProgressSink receives snapshots; Close is called once, before the summary is printed.
type ProgressSink interface {
	Update(Snapshot)
	Close()
}

// DefaultProgressEvery is how often snapshots are taken when
// Plan.ProgressEvery is zero.
const DefaultProgressEvery = time.Second

// PlainProgress writes a plain line (no escape codes) every call. It is
// meant for a stdout that is not a terminal; use it with a ProgressEvery of
// a few seconds.
func PlainProgress(w io.Writer) ProgressSink { return &plainProgress{w: w} }

type plainProgress struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *plainProgress) Update(s Snapshot) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.w, PlainLine(s))
}

func (p *plainProgress) Close() {}

// PlainLine renders a snapshot as one line without escape codes, e.g.
//
//	[measure] done 12/40  failed 0  in-flight 3  elapsed 4.0s  mean TTFT 85.1 ms  decode 41.2 tok/s  in 9512 tok/s  out 310 tok/s
func PlainLine(s Snapshot) string {
	total := "?"
	if s.Planned > 0 {
		total = fmt.Sprint(s.Planned)
	}
	line := fmt.Sprintf("[%s] done %d/%s  failed %d  in-flight %d  elapsed %.1fs",
		s.Phase, s.Done, total, s.Failed, s.InFlight, s.Elapsed.Seconds())
	if s.Phase == PhaseMeasure || s.Phase == PhaseDraining {
		line += fmt.Sprintf("  mean TTFT %.1f ms  decode %.1f tok/s  in %.0f tok/s  out %.0f tok/s",
			s.MeanTTFTMs, s.MeanDecodeSpeed, s.InputThroughput, s.OutputThroughput)
	}
	if s.HasDispatchLag() {
		line += fmt.Sprintf("  dispatch lag p50 %.1f ms p99 %.1f ms", s.DispatchLagP50Ms, s.DispatchLagP99Ms)
	}
	return line
}

// Snapshot.Phase values.
const (
	PhaseStarting = "starting"
	PhaseWarmup   = "warmup"
	PhaseMeasure  = "measure"
	// PhaseDraining is shown after an interrupt while in-flight requests finish.
	PhaseDraining = "draining"
)

// startProgress feeds p.Progress (nil = none) a snapshot every
// p.ProgressEvery and returns a stop function, which stops the snapshots
// and closes the sink (the summary follows at once, so no last snapshot).
func startProgress(ctx context.Context, p Plan, o *observer) func() {
	if p.Progress == nil {
		return func() {}
	}
	every := p.ProgressEvery
	if every <= 0 {
		every = DefaultProgressEvery
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-t.C:
				p.Progress.Update(o.snapshot(now, p.Planned, ctx.Err() != nil))
			}
		}
	}()
	return func() {
		close(stop)
		<-done
		p.Progress.Close()
	}
}

// snapshot reads the observer's counters and live stats at now.
func (o *observer) snapshot(now time.Time, planned int, interrupted bool) Snapshot {
	o.mu.Lock()
	ph, start := o.phase, o.phaseStart
	o.mu.Unlock()
	sent, fin, failed := o.sent.Load(), o.done.Load(), o.failed.Load()
	s := Snapshot{
		Phase: phaseName(ph), Done: int(fin), Failed: int(failed), InFlight: int(max(sent-fin, 0)),
		DispatchLagP50Ms: math.NaN(), DispatchLagP99Ms: math.NaN(),
	}
	if !start.IsZero() {
		s.Elapsed = max(now.Sub(start), 0)
	}
	if ph == protocol.Measure {
		s.Planned = planned
		c := o.live.Current(now)
		s.MeanTTFTMs, s.MeanDecodeSpeed = c.MeanTTFTMs, c.MeanDecodeSpeed
		s.InputThroughput, s.OutputThroughput = c.InputThroughput, c.OutputThroughput
		s.DispatchLagP50Ms, s.DispatchLagP99Ms = o.lags.percentiles()
	}
	if interrupted {
		s.Phase = PhaseDraining
	}
	return s
}

func phaseName(p protocol.Phase) string {
	switch p {
	case protocol.Warmup:
		return PhaseWarmup
	case protocol.Measure:
		return PhaseMeasure
	}
	return PhaseStarting
}

// LagWindow is how many recent dispatch lags the live percentiles cover:
// enough for a stable p99, and a constant cost per snapshot however long
// the run.
const LagWindow = 4096

// lagRing keeps the last LagWindow dispatch lags, in milliseconds.
type lagRing struct {
	mu   sync.Mutex
	buf  []float64
	next int
}

func (r *lagRing) add(ms float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.buf) < LagWindow {
		r.buf = append(r.buf, ms)
		return
	}
	r.buf[r.next] = ms
	r.next = (r.next + 1) % LagWindow
}

func (r *lagRing) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf, r.next = r.buf[:0], 0
}

// percentiles returns p50 and p99 (numpy's linear method, as the
// summary), NaN for both when empty.
func (r *lagRing) percentiles() (p50, p99 float64) {
	r.mu.Lock()
	v := slices.Clone(r.buf)
	r.mu.Unlock()
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	slices.Sort(v)
	return stats.Percentile(v, 50), stats.Percentile(v, 99)
}
