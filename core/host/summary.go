package host

import (
	"encoding/json"
	"time"

	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/stats"
)

// finals builds a run's final numbers from its records, as the journal
// holds them (both phases: warmup records count in the cache block): a
// run computes its summary this way at its end (so it keeps no samples in
// memory meanwhile), and so does a re-export of a run that never wrote
// one. Both give the same numbers for the same records.
type finals struct {
	b *stats.Builder
}

// newFinals starts at start, the measured phase's start (wall clock),
// with room for n measured requests (0 when unknown).
func newFinals(start time.Time, n int) *finals {
	return &finals{b: stats.NewBuilder(start, n, stats.Options{})}
}

func (f *finals) add(r *record.Record) error {
	f.b.Add(r)
	return nil
}

// final computes the numbers with the percentiles the run was configured
// with, and whether dispatch lag is defined (the summary's section for it).
func (f *finals) final(run record.Run) (stats.Final, bool) {
	final := f.b.Final(runPercentiles(run))
	f.b.Judge(&final, run.RequestedRate, runSLO(run))
	return final, f.b.HasDispatchLag()
}

// finalFromJournal scans the journal at path, which holds n measured
// requests.
func finalFromJournal(path string, start time.Time, n int) (stats.Final, bool, error) {
	return finalFrom(journalScan(path), start, n)
}

// scanFunc hands every record of a run to fn, in completion order, and
// returns the run's journal header.
type scanFunc func(fn func(*record.Record) error) (record.Run, error)

// journalScan scans the journal at path.
func journalScan(path string) scanFunc {
	return func(fn func(*record.Record) error) (record.Run, error) {
		c, err := record.ScanJournal(path, fn)
		if err != nil {
			return record.Run{}, err
		}
		return c.Run, nil
	}
}

// finalFrom computes the final numbers from the records scan gives,
// n of them measured.
func finalFrom(scan scanFunc, start time.Time, n int) (stats.Final, bool, error) {
	f := newFinals(start, n)
	run, err := scan(f.add)
	if err != nil {
		return stats.Final{}, false, err
	}
	final, hasSchedule := f.final(run)
	return final, hasSchedule, nil
}

// PercentilesKey is the configuration key of --percentiles. The summary
// takes the percentiles from the run's recorded configuration (the
// journal's header), so a run's end and a re-export of its journal report
// the same ones.
const PercentilesKey = "percentiles"

// runPercentiles are the percentiles recorded in run's configuration, or
// stats.DefaultPercentiles when it names none (or none it can read: the
// CLI checked the value before the run).
func runPercentiles(run record.Run) []float64 {
	var cfg map[string]any
	if len(run.Config) > 0 && json.Unmarshal(run.Config, &cfg) == nil {
		if s, ok := cfg[PercentilesKey].(string); ok {
			if ps, err := stats.ParsePercentiles(s); err == nil {
				return ps
			}
		}
	}
	ps, _ := stats.ParsePercentiles(stats.DefaultPercentiles)
	return ps
}
