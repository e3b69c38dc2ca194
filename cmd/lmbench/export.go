package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/invocation"
	"github.com/lmbench/lmbench/core/merge"
)

// exportFlags are lmbench export's own flags.
type exportFlags struct {
	journal        string
	exporters      []string
	exporterPlugin []string
	outputDir      string
	logLevel       string
	logFormat      string
	help           bool
}

func (f *exportFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.journal, "journal", "", "Run journal to export (bench_journal.jsonl in a run's output directory).")
	fs.StringArrayVar(&f.exporters, "exporter", nil, "Exporter plugin by name (repeatable); csv if none is given.")
	fs.StringArrayVar(&f.exporterPlugin, "exporter-plugin", nil, "Path of an exporter plugin binary (repeatable).")
	fs.StringVar(&f.outputDir, "output-dir", "", "Directory for the rebuilt files (default: the journal's directory).")
	fs.StringVar(&f.logLevel, "log-level", "info", "Log level: trace, debug, info, warn, error.")
	fs.StringVar(&f.logFormat, "log-format", "auto", "Log format: auto (console on a terminal, JSON otherwise), console or json.")
	fs.BoolVarP(&f.help, "help", "h", false, "Show help.")
	fs.SortFlags = false
}

// cmdExport is `lmbench export`: it rebuilds result files from a run's
// journal through the same exporter plugins a run uses (core's
// merge.Reexport), so a run that was killed (or exported with other
// exporters) can be exported again.
func cmdExport(args []string, stdout, stderr io.Writer) error {
	var g exportFlags
	fs1 := pflag.NewFlagSet("lmbench export", pflag.ContinueOnError)
	fs1.ParseErrorsAllowlist.UnknownFlags = true
	fs1.SetOutput(io.Discard)
	g.register(fs1)
	if err := fs1.Parse(args); err != nil {
		return usageError{err}
	}
	log, err := newLogger(stderr, g.logLevel, g.logFormat, isTerminal(stderr))
	if err != nil {
		return err
	}
	names := distinct(g.exporters)
	if len(names) == 0 && len(g.exporterPlugin) == 0 {
		names = []string{"csv"}
	}

	s := newSession(nil, stdout, stderr)
	s.SetLog(log)
	defer s.Close()
	paths := g.exporterPlugin
	g = exportFlags{} // parsed again, strictly
	r, fs, err := s.exporterFlags("lmbench export", names, paths, g.register, args)
	if err != nil {
		return err
	}
	if g.help {
		fmt.Fprintln(stdout, "Usage: lmbench export --journal PATH [--exporter NAME]... [--output-dir DIR] [exporter flags]\n\nRebuild result files from a run journal.\n\nFlags:")
		fmt.Fprint(stdout, fs.FlagUsagesWrapped(100))
		return nil
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q (flags start with --)", fs.Arg(0))}
	}
	if r.Values, err = r.Registry.Load(config.Sources{Flags: fs}); err != nil {
		return err
	}
	if g.journal == "" {
		return usageError{errors.New("--journal: required (the bench_journal.jsonl of a run)")}
	}
	out, err := merge.Reexport{Journal: g.journal, OutputDir: g.outputDir, Exporters: r.ExporterJobs(), Log: log}.Run(context.Background())
	if err != nil {
		return err
	}
	var errs []error
	for _, res := range out.Results {
		if res.Err != nil {
			errs = append(errs, res.Err)
		}
		for _, f := range res.Files {
			fmt.Fprintf(stdout, "%s: %s (%d rows)\n", res.Name, f.Path, f.Rows)
		}
	}
	if out.Summary != "" {
		fmt.Fprintf(stdout, "summary: %s\n", out.Summary)
	}
	return errors.Join(errs...)
}

// exporterFlags loads the exporters by name and path and parses every
// flag strictly with their options (their LMBENCH_* variables apply too,
// as in a run): the second pass of lmbench export and merge, whose own
// flags register adds.
func (s *session) exporterFlags(name string, names, paths []string, register func(*pflag.FlagSet), args []string) (*invocation.Resolved, *pflag.FlagSet, error) {
	r := &invocation.Resolved{Registry: config.NewRegistry()}
	for i, n := range append(slices.Clone(names), paths...) {
		e, err := s.Plugins.Exporter(n, invocation.ExporterOrigin(i >= len(names)))
		if err != nil {
			return nil, nil, cliError(err)
		}
		r.Exporters = append(r.Exporters, e)
	}
	for _, e := range r.Exporters {
		if _, err := r.Registry.AddPlugin(e.Name(), e.Prefix(), e.Options()); err != nil {
			return nil, nil, err
		}
	}
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	register(fs)
	r.Registry.RegisterFlags(fs, func(*config.Option) bool { return true })
	if err := fs.Parse(args); err != nil {
		return nil, nil, usageError{err}
	}
	return r, fs, nil
}
