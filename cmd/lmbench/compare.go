package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/analysis"
)

const compareUsage = "Usage: lmbench compare A B [C...] [--json] [--pairs] [--seed N] [--resamples N]"

const compareHelp = `
Set finished runs side by side: every run after the first against the
first (A). For each headline metric (TTFT mean and percentiles, TPOT, pooled
ITL, E2E, output and request throughput): both values, the delta, the ratio
and its 95% percentile-bootstrap interval, marked "*" when the interval
excludes 1 (beyond noise). Each run's measured requests are resampled with
replacement, independently (the throughputs: its time windows), from a
seeded generator, so the same runs and seed print the same intervals. When
the runs share their workload and seed, requests are also paired by id: the
distribution of per-request TTFT ratios and the share that got faster,
and, when both recorded their answers (lmbench run --record-outputs),
whether they answered alike: the diverging requests are flagged.
Each run is an output directory or its bench_journal.jsonl.
`

// compareFlags are lmbench compare's flags.
type compareFlags struct {
	json      bool
	pairs     bool
	seed      uint64
	resamples int
	help      bool
}

func (f *compareFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.json, "json", false, "Print the comparison as JSON (undefined figures are null).")
	fs.BoolVar(&f.pairs, "pairs", false, "List every paired request's TTFT in both runs, not only their distribution.")
	fs.Uint64Var(&f.seed, "seed", analysis.DefaultSeed, "Seed of the bootstrap resampling.")
	fs.IntVar(&f.resamples, "resamples", analysis.DefaultResamples, "Bootstrap resamples per interval (fewer are drawn for very large runs; the output says how many).")
	fs.BoolVarP(&f.help, "help", "h", false, "Show help.")
	fs.SortFlags = false
}

// cmdCompare is `lmbench compare`.
func cmdCompare(args []string, stdout io.Writer) error {
	var f compareFlags
	fs := pflag.NewFlagSet("lmbench compare", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if f.help {
		fmt.Fprintln(stdout, compareUsage)
		fmt.Fprint(stdout, compareHelp, "\nFlags:\n", fs.FlagUsagesWrapped(100))
		return nil
	}
	if fs.NArg() < 2 {
		return usageError{fmt.Errorf("compare needs two runs or more (output directories or journals), got %d", fs.NArg())}
	}
	if f.resamples < analysis.MinResamples {
		return usageError{fmt.Errorf("--resamples: must be >= %d, got %d", analysis.MinResamples, f.resamples)}
	}
	runs, err := analysis.LoadAll(fs.Args())
	if err != nil {
		return err
	}
	comps := analysis.CompareAll(runs, analysis.Options{Seed: f.seed, Resamples: f.resamples})
	if f.json {
		return analysis.WriteComparisonsJSON(stdout, runs, comps, analysis.TextOptions{Pairs: f.pairs})
	}
	if err := analysis.WriteComparisons(stdout, runs, comps, analysis.TextOptions{Pairs: f.pairs}); err != nil {
		return errors.Join(errors.New("writing the comparison"), err)
	}
	return nil
}
