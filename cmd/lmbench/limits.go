package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/core/host"
)

// Config keys of the request limits and the abort policy.
const (
	keyConnectTimeout      = "connect_timeout"
	keyFirstTokenTimeout   = "first_token_timeout"
	keyIdleTimeout         = "idle_timeout"
	keyRequestTimeout      = "request_timeout"
	keyMaxConnections      = "max_connections"
	keyAbortFailures       = "abort_after_failures"
	keyAbortRate           = "abort_failure_rate"
	keyAbortWindow         = "abort_window"
	keyHealthInterval      = "health_interval"
	keyAllowWarmupFailures = "allow_warmup_failures"
)

const limitsGroup = "Timeouts and abort policy"

// limitOptions are the request limits and the abort policy: flags, config
// keys and LMBENCH_* variables like every other option. The defaults let a
// prefill take minutes (the first-token limit), yet notice a stalled
// stream (the idle limit) and a dead engine (the abort policy) within
// seconds to minutes.
func limitOptions() []config.Option {
	return []config.Option{
		{Key: keyConnectTimeout, Type: tDuration, Default: engine.DefaultConnectTimeout, Label: "Connect timeout",
			Group: limitsGroup, Advanced: true,
			Help: "Longest wait to open a connection to the engine (0: no limit)."},
		{Key: keyFirstTokenTimeout, Type: tDuration, Default: engine.DefaultFirstTokenTimeout, Label: "First-token timeout",
			Group: limitsGroup, Advanced: true,
			Help: "Longest wait from sending a request to its first output token: queueing and the whole prefill, which takes minutes on long contexts, hence the generous default; also what ends a request whose engine sent headers and then nothing (0: no limit)."},
		{Key: keyIdleTimeout, Type: tDuration, Default: engine.DefaultIdleTimeout, Label: "Idle timeout",
			Group: limitsGroup, Advanced: true,
			Help: "Longest gap between two chunks of a streaming answer once output has begun: an engine that sends part of an answer and then nothing fails the request after this (0: no limit)."},
		{Key: keyRequestTimeout, Type: tDuration, Default: time.Duration(engine.DefaultRequestTimeout), Label: "Request timeout",
			Group: limitsGroup, Advanced: true,
			Help: "Longest time for a whole request, from sending to [DONE] (0, the default: no limit; long answers on a loaded engine are slow, not broken)."},
		{Key: keyMaxConnections, Type: tInt, Default: int64(0), Label: "Max connections",
			Group: limitsGroup, Advanced: true,
			Help: "Most requests in flight (and connections open) at once; more wait, which shows as dispatch lag, not as failures. 0, the default: from the open-file limit (raised to the hard limit at start), 90% of (limit - 64), halved with --engine-url builtin, which serves the connections in the same process."},
		{Key: keyAbortFailures, Type: tInt, Default: int64(host.DefaultAbortAfterFailures), Label: "Abort after failures",
			Group: limitsGroup, Advanced: true,
			Help: "Abort the run after this many requests in a row got no response from the engine (refused, reset, connect timeout): the engine is gone (0: never)."},
		{Key: keyAbortRate, Type: tFloat, Default: host.DefaultAbortFailureRate, Label: "Abort failure rate",
			Group: limitsGroup, Advanced: true,
			Help: "Abort the run once at least this share of the last --abort-window finished requests failed, whatever the errors (0: never)."},
		{Key: keyAbortWindow, Type: tInt, Default: int64(host.DefaultAbortWindow), Label: "Abort window",
			Group: limitsGroup, Advanced: true,
			Help: "How many of the latest finished requests --abort-failure-rate looks at."},
		{Key: keyHealthInterval, Type: tDuration, Default: host.DefaultHealthInterval, Label: "Health probe interval",
			Group: limitsGroup, Advanced: true,
			Help: "Probe the engine (GET /health, else /v1/models, else a TCP connect) this often during the run; 3 failed probes in a row abort it, even when no request is finishing (0: no probe)."},
		{Key: keyAllowWarmupFailures, Type: tBool, Default: false, Label: "Allow warmup failures",
			Group: limitsGroup, Advanced: true,
			Help: "Measure even when warmup requests failed (by default one failed warmup request stops the run before the measured phase: what it was to cache would be missing)."},
	}
}

// runLimits are a run's request limits and abort policy, checked.
type runLimits struct {
	timeouts       engine.Timeouts
	maxConnections int
	abort          host.AbortPolicy
}

// limits reads and checks the limits, before any network traffic: every
// error names where the value came from, what it was and what is
// expected. builtin says the built-in engine runs in this process.
func limits(v *config.Values, builtin bool) (runLimits, error) {
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
	// The drain timeout is checked here too: 0 reads as the 30 s default,
	// a negative one would abandon in-flight requests at once.
	durationOr(keyDrain, "the default, 30s")
	l := runLimits{
		timeouts: engine.Timeouts{
			Connect: duration(keyConnectTimeout), FirstToken: duration(keyFirstTokenTimeout),
			Idle: duration(keyIdleTimeout), Request: duration(keyRequestTimeout),
		},
		maxConnections: count(keyMaxConnections, 0, " (0: from the open-file limit)"),
		abort: host.AbortPolicy{
			ConnectionFailures:  count(keyAbortFailures, 0, " (0: never)"),
			Window:              count(keyAbortWindow, 1, ""),
			FailureRate:         v.Float(keyAbortRate),
			AllowWarmupFailures: v.Bool(keyAllowWarmupFailures),
		},
	}
	l.abort.Health.Interval = durationOr(keyHealthInterval, "no probe")
	if r := l.abort.FailureRate; math.IsNaN(r) || r < 0 || r > 1 {
		errs = append(errs, fmt.Errorf("%s: must be between 0 and 1 (0: never), got %s",
			v.Origin(keyAbortRate), strconv.FormatFloat(r, 'g', -1, 64)))
	}
	if err := errors.Join(errs...); err != nil {
		return runLimits{}, err
	}
	if l.maxConnections == 0 {
		l.maxConnections = engine.DefaultMaxConnections()
		if builtin {
			l.maxConnections = max(l.maxConnections/2, 1)
		}
	}
	return l, nil
}

// limitEntries are the limits set by the user, for --export-config: the
// file replays them; the defaults stay the defaults of the version that
// reads it.
func limitEntries(v *config.Values) []config.Entry {
	var out []config.Entry
	for _, o := range limitOptions() {
		if v.UserSet(o.Key) {
			out = append(out, config.Entry{Key: o.Key, Value: v.Get(o.Key)})
		}
	}
	return out
}

// builtin reports whether the run starts the built-in engine in this
// process.
func builtin(v *config.Values) bool {
	return host.PortOnly(v.String(keyEngineURL)) == host.BuiltinEngine
}

// engineConfig is the sender's configuration for the prepared engine.
func (l runLimits) engineConfig(p *host.Prepared, log zerolog.Logger) engine.Config {
	if limit, ok := engine.OpenFileLimit(); ok {
		log.Info().Uint64("open_file_limit", limit).Int("max_connections", l.maxConnections).
			Msgf("at most %d connections at once (open-file limit %d)", l.maxConnections, limit)
	}
	return engine.Config{BaseURL: p.EngineURL, Model: p.Served, APIKey: p.APIKey,
		Timeouts: l.timeouts, MaxConnections: l.maxConnections}
}

// abortPolicy is the run's abort policy, its health probe aimed at the
// prepared engine.
func (l runLimits) abortPolicy(p *host.Prepared) host.AbortPolicy {
	a := l.abort
	a.Health.BaseURL = engine.NormalizeURL(p.EngineURL)
	a.Health.APIKey = p.APIKey
	return a
}
