package main

import (
	"fmt"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/enginemetrics"
	"github.com/lmbench/lmbench/core/host"
	"github.com/lmbench/lmbench/core/kvcache"
)

// Config keys of the engine-metrics options.
const (
	keyMetricsURL      = "metrics_url"
	keyMetricsInterval = "metrics_interval"
	keyNoMetrics       = "no_metrics"
	keyResetCache      = "reset_cache"
	keyBlockSize       = "block_size"
)

// metricsOptions are the options of reading the engine's own /metrics.
func metricsOptions() []config.Option {
	return []config.Option{
		{Key: keyMetricsURL, Type: tString, Label: "Engine metrics URL", Group: generalGroup, Advanced: true,
			Help: "Prometheus /metrics of the engine, scraped at the start, at each phase boundary and every --metrics-interval (default: the engine URL's origin + /metrics). A failed scrape is recorded, never fails the run."},
		{Key: keyMetricsInterval, Type: tDuration, Default: enginemetrics.DefaultInterval, Label: "Engine metrics interval",
			Group: generalGroup, Advanced: true,
			Help: "Time between scrapes of the engine's /metrics inside a phase (0 = only at the phase boundaries)."},
		{Key: keyNoMetrics, Type: tBool, Default: false, Label: "Skip engine metrics", Group: generalGroup, Advanced: true,
			Help: "Do not read the engine's /metrics (no bench_metrics.jsonl, no engine_metrics in the summary)."},
		{Key: keyResetCache, Type: tEnum, Enum: kvcache.ResetModes, Default: kvcache.ResetNever, Label: "Reset the prefix cache",
			Group: generalGroup, Advanced: true,
			Help: "POST the engine's /reset_prefix_cache before the warmup or the measured phase, then check with a probe prompt that it cleared (vLLM serves it only with VLLM_SERVER_DEV_MODE=1). A reset that fails or does not clear is reported, not fatal."},
		{Key: keyBlockSize, Type: tInt, Default: int64(kvcache.DefaultBlockSize), Label: "Engine KV block size",
			Group: generalGroup, Advanced: true,
			Help: "The engine's KV-cache block in tokens (vLLM's --block-size). Unset: the block_size LMCache's /status reports (--lmcache-url, or the built-in engine's), else with --engine-url builtin the built-in engine's own, else 16. The cache ledger accepts one block per request between the requests' cached tokens and the engine's hit counters, and aligns expected reuse to it."},
	}
}

// resetPlan is the run's --reset-cache, nil for never.
func resetPlan(v *config.Values, engineURL string) (*kvcache.ResetPlan, error) {
	when := v.String(keyResetCache)
	if when == "" || when == kvcache.ResetNever {
		return nil, nil
	}
	u, err := kvcache.ResetURLFor(engineURL)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v.Origin(keyResetCache), err)
	}
	return &kvcache.ResetPlan{When: when, URL: u}, nil
}

// checkMetrics checks the engine-metrics options, before any traffic.
func checkMetrics(v *config.Values) error {
	if n := v.Int(keyBlockSize); n < 1 {
		return fmt.Errorf("%s: must be >= 1, got %d", v.Origin(keyBlockSize), n)
	}
	if v.Bool(keyNoMetrics) {
		return nil
	}
	if u := v.String(keyMetricsURL); u != "" {
		if err := enginemetrics.CheckURL(u); err != nil {
			return fmt.Errorf("%s: %w", v.Origin(keyMetricsURL), err)
		}
	}
	if d := v.Duration(keyMetricsInterval); d < 0 {
		return fmt.Errorf("%s: must be >= 0, got %v", v.Origin(keyMetricsInterval), d)
	}
	return nil
}

// metricsPlan is the run's engine-metrics plan, nil with --no-metrics.
func metricsPlan(v *config.Values, engineURL string) (*host.MetricsPlan, error) {
	if v.Bool(keyNoMetrics) {
		return nil, nil
	}
	u := v.String(keyMetricsURL)
	if u == "" {
		var err error
		if u, err = enginemetrics.URLFor(engineURL); err != nil {
			return nil, fmt.Errorf("%s: %w (set --metrics-url or --no-metrics)", v.Origin(keyMetricsURL), err)
		}
	}
	return &host.MetricsPlan{URL: u, Interval: v.Duration(keyMetricsInterval)}, nil
}

// blockSize is the ledger's block size and where it came from:
// --block-size when given, else what /status reported (statusBlock, 0:
// none), else with the built-in engine its own (--sim-block-size), else
// the default.
func blockSize(v *config.Values, simBlock, statusBlock int) (int, string) {
	switch {
	case v.UserSet(keyBlockSize):
		return int(v.Int(keyBlockSize)), kvcache.BlockFromFlag
	case statusBlock > 0:
		return statusBlock, kvcache.BlockFromStatus
	case host.PortOnly(v.String(keyEngineURL)) == host.BuiltinEngine:
		return simBlock, kvcache.BlockFromBuiltin
	}
	return int(v.Int(keyBlockSize)), kvcache.BlockFromDefault
}
