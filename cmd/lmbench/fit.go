package main

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/twin"
)

// fitFlags are lmbench fit's flags.
type fitFlags struct {
	output string
}

func (f *fitFlags) register(fs *pflag.FlagSet) {
	fs.StringVarP(&f.output, "output", "o", "profile.json", "Profile to write (serve it with lmbench sim --profile FILE or --engine-url builtin --sim-profile FILE).")
}

// cmdFit is `lmbench fit` (core/twin).
func cmdFit(c *cli, args []string) error {
	var f fitFlags
	fs, err := c.parse(args, f.register, false)
	switch {
	case err != nil:
		return err
	case fs.NArg() == 0:
		return usageError{errors.New("no run given: name one or more finished runs (output directories or their bench_journal.jsonl) or sweeps")}
	case f.output == "":
		return usageError{errors.New("-o/--output: must name a file, got an empty value")}
	}
	runs, err := twin.LoadRuns(fs.Args()...)
	if err != nil {
		return err
	}
	prof, err := twin.Fit(runs)
	if err != nil {
		return err
	}
	if err := prof.WriteFile(f.output); err != nil {
		return err
	}
	if err := prof.WriteText(c.stdout); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "\nProfile: %s (lmbench sim --profile %s)\n", f.output, f.output)
	return nil
}
