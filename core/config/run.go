package config

import (
	"slices"
	"time"

	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/core/engine/profile"
	"github.com/lmbench/lmbench/core/enginemetrics"
	"github.com/lmbench/lmbench/core/stats"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// Option types, short.
const (
	tString   = protocol.OptionString
	tInt      = protocol.OptionInt
	tFloat    = protocol.OptionFloat
	tBool     = protocol.OptionBool
	tEnum     = protocol.OptionEnum
	tDuration = protocol.OptionDuration
)

// Config keys of lmbench run's own options. Outside this package a run's
// settings are read from its Spec; the guided setup names its form's
// fields by the exported ones.
const (
	KeyEngineURL      = "engine_url"
	KeyLMCacheURL     = "lmcache_url"
	keyEngineKind     = "engine_kind"
	keyModel          = "model"
	keyServedModel    = "served_model_name"
	KeyWorkload       = "workload"
	KeyWorkloadPlugin = "workload_plugin"
	KeyKVVolume       = "kv_cache_volume"
	KeyTokensPerGB    = "tokens_per_gb_kvcache"
	KeyOutputDir      = "output_dir"
	keyOverwrite      = "overwrite"
	keyNoCSV          = "no_csv"
	KeyJSON           = "json"
	keyQuiet          = "quiet"
	keyRecordOutputs  = "record_outputs"
	keyRecordLogprobs = "record_logprobs"
	KeyLogLevel       = "log_level"
	KeyLogFormat      = "log_format"
	keyDrain          = "drain_timeout"

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

	keyMetricsURL      = "metrics_url"
	keyMetricsInterval = "metrics_interval"
	keyNoMetrics       = "no_metrics"
	keyResetCache      = "reset_cache"
	keyBlockSize       = "block_size"

	keyIgnoreEOS = "ignore_eos"
)

// Form groups.
const (
	// GeneralGroup is the guided setup's group of lmbench's own options.
	GeneralGroup = "General"
	limitsGroup  = "Timeouts and abort policy"
)

// --tokenizer's values besides a path.
const (
	TokenizerAuto   = "auto"
	TokenizerEngine = "engine"
	TokenizerWords  = "words"
)

// When --reset-cache resets the engine's prefix cache.
const (
	ResetNever         = "never"
	ResetBeforeWarmup  = "before-warmup"
	ResetBeforeMeasure = "before-measure"
)

// ResetModes are --reset-cache's values.
var ResetModes = []string{ResetNever, ResetBeforeWarmup, ResetBeforeMeasure}

// DefaultBlockSize is vLLM's default KV block, in tokens.
const DefaultBlockSize = 16

// The defaults of the abort policy's flags. With them an engine that dies
// mid-run stops the run within seconds whatever its rate: at a few
// requests a second the 20 refused connections come first, at one a
// second the health probe (3 failures, 2 s apart).
const (
	DefaultAbortAfterFailures = 20
	DefaultAbortFailureRate   = 0.9
	DefaultAbortWindow        = 50
	DefaultHealthInterval     = 2 * time.Second
)

// maxConcurrencyLimit bounds --max-concurrency: past it the cap means
// nothing on one machine, and a typo is caught.
const maxConcurrencyLimit = 1 << 20

// RunOptions are lmbench run's own options (the original's, spec §1.1,
// plus new ones), in the order help lists them. Each is a flag, a
// config-file key and an LMBENCH_* variable at once; plugins add theirs
// from their option schemas.
func RunOptions() []Option {
	return slices.Concat(generalOptions(), metricsOptions(), LimitOptions(), loadOptions())
}

// NewRunRegistry returns a registry holding lmbench run's own options
// (the shard and upload options among them) and extra (the built-in
// engine's, under the flag prefix its caller chose).
func NewRunRegistry(extra ...[]Option) *Registry {
	r := NewRegistry()
	for _, o := range slices.Concat(append([][]Option{RunOptions(), shardOptions(), uploadOptions()}, extra...)...) {
		if _, err := r.Add(o); err != nil {
			panic(err) // a programming error in the declarations, caught by every test
		}
	}
	// Keys of the original's files with no option here, loaded when they
	// ask for what lmbench does anyway: has_lmcache only gated a prompt;
	// later versions wrote a 128-token max output length (and ignore_eos,
	// now the option of that key, loadOptions).
	r.Tolerate("has_lmcache", nil)
	r.Tolerate("ldqa_max_output_length", 128)
	r.Tolerate("ldp_max_output_length", 128)
	return r
}

// generalOptions are the general options.
func generalOptions() []Option {
	return []Option{
		{Key: KeyEngineURL, Type: tString, Label: "Engine URL", Group: GeneralGroup,
			Help: "Inference engine URL (e.g. http://localhost:8000; a bare port means this machine), or \"builtin\" for the built-in simulated engine. Set OPENAI_API_KEY if authentication is needed."},
		{Key: keyEngineKind, Type: tEnum, Enum: engineKinds(), Default: string(profile.Auto), Label: "Engine kind",
			Group: GeneralGroup, Advanced: true,
			Help: "Which engine serves --engine-url: auto asks it (its version and info endpoints, its model list); a kind names it. " +
				"It says where cached tokens are reported (none on Ollama and TGI: the cache ledger then infers reuse from TTFT), " +
				"the tokenizer, the metric names and the cache reset. See lmbench probe."},
		{Key: KeyWorkload, Type: tString, Label: "Workload", Group: GeneralGroup,
			Help: "Workload, by name (see lmbench plugins)."},
		{Key: KeyWorkloadPlugin, Type: tString, Label: "Workload plugin", Group: GeneralGroup, Advanced: true,
			Help: "Path of a workload plugin binary to run (instead of --workload)."},
		{Key: KeyLMCacheURL, Type: tString, Label: "LMCache server URL", Group: GeneralGroup,
			Help: "LMCache MP server URL for auto-detecting tokens per GB (read from its /status)."},
		{Key: KeyTokensPerGB, Type: tInt, Label: "Tokens per GB of KV cache", Group: GeneralGroup,
			Help: "Tokens per GB of KV cache (required if --lmcache-url is not set): the engine's KV cache size in tokens divided by its KV cache memory in GiB. " +
				"vLLM logs both (GPU KV cache size, available KV cache memory); SGLang logs max_total_num_tokens and the KV cache size; " +
				"llama.cpp and Ollama log the KV buffer size (MiB) for n_ctx tokens; or 2^30 / (2 x layers x KV heads x head size x bytes per value)."},
		{Key: keyModel, Type: tString, Label: "Model", Group: GeneralGroup,
			Help: "Model name, as matched on LMCache's /status (auto-detected from the engine's /v1/models if omitted)."},
		{Key: keyServedModel, Type: tString, Label: "Served model name", Group: GeneralGroup,
			Help: "Model name sent to the engine, when it differs from --model (vLLM's --served-model-name). Default: --model."},
		{Key: KeyKVVolume, Type: tFloat, Default: 100.0, Label: "KV cache volume (GB)", Group: GeneralGroup,
			Help: "Target active KV cache in GB."},
		{Key: keySeed, Type: tInt, Default: int64(42), Label: "Random seed", Group: GeneralGroup, Help: "Random seed."},
		{Key: KeyOutputDir, Type: tString, Label: "Output directory", Group: GeneralGroup,
			Help: "Directory for the run's files. Default: a new directory per run, lmbench-results/<UTC time>-<workload>, which lmbench-results/latest links to (a sharded run's default is the working directory). A directory that holds a run is refused unless --overwrite."},
		{Key: keyOverwrite, Type: tBool, Default: false, Label: "Overwrite an earlier run", Group: GeneralGroup, Advanced: true,
			Help: "Let the run write into an --output-dir that holds an earlier run: every file of that run is removed first."},
		{Key: keyNoCSV, Type: tBool, Default: false, Label: "Skip CSV export", Group: GeneralGroup, Advanced: true,
			Help: "Skip CSV export."},
		{Key: KeyJSON, Type: tBool, Default: false, Label: "Export JSON summary", Group: GeneralGroup, Aliases: []string{"export_json"},
			Help: "Export JSON summary (bench_summary.json)."},
		{Key: keyQuiet, Short: "q", Type: tBool, Default: false, Label: "Quiet", Group: GeneralGroup, Advanced: true,
			Help: "Suppress the progress display."},
		{Key: keyRecordOutputs, Type: tBool, Default: false, Label: "Record outputs", Group: GeneralGroup, Advanced: true,
			Help: "Keep each answer's text in the journal and the exporters' files (output_text), so lmbench compare can check two runs answered alike. Off by default: it costs about the answers' size (4 bytes a token) per request; without it no answer text is kept anywhere."},
		{Key: keyRecordLogprobs, Type: tInt, Default: int64(0), Label: "Record log-probabilities", Group: GeneralGroup, Advanced: true,
			Help: "With --record-outputs, ask the engine for the top K log-probabilities of each answer's first K tokens (OpenAI's logprobs and top_logprobs) and keep them where it returns them (output_logprobs); 0 (the default) asks for none. About 30 bytes per token per alternative; 1 to 20."},
		{Key: KeyLogLevel, Type: tEnum, Enum: []string{"trace", "debug", "info", "warn", "error"}, Default: "info",
			Label: "Log level", Group: GeneralGroup, Advanced: true, Help: "Log level."},
		{Key: KeyLogFormat, Type: tEnum, Enum: []string{"auto", "console", "json"}, Default: "auto",
			Label: "Log format", Group: GeneralGroup, Advanced: true,
			Help: "Log format: console (human-readable), json, or auto (console when stderr is a terminal, else json)."},
		{Key: keyTokenizer, Type: tString, Default: TokenizerAuto, Label: "Tokenizer", Group: GeneralGroup, Advanced: true,
			Help: "What prompt lengths are counted in: auto (the engine's /tokenize if it answers, else words), engine (its /tokenize, or fail), words (whitespace words, as the original tool: lengths are not the model's tokens), or the path of a Hugging Face tokenizer.json (or its directory), with the chat template of the tokenizer_config.json beside it."},
		{Key: keyDrain, Type: tDuration, Default: 30 * time.Second, Label: "Drain timeout", Group: GeneralGroup, Advanced: true,
			Help: "After Ctrl-C or a plugin failure, how long to wait for in-flight requests before cancelling them."},
		{Key: keyPercentiles, Type: tString, Default: stats.DefaultPercentiles, Label: "Percentiles", Group: GeneralGroup, Advanced: true,
			Help: "Percentiles the summary reports for TTFT, TPOT, ITL, E2E and the latencies from the schedule: a comma list, each in (0, 100] (e.g. 50,90,95,99,99.9)."},
	}
}

// LimitOptions are the request limits and the abort policy. The defaults
// let a prefill take minutes (the first-token limit), yet notice a stalled
// stream (the idle limit) and a dead engine (the abort policy) within
// seconds to minutes.
func LimitOptions() []Option {
	return []Option{
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
		{Key: keyAbortFailures, Type: tInt, Default: int64(DefaultAbortAfterFailures), Label: "Abort after failures",
			Group: limitsGroup, Advanced: true,
			Help: "Abort the run after this many requests in a row got no response from the engine (refused, reset, connect timeout): the engine is gone (0: never)."},
		{Key: keyAbortRate, Type: tFloat, Default: DefaultAbortFailureRate, Label: "Abort failure rate",
			Group: limitsGroup, Advanced: true,
			Help: "Abort the run once at least this share of the last --abort-window finished requests failed, whatever the errors (0: never)."},
		{Key: keyAbortWindow, Type: tInt, Default: int64(DefaultAbortWindow), Label: "Abort window",
			Group: limitsGroup, Advanced: true,
			Help: "How many of the latest finished requests --abort-failure-rate looks at."},
		{Key: keyHealthInterval, Type: tDuration, Default: DefaultHealthInterval, Label: "Health probe interval",
			Group: limitsGroup, Advanced: true,
			Help: "Probe the engine (GET /health, else /v1/models, else a TCP connect) this often during the run; 3 failed probes in a row abort it, even when no request is finishing (0: no probe)."},
		{Key: keyAllowWarmupFailures, Type: tBool, Default: false, Label: "Allow warmup failures",
			Group: limitsGroup, Advanced: true,
			Help: "Measure even when warmup requests failed (by default one failed warmup request stops the run before the measured phase: what it was to cache would be missing)."},
	}
}

// metricsOptions are the options of reading the engine's own /metrics.
func metricsOptions() []Option {
	return []Option{
		{Key: keyMetricsURL, Type: tString, Label: "Engine metrics URL", Group: GeneralGroup, Advanced: true,
			Help: "Prometheus /metrics of the engine, scraped at the start, at each phase boundary and every --metrics-interval (default: the engine URL's origin + /metrics). A failed scrape is recorded, never fails the run."},
		{Key: keyMetricsInterval, Type: tDuration, Default: enginemetrics.DefaultInterval, Label: "Engine metrics interval",
			Group: GeneralGroup, Advanced: true,
			Help: "Time between scrapes of the engine's /metrics inside a phase (0 = only at the phase boundaries)."},
		{Key: keyNoMetrics, Type: tBool, Default: false, Label: "Skip engine metrics", Group: GeneralGroup, Advanced: true,
			Help: "Do not read the engine's /metrics (no bench_metrics.jsonl, no engine_metrics in the summary)."},
		{Key: keyResetCache, Type: tEnum, Enum: ResetModes, Default: ResetNever, Label: "Reset the prefix cache",
			Group: GeneralGroup, Advanced: true,
			Help: "POST the engine's /reset_prefix_cache before the warmup or the measured phase, then check with a probe prompt that it cleared (vLLM serves it only with VLLM_SERVER_DEV_MODE=1). A reset that fails or does not clear is reported, not fatal."},
		{Key: keyBlockSize, Type: tInt, Default: int64(DefaultBlockSize), Label: "Engine KV block size",
			Group: GeneralGroup, Advanced: true,
			Help: "The engine's KV-cache block in tokens (vLLM's --block-size). Unset: the block_size LMCache's /status reports (--lmcache-url, or the built-in engine's), else with --engine-url builtin the built-in engine's own, else 16. The cache ledger accepts one block per request between the requests' cached tokens and the engine's hit counters, and aligns expected reuse to it."},
	}
}

// loadOptions are the options on the load a run puts on the engine and
// what it counts as good, for any workload.
func loadOptions() []Option {
	return []Option{
		{Key: keyMaxConcurrency, Type: tInt, Default: int64(0), Label: "Max concurrency", Group: GeneralGroup, Advanced: true,
			Help: "Most requests in flight at once, for any workload (vLLM's --max-concurrency); a request due while the cap is reached waits, and the wait shows as dispatch lag. 0: no cap."},
		{Key: keySLO, Type: tString, Default: "", Label: "SLO (goodput limits)", Group: GeneralGroup, Advanced: true,
			Help: "Per-request limits in ms for goodput, as vLLM's --goodput: KEY:MS pairs, comma- or space-separated, KEY one of ttft, tpot, itl (the longest gap), e2e (e.g. ttft:200,tpot:50). A request is good when it succeeded and meets every limit; the summary reports goodput (good requests per second) and the share meeting each limit."},
		{Key: keyIgnoreEOS, Type: tBool, Default: false, Label: "Ignore EOS", Group: GeneralGroup, Advanced: true,
			Help: "Ask the engine for exactly max_tokens output tokens on every request, for any workload (vLLM bench serve's --ignore-eos): the body gets ignore_eos and min_tokens, which vLLM and SGLang honour; an engine that ignores them may still stop early (output_tokens says)."},
	}
}

// engineKinds are --engine-kind's values.
func engineKinds() []string {
	var out []string
	for _, k := range profile.Kinds() {
		out = append(out, string(k))
	}
	return out
}
