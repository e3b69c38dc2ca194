package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/merge"
	"github.com/lmbench/lmbench/core/record"
)

// mergeFlags are lmbench merge's own flags.
type mergeFlags struct {
	outputDir      string
	wait           time.Duration
	partial        bool
	exporters      []string
	exporterPlugin []string
	noReport       bool
	uploadTo       string
	logLevel       string
	logFormat      string
	help           bool
}

func (f *mergeFlags) register(fs *pflag.FlagSet) {
	fs.StringVarP(&f.outputDir, "output-dir", "o", "merged", "Directory for the merged run's files (journal, CSV, Parquet, bench_summary.json, report.html).")
	fs.DurationVar(&f.wait, "wait", 0, "Wait up to this long for every shard's journal to be complete (to have its summary), polling; 0: merge what is there now.")
	fs.BoolVar(&f.partial, "partial", false, "Merge the shards found when some are missing; the merged run is marked aborted and its reason names them.")
	fs.StringArrayVar(&f.exporters, "exporter", nil, "Exporter plugin by name (repeatable); csv and parquet if none is given.")
	fs.StringArrayVar(&f.exporterPlugin, "exporter-plugin", nil, "Path of an exporter plugin binary (repeatable).")
	fs.BoolVar(&f.noReport, "no-report", false, "Do not write report.html.")
	fs.StringVar(&f.uploadTo, "upload-to", "", "Also put the merged files in S3-compatible object storage: s3://bucket/prefix (endpoint and credentials as for lmbench run --upload-to).")
	fs.StringVar(&f.logLevel, "log-level", "info", "Log level: trace, debug, info, warn, error.")
	fs.StringVar(&f.logFormat, "log-format", "auto", "Log format: auto (console on a terminal, JSON otherwise), console or json.")
	fs.BoolVarP(&f.help, "help", "h", false, "Show help.")
	fs.SortFlags = false
}

const mergeUsage = `Usage: lmbench merge [flags] DIR...

Rebuild one run from the shards of a sharded run (lmbench run --shard I/N).
Each DIR is a shard's output directory, a shard's journal file, a
directory whose subdirectories are shards' output directories (others,
such as an earlier merge's output, are passed over), or an s3:// URL
under which the shards uploaded their directories (lmbench run
--upload-to; the journals are fetched, AWS_ENDPOINT_URL and the AWS_*
credentials as for the run). The merge
checks the shards belong to one run (run id, number of shards, the
configuration's hash) and that none is missing, moves each shard's
timestamps onto the barrier's clock by its measured offset, and computes
every statistic from all the records, as one run does: never from the
shards' summaries.

Flags:
`

// cmdMerge is lmbench merge.
func cmdMerge(args []string, stdout, stderr io.Writer) error {
	var g mergeFlags
	fs1 := pflag.NewFlagSet("lmbench merge", pflag.ContinueOnError)
	fs1.ParseErrorsAllowlist.UnknownFlags = true
	fs1.SetOutput(io.Discard)
	g.register(fs1)
	if err := fs1.Parse(args); err != nil {
		return usageError{err}
	}
	if g.help {
		fmt.Fprint(stdout, mergeUsage)
		fmt.Fprint(stdout, fs1.FlagUsagesWrapped(100))
		return nil
	}
	log, err := newLogger(stderr, g.logLevel, g.logFormat, isTerminal(stderr))
	if err != nil {
		return err
	}
	names := distinct(g.exporters)
	if len(names) == 0 && len(g.exporterPlugin) == 0 {
		names = []string{"csv", "parquet"}
	}
	s := newSession(nil, stdout, stderr)
	s.SetLog(log)
	defer s.Close()
	paths := g.exporterPlugin
	g = mergeFlags{} // parsed again, strictly
	r, fs, err := s.exporterFlags("lmbench merge", names, paths, g.register, args)
	if err != nil {
		return err
	}
	if r.Values, err = r.Registry.Load(config.Sources{Flags: fs}); err != nil {
		return err
	}
	up, err := checkMerge(fs, g)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	out, err := merge.Merge{Sources: fs.Args(), Wait: g.wait, OnWait: func(msg string) { fmt.Fprintf(stderr, "lmbench merge: %s\n", msg) },
		OutputDir: g.outputDir, Exporters: r.ExporterJobs(), Partial: g.partial,
		Version: version, Log: log, Stdout: stdout}.Run(ctx)
	if err != nil {
		return err
	}
	printMerged(stdout, out)
	if !g.noReport {
		if err := runReport(g.outputDir, stdout); err != nil {
			return err
		}
	}
	if err := upload(ctx, up, g.outputDir, stdout); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Merged %d shards of run %s: %d records, status %s\n", out.Found(), out.Run.ID, out.Records, out.Status)
	if out.Err != nil {
		return out.Err
	}
	if out.Status != record.Completed {
		return fmt.Errorf("the merged run is %s: %s", out.Status, out.Reason)
	}
	return nil
}

// checkMerge checks the arguments and opens --upload-to's store (nil:
// none), before anything is read.
func checkMerge(fs *pflag.FlagSet, g mergeFlags) (*merge.Upload, error) {
	if fs.NArg() == 0 {
		return nil, usageError{errors.New("no shard directories: give the shards' output directories (or their parent)")}
	}
	if g.wait < 0 {
		return nil, usageError{fmt.Errorf("--wait %s: expected a duration of 0 or more", g.wait)}
	}
	if g.uploadTo == "" {
		return nil, nil
	}
	up, err := merge.ParseUpload(g.uploadTo)
	if err != nil {
		return nil, usageError{fmt.Errorf("--upload-to: %w", err)}
	}
	if err := up.Open(); err != nil {
		return nil, fmt.Errorf("--upload-to: %w", err)
	}
	return up, nil
}

// printMerged lists the files the merge wrote.
func printMerged(stdout io.Writer, out *merge.Merged) {
	for _, f := range out.Files {
		fmt.Fprintf(stdout, "%s\n", f)
	}
	for _, res := range out.Results {
		for _, f := range res.Files {
			fmt.Fprintf(stdout, "%s: %s (%d rows)\n", res.Name, f.Path, f.Rows)
		}
	}
}
