package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/analysis"
	"github.com/lmbench/lmbench/core/htmlreport"
	"github.com/lmbench/lmbench/core/sweep"
)

// reportFlags are lmbench report's flags.
type reportFlags struct {
	output string
	analysis.Options
}

func (f *reportFlags) register(fs *pflag.FlagSet) {
	fs.StringVarP(&f.output, "output", "o", "report.html", "HTML file to write.")
	fs.Uint64Var(&f.Seed, "seed", analysis.DefaultSeed, "Seed of the comparison's bootstrap resampling (the same seed gives the same intervals).")
	fs.IntVar(&f.Resamples, "resamples", analysis.DefaultResamples, "Bootstrap resamples per interval (fewer are drawn for very large runs; the page says how many).")
}

// cmdReport is `lmbench report` (core/htmlreport).
func cmdReport(c *cli, args []string) error {
	var f reportFlags
	fs, err := c.parse(args, f.register, false)
	switch {
	case err != nil:
		return err
	case fs.NArg() == 0:
		return usageError{errors.New("no run given: name one or more run output directories (or their bench_journal.jsonl), or sweep output directories")}
	case f.output == "":
		return usageError{errors.New("-o/--output: must name a file, got an empty value")}
	case f.Resamples < analysis.MinResamples:
		return usageError{fmt.Errorf("--resamples: must be >= %d, got %d", analysis.MinResamples, f.Resamples)}
	}
	runs, sweeps, err := loadReported(fs.Args())
	if err != nil {
		return err
	}
	if err := htmlreport.WriteFile(f.output, runs, htmlreport.Options{Compare: f.Options, Version: version, Sweeps: sweeps}); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "Report: %s\n", f.output)
	return nil
}

// loadReported reads lmbench report's arguments: each a run (its output
// directory or journal) or a sweep (its output directory or its
// sweep_summary.json).
func loadReported(args []string) ([]*analysis.Run, []*sweep.Loaded, error) {
	var runArgs []string
	var sweeps []*sweep.Loaded
	for _, a := range args {
		if filepath.Base(a) == sweep.SummaryName {
			a = filepath.Dir(a)
		}
		if !sweep.IsSweep(a) {
			runArgs = append(runArgs, a)
			continue
		}
		sw, err := sweep.Load(a)
		if err != nil {
			return nil, nil, err
		}
		sweeps = append(sweeps, sw)
	}
	runs, err := analysis.LoadAll(runArgs)
	return runs, sweeps, err
}

// runReport is lmbench run --report and merge's report: the report of
// the run in outputDir, written into it; its path is printed.
func runReport(outputDir string, stdout io.Writer) error {
	path, err := htmlreport.WriteRun(outputDir, version)
	if err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	fmt.Fprintf(stdout, "Report: %s\n", path)
	return nil
}
