package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/overhead"
)

const calibrateUsage = "Usage: lmbench calibrate --journal PATH [--repeat N]"

const calibrateHelp = `
Replay a finished run's measured schedule against the built-in engine with
every cost at zero (no prefill, no decode, no cache tiers), started on a
loopback port, through lmbench's own sender on an open-loop timer: request
k leaves at its scheduled offset from the first, with a prompt of its
input tokens (words) and max_tokens its output tokens. The engine costs
nothing, so the TTFT and dispatch lag measured are the client's, for that
schedule on this machine: the latency lmbench itself adds to the run's
figures (the in-process engine shares the CPUs, so it is an upper bound).
`

// calibrateFlags are lmbench calibrate's flags.
type calibrateFlags struct {
	journal   string
	repeat    int
	logLevel  string
	logFormat string
	help      bool
}

func (f *calibrateFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.journal, "journal", "", "Journal of a finished run (bench_journal.jsonl in its output directory).")
	fs.IntVar(&f.repeat, "repeat", 1, "Replay the schedule this many times, one after the other, and pool the numbers.")
	fs.StringVar(&f.logLevel, "log-level", "warn", "Log level: trace, debug, info, warn, error.")
	fs.StringVar(&f.logFormat, "log-format", "auto", "Log format: auto (console on a terminal, JSON otherwise), console or json.")
	fs.BoolVarP(&f.help, "help", "h", false, "Show help.")
	fs.SortFlags = false
}

// cmdCalibrate is `lmbench calibrate` (core/overhead's Calibrate).
func cmdCalibrate(args []string, stdout, stderr io.Writer) error {
	var f calibrateFlags
	fs := pflag.NewFlagSet("lmbench calibrate", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if f.help {
		fmt.Fprintln(stdout, calibrateUsage)
		fmt.Fprint(stdout, calibrateHelp)
		fmt.Fprintln(stdout, "\nFlags:")
		fmt.Fprint(stdout, fs.FlagUsagesWrapped(100))
		return nil
	}
	switch {
	case fs.NArg() > 0:
		return usageError{fmt.Errorf("unexpected argument %q (flags start with --)", fs.Arg(0))}
	case f.journal == "":
		return usageError{errors.New("--journal: required (the bench_journal.jsonl of a finished run)")}
	case f.repeat < 1:
		return usageError{fmt.Errorf("--repeat: must be >= 1, got %d", f.repeat)}
	}
	if st, err := os.Stat(f.journal); err == nil && st.IsDir() {
		return fmt.Errorf("--journal %s: is a directory; expected its bench_journal.jsonl", f.journal)
	}
	log, err := newLogger(stderr, f.logLevel, f.logFormat, isTerminal(stderr))
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := overhead.Calibrate{Journal: f.journal, Repeat: f.repeat, Log: log}.Run(ctx)
	if err != nil {
		return err
	}
	printCalibration(stdout, f.journal, c)
	if c.Failed > 0 {
		return fmt.Errorf("calibrate: %d of %d requests failed against the built-in engine (their TTFT is left out)", c.Failed, c.Requests*c.Repeat)
	}
	return nil
}

// printCalibration writes the result block, in the summary's layout.
func printCalibration(w io.Writer, journal string, c *overhead.Calibration) {
	const width = 56
	line := func(label, value string) {
		label += ":"
		fmt.Fprintf(w, "%s%s%s\n", label, strings.Repeat(" ", max(width-len([]rune(label))-len([]rune(value)), 1)), value)
	}
	num := func(v float64) string {
		if math.IsNaN(v) {
			return "n/a"
		}
		return fmt.Sprintf("%.2f", v)
	}
	title := " Client calibration (zero-cost engine) "
	pad := width - len(title)
	fmt.Fprintf(w, "%s%s%s\n", strings.Repeat("=", pad/2), title, strings.Repeat("=", pad-pad/2))
	fmt.Fprintf(w, "Schedule of %s\n", journal)
	line("Requests x replays", fmt.Sprintf("%d x %d", c.Requests, c.Repeat))
	line("Schedule span (s)", num(c.Span.Seconds()))
	line("CPUs", fmt.Sprint(c.CPUs))
	line("Failed requests", fmt.Sprint(c.Failed))
	line("Client-added TTFT P50 (ms)", num(c.TTFTP50Ms))
	line("Client-added TTFT P99 (ms)", num(c.TTFTP99Ms))
	line("Client-added TTFT max (ms)", num(c.TTFTMaxMs))
	line("Dispatch lag P50 (ms)", num(c.DispatchLagP50Ms))
	line("Dispatch lag P99 (ms)", num(c.DispatchLagP99Ms))
	line("Dispatch lag max (ms)", num(c.DispatchLagMaxMs))
	fmt.Fprintln(w, strings.Repeat("=", width))
}
