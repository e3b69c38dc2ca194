// Package bench runs one benchmark end to end once its plugins are
// launched and configured: it opens the journal, configures the exporters,
// drives the run loop, keeps the stats, and finishes with the summary, the
// exporters' files and bench_summary.json. Whatever happens during the run
// (Ctrl-C, a dead plugin, a failing engine), the requests measured so far
// reach the journal and the exporters.
package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/core/export"
	"github.com/lmbench/lmbench/core/report"
	"github.com/lmbench/lmbench/core/run"
	"github.com/lmbench/lmbench/core/stats"
	"github.com/lmbench/lmbench/core/telemetry"
	exporterv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/exporter/v1"
	pluginv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/plugin/v1"
	workloadv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/workload/v1"
)

// Exporter is a configured-to-be exporter plugin.
type Exporter struct {
	Name    string
	Client  ExporterClient
	Options map[string]*pluginv1.OptionValue
	// Flag maps an option name to its flag, for error messages.
	Flag func(option string) string
	Wrap func(op string, err error) error
}

// ExporterClient is the exporter protocol surface used here.
type ExporterClient interface {
	Configure(ctx context.Context, req *exporterv1.ConfigureRequest) (*exporterv1.ConfigureResponse, error)
	export.Exporter
}

// Plan is everything a run needs.
type Plan struct {
	Workload  run.Workload
	WantsText bool
	TagKeys   []string
	Sender    run.Sender
	Exporters []Exporter
	Report    report.Config // what the summary reports (no secrets)
	// ConfigJSON is the resolved configuration recorded in the journal and
	// exporter metadata (no secrets).
	ConfigJSON string
	Version    string
	// Planned is the number of measured requests, if known (progress).
	Planned int
	Log     zerolog.Logger
	// Stdout receives the terminal summary. Progress, when non-nil,
	// receives a Snapshot every ProgressEvery (DefaultProgressEvery when
	// 0) and is closed once the run loop has stopped, before the summary
	// is printed.
	Stdout        io.Writer
	Progress      ProgressSink
	ProgressEvery time.Duration
	DrainTimeout  time.Duration
	// Tracing records the run as OpenTelemetry spans (run, phases,
	// requests) and sends each request's traceparent to the engine; nil
	// records nothing and sends no extra header.
	Tracing *telemetry.Provider
}

// Result is how the run went.
type Result struct {
	RunID       string
	Final       stats.Final
	Interrupted bool
	Files       []string
	// Err is the first error (workload, journal or exporter); the summary
	// and files are still written when it is set.
	Err error
}

// NewRunID returns a sortable, unique run id.
func NewRunID(t time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return t.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// Execute runs the plan. The returned error is only for failures before
// anything was measured (journal or exporter setup); later failures are in
// Result.Err, after every file was written.
func Execute(ctx context.Context, p Plan) (*Result, error) {
	wallStart := time.Now()
	res := &Result{RunID: NewRunID(wallStart)}
	meta := &exporterv1.RunMetadata{
		RunId: res.RunID, Workload: p.Report.Workload, Model: p.Report.Model,
		OutputDir: p.Report.OutputDir, LmbenchVersion: p.Version, TagKeys: p.TagKeys,
		ConfigJson: p.ConfigJSON, StartedUnixNs: wallStart.UnixNano(),
	}
	if err := os.MkdirAll(p.Report.OutputDir, 0o755); err != nil {
		return nil, fmt.Errorf("--output-dir %s: %w", p.Report.OutputDir, err)
	}
	journal, err := export.CreateJournal(filepath.Join(p.Report.OutputDir, export.JournalName), meta)
	if err != nil {
		return nil, err
	}
	var targets []export.Target
	for _, e := range p.Exporters {
		resp, err := e.Client.Configure(ctx, &exporterv1.ConfigureRequest{Options: e.Options, Run: meta})
		if err != nil {
			journal.Close(nil)
			if e.Wrap == nil { // optional, as for export.Target
				return nil, fmt.Errorf("exporter %s: configure: %w", e.Name, err)
			}
			return nil, e.Wrap("configure", err)
		}
		if errs := resp.GetErrors(); len(errs) > 0 {
			journal.Close(nil)
			return nil, fieldErrors(errs, e.Flag)
		}
		targets = append(targets, export.Target{Name: e.Name, Exporter: e.Client, Wrap: e.Wrap})
	}
	fan := export.NewFanout(targets, export.Options{}, p.Log)

	obs := &observer{
		runID: res.RunID, workload: p.Report.Workload, wallStart: wallStart,
		journal: journal, fan: fan, stats: stats.NewCollector(wallStart),
	}
	runCfg := run.Config{
		Workload: p.Workload, Sender: p.Sender, Observer: obs, Log: p.Log,
		WantsText: p.WantsText, DrainTimeout: p.DrainTimeout,
	}
	if p.Tracing != nil {
		obs.trace = p.Tracing.StartRun(ctx, telemetry.RunInfo{
			RunID: res.RunID, Workload: p.Report.Workload, Version: p.Version, Model: p.Report.Model,
			EngineURL: engineURL(p.Sender), Start: wallStart,
		})
		runCfg.RequestHeader = obs.trace.Header
	}
	stopProgress := startProgress(ctx, p, obs)
	outcome, runErr := run.Run(ctx, runCfg)
	stopProgress()
	res.Interrupted = outcome.Interrupted
	res.Err = runErr
	if obs.err != nil && !errors.Is(runErr, obs.err) {
		res.Err = errors.Join(res.Err, obs.err) // the observer failed after the loop had stopped
	}

	res.Final = obs.stats.Final()
	run := report.Run{ID: res.RunID, Version: p.Version, Interrupted: res.Interrupted, HasSchedule: obs.scheduled.Load()}
	summaryJSON := report.SummaryJSON(p.Report, run, res.Final)
	summary := &exporterv1.Summary{
		RunId: res.RunID, SummaryJson: string(summaryJSON),
		TotalRequests: int64(res.Final.TotalRequests), SuccessfulRequests: int64(res.Final.SuccessfulRequests),
		FailedRequests: int64(res.Final.FailedRequests), ElapsedS: res.Final.ElapsedTime,
		Interrupted: res.Interrupted,
	}
	for _, r := range fan.Finish(summary, 60*time.Second) {
		if r.Err != nil {
			res.Err = errors.Join(res.Err, r.Err)
		}
		for _, f := range r.Files {
			res.Files = append(res.Files, f.GetPath())
			p.Log.Info().Str("exporter", r.Name).Str("path", f.GetPath()).Int64("rows", f.GetRows()).Msg("results written")
		}
	}
	if err := journal.Close(summary); err != nil {
		res.Err = errors.Join(res.Err, err)
	}
	if obs.trace != nil {
		obs.trace.End(telemetry.RunEnd{
			End: obs.wallTime(time.Now()), Requests: res.Final.TotalRequests, Failed: res.Final.FailedRequests,
			Interrupted: res.Interrupted, Err: res.Err,
		})
	}
	report.Terminal(p.Stdout, p.Report, run, res.Final)
	if p.Report.ExportJSON {
		path := filepath.Join(p.Report.OutputDir, "bench_summary.json")
		if err := os.WriteFile(path, summaryJSON, 0o644); err != nil {
			res.Err = errors.Join(res.Err, fmt.Errorf("JSON summary: %w", err))
		} else {
			res.Files = append(res.Files, path)
			p.Log.Info().Str("path", path).Msg("JSON summary written")
		}
	}
	return res, nil
}

// FieldError is a Configure error pointing at a flag.
type FieldError struct{ Flag, Message string }

func (e *FieldError) Error() string {
	if e.Flag == "" {
		return e.Message
	}
	return e.Flag + ": " + e.Message
}

func fieldErrors(errs []*pluginv1.FieldError, flag func(string) string) error {
	var out []error
	for _, fe := range errs {
		f := ""
		if fe.GetOption() != "" && flag != nil {
			f = flag(fe.GetOption())
		}
		out = append(out, &FieldError{Flag: f, Message: fe.GetMessage()})
	}
	return errors.Join(out...)
}

// FieldErrors converts a Configure response's errors, naming flags.
func FieldErrors(errs []*pluginv1.FieldError, flag func(string) string) error {
	return fieldErrors(errs, flag)
}

// observer connects the run loop to the journal, stats, exporters and progress.
type observer struct {
	runID, workload string
	wallStart       time.Time
	journal         *export.Journal
	fan             *export.Fanout
	stats           *stats.Collector
	err             error
	trace           *telemetry.Run // nil when tracing is off

	mu         sync.Mutex
	phase      workloadv1.Phase
	phaseStart time.Time
	lags       lagRing // recent dispatch lags, for progress
	sent       atomic.Int64
	done       atomic.Int64
	failed     atomic.Int64
	scheduled  atomic.Bool
}

func (o *observer) PhaseStarted(ph workloadv1.Phase, start time.Time) {
	if o.trace != nil {
		o.trace.StartPhase(telemetry.PhaseName(exporterv1.Phase(ph)), o.wallTime(start))
	}
	o.mu.Lock()
	o.phase, o.phaseStart = ph, start
	o.mu.Unlock()
	o.sent.Store(0)
	o.done.Store(0)
	o.failed.Store(0)
	if ph == workloadv1.Phase_PHASE_MEASURE {
		o.stats.Reset(start)
		o.lags.reset()
	}
}

func (o *observer) PhaseEnded(_ workloadv1.Phase, end time.Time) {
	if o.trace != nil {
		o.trace.EndPhase(o.wallTime(end))
	}
}

func (o *observer) Sent(workloadv1.Phase, string) { o.sent.Add(1) }

// epochNs converts a monotonic reading to Unix nanoseconds anchored at the
// run's start, so wall-clock jumps during the run cannot skew timestamps.
func (o *observer) epochNs(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return o.wallStart.UnixNano() + int64(t.Sub(o.wallStart))
}

// wallTime is epochNs as a time.Time: what spans are given, so that their
// timestamps equal the journal's.
func (o *observer) wallTime(t time.Time) time.Time { return time.Unix(0, o.epochNs(t)) }

func (o *observer) Finished(f *run.Finished) error {
	r := f.Result
	rec := &exporterv1.Record{
		RunId: o.runID, Workload: o.workload, Phase: exporterv1.Phase(f.Phase),
		RequestId: f.ID, Tags: f.Tags, Success: r.Success, Error: r.Error,
		TtftS: r.TTFT(), LatencyS: r.Latency(), DecodeSpeed: r.DecodeSpeed(), ItlS: r.ITL.Seconds(),
		InputTokens: int64(r.InputTokens), OutputTokens: int64(r.OutputTokens), CachedTokens: int64(r.CachedTokens),
		ScheduledUnixNs: o.epochNs(f.Scheduled), SubmitUnixNs: o.epochNs(r.Submit),
		FirstTokenUnixNs: o.epochNs(r.FirstToken), FinishUnixNs: o.epochNs(r.Finish), Seq: f.Seq,
	}
	// The journal first: once it has the record, the request is safe.
	if err := o.journal.Append(rec); err != nil {
		o.err = err
		return err
	}
	if err := o.journal.Flush(); err != nil {
		o.err = err
		return err
	}
	if o.trace != nil {
		o.trace.Request(rec, telemetry.Sent{Header: f.Header, MaxTokens: f.MaxTokens, Completion: f.Completion})
	}
	o.done.Add(1)
	if !r.Success {
		o.failed.Add(1)
	}
	if f.Phase == workloadv1.Phase_PHASE_MEASURE {
		// Dispatch lag is reported for workloads that schedule requests
		// (e.g. k/qps); for the rest "due" is only when their Step ran.
		lag := math.NaN()
		if f.ExplicitSchedule {
			lag = r.Submit.Sub(f.Scheduled).Seconds()
			o.scheduled.Store(true)
			o.lags.add(lag * 1000)
		}
		o.stats.Add(stats.Sample{
			Success: r.Success, TTFT: r.TTFT(), Latency: r.Latency(), DecodeSpeed: r.DecodeSpeed(),
			ITL: r.ITL.Seconds(), DispatchLag: lag,
			InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, Finish: r.Finish,
		})
	}
	o.fan.Add(rec)
	return nil
}

var _ run.Sender = (*engine.Sender)(nil)

// engineURL is the sender's base URL when it has one (engine.Sender does),
// for the server.* span attributes.
func engineURL(s run.Sender) string {
	if b, ok := s.(interface{ BaseURL() string }); ok {
		return b.BaseURL()
	}
	return ""
}
