package merge

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/analysis"
	"github.com/lmbench/lmbench/core/export"
	"github.com/lmbench/lmbench/core/record"
)

// Exporters configures the exporters of a run written from journals
// (core/pluginset's Exporters does).
type Exporters interface {
	Configure(ctx context.Context, run record.Run) ([]export.Target, error)
}

// ReadJournal reads a journal and the summary to export it with: its own,
// or, when the run never wrote one (it was killed), one computed from its
// records (computed is then true).
func ReadJournal(path string) (c *record.Contents, summary record.Summary, computed bool, err error) {
	c, err = record.ReadJournal(path)
	if err != nil {
		return nil, record.Summary{}, false, err
	}
	if c.Summary != nil {
		return c, *c.Summary, false, nil
	}
	return c, analysis.Summarize(c.Run, c.Records), true, nil
}

// exportAll configures the exporters for run and sends them recs, then
// the summary.
func exportAll(ctx context.Context, exps Exporters, run record.Run, recs []record.Record, sum record.Summary, log zerolog.Logger) ([]export.Result, error) {
	var targets []export.Target
	if exps != nil {
		var err error
		if targets, err = exps.Configure(ctx, run); err != nil {
			return nil, err
		}
	}
	fan := export.NewFanout(targets, export.Options{}, log)
	for i := range recs {
		fan.Add(&recs[i])
	}
	return fan.Finish(sum, 5*time.Minute), nil
}
