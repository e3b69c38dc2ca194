package bench

import (
	"time"

	"github.com/lmbench/lmbench/core/config"
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
	rec := config.ReadRecorded(run.Config)
	final := f.b.Final(rec.Percentiles)
	f.b.Judge(&final, run.RequestedRate, rec.SLO)
	by := ""
	if len(run.TagKeys) > 0 {
		by = run.TagKeys[0]
	}
	final.Scores = f.b.Scores(by)
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
