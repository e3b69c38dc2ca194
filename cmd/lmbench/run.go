package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/lmbench/lmbench/cmd/lmbench/internal/ui"
	"github.com/lmbench/lmbench/core/bench"
	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/plugin"
	"github.com/lmbench/lmbench/core/record"
)

// cmdRun is `lmbench run`: resolve the configuration (with the guided
// setup when something required is missing and a person is at the
// terminal), prepare it (engine, model, tokens per GB, the workload's
// Configure), then export it or run the benchmark.
func cmdRun(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int, err error) {
	s := newSession(stdin, stdout, stderr)
	defer s.close()
	r, err := s.resolve(args, nil)
	if err != nil {
		return exitFailed, err
	}
	if r.cli.help {
		if r.wl == nil {
			return exitOK, s.helpAll(stdout)
		}
		printRunHelp(stdout, r)
		return exitOK, nil
	}
	if r.cli.exportConfig != "" {
		// Before the engine is contacted or the form filled in.
		if err := checkExportPath(r.cli.exportConfig); err != nil {
			return exitFailed, err
		}
	}
	ctx, hurry, stop := interruptible(s.log, s.quitNow)
	defer stop()

	var cancelled bool
	if r, cancelled, err = s.fillIn(ctx, args, r); cancelled || err != nil {
		if cancelled {
			fmt.Fprintln(stderr, "lmbench: setup cancelled; nothing was run")
			return exitInterrupted, nil
		}
		return exitFailed, err
	}
	if r.spec, err = config.Build(r.vals); err != nil {
		return exitFailed, err
	}
	if r.shard, err = checkShard(r.spec); err != nil {
		return exitFailed, err
	}
	if r.shard != nil {
		// A shard that stops before its measured phase, whatever stopped
		// it, lets the others waiting at the barrier know.
		defer func() {
			why := fmt.Sprintf("exit %d", code)
			if err != nil {
				why = err.Error()
			}
			r.shard.Leave(why, s.log)
		}()
	}
	if r.upload, err = checkUpload(r.spec); err != nil {
		return exitFailed, err
	}
	if r.shard != nil && r.spec.Engine.Builtin {
		s.log.Warn().Msg("--shard with the built-in engine: each shard runs an engine of its own; give the shards one engine (lmbench sim, or a real one) to measure one")
	}
	p, err := s.prepare(ctx, r)
	if err != nil {
		return exitFailed, err
	}
	if r.cli.exportConfig != "" {
		return exportConfig(stdout, r, p)
	}
	return s.execute(ctx, r, p, hurry)
}

// fillIn has the guided setup ask for the required arguments still
// missing, when it can; cancelled says the person cancelled the form.
func (s *session) fillIn(ctx context.Context, args []string, r *resolved) (_ *resolved, cancelled bool, err error) {
	labels, keys := r.missing()
	if len(labels) == 0 {
		return r, false, nil
	}
	if why := s.noSetup(r); why != "" {
		return nil, false, fmt.Errorf("Missing required arguments: %s. Provide them or %s.", strings.Join(labels, ", "), why)
	}
	r, cancelled, err = s.guidedSetup(ctx, args, r, keys)
	if cancelled || err != nil {
		return nil, cancelled, err
	}
	if labels, _ := r.missing(); len(labels) > 0 {
		return nil, false, fmt.Errorf("Missing required arguments: %s.", strings.Join(labels, ", "))
	}
	return r, false, nil
}

// exportConfig writes --export-config and says how to replay it.
func exportConfig(stdout io.Writer, r *resolved, p *bench.Prepared) (int, error) {
	if err := config.Write(r.cli.exportConfig, exportEntries(r, p)); err != nil {
		return exitFailed, err
	}
	fmt.Fprintf(stdout, "Configuration exported to %s\n", r.cli.exportConfig)
	on, off := "", ""
	if isTerminal(stdout) {
		on, off = "\033[1;96m", "\033[0m" // bold cyan, as the original
	}
	replay := "lmbench run --engine-url " + shellQuote(config.RedactURL(r.spec.Engine.Typed))
	if r.wl.ByPath {
		replay += " --workload-plugin " + shellQuote(r.wl.Path)
	}
	fmt.Fprintf(stdout, "%sReplay with: %s --config %s%s\n", on, replay, shellQuote(r.cli.exportConfig), off)
	return exitOK, nil
}

// checkExportPath fails on a file --export-config cannot write by its
// extension.
func checkExportPath(path string) error {
	if _, err := config.Parser(path); err != nil {
		return fmt.Errorf("--export-config %s: %w", path, err)
	}
	return nil
}

// noSetup says why the guided setup cannot run ("" when it can): it needs
// a terminal on stdin and stdout, and is off with --no-interactive or
// --export-config (which are for scripts).
func (s *session) noSetup(r *resolved) string {
	switch {
	case r.cli.exportConfig != "":
		return "remove --export-config for guided setup"
	case r.cli.noInteractive:
		return "remove --no-interactive for guided setup"
	case !interactive(s):
		return "run lmbench in a terminal for guided setup (stdin or stdout is not a terminal)"
	}
	return ""
}

// execute runs the benchmark with the progress display the streams call
// for: live on a terminal, a plain line every few seconds otherwise, none
// with --quiet.
func (s *session) execute(ctx context.Context, r *resolved, p *bench.Prepared, hurry <-chan struct{}) (int, error) {
	spec, log, wl := r.spec, s.log, r.wl
	ui.Banner(s.stdout, p.Configured, isTerminal(s.stdout))
	log.Info().Msgf("Benchmark config: workload=%s, model=%s, kv_cache=%.1f GB, tokens_per_gb=%d",
		wl.Name(), p.Model, spec.KVCacheVolumeGB, p.TokensPerGB)
	journal := runJournal(spec.Output.Dir)
	s.journal.Store(&journal)
	cfgJSON, err := config.JSON(exportEntries(r, p))
	if err != nil {
		return exitFailed, err
	}
	sink, every := s.progressSink(ctx, spec.Output.Quiet)
	if live, ok := sink.(*ui.LiveSink); ok {
		// bench.Execute closes the sink on a run; this covers the errors
		// before one starts (and a panic), so the log lines the display
		// holds back are printed and the log goes back to stderr.
		defer live.Close()
	}
	var shard *record.Shard
	if r.shard != nil {
		rate := bench.RequestedRate(wl.Caps, p.Configured)
		if shard, err = r.shard.Start(ctx, cfgJSON, spec.Seed, rate, log); err != nil {
			return exitFailed, err
		}
	}
	res, err := bench.Run(ctx, bench.Job{
		Spec: spec, Prepared: p, Workload: wl, Exporters: r.exporters(), Config: cfgJSON, Version: version,
		Log: log, Stdout: s.stdout, Progress: sink, ProgressEvery: every, Hurry: hurry,
		Part: r.shard.WorkloadShard(), Shard: shard, BeforePhase: r.shard.BeforePhase(shard, log),
		BuiltinBlockSize: r.sim.BlockSize,
	})
	if err != nil {
		return exitFailed, err
	}
	return s.finished(ctx, r, res)
}

// finished tells the barrier how a shard's run ended, writes the report
// and uploads when asked to, and says how the run ended.
func (s *session) finished(ctx context.Context, r *resolved, res *bench.Result) (int, error) {
	switch {
	case res.Abort != nil:
		r.shard.Leave(string(res.Status)+": "+res.Abort.Reason, s.log)
	case res.Interrupted:
		r.shard.Leave("interrupted", s.log)
	}
	if w := res.Final.Load.Warning(); w != "" {
		s.log.Warn().Msg(w) // the achieved rate fell short of the requested one
	}
	if r.cli.report {
		if err := runReport(r.spec.Output.Dir, s.stdout); err != nil {
			return exitFailed, err
		}
	}
	// However the run ended: what it measured is in the files.
	if err := upload(context.WithoutCancel(ctx), r.upload, r.spec.Output.Dir, s.stdout); err != nil {
		fmt.Fprintf(s.stderr, "lmbench: %v\n", err)
		if !res.Interrupted && res.Status != record.Aborted {
			return exitFailed, nil
		}
	}
	switch {
	case res.Interrupted:
		if res.Err != nil {
			fmt.Fprintf(s.stderr, "lmbench: %v\n", res.Err)
		}
		fmt.Fprintln(s.stderr, "lmbench: interrupted; the results so far are written")
		return exitInterrupted, nil
	case res.Status == record.Aborted:
		return s.aborted(res), nil
	case res.Err != nil:
		return exitFailed, res.Err
	case res.Final.FailedRequests > 0:
		fmt.Fprintf(s.stderr, "lmbench: %d of %d measured requests failed (see the error column of the results)\n",
			res.Final.FailedRequests, res.Final.TotalRequests)
		return exitFailed, nil
	}
	return exitOK, nil
}

// progressSink picks the display (ui.Progress); the input echo it turns
// off comes back when the session closes, also when the run fails before
// the display opens.
func (s *session) progressSink(ctx context.Context, quiet bool) (bench.ProgressSink, time.Duration) {
	sink, every, restore := ui.Progress(ctx, s.stdin, s.stdout, s.stderr, s.logOut, quiet)
	s.closers = append(s.closers, restore)
	return sink, every
}

// exporters are the run's exporters, each configured from its options.
func (r *resolved) exporters() []bench.Exporter {
	var out []bench.Exporter
	for _, e := range r.exps {
		out = append(out, bench.Exporter{Name: e.Name(), Plugin: plugin.NewExporter(e.Client),
			Options: r.vals.PluginValues(e.Name()), Flag: r.vals.PluginOrigin(e.Prefix())})
	}
	return out
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and -_./:=@%+,
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
