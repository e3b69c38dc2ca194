package host

import (
	"math"
	"time"

	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/stats"
)

// finals builds a run's final numbers from its measured records, as the
// journal holds them: a run computes its summary this way at its end (so
// it keeps no samples in memory meanwhile), and so does a re-export of a
// run that never wrote one. Both give the same numbers for the same
// records.
type finals struct {
	c           *stats.Collector
	hasSchedule bool
}

// newFinals starts at start, the measured phase's start (wall clock),
// with room for n measured requests (0 when unknown).
func newFinals(start time.Time, n int) *finals { return &finals{c: stats.NewCollectorFor(start, n)} }

func (f *finals) add(r *record.Record) error {
	if r.Phase != record.Measure {
		return nil
	}
	lag := math.NaN()
	if r.ExplicitSchedule && !r.Submit.IsZero() && !r.Scheduled.IsZero() {
		lag = r.Submit.Sub(r.Scheduled).Seconds()
		f.hasSchedule = true
	}
	f.c.Add(stats.Sample{
		Success: r.Success, TTFT: r.TTFT, Latency: r.Latency, DecodeSpeed: r.DecodeSpeed,
		ITL: r.ITL, DispatchLag: lag, InputTokens: int(r.InputTokens), OutputTokens: int(r.OutputTokens),
		Finish: r.Finish,
	})
	return nil
}

// finalFromJournal scans the journal at path, which holds n measured
// requests.
func finalFromJournal(path string, start time.Time, n int) (stats.Final, bool, error) {
	f := newFinals(start, n)
	if _, err := record.ScanJournal(path, f.add); err != nil {
		return stats.Final{}, false, err
	}
	return f.c.Final(), f.hasSchedule, nil
}
