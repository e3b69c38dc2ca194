package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/export"
	"github.com/lmbench/lmbench/core/report"
	"github.com/lmbench/lmbench/core/stats"
	exporterv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/exporter/v1"
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
// journal through the same exporter plugins a run uses, so a run that was
// killed (or exported with other exporters) can be exported again. The
// journal holds every request that finished, in order; the exporters get
// them exactly as during the run, then the run's summary (or, when the run
// never finished, one computed from the journal and marked interrupted).
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
	s.log, s.hasLog = log, true
	defer s.close()
	var exps []*launched
	for _, n := range append(names, g.exporterPlugin...) {
		e, err := s.exporter(n)
		if err != nil {
			return err
		}
		exps = append(exps, e)
	}

	// Pass 2: every flag, strictly, with the exporters' options (their
	// LMBENCH_* variables apply too, as in a run).
	r := &resolved{reg: config.NewRegistry(), exps: exps}
	for _, e := range exps {
		if _, err := r.reg.AddPlugin(e.info.GetName(), e.info.GetPrefix(), e.specs); err != nil {
			return err
		}
	}
	fs := pflag.NewFlagSet("lmbench export", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	g = exportFlags{}
	g.register(fs)
	r.reg.RegisterFlags(fs, func(*config.Option) bool { return true })
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if g.help {
		fmt.Fprintln(stdout, "Usage: lmbench export --journal PATH [--exporter NAME]... [--output-dir DIR] [exporter flags]\n\nRebuild result files from a run journal.\n\nFlags:")
		fmt.Fprint(stdout, fs.FlagUsagesWrapped(100))
		return nil
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q (flags start with --)", fs.Arg(0))}
	}
	if r.vals, err = r.reg.Load(config.Sources{Flags: fs}); err != nil {
		return err
	}
	if g.journal == "" {
		return usageError{errors.New("--journal: required (the bench_journal.jsonl of a run)")}
	}

	meta, recs, err := export.ReadJournal(g.journal)
	if err != nil {
		return fmt.Errorf("--journal: %w", err)
	}
	summary, err := journalSummary(g.journal)
	if err != nil {
		return fmt.Errorf("--journal: %w", err)
	}
	if summary == nil {
		summary = computeSummary(meta, recs)
		log.Warn().Str("journal", g.journal).Msg("the journal has no summary (the run did not finish): the summary is computed from its records and marked interrupted")
	}
	outDir := g.outputDir
	if outDir == "" {
		outDir = filepath.Dir(g.journal)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return fmt.Errorf("--output-dir %s: %w", outDir, err)
	}
	run := proto.CloneOf(meta)
	run.OutputDir = outDir

	ctx := context.Background()
	var targets []export.Target
	for _, e := range exps {
		opts := r.pluginOptions(e)
		client := exporterClient{e.client}
		resp, err := client.Configure(ctx, &exporterv1.ConfigureRequest{Options: opts, Run: run})
		if err != nil {
			return e.client.Wrap("configure", err)
		}
		if errs := resp.GetErrors(); len(errs) > 0 {
			var out []error
			for _, fe := range errs {
				if fe.GetOption() != "" {
					out = append(out, fmt.Errorf("%s: %s", r.origin(e)(fe.GetOption()), fe.GetMessage()))
				} else {
					out = append(out, fmt.Errorf("exporter %s: %s", e.info.GetName(), fe.GetMessage()))
				}
			}
			return errors.Join(out...)
		}
		targets = append(targets, export.Target{Name: e.info.GetName(), Exporter: client, Wrap: e.client.Wrap})
	}
	fan := export.NewFanout(targets, export.Options{}, log)
	for _, r := range recs {
		fan.Add(r)
	}
	var errs []error
	for _, r := range fan.Finish(summary, 5*time.Minute) {
		if r.Err != nil {
			errs = append(errs, r.Err)
		}
		for _, f := range r.Files {
			fmt.Fprintf(stdout, "%s: %s (%d rows)\n", r.Name, f.GetPath(), f.GetRows())
		}
	}
	log.Info().Int("records", len(recs)).Str("run_id", meta.GetRunId()).Msg("journal exported")
	return errors.Join(errs...)
}

// journalSummary returns the journal's summary line, or nil when the run
// did not get to write one (it was killed).
func journalSummary(path string) (*exporterv1.Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	prefix := []byte(`{"kind":"summary","summary":`)
	var out *exporterv1.Summary
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, prefix) || !bytes.HasSuffix(line, []byte("}")) {
			continue
		}
		s := &exporterv1.Summary{}
		if err := protojson.Unmarshal(line[len(prefix):len(line)-1], s); err != nil {
			return nil, fmt.Errorf("%s: summary line: %v", path, err)
		}
		out = s
	}
	return out, sc.Err()
}

// computeSummary rebuilds the summary of a run that never finished from
// its measured records. The measured phase's clock starts at the earliest
// submit (or schedule) time found, since the phase's start is not in the
// journal.
func computeSummary(meta *exporterv1.RunMetadata, recs []*exporterv1.Record) *exporterv1.Summary {
	start := time.Time{}
	var measured []*exporterv1.Record
	for _, r := range recs {
		if r.GetPhase() != exporterv1.Phase_PHASE_MEASURE {
			continue
		}
		measured = append(measured, r)
		for _, ns := range []int64{r.GetScheduledUnixNs(), r.GetSubmitUnixNs()} {
			if t := time.Unix(0, ns); ns != 0 && (start.IsZero() || t.Before(start)) {
				start = t
			}
		}
	}
	c := stats.NewCollector(start)
	hasSchedule := false
	for _, r := range measured {
		lag := math.NaN()
		if r.GetScheduledUnixNs() != 0 && r.GetSubmitUnixNs() != 0 {
			lag = float64(r.GetSubmitUnixNs()-r.GetScheduledUnixNs()) / 1e9
			hasSchedule = true
		}
		c.Add(stats.Sample{
			Success: r.GetSuccess(), TTFT: r.GetTtftS(), Latency: r.GetLatencyS(), DecodeSpeed: r.GetDecodeSpeed(),
			ITL: r.GetItlS(), DispatchLag: lag, InputTokens: int(r.GetInputTokens()), OutputTokens: int(r.GetOutputTokens()),
			Finish: time.Unix(0, r.GetFinishUnixNs()),
		})
	}
	final := c.Final()
	cfg := report.Config{Model: meta.GetModel(), Workload: meta.GetWorkload(), OutputDir: meta.GetOutputDir()}
	run := report.Run{ID: meta.GetRunId(), Version: meta.GetLmbenchVersion(), Interrupted: true, HasSchedule: hasSchedule}
	return &exporterv1.Summary{
		RunId: meta.GetRunId(), SummaryJson: string(report.SummaryJSON(cfg, run, final)),
		TotalRequests: int64(final.TotalRequests), SuccessfulRequests: int64(final.SuccessfulRequests),
		FailedRequests: int64(final.FailedRequests), ElapsedS: final.ElapsedTime, Interrupted: true,
	}
}
