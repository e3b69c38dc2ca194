package report

import (
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/stats"
)

// Summary is the run's summary as the journal's last line and the
// exporters take it: the terminal's numbers as bench_summary.json, and
// the counts.
func Summary(cfg Config, run Run, f stats.Final) record.Summary {
	return record.Summary{
		RunID: run.ID, JSON: SummaryJSON(cfg, run, f),
		Total: int64(f.TotalRequests), Successful: int64(f.SuccessfulRequests),
		Failed: int64(f.FailedRequests), Elapsed: f.ElapsedTime, Interrupted: run.Interrupted,
		Status: run.Status, Reason: run.Reason,
	}
}
