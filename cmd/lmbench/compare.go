package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/analysis"
	"github.com/lmbench/lmbench/core/sweep"
)

// compareFlags are lmbench compare's flags.
type compareFlags struct {
	json bool
	text analysis.TextOptions
	analysis.Options
}

func (f *compareFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.json, "json", false, "Print the comparison as JSON (undefined figures are null).")
	fs.BoolVar(&f.text.Pairs, "pairs", false, "List every paired request's TTFT in both runs, not only their distribution.")
	fs.Uint64Var(&f.Seed, "seed", analysis.DefaultSeed, "Seed of the bootstrap resampling.")
	fs.IntVar(&f.Resamples, "resamples", analysis.DefaultResamples, "Bootstrap resamples per interval (fewer are drawn for very large runs; the output says how many).")
}

// cmdCompare is `lmbench compare` (core/analysis).
func cmdCompare(c *cli, args []string) error {
	var f compareFlags
	fs, err := c.parse(args, f.register, false)
	switch {
	case err != nil:
		return err
	case fs.NArg() < 2:
		return usageError{fmt.Errorf("compare needs two runs or more (output directories or journals), got %d", fs.NArg())}
	case f.Resamples < analysis.MinResamples:
		return usageError{fmt.Errorf("--resamples: must be >= %d, got %d", analysis.MinResamples, f.Resamples)}
	}
	if fs.NArg() == 2 && sweep.IsSweep(fs.Arg(0)) && sweep.IsSweep(fs.Arg(1)) {
		return comparePrediction(c, fs.Arg(0), fs.Arg(1), f.json)
	}
	runs, err := analysis.LoadAll(fs.Args())
	if err != nil {
		return err
	}
	for _, w := range analysis.SameRuns(runs) {
		fmt.Fprintf(c.stderr, "lmbench: warning: %s\n", w)
	}
	comps := analysis.CompareAll(runs, f.Options)
	if f.json {
		return analysis.WriteComparisonsJSON(c.stdout, runs, comps, f.text)
	}
	if err := analysis.WriteComparisons(c.stdout, runs, comps, f.text); err != nil {
		return errors.Join(errors.New("writing the comparison"), err)
	}
	return nil
}

// comparePrediction is lmbench compare of two sweeps: a predicted one (on
// a twin) beside a measured one, point by point.
func comparePrediction(c *cli, a, b string, asJSON bool) error {
	ra, err := sweep.Read(a)
	if err != nil {
		return err
	}
	rb, err := sweep.Read(b)
	if err != nil {
		return err
	}
	p, err := sweep.Predict(ra, rb)
	if err != nil {
		return usageError{fmt.Errorf("compare %s %s: %w", a, b, err)}
	}
	if asJSON {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(p)
	}
	p.WriteText(c.stdout)
	return nil
}
