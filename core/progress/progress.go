package progress

import (
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

// Sink receives snapshots; Close is called once, before the summary is printed.
type Sink interface {
	Update(Snapshot)
	Close()
}

// DefaultEvery is how often snapshots are taken when a run's
// ProgressEvery is zero.
const DefaultEvery = time.Second

// Plain writes a plain line (no escape codes) every call. It is
// meant for a stdout that is not a terminal; use it with a ProgressEvery of
// a few seconds.
func Plain(w io.Writer) Sink { return &plainProgress{w: w} }

type plainProgress struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *plainProgress) Update(s Snapshot) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.w, Line(s))
}

func (p *plainProgress) Close() {}

// Line renders a snapshot as one line without escape codes, e.g.
//
//	[measure] done 12/40  failed 0  in-flight 3  elapsed 4.0s  mean TTFT 85.1 ms  decode 41.2 tok/s  in 9512 tok/s  out 310 tok/s
func Line(s Snapshot) string {
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

// PhaseName is the Snapshot.Phase of a loop phase (PhaseStarting before
// the first).
func PhaseName(p protocol.Phase) string {
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

// Lags keeps the last LagWindow dispatch lags, in milliseconds, for the
// live percentiles; the zero value is empty and ready.
type Lags struct {
	mu   sync.Mutex
	buf  []float64
	next int
}

// Add records one lag.
func (r *Lags) Add(ms float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.buf) < LagWindow {
		r.buf = append(r.buf, ms)
		return
	}
	r.buf[r.next] = ms
	r.next = (r.next + 1) % LagWindow
}

// Reset forgets every lag (a new phase).
func (r *Lags) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf, r.next = r.buf[:0], 0
}

// Percentiles returns p50 and p99 (numpy's linear method, as the
// summary), NaN for both when empty.
func (r *Lags) Percentiles() (p50, p99 float64) {
	r.mu.Lock()
	v := slices.Clone(r.buf)
	r.mu.Unlock()
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	slices.Sort(v)
	return stats.Percentile(v, 50), stats.Percentile(v, 99)
}
