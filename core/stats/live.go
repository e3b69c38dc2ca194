package stats

import (
	"sync"
	"time"
)

// Live keeps the running numbers of the measured phase in constant memory
// (sums and counts, no samples), for the progress display: however long
// the run, it does not grow. The final numbers, percentiles included,
// come from a Collector fed from the journal at the end.
type Live struct {
	mu sync.Mutex
	d  data // only its counters and sums are used
}

// NewLive returns empty running numbers whose clock starts at start.
func NewLive(start time.Time) *Live { return &Live{d: data{start: start}} }

// Add counts one finished request.
func (l *Live) Add(s Sample) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.d.count(s)
}

// Reset forgets everything and restarts the clock at start.
func (l *Live) Reset(start time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.d = data{start: start}
}

// Current returns the live numbers, elapsed = now - start (never below 0).
func (l *Live) Current(now time.Time) Aggregated {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.d.aggregated(max(now.Sub(l.d.start).Seconds(), 0))
}

// Counts returns how many requests were counted, and how many failed.
func (l *Live) Counts() (total, failed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.d.successful + l.d.failed, l.d.failed
}
