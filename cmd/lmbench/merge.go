package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/host"
	"github.com/lmbench/lmbench/core/objstore"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/report"
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
	s.setLog(log)
	defer s.close()
	paths := g.exporterPlugin
	g = mergeFlags{} // parsed again, strictly
	r, fs, err := s.exporterFlags("lmbench merge", names, paths, g.register, args)
	if err != nil {
		return err
	}
	if r.vals, err = r.reg.Load(config.Sources{Flags: fs}); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageError{errors.New("no shard directories: give the shards' output directories (or their parent)")}
	}
	if g.wait < 0 {
		return usageError{fmt.Errorf("--wait %s: expected a duration of 0 or more", g.wait)}
	}
	var upload *uploadPlan
	if g.uploadTo != "" {
		loc, err := objstore.Parse(g.uploadTo)
		if err != nil {
			return usageError{fmt.Errorf("--upload-to: %w", err)}
		}
		st, err := objstore.Open()
		if err != nil {
			return fmt.Errorf("--upload-to: %w", err)
		}
		upload = &uploadPlan{loc: loc, store: st}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tmp, err := os.MkdirTemp("", "lmbench-merge-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	remote := &s3Args{dir: tmp, got: map[string]bool{}, log: log}
	journals, err := waitForShards(ctx, fs.Args(), remote.resolve, g.wait, stderr)
	if err != nil {
		return err
	}
	out, err := host.Merge{Journals: journals, OutputDir: g.outputDir, Exporters: r.exporters(), Partial: g.partial,
		Version: version, Log: log, Stdout: stdout}.Run(ctx)
	if err != nil {
		return err
	}
	var spread time.Duration
	for _, p := range out.Parts {
		if p.Missing {
			continue
		}
		spread = max(spread, p.MeasureLag)
		if late := p.Lateness; late > time.Second || late < -time.Second {
			log.Warn().Msgf("shard %d/%d started %s away from the common start: its part of the schedule ran shifted", p.Index, p.Count, late.Round(time.Millisecond))
		}
	}
	if spread > 50*time.Millisecond {
		log.Warn().Msgf("the shards' measured phases started up to %s apart: their parts of an open-loop schedule ran shifted by as much (a barrier, --barrier, starts them together)", spread.Round(time.Millisecond))
	}
	for _, f := range out.Files {
		fmt.Fprintf(stdout, "%s\n", f)
	}
	for _, res := range out.Results {
		for _, f := range res.Files {
			fmt.Fprintf(stdout, "%s: %s (%d rows)\n", res.Name, f.Path, f.Rows)
		}
	}
	if !g.noReport {
		if err := runReport(g.outputDir, stdout); err != nil {
			return err
		}
	}
	if err := upload.upload(ctx, g.outputDir, stdout); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Merged %d shards of run %s: %d records, status %s\n", countFound(out.Parts), out.Run.ID, out.Records, out.Status)
	if out.Err != nil {
		return out.Err
	}
	if out.Status != record.Completed {
		return fmt.Errorf("the merged run is %s: %s", out.Status, out.Reason)
	}
	return nil
}

func countFound(parts []report.ShardPart) int {
	n := 0
	for _, p := range parts {
		if !p.Missing {
			n++
		}
	}
	return n
}

// shardJournals finds the journals the arguments name: a journal file, a
// directory holding one, or a directory whose subdirectories do.
func shardJournals(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a, err)
		}
		if !st.IsDir() {
			out = append(out, a)
			continue
		}
		if j := filepath.Join(a, record.JournalName); exists(j) {
			out = append(out, j)
			continue
		}
		subs, err := os.ReadDir(a)
		if err != nil {
			return nil, err
		}
		found := false
		for _, d := range subs {
			j := filepath.Join(a, d.Name(), record.JournalName)
			if !d.IsDir() || !exists(j) {
				continue
			}
			// Only shards' journals: a merged run (an earlier merge's
			// output kept beside the shards) or another run is left out.
			if run, err := record.ReadRun(j); err != nil || run.Shard == nil {
				continue
			}
			out = append(out, j)
			found = true
		}
		if !found {
			return nil, fmt.Errorf("%s: no shard's %s in it or in its subdirectories", a, record.JournalName)
		}
	}
	sort.Strings(out)
	return slices.Compact(out), nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// waitForShards returns the journals once every shard's is complete (has
// its summary) or, when wait is 0 or has passed, as they are; fetch makes
// the arguments local (object storage's, downloaded).
func waitForShards(ctx context.Context, args []string, fetch func(context.Context, []string) ([]string, error), wait time.Duration, stderr io.Writer) ([]string, error) {
	deadline := time.Now().Add(wait)
	var last string
	for {
		local, err := fetch(ctx, args) // s3:// arguments: the journals uploaded so far
		if err != nil {
			return nil, err
		}
		journals, err := shardJournals(local)
		done, why := false, ""
		if err == nil {
			done, why = shardsComplete(journals)
		} else {
			why = err.Error()
		}
		if wait == 0 || done || time.Now().After(deadline) {
			if err != nil {
				return nil, err
			}
			if !done && wait > 0 {
				fmt.Fprintf(stderr, "lmbench merge: stopped waiting after %s: %s\n", wait, why)
			}
			return journals, nil
		}
		if why != last {
			fmt.Fprintf(stderr, "lmbench merge: waiting: %s\n", why)
			last = why
		}
		select {
		case <-ctx.Done():
			return nil, errors.New("interrupted while waiting for the shards")
		case <-time.After(2 * time.Second):
		}
	}
}

// shardsComplete says whether every shard of the run has a journal with
// its summary, and if not, what is lacking.
func shardsComplete(journals []string) (bool, string) {
	count, have, pending := 0, map[int]bool{}, 0
	for _, j := range journals {
		c, err := record.ScanJournal(j, func(*record.Record) error { return nil })
		if err != nil || c.Run.Shard == nil {
			continue // ReadShards says what is wrong with it
		}
		count = c.Run.Shard.Count
		if c.Summary == nil {
			pending++
			continue
		}
		have[c.Run.Shard.Index] = true
	}
	switch {
	case count == 0:
		return false, "no shard's journal yet"
	case len(have) == count:
		return true, ""
	}
	return false, fmt.Sprintf("%d of %d shards finished (%d running)", len(have), count, pending)
}
