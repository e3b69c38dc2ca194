package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/cmd/lmbench/internal/ui"
	"github.com/lmbench/lmbench/core/merge"
)

// mergeFlags are lmbench merge's own flags.
type mergeFlags struct {
	outputDir string
	wait      time.Duration
	partial   bool
	noReport  bool
	uploadTo  string
	exporterFlags
}

func (f *mergeFlags) register(fs *pflag.FlagSet) {
	fs.StringVarP(&f.outputDir, "output-dir", "o", "merged", "Directory for the merged run's files (journal, CSV, Parquet, bench_summary.json, report.html).")
	fs.DurationVar(&f.wait, "wait", 0, "Wait up to this long for every shard's journal to be complete (to have its summary), polling; 0: merge what is there now.")
	fs.BoolVar(&f.partial, "partial", false, "Merge the shards found when some are missing; the merged run is marked aborted and its reason names them.")
	f.registerExporters(fs, "csv and parquet")
	fs.BoolVar(&f.noReport, "no-report", false, "Do not write report.html.")
	fs.StringVar(&f.uploadTo, "upload-to", "", "Also put the merged files in S3-compatible object storage: s3://bucket/prefix (endpoint and credentials as for lmbench run --upload-to).")
	f.registerLog(fs)
}

// cmdMerge is lmbench merge (core/merge's Merge, its report and upload).
func cmdMerge(c *cli, args []string) error {
	var g mergeFlags
	fs, err := c.parse(args, g.register, true)
	if err != nil {
		return err
	}
	if ui.Helped(fs) {
		return c.printHelp(fs)
	}
	exps, err := c.startExporters(args, g.register, g.exporterFlags, "csv", "parquet")
	if err != nil {
		return err
	}
	defer exps.plugins.Close()
	m := merge.Merge{Sources: exps.fs.Args(), Wait: g.wait, OnWait: func(msg string) { fmt.Fprintf(c.stderr, "lmbench merge: %s\n", msg) },
		OutputDir: g.outputDir, Exporters: exps.list, Partial: g.partial, Report: !g.noReport,
		Version: version, Log: exps.log, Stdout: c.stdout}
	if err := m.Check(); err != nil {
		return usageError{err}
	}
	if m.Upload, err = openUpload(g.uploadTo); err != nil {
		return err
	}
	ctx, stop := untilSignal()
	defer stop()
	out, err := m.Run(ctx)
	if out == nil {
		return err
	}
	for _, f := range out.Files {
		fmt.Fprintf(c.stdout, "%s\n", f)
	}
	printResults(c.stdout, out.Results)
	if out.Report != "" {
		fmt.Fprintf(c.stdout, "Report: %s\n", out.Report)
	}
	if err != nil {
		return err
	}
	if m.Upload != nil {
		fmt.Fprintf(c.stdout, "Uploaded %d files to %s\n", out.Uploaded, m.Upload)
	}
	fmt.Fprintf(c.stdout, "Merged %d shards of run %s: %d records, status %s\n", out.Found(), out.Run.ID, out.Records, out.Status)
	return out.Outcome()
}

// openUpload reads merge's --upload-to (a usage error when it is no
// s3:// URL) and opens its store; nil without one.
func openUpload(raw string) (*merge.Upload, error) {
	if raw == "" {
		return nil, nil
	}
	up, err := merge.ParseUpload(raw)
	if err != nil {
		return nil, usageError{fmt.Errorf("--upload-to: %w", err)}
	}
	if err := up.Open(); err != nil {
		return nil, fmt.Errorf("--upload-to: %w", err)
	}
	return up, nil
}
