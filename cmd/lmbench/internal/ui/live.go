package ui

import (
	"io"
	"sync"

	"github.com/lmbench/lmbench/core/bench"
)

// Live is the in-place terminal display: redraws about once a second
// (phase, elapsed, done/total, failed, in-flight, mean TTFT, decode speed,
// in/out throughput, dispatch lag when scheduled) and the last 5 log lines.
type Live struct {
	mu    sync.Mutex
	out   io.Writer
	width int
}

var _ bench.ProgressSink = (*Live)(nil)

// NewLive returns a display writing to out, width columns wide.
func NewLive(out io.Writer, width int) *Live { return &Live{out: out, width: width} }

// Update redraws the display with s.
func (l *Live) Update(s bench.Snapshot) {}

// Close erases the display, leaving the terminal clean for the summary.
func (l *Live) Close() {}

// LogWriter returns the writer log output goes to while the display is
// active: lines are printed above the display (never corrupting it) and
// the last 5 are kept in it.
func (l *Live) LogWriter() io.Writer { return l.out }
