package bench

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/abort"
	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/dispatch"
	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/core/engine/profile"
	"github.com/lmbench/lmbench/core/kvcache"
	"github.com/lmbench/lmbench/core/pluginset"
	"github.com/lmbench/lmbench/core/progress"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/report"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// Job is a prepared run with what it runs with: its Spec, what Prepare
// found, the plugins, and the CLI's display and signals. Run turns it
// into the Plan Execute runs: the sender, the abort policy, the metrics
// and reset plans and the summary's configuration are built here, from
// the Spec, and nowhere else.
type Job struct {
	Spec      *config.Spec
	Prepared  *Prepared
	Workload  *pluginset.Workload
	Exporters []pluginset.Exporter
	// Config is the recorded configuration (Spec.Entries as JSON).
	Config  json.RawMessage
	Version string
	Log     zerolog.Logger
	Stdout  io.Writer
	// Progress and ProgressEvery are the live display (Plan's).
	Progress      progress.Sink
	ProgressEvery time.Duration
	Hurry         <-chan struct{}
	// Part is the run's part of a sharded run (zero: not sharded): the
	// requested rate and the concurrency cap are its share of the run's.
	// Shard is its journal block once the common start was reached, and
	// BeforePhase the barrier's gate (both nil when not sharded).
	Part        protocol.Shard
	Shard       *record.Shard
	BeforePhase func(ctx context.Context, phase protocol.Phase) error
	// BuiltinBlockSize is the built-in engine's KV block (its
	// --sim-block-size), the ledger's block when nothing else says.
	BuiltinBlockSize int
}

// Run runs a prepared benchmark (see Execute for its errors and Result).
// Spans are recorded when the OTEL_* environment asks for them
// (core/telemetry), and flushed before Run returns.
func Run(ctx context.Context, b Job) (*Result, error) {
	sender, err := engine.New(b.senderConfig())
	if err != nil {
		return nil, err
	}
	defer sender.Close()
	tracing, stop, err := startTracing(b.Version, b.Log)
	if err != nil {
		return nil, err
	}
	defer stop()
	p := b.plan(sender)
	p.Tracing = tracing
	return Execute(ctx, p)
}

// plan is the Plan of the run, sending with sender.
func (b Job) plan(sender dispatch.Sender) Plan {
	s, p, w := b.Spec, b.Prepared, b.Workload
	block, from := b.blockSize()
	return Plan{
		Workload: w.Service(), Plugin: w.Name(), WantsText: w.Desc.WantsResponseText, Capabilities: w.Caps,
		TagKeys: w.Desc.TagKeys, Sender: sender, EngineURL: p.Engine.Base, Exporters: b.Exporters,
		Report: report.Config{
			EngineURL: p.Engine.Shown, Model: p.Model, Workload: w.Name(),
			KVCacheVolumeGB: s.KVCacheVolumeGB, TokensPerGB: p.TokensPerGB, Seed: s.Seed,
			OutputDir: s.Output.Dir, ExportCSV: s.Output.CSV, ExportJSON: s.Output.JSON, Quiet: s.Output.Quiet,
			Tokenizer: p.Tokenizer, Percentiles: s.Percentiles, Sim: report.SimSettings(b.Config),
			Sizing:  p.sizing(),
			Options: report.WorkloadSettings(b.Config, config.IsRunKey),
		},
		Config: b.Config, Version: b.Version, Planned: int(p.Configured.PlannedRequests),
		Log: b.Log, Stdout: b.Stdout, Progress: b.Progress, ProgressEvery: b.ProgressEvery, DrainTimeout: s.Drain,
		Metrics: b.metrics(), Reset: b.reset(), BlockSize: block, BlockSizeFrom: from,
		EngineProfile: p.EngineProfile(), NoCachedTokens: p.noCachedTokens(),
		WorkloadBlock: workloadBlock(p.Configured.Resolved), WorkloadBlockFlag: "--" + w.Prefix() + "-block-size",
		Abort: b.abortPolicy(), Hurry: b.Hurry,
		RequestedRate: b.requestedRate(), MaxConcurrency: b.maxConcurrency(),
		IgnoreEOS: s.Load.IgnoreEOS, Shard: b.Shard, BeforePhase: b.BeforePhase,
		NewDir: s.Output.Auto, Overwrite: s.Output.Overwrite,
		RecordOutputs: s.Output.RecordOutputs, RecordLogprobs: s.Output.RecordLogprobs, ScoreKeys: w.Desc.ScoreKeys, DecodeSeed: decodeSeed(w.Desc, s.Seed),
	}
}

// decodeSeed is the seed every request carries: the run's, when the
// workload asked for deterministic decoding; nil otherwise.
func decodeSeed(d protocol.WorkloadDescription, seed int64) *int64 {
	if !d.Deterministic {
		return nil
	}
	return &seed
}

// senderConfig is the engine sender's configuration: the prepared
// engine, the Spec's limits, and a connection cap from the open-file
// limit when none was given (halved with the built-in engine, which
// serves the connections in this process).
func (b Job) senderConfig() engine.Config {
	l, p := b.Spec.Limits, b.Prepared
	n := l.MaxConnections
	if n == 0 {
		n = engine.DefaultMaxConnections()
		if b.Spec.Engine.Builtin {
			n = max(n/2, 1)
		}
	}
	if limit, ok := engine.OpenFileLimit(); ok {
		b.Log.Info().Uint64("open_file_limit", limit).Int("max_connections", n).
			Msgf("at most %d connections at once (open-file limit %d)", n, limit)
	}
	return engine.Config{BaseURL: p.Engine.Base, Model: p.Served, APIKey: p.APIKey,
		Timeouts: l.Timeouts, MaxConnections: n}
}

// abortPolicy is the run's abort policy, its health probe aimed at the
// prepared engine.
func (b Job) abortPolicy() abort.Policy {
	l := b.Spec.Limits
	return abort.Policy{
		ConnectionFailures: l.AbortAfterFailures, FailureRate: l.AbortFailureRate, Window: l.AbortWindow,
		AllowWarmupFailures: l.AllowWarmupFailures,
		Health:              abort.HealthProbe{BaseURL: b.Prepared.Engine.Base, APIKey: b.Prepared.APIKey, Interval: l.HealthInterval},
	}
}

// metrics is the engine-metrics plan, nil with --no-metrics, and nil
// for an engine that serves none (Ollama) unless --metrics-url names one.
func (b Job) metrics() *MetricsPlan {
	if b.Spec.Metrics.Off {
		return nil
	}
	if pr := b.Prepared.Profile; pr.Kind != "" && pr.Kind != profile.Unknown && pr.Metrics == "" && !b.Prepared.Engine.MetricsGiven() {
		b.Log.Info().Msgf("%s serves no Prometheus metrics: engine metrics are off for this run", pr.Name)
		return nil
	}
	return &MetricsPlan{URL: b.Prepared.Engine.MetricsURL, Interval: b.Spec.Metrics.Interval}
}

// reset is the run's --reset-cache, nil for never: at the engine's own
// reset (SGLang's /flush_cache, llama.cpp's slot erase), vLLM's
// /reset_prefix_cache for an engine lmbench does not know.
func (b Job) reset() *kvcache.ResetPlan {
	when := b.Spec.Cache.Reset
	if when == kvcache.ResetNever {
		return nil
	}
	plan := &kvcache.ResetPlan{When: when, URL: b.Prepared.Engine.ResetURL}
	if r := b.Prepared.Profile.Reset; r.Path != "" {
		const vllm = "/reset_prefix_cache"
		if r.Path != vllm { // llama.cpp: slot 0's (a server of one slot, --parallel 1, is reset whole)
			plan.URL = strings.TrimSuffix(plan.URL, vllm) + strings.ReplaceAll(r.Path, "{id}", "0")
		}
		plan.NotFound = r.Note
	}
	return plan
}

// blockSize is the ledger's block size and where it came from:
// --block-size when given, else what /status reported, else with the
// built-in engine its own, else the default.
func (b Job) blockSize() (int, string) {
	c := b.Spec.Cache
	switch {
	case c.BlockSizeSet:
		return c.BlockSize, kvcache.BlockFromFlag
	case b.Prepared.StatusBlockSize > 0:
		return b.Prepared.StatusBlockSize, kvcache.BlockFromStatus
	case b.Spec.Engine.Builtin:
		return b.BuiltinBlockSize, kvcache.BlockFromBuiltin
	}
	return c.BlockSize, kvcache.BlockFromDefault
}

// workloadBlock is the workload's own block-size option, when it has one
// (trace-replay's --tr-block-size); 0 otherwise.
func workloadBlock(resolved protocol.Values) int {
	switch v := resolved["block-size"].(type) {
	case int64:
		return int(v)
	case float64:
		return int(v)
	case int:
		return v
	}
	return 0
}

// requestedRate is this run's part of the rate the workload declared.
func (b Job) requestedRate() float64 {
	rate := RequestedRate(b.Workload.Caps, b.Prepared.Configured)
	if b.Part.Sharded() {
		rate /= float64(b.Part.Count)
	}
	return rate
}

// maxConcurrency is this run's part of the run-wide cap (0: none).
func (b Job) maxConcurrency() int {
	n := b.Spec.Load.MaxConcurrency
	if !b.Part.Sharded() || n <= 0 {
		return n
	}
	return b.Part.Share(n)
}

// RequestedRate is the rate a configured workload declared, when it and
// this host agreed on the requested-rate capability (0 otherwise).
func RequestedRate(caps protocol.Capabilities, c protocol.Configured) float64 {
	if !caps.Has(protocol.RequestedRate) || !(c.RequestedRate > 0) {
		return 0
	}
	return c.RequestedRate
}
