package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/export"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/report"
)

// Reexport is a journal to rebuild result files from.
type Reexport struct {
	Journal   string
	OutputDir string // "" = the journal's directory
	Exporters []Exporter
	Log       zerolog.Logger
}

// Reexported is what a re-export did.
type Reexported struct {
	Run     record.Run
	Records int
	// Computed: the journal had no summary (the run was killed); the one
	// exporters got was computed from its records and marked interrupted.
	Computed bool
	Results  []export.Result
}

// ReadJournal reads a journal and the summary to export it with: its own,
// or, when the run never wrote one, one computed from its records.
func ReadJournal(path string) (*record.Contents, record.Summary, bool, error) {
	c, err := record.ReadJournal(path)
	if err != nil {
		return nil, record.Summary{}, false, err
	}
	if c.Summary != nil {
		return c, *c.Summary, false, nil
	}
	return c, summarize(c.Run, c.Records), true, nil
}

// Run re-exports: every record of the journal goes to every exporter,
// in order, as during the run, then the summary.
func (r Reexport) Run(ctx context.Context) (*Reexported, error) {
	c, summary, computed, err := ReadJournal(r.Journal)
	if err != nil {
		return nil, fmt.Errorf("--journal: %w", err)
	}
	if computed {
		r.Log.Warn().Str("journal", r.Journal).Msg("the journal has no summary (the run did not finish): the summary is computed from its records and marked interrupted")
	}
	outDir := r.OutputDir
	if outDir == "" {
		outDir = filepath.Dir(r.Journal)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, fmt.Errorf("--output-dir %s: %w", outDir, err)
	}
	run := c.Run
	run.OutputDir = outDir
	targets, err := configureExporters(ctx, r.Exporters, run)
	if err != nil {
		return nil, err
	}
	fan := export.NewFanout(targets, export.Options{}, r.Log)
	for i := range c.Records {
		fan.Add(&c.Records[i])
	}
	out := &Reexported{Run: c.Run, Records: len(c.Records), Computed: computed, Results: fan.Finish(summary, 5*time.Minute)}
	r.Log.Info().Int("records", len(c.Records)).Str("run_id", c.Run.ID).Msg("journal exported")
	return out, nil
}

// summarize rebuilds the summary of a run that never finished from its
// records (the measured ones, and the warmup ones for the cache block),
// with the percentiles its configuration names. The measured phase's
// clock starts at the earliest submit (or schedule) time found, since the
// phase's start is not in the journal.
func summarize(run record.Run, recs []record.Record) record.Summary {
	f := newFinals(earliestMeasured(recs), len(recs))
	for i := range recs {
		f.add(&recs[i])
	}
	final, hasSchedule := f.final(run)
	cfg := report.Config{Model: run.Model, Workload: run.Workload, OutputDir: run.OutputDir, Percentiles: final.Percentiles,
		Tokenizer: config.ReadRecorded(run.Config).Tokenizer}
	rep := report.Run{ID: run.ID, Version: run.Version, Interrupted: true, HasSchedule: hasSchedule}
	return summaryOf(run.ID, cfg, rep, final)
}
