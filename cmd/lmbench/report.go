package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/analysis"
	"github.com/lmbench/lmbench/core/htmlreport"
)

const reportUsage = "Usage: lmbench report DIR|SWEEPDIR... [-o report.html] [--seed N] [--resamples N]"

const reportHelp = `
Write one self-contained HTML page (every style and script inline, the
charts inline SVG: it opens offline) from finished runs. DIR is a run's
output directory or its bench_journal.jsonl; a killed run's figures are
computed from its journal. For each run: its status, latencies, prefix
cache, failures, overhead certificate and configuration as tables, and
charts of TTFT, TPOT, ITL and E2E (CDF and histogram), TTFT over time by
phase and by tag, throughput, requests in flight and dispatch lag over
time, TTFT by tag and the cache block; the engine's running and waiting
requests, KV-cache usage and prefix-cache hit rate over time
(bench_metrics.jsonl), and tables of its per-phase metrics, the cache
ledger, prompt tokens, load and goodput. SWEEPDIR is lmbench sweep's
--output-dir (it holds sweep_summary.json) or that file: its section draws latency
against achieved throughput, goodput and achieved against requested rate,
one point per sweep point, and lists the points. With two runs or more, a comparison
section first: every run against the first (lmbench compare's table),
their distributions overlaid, and per-request pairing when the runs share
their workload and seed. docs/report.md describes every panel.
`

// reportFlags are lmbench report's flags.
type reportFlags struct {
	output    string
	seed      uint64
	resamples int
	help      bool
}

func (f *reportFlags) register(fs *pflag.FlagSet) {
	fs.StringVarP(&f.output, "output", "o", "report.html", "HTML file to write.")
	fs.Uint64Var(&f.seed, "seed", analysis.DefaultSeed, "Seed of the comparison's bootstrap resampling (the same seed gives the same intervals).")
	fs.IntVar(&f.resamples, "resamples", analysis.DefaultResamples, "Bootstrap resamples per interval (fewer are drawn for very large runs; the page says how many).")
	fs.BoolVarP(&f.help, "help", "h", false, "Show help.")
	fs.SortFlags = false
}

// cmdReport is `lmbench report`.
func cmdReport(args []string, stdout io.Writer) error {
	var f reportFlags
	fs := pflag.NewFlagSet("lmbench report", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if f.help {
		fmt.Fprintln(stdout, reportUsage)
		fmt.Fprint(stdout, reportHelp, "\nFlags:\n", fs.FlagUsagesWrapped(100))
		return nil
	}
	if fs.NArg() == 0 {
		return usageError{errors.New("no run given: name one or more run output directories (or their bench_journal.jsonl), or sweep output directories")}
	}
	if f.output == "" {
		return usageError{errors.New("-o/--output: must name a file, got an empty value")}
	}
	if f.resamples < analysis.MinResamples {
		return usageError{fmt.Errorf("--resamples: must be >= %d, got %d", analysis.MinResamples, f.resamples)}
	}
	var runArgs []string
	var sweeps []*htmlreport.Sweep
	for _, a := range fs.Args() {
		if filepath.Base(a) == htmlreport.SweepSummaryName {
			a = filepath.Dir(a)
		}
		if !htmlreport.IsSweep(a) {
			runArgs = append(runArgs, a)
			continue
		}
		sw, err := htmlreport.LoadSweep(a)
		if err != nil {
			return err
		}
		sweeps = append(sweeps, sw)
	}
	runs, err := analysis.LoadAll(runArgs)
	if err != nil {
		return err
	}
	opt := htmlreport.Options{Compare: analysis.Options{Seed: f.seed, Resamples: f.resamples}, Version: version, Sweeps: sweeps}
	if err := htmlreport.WriteFile(f.output, runs, opt); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Report: %s\n", f.output)
	return nil
}

// runReportName is the report lmbench run --report writes.
const runReportName = "report.html"

// runReport is lmbench run --report: the report of the run just finished,
// written into its output directory; its path is printed after the
// summary.
func runReport(outputDir string, stdout io.Writer) error {
	r, err := analysis.Load(outputDir)
	if err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	path := filepath.Join(outputDir, runReportName)
	if err := htmlreport.WriteFile(path, []*analysis.Run{r}, htmlreport.Options{Version: version}); err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	fmt.Fprintf(stdout, "Report: %s\n", path)
	return nil
}
