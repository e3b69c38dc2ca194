package merge

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/export"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/report"
	"github.com/lmbench/lmbench/core/stats"
)

// Exporters configures the exporters of a run written from journals
// (core/bench's Exporters does).
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
	return c, summarize(c.Run, c.Records), true, nil
}

// summarize rebuilds the summary of a run that never finished from its
// records (the measured ones, and the warmup ones for the cache block),
// with the percentiles its configuration names. The measured phase's
// clock starts at the earliest submit (or schedule) time found, since the
// phase's start is not in the journal.
func summarize(run record.Run, recs []record.Record) record.Summary {
	b := stats.NewBuilder(earliestMeasured(recs), len(recs), stats.Options{})
	for i := range recs {
		b.Add(&recs[i])
	}
	final, hasSchedule := runFinal(b, run)
	cfg := report.Config{Model: run.Model, Workload: run.Workload, OutputDir: run.OutputDir, Percentiles: final.Percentiles,
		Tokenizer: config.ReadRecorded(run.Config).Tokenizer, Sim: report.SimSettings(run.Config),
		Options: report.WorkloadSettings(run.Config, config.IsRunKey)}
	rep := report.Run{ID: run.ID, Version: run.Version, Interrupted: true, HasSchedule: hasSchedule,
		EngineProfile: report.ParseEngineProfile(run.Engine)}
	return report.Summary(cfg, rep, final)
}

// runFinal computes the numbers of the records b was given with the
// percentiles and SLO run recorded, as the run's own end does, and
// whether dispatch lag is defined.
func runFinal(b *stats.Builder, run record.Run) (stats.Final, bool) {
	rec := config.ReadRecorded(run.Config)
	final := b.Final(rec.Percentiles)
	b.Judge(&final, run.RequestedRate, rec.SLO)
	return final, b.HasDispatchLag()
}

// earliestMeasured is the earliest schedule or submit time of the
// measured records, for a journal that does not say when its measured
// phase began (a killed run's, and journals before lmbench 0.3).
func earliestMeasured(recs []record.Record) time.Time {
	var start time.Time
	for i := range recs {
		r := &recs[i]
		if r.Phase != record.Measure {
			continue
		}
		for _, t := range []time.Time{r.Scheduled, r.Submit} {
			if !t.IsZero() && (start.IsZero() || t.Before(start)) {
				start = t
			}
		}
	}
	return start
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
