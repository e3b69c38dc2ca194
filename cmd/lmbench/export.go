package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/rs/zerolog"
	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/cmd/lmbench/internal/ui"
	"github.com/lmbench/lmbench/core/merge"
	"github.com/lmbench/lmbench/core/pluginset"
)

// exportFlags are lmbench export's own flags.
type exportFlags struct {
	journal   string
	outputDir string
	exporterFlags
}

func (f *exportFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.journal, "journal", "", "Run journal to export (bench_journal.jsonl in a run's output directory).")
	f.registerExporters(fs, "csv")
	fs.StringVar(&f.outputDir, "output-dir", "", "Directory for the rebuilt files (default: the journal's directory).")
	f.registerLog(fs)
}

// cmdExport is `lmbench export`: it rebuilds result files from a run's
// journal through the same exporter plugins a run uses (core's
// merge.Reexport), so a run that was killed (or exported with other
// exporters) can be exported again.
func cmdExport(c *cli, args []string) error {
	var g exportFlags
	if _, err := c.parse(args, g.register, true); err != nil {
		return err
	}
	exps, err := c.startExporters(args, g.register, g.exporterFlags, "csv")
	if err != nil {
		return err
	}
	defer exps.plugins.Close()
	if ui.Helped(exps.fs) {
		return c.printHelp(exps.fs) // with the exporters' flags
	}
	if err := noArgs(exps.fs); err != nil {
		return err
	}
	if g.journal == "" {
		return usageError{errors.New("--journal: required (the bench_journal.jsonl of a run)")}
	}
	out, err := merge.Reexport{Journal: g.journal, OutputDir: g.outputDir, Exporters: exps.list, Log: exps.log}.Run(context.Background())
	if err != nil {
		return err
	}
	var errs []error
	for _, res := range out.Results {
		errs = append(errs, res.Err)
	}
	printResults(c.stdout, out.Results)
	if out.Summary != "" {
		fmt.Fprintf(c.stdout, "summary: %s\n", out.Summary)
	}
	return errors.Join(errs...)
}

// exporterFlags are the flags lmbench export and merge share: which
// exporters write the files, and the log.
type exporterFlags struct {
	names, paths        []string
	logLevel, logFormat string
}

func (e *exporterFlags) registerExporters(fs *pflag.FlagSet, byDefault string) {
	fs.StringArrayVar(&e.names, "exporter", nil, "Exporter plugin by name (repeatable); "+byDefault+" if none is given.")
	fs.StringArrayVar(&e.paths, "exporter-plugin", nil, "Path of an exporter plugin binary (repeatable).")
}

func (e *exporterFlags) registerLog(fs *pflag.FlagSet) {
	fs.StringVar(&e.logLevel, "log-level", "info", "Log level: trace, debug, info, warn, error.")
	fs.StringVar(&e.logFormat, "log-format", "auto", "Log format: auto (console on a terminal, JSON otherwise), console or json.")
}

// withExporters are the exporters lmbench export or merge started, each
// configured from its options, with every flag parsed and the logger.
type withExporters struct {
	plugins *pluginset.Plugins
	list    pluginset.Exporters
	fs      *pflag.FlagSet
	log     zerolog.Logger
}

// startExporters is the second pass of lmbench export and merge: the
// exporters e names (byDefault when none) started, and every flag, their
// options' too, parsed (pluginset.Plugins.ExportersFromFlags). The caller
// closes the plugins.
func (c *cli) startExporters(args []string, register func(*pflag.FlagSet), e exporterFlags, byDefault ...string) (*withExporters, error) {
	log, err := newLogger(c.stderr, e.logLevel, e.logFormat, isTerminal(c.stderr))
	if err != nil {
		return nil, err
	}
	if len(e.names) == 0 && len(e.paths) == 0 {
		e.names = byDefault
	}
	w := &withExporters{plugins: pluginset.NewPlugins(log, version), log: log, fs: ui.FlagSet(c.cmd.Name, register)}
	if w.list, err = w.plugins.ExportersFromFlags(e.names, e.paths, w.fs, args); err != nil {
		w.plugins.Close()
		return nil, err
	}
	return w, nil
}

// printResults lists the files the exporters wrote.
func printResults(w io.Writer, results []merge.Result) {
	for _, res := range results {
		for _, f := range res.Files {
			fmt.Fprintf(w, "%s: %s (%d rows)\n", res.Name, f.Path, f.Rows)
		}
	}
}
