package analysis

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/report"
)

// SummaryName is the JSON summary's file name in a run's output directory.
const SummaryName = record.SummaryName

// Where a run's summary came from.
const (
	FromJournal  = "journal"               // the journal's summary line (the text of bench_summary.json)
	FromFile     = SummaryName             // the directory's bench_summary.json (the journal had none)
	FromComputed = "computed from records" // the run was killed: computed from the journal's records
)

// Run is one finished (or killed) run, read back.
type Run struct {
	// Source is what was given to Load: a directory or a journal.
	Source string
	// Journal is the journal's path.
	Journal string
	Header  record.Run
	// Records are every request of both phases, in completion order.
	Records []record.Record
	// Summary is bench_summary.json, parsed; SummaryJSON its text.
	Summary     Summary
	SummaryJSON []byte
	// SummaryFrom says where the summary came from (FromJournal, …).
	SummaryFrom string
	// Killed: the journal has no summary line (the host was killed);
	// Torn: its last line was cut short and ignored.
	Killed, Torn bool
}

// Load reads the run at path: an output directory holding
// bench_journal.jsonl, or a journal file.
func Load(path string) (*Run, error) {
	journal := path
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such file or directory (want a run's output directory or its %s)", path, record.JournalName)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if st.IsDir() {
		journal = filepath.Join(path, record.JournalName)
		if _, err := os.Stat(journal); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no %s: not an lmbench output directory (give a run's --output-dir or its journal)", path, record.JournalName)
		}
	}
	c, err := record.ReadJournal(journal)
	if err != nil {
		return nil, err
	}
	r := &Run{Source: path, Journal: journal, Header: c.Run, Records: c.Records, SummaryFrom: FromJournal, Torn: c.Torn}
	if c.Summary != nil {
		r.SummaryJSON = c.Summary.JSON
	} else {
		r.Killed = true
		r.SummaryJSON, r.SummaryFrom = Summarize(c.Run, c.Records).JSON, FromComputed
		// A summary written beside the journal for this very run beats
		// one recomputed without the overhead certificate.
		if b, err := os.ReadFile(filepath.Join(filepath.Dir(journal), SummaryName)); err == nil {
			if s, err := ParseSummary(b); err == nil && s.RunID == c.Run.ID {
				r.SummaryJSON, r.SummaryFrom = b, FromFile
			}
		}
	}
	if r.Summary, err = ParseSummary(r.SummaryJSON); err != nil {
		return nil, fmt.Errorf("%s: summary: %w", journal, err)
	}
	return r, nil
}

// NewRun builds a Run from its parts (what Load reads), for runs made in
// memory: tests, and callers holding records already. With summaryJSON
// nil, the summary is computed from the records as for a killed run.
func NewRun(header record.Run, recs []record.Record, summaryJSON []byte) (*Run, error) {
	r := &Run{Source: header.ID, Header: header, Records: recs, SummaryJSON: summaryJSON, SummaryFrom: FromJournal}
	if summaryJSON == nil {
		r.SummaryJSON, r.SummaryFrom, r.Killed = Summarize(header, recs).JSON, FromComputed, true
	}
	s, err := ParseSummary(r.SummaryJSON)
	if err != nil {
		return nil, err
	}
	r.Summary = s
	return r, nil
}

// Name is a short name for the run in tables and legends: its source
// path's last element, or its run id.
func (r *Run) Name() string {
	if r.Source != "" {
		base := filepath.Base(filepath.Clean(r.Source))
		if base == record.JournalName {
			base = filepath.Base(filepath.Dir(filepath.Clean(r.Source)))
		}
		return base
	}
	return r.Header.ID
}

// Status is how the run ended, in a word: "completed", "interrupted",
// "aborted" (run.status), or "killed" (no summary line in the journal).
func (r *Run) Status() string {
	switch {
	case r.Killed:
		return "killed"
	case r.Summary.Status != "":
		return r.Summary.Status
	case r.Summary.Interrupted:
		return "interrupted"
	}
	return "completed"
}

// StatusText is the run's outcome in a sentence.
func (r *Run) StatusText() string {
	switch st := r.Status(); {
	case r.Killed && r.SummaryFrom == FromFile:
		return "killed: the journal has no summary line; the directory's bench_summary.json is used"
	case r.Killed:
		return "killed: the journal has no summary line; the figures are computed from its records"
	case st == "interrupted":
		return "interrupted (Ctrl-C or SIGTERM): in-flight requests were drained; the figures cover what finished"
	case st == "aborted" && r.Summary.Reason != "":
		return "aborted by lmbench: " + r.Summary.Reason
	case st == "aborted":
		return "aborted by lmbench"
	}
	return "completed"
}

// Config is the run's resolved configuration, as the journal's header
// recorded it (--export-config's keys), in its order.
func (r *Run) Config() []Field {
	f, _ := Flatten(r.Header.Config)
	return f
}

// recordsSim reports whether the run's configuration records the
// built-in engine's settings (its sim_* keys).
func (r *Run) recordsSim() bool {
	return len(report.SimSettings(r.Header.Config)) > 0
}

// Start is the run's wall-clock start (the journal header's), or its
// first request's when the header has none.
func (r *Run) Start() time.Time {
	if !r.Header.Started.IsZero() {
		return r.Header.Started
	}
	var t time.Time
	for i := range r.Records {
		for _, u := range []time.Time{r.Records[i].Scheduled, r.Records[i].Submit} {
			if !u.IsZero() && (t.IsZero() || u.Before(t)) {
				t = u
			}
		}
	}
	return t
}

// Measured returns the measured phase's records.
func (r *Run) Measured() []record.Record {
	var out []record.Record
	for i := range r.Records {
		if r.Records[i].Phase == record.Measure {
			out = append(out, r.Records[i])
		}
	}
	return out
}

// MeasureSpan is the measured phase's clock, as the summary's elapsed time
// counts it: from its start to the last measured finish. The start is the
// last finish minus the summary's elapsed time; without a summary, the
// earliest scheduled or submit time of a measured request.
func (r *Run) MeasureSpan() (start, end time.Time) {
	var first time.Time
	for i := range r.Records {
		rec := &r.Records[i]
		if rec.Phase != record.Measure {
			continue
		}
		if rec.Finish.After(end) {
			end = rec.Finish
		}
		for _, t := range []time.Time{rec.Scheduled, rec.Submit} {
			if !t.IsZero() && (first.IsZero() || t.Before(first)) {
				first = t
			}
		}
	}
	if el := r.Summary.Results.ElapsedTime; el > 0 && !end.IsZero() {
		return end.Add(-time.Duration(el * float64(time.Second))), end
	}
	return first, end
}

// LoadAll reads every run named; an error names the path and what was
// expected there.
func LoadAll(paths []string) ([]*Run, error) {
	var runs []*Run
	for _, p := range paths {
		r, err := Load(p)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// SameRuns says which of runs are one run given twice (the same journal,
// or the same run id): comparing a run with itself shows no difference,
// which is not a finding. One line per repeat, in order; none when every
// run is its own.
func SameRuns(runs []*Run) []string {
	var out []string
	for i, a := range runs {
		for j := i + 1; j < len(runs); j++ {
			b := runs[j]
			switch {
			case sameFile(a.Journal, b.Journal):
				out = append(out, fmt.Sprintf("%s and %s are the same run (journal %s): this compares a run with itself",
					a.Source, b.Source, a.Journal))
			case a.Header.ID != "" && a.Header.ID == b.Header.ID:
				out = append(out, fmt.Sprintf("%s and %s are the same run (run id %s): this compares a run with itself",
					a.Source, b.Source, a.Header.ID))
			}
		}
	}
	return out
}

// sameFile reports whether a and b name one file (a link or another
// spelling of the path included).
func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA != nil || errB != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return os.SameFile(fa, fb)
}
