package analysis

import (
	"time"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/report"
	"github.com/lmbench/lmbench/core/stats"
)

// Summarize rebuilds the summary of a run that never wrote one (it was
// killed) from its records (the measured ones, and the warmup ones for the
// cache block), with the percentiles and SLO its configuration names,
// marked interrupted. The measured phase's clock starts at MeasuredStart,
// since the phase's start is not in the journal. lmbench export and merge
// (core/merge) and lmbench report and compare (Load) all compute it here.
func Summarize(run record.Run, recs []record.Record) record.Summary {
	b := stats.NewBuilder(MeasuredStart(recs), len(recs), stats.Options{})
	for i := range recs {
		b.Add(&recs[i])
	}
	final, hasSchedule := Final(b, run)
	cfg := report.Config{Model: run.Model, Workload: run.Workload, OutputDir: run.OutputDir, Percentiles: final.Percentiles,
		Tokenizer: config.ReadRecorded(run.Config).Tokenizer, Sim: report.SimSettings(run.Config),
		Options: report.WorkloadSettings(run.Config, config.IsRunKey)}
	rep := report.Run{ID: run.ID, Version: run.Version, Interrupted: true, HasSchedule: hasSchedule,
		EngineProfile: report.ParseEngineProfile(run.Engine)}
	return report.Summary(cfg, rep, final)
}

// Final computes the numbers of the records b was given with the
// percentiles and SLO run recorded, as the run's own end does, and
// whether dispatch lag is defined.
func Final(b *stats.Builder, run record.Run) (stats.Final, bool) {
	rec := config.ReadRecorded(run.Config)
	final := b.Final(rec.Percentiles)
	b.Judge(&final, run.RequestedRate, rec.SLO)
	return final, b.HasDispatchLag()
}

// MeasuredStart is the earliest schedule or submit time of the measured
// records, for a journal that does not say when its measured phase began
// (a killed run's, and journals before lmbench 0.3).
func MeasuredStart(recs []record.Record) time.Time {
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
