package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/core/engine/profile"
	"github.com/lmbench/lmbench/core/enginemetrics"
	"github.com/lmbench/lmbench/core/stats"
)

// Spec is one lmbench run, typed: lmbench run's own options as the
// layered configuration resolved them, checked and normalised once. Build
// makes it before any network traffic; the orchestration (core/bench) runs
// it; Entries records it. Every origin names the flag, key or variable a
// value came from, for the errors that can only be found later (an engine
// that does not answer, a model it does not serve).
type Spec struct {
	Engine  Endpoint
	LMCache Address
	// Model is matched on LMCache's /status ("" = detect it from
	// /v1/models); ServedModel is sent to the engine ("" = Model).
	Model, ServedModel        string
	ModelOrigin, ServedOrigin string
	// EngineKind is --engine-kind (profile.Auto: ask the engine), named
	// by EngineKindOrigin.
	EngineKind       profile.Kind
	EngineKindOrigin string
	// Workload names the workload; WorkloadPlugin is its binary's path
	// (one of the two is set once a workload is chosen).
	Workload, WorkloadPlugin string
	KVCacheVolumeGB          float64
	KVOrigin                 string
	// TokensPerGB is read from an LMCache-shaped /status unless
	// HasTokensPerGB.
	TokensPerGB    int64
	HasTokensPerGB bool
	TokensOrigin   string
	Seed           int64
	// Tokenizer is --tokenizer: auto, engine, words or a tokenizer.json
	// path (checked by the orchestration, which loads it).
	Tokenizer, TokenizerOrigin string
	Output                     Output
	// Drain is how long in-flight requests may finish after Ctrl-C or a
	// plugin failure before they are cancelled.
	Drain       time.Duration
	Percentiles []float64
	Limits      Limits
	Load        Load
	Metrics     Metrics
	Cache       Cache
	// Shard is a sharded run's settings; Upload is --upload-to.
	Shard  Shard
	Upload Upload
	// LogLevel and LogFormat are the log's (the CLI starts it before the
	// rest is resolved).
	LogLevel, LogFormat string

	values *Values // what Entries records
}

// Address is a server's address as typed (a bare port already read as
// http://localhost:PORT) and where it came from.
type Address struct {
	URL, Origin string
}

// Output is where and what a run writes.
type Output struct {
	// Dir is where the run's files go: --output-dir, or by default a new
	// directory per run under ResultsRoot (Auto); a sharded run's default
	// stays ".", the layout its merge reads. Origin names the option.
	Dir, Origin string
	// Auto says Dir is lmbench's choice: a directory of its own for this
	// run, which ResultsRoot's Latest link then points to.
	Auto bool
	// Overwrite lets the run replace the run Dir holds (--overwrite),
	// removing the old run's files first; without it such a directory is
	// refused before anything is contacted.
	Overwrite bool
	CSV       bool // the csv exporter (--no-csv turns it off)
	JSON      bool // bench_summary.json
	Quiet     bool // no progress display
	// RecordOutputs keeps each answer's text in the journal and the
	// exporters' records (--record-outputs); RecordLogprobs (K, 0: none)
	// the top K log-probabilities of its first K tokens too.
	RecordOutputs  bool
	RecordLogprobs int
}

// Limits are the request limits and the abort policy.
type Limits struct {
	Timeouts engine.Timeouts
	// MaxConnections caps requests in flight (and connections open); 0
	// until the orchestration sizes it from the open-file limit.
	MaxConnections int
	// AbortAfterFailures requests in a row without a response abort the
	// run (0: never); so does a failure rate of AbortFailureRate over the
	// last AbortWindow finished requests (0: never).
	AbortAfterFailures int
	AbortFailureRate   float64
	AbortWindow        int
	// HealthInterval is the engine probe's period (0: no probe).
	HealthInterval      time.Duration
	AllowWarmupFailures bool
}

// Load is what the run asks of the engine and counts as good, for any
// workload.
type Load struct {
	MaxConcurrency int // run-wide cap on requests in flight (0: none)
	SLO            stats.SLO
	IgnoreEOS      bool
}

// Metrics is how the engine's own /metrics is read.
type Metrics struct {
	Off      bool          // --no-metrics
	Interval time.Duration // between scrapes inside a phase (0: at phase boundaries only)
}

// Cache is the prefix-cache reset and the ledger's block size.
type Cache struct {
	// Reset is when the engine's prefix cache is reset (ResetNever, …);
	// ResetOrigin names the flag, for the errors of a reset URL.
	Reset, ResetOrigin string
	// BlockSize is the engine's KV block in tokens; BlockSizeSet says the
	// user gave it (otherwise /status or the built-in engine may tell).
	BlockSize    int
	BlockSizeSet bool
}

// Build reads a run's Spec from resolved values and checks everything
// that can be checked before any network traffic: each error names where
// the value came from, what it was and what is expected.
func Build(v *Values) (*Spec, error) {
	s := &Spec{values: v}
	for _, step := range []func(*Values) error{s.general, s.metrics, s.limits, s.load, s.shards, s.output, s.engine} {
		if err := step(v); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// general reads the general options.
func (s *Spec) general(v *Values) error {
	ps, err := stats.ParsePercentiles(v.String(keyPercentiles))
	if err != nil {
		return fmt.Errorf("%s: %w", v.Origin(keyPercentiles), err)
	}
	s.Percentiles = ps
	s.LMCache = Address{URL: PortOnly(v.String(KeyLMCacheURL)), Origin: v.Origin(KeyLMCacheURL)}
	s.Model, s.ModelOrigin = v.String(keyModel), v.Origin(keyModel)
	s.ServedModel, s.ServedOrigin = v.String(keyServedModel), v.Origin(keyServedModel)
	if s.EngineKind, err = profile.ParseKind(v.String(keyEngineKind), v.Origin(keyEngineKind)); err != nil {
		return err
	}
	s.EngineKindOrigin = v.Origin(keyEngineKind)
	s.Workload, s.WorkloadPlugin = v.String(KeyWorkload), v.String(KeyWorkloadPlugin)
	s.KVCacheVolumeGB, s.KVOrigin = v.Float(KeyKVVolume), v.Origin(KeyKVVolume)
	if !(s.KVCacheVolumeGB > 0) {
		return fmt.Errorf("%s: must be positive, got %s", s.KVOrigin, strconv.FormatFloat(s.KVCacheVolumeGB, 'g', -1, 64))
	}
	s.TokensPerGB, s.HasTokensPerGB, s.TokensOrigin = v.Int(KeyTokensPerGB), v.Has(KeyTokensPerGB), v.Origin(KeyTokensPerGB)
	s.Seed = v.Int(keySeed)
	s.Tokenizer, s.TokenizerOrigin = v.String(keyTokenizer), v.Origin(keyTokenizer)
	s.Drain = v.Duration(keyDrain)
	s.LogLevel, s.LogFormat = v.String(KeyLogLevel), v.String(KeyLogFormat)
	return nil
}

// metrics reads the engine-metrics and cache options.
func (s *Spec) metrics(v *Values) error {
	if n := v.Int(keyBlockSize); n < 1 {
		return fmt.Errorf("%s: must be >= 1, got %d", v.Origin(keyBlockSize), n)
	}
	s.Cache = Cache{Reset: v.String(keyResetCache), ResetOrigin: v.Origin(keyResetCache),
		BlockSize: int(v.Int(keyBlockSize)), BlockSizeSet: v.UserSet(keyBlockSize)}
	if s.Cache.Reset == "" {
		s.Cache.Reset = ResetNever
	}
	s.Metrics = Metrics{Off: v.Bool(keyNoMetrics), Interval: v.Duration(keyMetricsInterval)}
	if s.Metrics.Off {
		return nil
	}
	if u := v.String(keyMetricsURL); u != "" {
		if err := enginemetrics.CheckURL(u); err != nil {
			return fmt.Errorf("%s: %w", v.Origin(keyMetricsURL), err)
		}
	}
	if s.Metrics.Interval < 0 {
		return fmt.Errorf("%s: must be >= 0, got %v", v.Origin(keyMetricsInterval), s.Metrics.Interval)
	}
	return nil
}

// limits reads the request limits and the abort policy; the drain
// timeout is checked here too: 0 reads as the 30 s default, a negative
// one would abandon in-flight requests at once.
func (s *Spec) limits(v *Values) error {
	var errs []error
	durationOr := func(key, zero string) time.Duration {
		d := v.Duration(key)
		if d < 0 {
			errs = append(errs, fmt.Errorf("%s: must be >= 0 (0: %s), got %s", v.Origin(key), zero, d))
		}
		return d
	}
	duration := func(key string) time.Duration { return durationOr(key, "no limit") }
	count := func(key string, min int64, what string) int {
		n := v.Int(key)
		if n < min || n > math.MaxInt32 {
			errs = append(errs, fmt.Errorf("%s: must be between %d and %d%s, got %d", v.Origin(key), min, math.MaxInt32, what, n))
		}
		return int(n)
	}
	durationOr(keyDrain, "the default, 30s")
	s.Limits = Limits{
		Timeouts: engine.Timeouts{
			Connect: duration(keyConnectTimeout), FirstToken: duration(keyFirstTokenTimeout),
			Idle: duration(keyIdleTimeout), Request: duration(keyRequestTimeout),
		},
		MaxConnections:      count(keyMaxConnections, 0, " (0: from the open-file limit)"),
		AbortAfterFailures:  count(keyAbortFailures, 0, " (0: never)"),
		AbortWindow:         count(keyAbortWindow, 1, ""),
		AbortFailureRate:    v.Float(keyAbortRate),
		AllowWarmupFailures: v.Bool(keyAllowWarmupFailures),
		HealthInterval:      durationOr(keyHealthInterval, "no probe"),
	}
	if r := s.Limits.AbortFailureRate; math.IsNaN(r) || r < 0 || r > 1 {
		errs = append(errs, fmt.Errorf("%s: must be between 0 and 1 (0: never), got %s",
			v.Origin(keyAbortRate), strconv.FormatFloat(r, 'g', -1, 64)))
	}
	return errors.Join(errs...)
}

// load reads the load options.
func (s *Spec) load(v *Values) error {
	if n := v.Int(keyMaxConcurrency); n < 0 || n > maxConcurrencyLimit {
		return fmt.Errorf("%s: must be between 0 (no cap) and %d requests, got %d", v.Origin(keyMaxConcurrency), maxConcurrencyLimit, n)
	}
	slo, err := stats.ParseSLO(v.String(keySLO))
	if err != nil {
		return fmt.Errorf("%s: %w", v.Origin(keySLO), err)
	}
	s.Load = Load{MaxConcurrency: int(v.Int(keyMaxConcurrency)), SLO: slo, IgnoreEOS: v.Bool(keyIgnoreEOS)}
	return nil
}

// engine reads the engine's address (the metrics URL with it). The
// built-in engine's URLs are known once it listens (Endpoint.Started).
func (s *Spec) engine(v *Values) error {
	raw := PortOnly(v.String(KeyEngineURL))
	e := Endpoint{Typed: raw, Origin: v.Origin(KeyEngineURL), Builtin: raw == BuiltinEngine,
		metricsURL: v.String(keyMetricsURL), metricsOff: v.Bool(keyNoMetrics)}
	if !e.Builtin && raw != "" {
		base, stripped, err := engine.CheckBaseURL(raw)
		if err != nil {
			return fmt.Errorf("%s: %w", e.Origin, err)
		}
		e.Stripped = stripped
		if err := e.at(base, RedactURL(base)); err != nil {
			return fmt.Errorf("%s: %w (set --metrics-url or --no-metrics)", v.Origin(keyMetricsURL), err)
		}
	}
	if s.LMCache.URL != "" {
		if _, _, err := engine.CheckBaseURL(s.LMCache.URL); err != nil {
			return fmt.Errorf("%s: %w", s.LMCache.Origin, err)
		}
	}
	s.Engine = e
	return nil
}

// HasStatusSource reports whether tokens per GB can be read from an
// LMCache-shaped /status: given an LMCache URL, or with the built-in
// engine, whose /status reports its own tokens per GB.
func (s *Spec) HasStatusSource() bool {
	return HasStatusSource(s.LMCache.URL, s.Engine.Typed)
}

// HasStatusSource is Spec.HasStatusSource for an LMCache and an engine
// address as typed (the guided setup's fields).
func HasStatusSource(lmcacheURL, engineURL string) bool {
	return lmcacheURL != "" || PortOnly(strings.TrimSpace(engineURL)) == BuiltinEngine
}

// ReadLoad reads and checks the load options alone (a sweep's, before its
// points are run).
func ReadLoad(v *Values) (Load, error) {
	var s Spec
	err := s.load(v)
	return s.Load, err
}

// ReadOutput reads the output options alone (also before the rest can
// be checked: the first pass learns from it whether csv is an exporter).
// Dir is "" when --output-dir was not given (Build then picks one).
func ReadOutput(v *Values) Output {
	return Output{Dir: v.String(KeyOutputDir), Origin: v.Origin(KeyOutputDir), Overwrite: v.Bool(keyOverwrite),
		CSV: !v.Bool(keyNoCSV), JSON: v.Bool(KeyJSON), Quiet: v.Bool(keyQuiet), RecordOutputs: v.Bool(keyRecordOutputs),
		RecordLogprobs: int(v.Int(keyRecordLogprobs))}
}

// CheckShareable checks the run-wide concurrency cap can be divided among
// a sharded run's count shards.
func CheckShareable(v *Values, count int) error {
	if n := v.Int(keyMaxConcurrency); n > 0 && n < int64(count) {
		return fmt.Errorf("%s: %d cannot be divided among %d shards (each gets its part of the cap): expected at least %d",
			v.Origin(keyMaxConcurrency), n, count, count)
	}
	return nil
}
