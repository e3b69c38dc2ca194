package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/abort"
	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/dispatch"
	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/core/export"
	"github.com/lmbench/lmbench/core/failure"
	"github.com/lmbench/lmbench/core/kvcache"
	"github.com/lmbench/lmbench/core/outdir"
	"github.com/lmbench/lmbench/core/overhead"
	"github.com/lmbench/lmbench/core/pluginset"
	"github.com/lmbench/lmbench/core/progress"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/report"
	"github.com/lmbench/lmbench/core/shard"
	"github.com/lmbench/lmbench/core/stats"
	"github.com/lmbench/lmbench/core/telemetry"
	"github.com/lmbench/lmbench/sdk/host/runloop"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// Plan is everything a run needs.
type Plan struct {
	// Workload is the configured workload; Plugin its name for errors.
	Workload     protocol.WorkloadService
	Plugin       string
	WantsText    bool
	Capabilities protocol.Capabilities // negotiated with the workload
	TagKeys      []string
	Sender       dispatch.Sender
	// EngineURL is the engine's API base, for the run span's server.*
	// attributes.
	EngineURL string
	Exporters []pluginset.Exporter
	Report    report.Config // what the summary reports (no secrets)
	// Config is the resolved configuration recorded in the journal and
	// exporter metadata (a JSON object, no secrets).
	Config  json.RawMessage
	Version string
	// Planned is the number of measured requests, if known (progress).
	Planned int
	Log     zerolog.Logger
	// Stdout receives the terminal summary. Progress, when non-nil,
	// receives a Snapshot every ProgressEvery (progress.DefaultEvery when
	// 0) and is closed once the run loop has stopped, before the summary
	// is printed.
	Stdout        io.Writer
	Progress      progress.Sink
	ProgressEvery time.Duration
	DrainTimeout  time.Duration
	// Tracing records the run as OpenTelemetry spans (run, phases,
	// requests) and sends each request's traceparent to the engine; nil
	// records nothing and sends no extra header.
	Tracing *telemetry.Provider
	// Abort says when the run stops early (a dead or failing engine, a
	// failed warmup request).
	Abort abort.Policy
	// Metrics scrapes the engine's /metrics through the run; nil: off.
	Metrics *MetricsPlan
	// Reset resets the engine's prefix cache and checks it; nil: never.
	Reset *kvcache.ResetPlan
	// BlockSize is the engine's KV-cache block in tokens, the cache
	// ledger's tolerance per request (0: kvcache.DefaultBlockSize).
	BlockSize int
	// BlockSizeFrom says where BlockSize came from (kvcache.BlockFromFlag, …),
	// for the ledger.
	BlockSizeFrom string
	// EngineProfile is the summary's engine block (nil: none);
	// NoCachedTokens names an engine that reports no cached tokens (the
	// ledger then infers reuse from TTFT).
	EngineProfile  *report.EngineProfile
	NoCachedTokens string
	// WorkloadBlock is the workload's own block-size option (trace
	// replay's hash block), named by WorkloadBlockFlag; 0: none.
	WorkloadBlock     int
	WorkloadBlockFlag string
	// Hurry, once closed, cancels the requests in flight, as a drain
	// timeout does (a second Ctrl-C); the files are written as usual.
	Hurry <-chan struct{}
	// NewDir says Report.OutputDir is a new directory of lmbench's
	// choosing (made here, linked from config.Latest beside it);
	// Overwrite that the run it holds, if any, is replaced: its files are
	// removed first. Without either, a directory holding a run is refused.
	NewDir, Overwrite bool
	// RequestedRate is the workload's declared rate (0: none), recorded
	// in the journal for the summary's achieved-vs-requested figures;
	// MaxConcurrency caps requests in flight (0: no cap).
	RequestedRate  float64
	MaxConcurrency int
	// IgnoreEOS asks the engine for exactly max_tokens on every request
	// (--ignore-eos), whatever the workload asks.
	IgnoreEOS bool
	// DecodeSeed, when set, is sent with every request: the workload asked
	// for deterministic decoding (its description's Deterministic).
	DecodeSeed *int64
	// RecordOutputs keeps each answer's text on its record
	// (--record-outputs): in the journal and the exporters' files.
	// Without it the text reaches only a workload that wants it.
	RecordOutputs bool
	// RecordLogprobs (K; 0: none) asks for the log-probabilities of each
	// answer's first K tokens and keeps them beside its text.
	RecordLogprobs int
	// ScoreKeys are the scores the workload gives answers (its
	// description's); with the Scores capability the exporters get each
	// record once its scores are in.
	ScoreKeys []string
	// BeforePhase, when set, holds each phase until it returns (a sharded
	// run's barrier: the shards' measured phases start together); an
	// error it returns (a *shard.GateError) aborts the run before the phase.
	BeforePhase func(ctx context.Context, phase protocol.Phase) error
	// Shard is the run's part of a sharded run (nil: not sharded): its
	// RunID is the run's id, recorded in the journal's header with the
	// rest; Execute sets its Lateness (the start against StartAt).
	Shard *record.Shard

	// For tests: wraps the journal (to make it fail), and where a
	// fallback journal goes (nil: defaultFallbackDirs).
	journalHook  func(journalWriter) journalWriter
	fallbackDirs []string
}

// Result is how the run went.
type Result struct {
	RunID    string
	Final    stats.Final
	Overhead *report.Overhead // the client's overhead certificate
	// Engine is what the engine's /metrics said (nil: not read); Ledger
	// the cache reset's check and the cache ledger.
	Engine *report.EngineMetrics
	Ledger *report.CacheLedger
	// Status is how the run ended; Interrupted is Status == Interrupted
	// (Ctrl-C or SIGTERM). Abort is why an aborted run was stopped.
	Status      record.Status
	Interrupted bool
	Abort       *abort.Cause
	Files       []string
	// JournalPath is the journal that holds every record of the run: the
	// output directory's, or the fallback one when that failed.
	JournalPath string
	// Err is the first error (the abort, workload, journal or exporter);
	// the summary and files are still written when it is set.
	Err error
	// FilesFailed says a result file may be incomplete: the journal, an
	// exporter or the JSON summary failed (lmbench export rebuilds the
	// files from the journal).
	FilesFailed bool
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
	x, err := openRun(ctx, p)
	if err != nil {
		return nil, err
	}
	// Cancelled (with the Abort as its cause) when a health probe gives
	// up on the engine: the loop then stops stepping and drains, as on
	// Ctrl-C. Other aborts are the observer's errors.
	runCtx, cancelRun := context.WithCancelCause(ctx)
	defer cancelRun(nil)
	obs := x.observer(ctx, runCtx)
	tr := dispatch.New(ctx, p.Sender, obs.header())
	tr.IgnoreEOS, tr.Seed, tr.TopLogprobs = p.IgnoreEOS, p.DecodeSeed, p.RecordLogprobs
	defer tr.Close()
	obs.cache = startCache(runCtx, p)
	defer watchHurry(p.Hurry, tr, p.Log)()
	stopProgress := startProgress(runCtx, p, obs)
	stopHealth := abort.StartHealth(runCtx, p.Abort.Health, p.Log, x.onUnhealthy(obs, cancelRun))
	outcome, runErr := runloop.Run(runCtx, runloop.Config[dispatch.Measured]{
		Workload: p.Workload, Transport: tr, Observer: obs, Plugin: p.Plugin,
		WantsText: p.WantsText, Capabilities: p.Capabilities, DrainTimeout: p.DrainTimeout,
		MaxConcurrency: p.MaxConcurrency, BeforePhase: p.BeforePhase, OnDrain: x.onDrain,
	})
	stopHealth()
	stopProgress()
	x.res.Err = runErr
	if a := obs.currentAbort(); a != nil && !errors.Is(runErr, a) {
		x.res.Err = errors.Join(a, runErr) // the health probe's abort stopped the loop
	}
	x.res.Status, x.res.Abort = runStatus(obs, runErr, outcome.Interrupted)
	x.res.Interrupted = x.res.Status == record.Interrupted
	x.finish(obs, outcome)
	return x.res, nil
}

// execution is one run of Execute: its plan, journal, exporters and
// result.
type execution struct {
	p         Plan
	res       *Result
	run       record.Run
	wallStart time.Time
	journal   journalWriter
	keep      *keeper
	fan       *export.Fanout
}

// openRun creates the output directory, the journal and the exporters.
func openRun(ctx context.Context, p Plan) (*execution, error) {
	wallStart := time.Now()
	x := &execution{p: p, res: &Result{RunID: NewRunID(wallStart)}, wallStart: wallStart}
	x.run = record.Run{
		ID: x.res.RunID, Workload: p.Report.Workload, Model: p.Report.Model, OutputDir: p.Report.OutputDir,
		Version: p.Version, TagKeys: p.TagKeys, ScoreKeys: p.ScoreKeys, Config: p.Config, Started: wallStart,
		RequestedRate: p.RequestedRate,
	}
	if p.EngineProfile != nil {
		x.run.Engine, _ = json.Marshal(p.EngineProfile) // plain strings and bools: it cannot fail
	}
	if p.Shard != nil {
		sh := *p.Shard
		if !sh.StartAt.IsZero() {
			// StartAt is on the reference clock: this host's start there.
			sh.Lateness = wallStart.Add(sh.Clock.Offset).Sub(sh.StartAt)
		}
		x.res.RunID, x.run.ID, x.run.Shard = sh.RunID, sh.RunID, &sh
	}
	if err := outdir.Make(p.Report.OutputDir, p.NewDir, p.Overwrite, p.Log); err != nil {
		return nil, err
	}
	j, err := record.CreateJournal(filepath.Join(p.Report.OutputDir, record.JournalName), x.run)
	if err != nil {
		return nil, err
	}
	x.journal = j
	if p.journalHook != nil {
		x.journal = p.journalHook(x.journal)
	}
	targets, err := pluginset.Configure(ctx, p.Exporters, x.run)
	if err != nil {
		x.journal.Close(nil)
		return nil, err
	}
	x.fan = export.NewFanout(targets, export.Options{}, p.Log)
	dirs := p.fallbackDirs
	if dirs == nil {
		dirs = defaultFallbackDirs()
	}
	x.keep = &keeper{run: x.run, primary: x.journal, dirs: dirs}
	return x, nil
}

// observer is the run's observer, with its run span when tracing.
func (x *execution) observer(ctx, runCtx context.Context) *observer {
	p := x.p
	obs := &observer{
		runID: x.res.RunID, workload: p.Report.Workload, wallStart: x.wallStart,
		keep: x.keep, fan: x.fan, live: stats.NewLive(x.wallStart), log: p.Log,
		policy: abort.NewState(p.Abort), flog: abort.NewFailureLog(p.Log, abort.FailureLogEvery),
		allowWarmup: p.Abort.AllowWarmupFailures, runCtx: runCtx,
		streams: &streamChecks{ignoreAll: p.IgnoreEOS, log: p.Log},
		outputs: p.RecordOutputs, scores: newScoreHold(p),
	}
	if p.Tracing != nil {
		obs.trace = p.Tracing.StartRun(ctx, telemetry.RunInfo{
			RunID: x.res.RunID, Workload: p.Report.Workload, Version: p.Version, Model: p.Report.Model,
			EngineURL: p.EngineURL, Start: x.wallStart,
		})
	}
	return obs
}

// header is the traceparent header of each request (nil: no tracing).
func (o *observer) header() func() http.Header {
	if o.trace == nil {
		return nil
	}
	return o.trace.Header
}

// onUnhealthy is what a health probe that gave up does: abort the run,
// unless a request that succeeded meanwhile shows the engine alive (a
// slow health endpoint alone never aborts a run).
func (x *execution) onUnhealthy(obs *observer, cancel context.CancelCauseFunc) func(*abort.Cause) bool {
	p := x.p
	return func(a *abort.Cause) bool {
		if window := time.Duration(abort.HealthFailures) * p.Abort.Health.Interval; obs.succeededWithin(window) {
			p.Log.Warn().Msgf("the engine's health probe failed %d times in a row, but requests still succeed: not stopping the run", abort.HealthFailures)
			return false
		}
		if obs.setAbort(a) {
			p.Log.Error().Msgf("stopping the run: %s", a.Reason)
			cancel(a)
		}
		return true
	}
}

// onDrain logs the drain after Ctrl-C or a plugin failure.
func (x *execution) onDrain(n int, abandoned bool) {
	if abandoned {
		x.p.Log.Warn().Int("in_flight", n).Msg("drain timeout: cancelling in-flight requests (recorded as failed)")
	} else {
		x.p.Log.Warn().Int("in_flight", n).Str("timeout", drainTimeout(x.p.DrainTimeout).String()).Msg("waiting for in-flight requests")
	}
}

// finish computes the summary from the journal and writes every file.
func (x *execution) finish(obs *observer, outcome runloop.Result) {
	p, res, keep := x.p, x.res, x.keep
	if keep.failed != nil {
		p.Log.Error().Msgf("journal write failed: %v; the records are saved to %s", keep.failed, keep.savedTo())
		if keep.fb == nil {
			for _, r := range keep.kept {
				p.Log.Error().RawJSON("record", record.AppendJSON(nil, r)).Msg("a finished request no file could take")
			}
		}
	}
	// The final numbers come from the journal: the run kept no samples.
	if err := keep.flush(); err != nil {
		res.Err = errors.Join(res.Err, err)
		res.FilesFailed = true
	}
	if keep.failed != nil {
		res.FilesFailed = true
	}
	res.JournalPath = x.journal.Path()
	if keep.fb != nil {
		res.JournalPath = keep.fb.Path()
	}
	obs.releaseScored(0) // an interrupted phase may not have ended
	rep := x.summarize(obs, outcome)
	summary := report.Summary(p.Report, rep, res.Final)
	summary.MeasureStart = obs.wall(outcome.MeasureStart)
	x.writeFiles(&summary)
	if obs.trace != nil {
		obs.trace.End(telemetry.RunEnd{
			End: obs.wallTime(time.Now()), Requests: res.Final.TotalRequests, Failed: res.Final.FailedRequests,
			Interrupted: res.Interrupted, Err: res.Err,
		})
	}
	report.Terminal(p.Stdout, p.Report, rep, res.Final)
	x.writeJSON(summary)
	// Last, where it does not scroll away: what ran, the point, the files.
	fmt.Fprintln(p.Stdout)
	for _, l := range report.Headline(p.Report, rep, res.Final, x.filesLine()) {
		fmt.Fprintln(p.Stdout, l)
	}
}

// filesLine says where the run's files are: its directory, and the link
// to it when lmbench chose it.
func (x *execution) filesLine() string {
	dir := x.p.Report.OutputDir
	if x.p.NewDir {
		return fmt.Sprintf("%s (also %s)", dir, filepath.Join(filepath.Dir(dir), config.Latest))
	}
	return dir
}

// summarize computes the final numbers, the overhead certificate and the
// engine's and cache's blocks from the journal, the three reading it in
// one pass (sharedScan).
func (x *execution) summarize(obs *observer, outcome runloop.Result) report.Run {
	p, res, keep := x.p, x.res, x.keep
	measured, _ := obs.live.Counts()
	var (
		final                  stats.Final
		hasSchedule            bool
		finalErr, certErr, err error
		wg                     sync.WaitGroup
	)
	shared := newSharedScan(keep.scan, 3)
	read := func(f func(scan scanFunc)) {
		scan, leave := shared.reader()
		wg.Go(func() { defer leave(); f(scan) })
	}
	read(func(scan scanFunc) {
		final, hasSchedule, finalErr = finalFrom(scan, obs.wall(outcome.MeasureStart), measured)
	})
	probe := obs.probe.Stop()
	read(func(scan scanFunc) { res.Overhead, certErr = overhead.Certificate(scan, probe) })
	read(func(scan scanFunc) { res.Engine, res.Ledger, err = obs.cache.finish(scan, p.Report.Workload) })
	wg.Wait()
	obs.mu.Lock()
	overhead.WithSteps(res.Overhead, obs.workload, obs.stepsMs)
	obs.mu.Unlock()
	res.Final = final
	if finalErr != nil {
		res.Err = errors.Join(res.Err, fmt.Errorf("summary: reading the journal back: %w", finalErr))
		res.Final = stats.Final{Aggregated: obs.live.Current(time.Now())}
	}
	if certErr != nil {
		res.Err = errors.Join(res.Err, fmt.Errorf("overhead certificate: reading the journal back: %w", certErr))
	}
	res.Err = errors.Join(res.Err, err)
	rep := report.Run{ID: res.RunID, Version: p.Version, Interrupted: res.Status != record.Completed,
		Status: res.Status, Planned: p.Planned, Sent: int(obs.measureSent.Load()), Finished: measured,
		HasSchedule: hasSchedule, Shard: x.run.Shard, Overhead: res.Overhead, Engine: res.Engine, Ledger: res.Ledger,
		EngineProfile: p.EngineProfile, ShortUnderIgnoreEOS: obs.streams.shortCount()}
	switch {
	case res.Abort != nil:
		rep.Title, rep.Reason = res.Abort.Title, res.Abort.Reason
	case res.Interrupted:
		rep.Reason = "interrupted (Ctrl-C or SIGTERM)"
	}
	if rep.Engine != nil && rep.Engine.SamplesFile != "" {
		res.Files = append(res.Files, filepath.Join(p.Report.OutputDir, rep.Engine.SamplesFile))
	}
	return rep
}

// writeFiles has the exporters finish and closes the journal with the
// summary.
func (x *execution) writeFiles(summary *record.Summary) {
	res := x.res
	for _, r := range x.fan.Finish(*summary, 60*time.Second) {
		if r.Err != nil {
			res.Err = errors.Join(res.Err, r.Err)
			res.FilesFailed = true
		}
		for _, f := range r.Files {
			res.Files = append(res.Files, f.Path)
			x.p.Log.Info().Str("exporter", r.Name).Str("path", f.Path).Int64("rows", f.Rows).Msg("results written")
		}
	}
	summary.Files = outdir.Files(x.p.Report.OutputDir, res.Files)
	if x.p.Report.ExportJSON {
		summary.Files = append(summary.Files, record.SummaryName)
	}
	if err := x.keep.close(summary); err != nil {
		res.Err = errors.Join(res.Err, err)
		res.FilesFailed = true
	}
}

// writeJSON writes bench_summary.json when asked to.
func (x *execution) writeJSON(summary record.Summary) {
	if !x.p.Report.ExportJSON {
		return
	}
	path := filepath.Join(x.p.Report.OutputDir, record.SummaryName)
	if err := record.WriteFileAtomic(path, summary.JSON); err != nil {
		x.res.Err = errors.Join(x.res.Err, fmt.Errorf("JSON summary: %w", err))
		x.res.FilesFailed = true
		return
	}
	x.res.Files = append(x.res.Files, path)
	x.p.Log.Info().Str("path", path).Msg("JSON summary written")
}

// runStatus is how the run ended: aborted when lmbench stopped it (the
// policy, a failed warmup, the journal, the health probe) or the
// workload failed, interrupted on Ctrl-C, else completed.
func runStatus(obs *observer, runErr error, interrupted bool) (record.Status, *abort.Cause) {
	if a := obs.currentAbort(); a != nil {
		obs.finishAbort(a)
		return record.Aborted, a
	}
	var gate *shard.GateError
	if errors.As(runErr, &gate) {
		return record.Aborted, &abort.Cause{Title: "shards out of step", Reason: runErr.Error()}
	}
	if runErr != nil {
		return record.Aborted, &abort.Cause{Title: "workload failed", Reason: "workload failed: " + runErr.Error()}
	}
	if interrupted {
		return record.Interrupted, nil
	}
	return record.Completed, nil
}

func drainTimeout(d time.Duration) time.Duration {
	if d == 0 {
		return 30 * time.Second
	}
	return d
}

// observer connects the run loop to the journal, stats, exporters and
// progress, and applies the abort policy to every finished request.
type observer struct {
	runID, workload string
	wallStart       time.Time
	keep            *keeper
	fan             *export.Fanout
	live            *stats.Live     // running numbers, for progress
	trace           *telemetry.Run  // nil when tracing is off
	probe           *overhead.Probe // the measured phase's overhead probe
	cache           *cacheRun       // the engine's metrics, the cache reset and ledger
	streams         *streamChecks   // output shorter than asked, buffered streams
	log             zerolog.Logger
	outputs         bool           // keep the answers' text (--record-outputs)
	scores          *export.Scored // records waiting for their scores; nil: none wait

	// The abort policy's state, failures told as they happen, and the
	// failed warmup requests; runCtx is done once the run is stopping.
	policy      *abort.State
	flog        *abort.FailureLog
	warm        abort.WarmupFailures
	allowWarmup bool
	runCtx      context.Context
	journalAb   *abort.Cause // the abort for a failed journal, once it failed
	warmAb      *abort.Cause // the abort for failed warmup requests

	mu          sync.Mutex
	abort       *abort.Cause // the first abort, from the loop or the health probe
	phase       protocol.Phase
	phaseStart  time.Time
	lags        progress.Lags // recent dispatch lags, for progress
	stepsMs     []float64     // how long each measured Step took the workload
	sent        atomic.Int64
	done        atomic.Int64
	failed      atomic.Int64
	measureSent atomic.Int64
	lastSuccess atomic.Int64 // when a request last succeeded (Unix ns; 0: none yet)
}

// succeededWithin reports whether a request succeeded in the last d.
func (o *observer) succeededWithin(d time.Duration) bool {
	last := o.lastSuccess.Load()
	return last != 0 && time.Since(time.Unix(0, last)) <= d
}

// setAbort records a as the run's abort unless it has one; it reports
// whether a is the one.
func (o *observer) setAbort(a *abort.Cause) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.abort != nil {
		return false
	}
	o.abort = a
	return true
}

func (o *observer) currentAbort() *abort.Cause {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.abort
}

// finishAbort completes a's reason with what the drain added: every
// failed warmup request, where the journal's records went.
func (o *observer) finishAbort(a *abort.Cause) {
	switch a {
	case o.warmAb:
		*a = *o.warm.Cause()
	case o.journalAb:
		a.Reason = fmt.Sprintf("journal write failed: %v; records saved to %s", o.keep.failed, o.keep.savedTo())
	}
}

func (o *observer) PhaseStarted(ph protocol.Phase, start time.Time) {
	if o.trace != nil {
		o.trace.StartPhase(ph.String(), o.wallTime(start))
	}
	o.cache.phaseStarted(ph)
	o.mu.Lock()
	o.phase, o.phaseStart = ph, start
	o.mu.Unlock()
	o.sent.Store(0)
	o.done.Store(0)
	o.failed.Store(0)
	if ph == protocol.Measure {
		o.live.Reset(start)
		o.lags.Reset()
		o.probe = overhead.StartProbe()
	}
}

func (o *observer) PhaseEnded(ph protocol.Phase, end time.Time) {
	if ph == protocol.Measure {
		o.probe.Stop()
	}
	if o.trace != nil {
		o.trace.EndPhase(o.wallTime(end))
	}
	o.cache.phaseEnded(ph)
	o.releaseScored(ph)
}

// Stepped keeps how long the workload took to answer a measured Step,
// for the overhead certificate (runloop.StepObserver).
func (o *observer) Stepped(ph protocol.Phase, took time.Duration) {
	if ph != protocol.Measure {
		return
	}
	o.mu.Lock()
	o.stepsMs = append(o.stepsMs, float64(took)/float64(time.Millisecond))
	o.mu.Unlock()
}

func (o *observer) Sent(out *runloop.Outgoing) {
	o.sent.Add(1)
	if out.Phase == protocol.Measure {
		o.measureSent.Add(1)
	}
}

// wall converts a monotonic reading to wall-clock time anchored at the
// run's start, so wall-clock jumps during the run cannot skew timestamps.
func (o *observer) wall(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return time.Unix(0, o.wallStart.UnixNano()+int64(t.Sub(o.wallStart)))
}

// wallTime is wall for times that are never zero (spans).
func (o *observer) wallTime(t time.Time) time.Time { return o.wall(t) }

func (o *observer) Finished(f *runloop.Finished[dispatch.Measured]) error {
	r := &f.Measured.Result
	rec := &record.Record{
		RunID: o.runID, Workload: o.workload, Phase: f.Req.Phase,
		RequestID: f.Req.ID, Tags: f.Req.Tags, Success: r.Success, Error: r.Error,
		TTFT: r.TTFT(), Latency: r.Latency(), DecodeSpeed: r.DecodeSpeed(), ITL: r.ITL.Seconds(),
		InputTokens: int64(r.InputTokens), OutputTokens: int64(r.OutputTokens), CachedTokens: int64(r.CachedTokens),
		Scheduled: o.wall(f.Req.Due), ExplicitSchedule: f.Req.Explicit, Submit: o.wall(r.Submit),
		FirstToken: o.wall(r.FirstToken), Finish: o.wall(r.Finish), Seq: f.Seq,
		Chunks: int64(r.Chunks), UsageOutputTokens: int64(r.UsageOutputTokens), ChunkOffsetsUs: chunkOffsetsUs(r.ChunkTimes),
		FinishReason: r.FinishReason, ResponseID: r.ResponseID, ResponseModel: r.ResponseModel,
		StatedPromptTokens: int64(f.Req.PromptTokens), TargetTier: f.Req.TargetTier,
	}
	rec.ChunkOffsetsTruncated = rec.Chunks > int64(len(rec.ChunkOffsetsUs))
	if o.outputs {
		rec.OutputText = r.Text
		rec.OutputLogprobs = logprobsJSON(r.Logprobs)
	}
	o.cache.observe(rec, f.Req)
	o.streams.observe(rec, f.Req)
	// The journal first: once it has the record, the request is safe.
	// When it fails the run stops at once, and the keeper keeps this
	// record and every later one elsewhere.
	var stop error
	if err := o.keep.add(rec); err != nil {
		o.journalAb = &abort.Cause{Title: "journal write failed", Reason: "journal write failed: " + err.Error()}
		o.log.Error().Str("error", err.Error()).Msgf("journal write failed: stopping the run; the records are kept in %s", o.keep.savedTo())
		if o.setAbort(o.journalAb) {
			stop = o.journalAb
		}
	}
	if o.trace != nil {
		o.trace.Request(rec, telemetry.Sent{Header: f.Measured.Header, MaxTokens: f.Req.MaxTokens, Completion: f.Req.Completion})
	}
	if f.Req.Phase == protocol.Measure {
		// Dispatch lag is reported for workloads that schedule requests
		// (e.g. k/qps); for the rest "due" is only when their Step ran.
		lag := math.NaN()
		if f.Req.Explicit {
			lag = r.Submit.Sub(f.Req.Due).Seconds()
			o.lags.Add(lag * 1000)
		}
		// Decode speed only where it is defined (as in the summary); the
		// live means skip the rest.
		decode := stats.DecodeSpeed(rec)
		if math.IsNaN(decode) {
			decode = 0
		}
		o.live.Add(stats.Sample{
			Success: r.Success, TTFT: r.TTFT(), Latency: r.Latency(), DecodeSpeed: decode,
			ITL: r.ITL.Seconds(), DispatchLag: lag,
			InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, Finish: r.Finish,
		})
	}
	// Counted after the live numbers, so a snapshot never shows a request
	// done that its means leave out.
	o.done.Add(1)
	if !r.Success {
		o.failed.Add(1)
	} else {
		o.lastSuccess.Store(rec.Finish.UnixNano()) // no clock read of its own on the hot path
	}
	o.export(rec)
	if stop != nil {
		return stop
	}
	return o.judge(rec)
}

// judge applies the abort policy to a finished request and returns the
// abort that stops the run, if this request decides one.
func (o *observer) judge(rec *record.Record) error {
	o.flog.Add(time.Now(), rec.Phase.String(), rec.RequestID, rec.Success, rec.Error)
	if rec.Phase == record.Warmup && !rec.Success {
		o.warm.Add(rec.RequestID, rec.Error)
	}
	// Once the run is stopping (Ctrl-C, an abort), what still finishes
	// decides nothing; nor does a request lmbench cancelled itself.
	if o.runCtx.Err() != nil || o.currentAbort() != nil {
		return nil
	}
	if !rec.Success && failure.Classify(rec.Error).ID == failure.Cancelled.ID {
		return nil
	}
	a := o.policy.Observe(rec.RequestID, rec.Success, rec.Error)
	if a == nil && rec.Phase == record.Warmup && !rec.Success && !o.allowWarmup {
		o.warmAb = o.warm.Cause()
		a = o.warmAb
	}
	if a == nil || !o.setAbort(a) {
		return nil
	}
	o.log.Error().Msgf("stopping the run: %s", a.Reason)
	return a
}

// chunkOffsetsUs converts the chunks' offsets from submit to whole
// microseconds (truncated), the journal's unit, at most
// record.MaxChunkOffsets of them (the engine's cap; any Sender's); nil for
// none.
func chunkOffsetsUs(times []time.Duration) []int64 {
	times = times[:min(len(times), record.MaxChunkOffsets)]
	if len(times) == 0 {
		return nil
	}
	out := make([]int64, len(times))
	for i, d := range times {
		out[i] = d.Microseconds()
	}
	return out
}

// Others are the errors of the run besides why it was aborted: its Err
// without the abort's cause, and without an error the abort's reason
// already states (a workload's failure is the reason of its abort).
func (r *Result) Others() []error {
	var a error
	reason := ""
	if r.Abort != nil {
		a, reason = r.Abort, r.Abort.Reason
	}
	var out []error
	for _, err := range leaves(r.Err) {
		if (a != nil && errors.Is(err, a)) || (reason != "" && strings.Contains(reason, err.Error())) {
			continue
		}
		out = append(out, err)
	}
	return out
}

// leaves are the errors err joins, each join unwrapped.
func leaves(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, leaves(e)...)
		}
		return out
	}
	return []error{err}
}

// logprobsJSON is the record's form of an answer's log-probabilities
// ("" for none).
func logprobsJSON(lps []engine.TokenLogprob) string {
	if len(lps) == 0 {
		return ""
	}
	b, err := json.Marshal(lps)
	if err != nil {
		return "" // strings and finite floats; NaN from an engine is not kept
	}
	return string(b)
}
