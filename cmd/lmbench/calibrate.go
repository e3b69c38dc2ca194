package main

import (
	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/overhead"
)

// calibrateFlags are lmbench calibrate's flags.
type calibrateFlags struct {
	overhead.Calibrate
	logLevel, logFormat string
}

func (f *calibrateFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.Journal, "journal", "", "Journal of a finished run (bench_journal.jsonl in its output directory).")
	fs.IntVar(&f.Repeat, "repeat", 1, "Replay the schedule this many times, one after the other, and pool the numbers.")
	fs.StringVar(&f.logLevel, "log-level", "warn", "Log level: trace, debug, info, warn, error.")
	fs.StringVar(&f.logFormat, "log-format", "auto", "Log format: auto (console on a terminal, JSON otherwise), console or json.")
}

// cmdCalibrate is `lmbench calibrate` (core/overhead's Calibrate).
func cmdCalibrate(c *cli, args []string) error {
	var f calibrateFlags
	if err := c.parseFlagsOnly(args, f.register); err != nil {
		return err
	}
	if err := f.Check(); err != nil {
		return usageError{err}
	}
	var err error
	if f.Log, err = newLogger(c.stderr, f.logLevel, f.logFormat, isTerminal(c.stderr)); err != nil {
		return err
	}
	ctx, stop := untilSignal()
	defer stop()
	cal, err := f.Run(ctx)
	if err != nil {
		return err
	}
	cal.WriteText(c.stdout, f.Journal)
	return cal.Err()
}
