package invocation

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/lmbench/lmbench/core/bench"
	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/pluginset"
	"github.com/lmbench/lmbench/core/progress"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// Display is what a run shows and hears while it runs: the caller's
// terminal.
type Display struct {
	Stdout io.Writer
	// Banner prints the configured workload's banner (nil: none).
	Banner func(protocol.Configured)
	// Progress opens the progress display --quiet calls for (a nil sink:
	// none), and how often it wants a snapshot.
	Progress func(ctx context.Context, quiet bool) (progress.Sink, time.Duration)
	// Report writes --report's report of the run in dir.
	Report func(dir string) error
	// Hurry is closed by a second Ctrl-C: cancel the requests in flight.
	Hurry <-chan struct{}
}

// Ending is how a run ended: its exit code, what to tell the person
// (each line after "lmbench: ") and the error to report (nil: none).
type Ending struct {
	Code  int
	Notes []string
	Err   error
}

// Failed is the Ending of an error.
func Failed(err error) Ending { return Ending{Code: ExitFailed, Err: err} }

// Execute runs the benchmark and finishes it: a shard's end told to the
// barrier, the report and the upload written when asked for, however the
// run ended.
func (x *Run) Execute(ctx context.Context, d Display) (end Ending) {
	defer func() { x.leave(end.Code, end.Err) }()
	spec, log, wl, p := x.Spec, x.s.Log, x.Workload, x.Prepared
	if d.Banner != nil {
		d.Banner(p.Configured)
	}
	log.Info().Msgf("Benchmark config: workload=%s, model=%s, kv_cache=%.1f GB, tokens_per_gb=%d",
		wl.Name(), p.Model, spec.KVCacheVolumeGB, p.TokensPerGB)
	journal := filepath.Join(spec.Output.Dir, record.JournalName)
	x.s.journal.Store(&journal)
	cfgJSON, err := config.JSON(x.entries())
	if err != nil {
		return Failed(err)
	}
	var sink progress.Sink
	var every time.Duration
	if d.Progress != nil {
		if sink, every = d.Progress(ctx, spec.Output.Quiet); sink != nil {
			// bench.Execute closes the sink on a run; this covers the errors
			// before one starts (and a panic), so the log lines the display
			// holds back are printed.
			defer sink.Close()
		}
	}
	var sh *record.Shard
	if x.shard != nil {
		rate := bench.RequestedRate(wl.Caps, p.Configured)
		if sh, err = x.shard.Start(ctx, cfgJSON, spec.Seed, rate, log); err != nil {
			return Failed(err)
		}
	}
	res, err := bench.Run(ctx, bench.Job{
		Spec: spec, Prepared: p, Workload: wl, Exporters: x.ExporterJobs(), Config: cfgJSON, Version: x.s.version,
		Log: log, Stdout: d.Stdout, Progress: sink, ProgressEvery: every, Hurry: d.Hurry,
		Part: x.shard.WorkloadShard(), Shard: sh, BeforePhase: x.shard.BeforePhase(sh, log),
		BuiltinBlockSize: x.sim.BlockSize,
	})
	if err != nil {
		return Failed(err)
	}
	return x.finish(ctx, d, res)
}

// ExporterJobs are the exporters, each configured from its options.
func (r *Resolved) ExporterJobs() pluginset.Exporters {
	return pluginset.Configured(r.Exporters, r.Values)
}

// finish tells the barrier how a shard's run ended, writes the report
// and uploads when asked to, and says how the run ended.
func (x *Run) finish(ctx context.Context, d Display, res *bench.Result) Ending {
	log := x.s.Log
	switch {
	case res.Abort != nil:
		x.shard.Leave(string(res.Status)+": "+res.Abort.Reason, log)
	case res.Interrupted:
		x.shard.Leave("interrupted", log)
	}
	if w := res.Final.Load.Warning(); w != "" {
		log.Warn().Msg(w) // the achieved rate fell short of the requested one
	}
	if x.Flags.Report {
		if err := d.Report(x.Spec.Output.Dir); err != nil {
			return Failed(err)
		}
	}
	var end Ending
	// However the run ended: what it measured is in the files.
	if err := x.put(context.WithoutCancel(ctx), d.Stdout); err != nil {
		end.Notes = append(end.Notes, err.Error())
		if !res.Interrupted && res.Status != record.Aborted {
			end.Code = ExitFailed
			return end
		}
	}
	switch {
	case res.Interrupted:
		if res.Err != nil {
			end.Notes = append(end.Notes, res.Err.Error())
		}
		end.Notes = append(end.Notes, "interrupted; the results so far are written")
		end.Code = ExitInterrupted
	case res.Status == record.Aborted:
		end.Notes = append(end.Notes, aborted(res)...)
		end.Code = ExitFailed
	case res.Err != nil:
		end.Code, end.Err = ExitFailed, res.Err
	case res.Final.FailedRequests > 0:
		end.Notes = append(end.Notes, fmt.Sprintf("%d of %d measured requests failed (see the error column of the results)",
			res.Final.FailedRequests, res.Final.TotalRequests))
		end.Code = ExitFailed
	}
	return end
}

// put uploads the output directory's files when --upload-to asks.
func (x *Run) put(ctx context.Context, stdout io.Writer) error {
	if x.upload == nil {
		return nil
	}
	n, err := x.upload.Put(ctx, x.Spec.Output.Dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Uploaded %d files to %s\n", n, x.upload)
	return nil
}

// aborted says why lmbench stopped the run, what else went wrong, and
// where every finished request is. Only when a result file could not be
// written (a full disk fails the exporters too) does it say how to
// rebuild the files from the journal.
func aborted(res *bench.Result) []string {
	why := "the run was stopped"
	if res.Abort != nil {
		why = res.Abort.Reason
	}
	out := []string{"run aborted: " + why}
	for _, err := range res.Others() {
		out = append(out, fmt.Sprintf("also: %v", err))
	}
	switch {
	case res.JournalPath == "":
	case !res.FilesFailed:
		out = append(out, "the results so far are written; every finished request is in "+res.JournalPath)
	default:
		out = append(out, "every finished request is in "+res.JournalPath,
			"the result files may be incomplete; rebuild them with:\n  lmbench export --journal "+ShellQuote(res.JournalPath)+" --output-dir DIR")
	}
	return out
}
