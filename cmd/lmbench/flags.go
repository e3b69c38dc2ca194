package main

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/host"
	"github.com/lmbench/lmbench/core/sim"
	"github.com/lmbench/lmbench/core/stats"
	"github.com/lmbench/lmbench/core/tokenize"
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

// Config keys of lmbench run's own options.
const (
	keyEngineURL   = "engine_url"
	keyLMCacheURL  = "lmcache_url"
	keyModel       = "model"
	keyServedModel = "served_model_name"
	keyWorkload    = "workload"
	// keyWorkloadPlugin is --workload-plugin: a workload binary by path.
	keyWorkloadPlugin = "workload_plugin"
	keyKVVolume       = "kv_cache_volume"
	keyTokensPerGB    = "tokens_per_gb_kvcache"
	keySeed           = "seed"
	keyOutputDir      = "output_dir"
	keyNoCSV          = "no_csv"
	keyJSON           = "json"
	keyQuiet          = "quiet"
	keyLogLevel       = "log_level"
	keyLogFormat      = "log_format"
	keyDrain          = "drain_timeout"
	keyTokenizer      = host.TokenizerKey
	// keyPercentiles is the host's key too: the summary reads it from the
	// run's recorded configuration.
	keyPercentiles = host.PercentilesKey
)

const generalGroup = "General"

// simFlagPrefix starts the built-in engine's flags on lmbench run.
const simFlagPrefix = "sim-"

// hostOptions are lmbench run's own options (the original's, spec §1.1,
// plus new ones). Each is a flag, a config-file key and an LMBENCH_*
// variable at once; plugins add theirs from their option schemas.
func hostOptions() []config.Option {
	return []config.Option{
		{Key: keyEngineURL, Type: tString, Label: "Engine URL", Group: generalGroup,
			Help: "Inference engine URL (e.g. http://localhost:8000; a bare port means this machine), or \"builtin\" for the built-in simulated engine. Set OPENAI_API_KEY if authentication is needed."},
		{Key: keyWorkload, Type: tString, Label: "Workload", Group: generalGroup,
			Help: "Workload, by name (see lmbench plugins)."},
		{Key: keyWorkloadPlugin, Type: tString, Label: "Workload plugin", Group: generalGroup, Advanced: true,
			Help: "Path of a workload plugin binary to run (instead of --workload)."},
		{Key: keyLMCacheURL, Type: tString, Label: "LMCache server URL", Group: generalGroup,
			Help: "LMCache MP server URL for auto-detecting tokens per GB (read from its /status)."},
		{Key: keyTokensPerGB, Type: tInt, Label: "Tokens per GB of KV cache", Group: generalGroup,
			Help: "Tokens per GB of KV cache (required if --lmcache-url is not set). From vLLM's log: GPU KV cache size (tokens) / available KV cache memory (GiB)."},
		{Key: keyModel, Type: tString, Label: "Model", Group: generalGroup,
			Help: "Model name, as matched on LMCache's /status (auto-detected from the engine's /v1/models if omitted)."},
		{Key: keyServedModel, Type: tString, Label: "Served model name", Group: generalGroup,
			Help: "Model name sent to the engine, when it differs from --model (vLLM's --served-model-name). Default: --model."},
		{Key: keyKVVolume, Type: tFloat, Default: 100.0, Label: "KV cache volume (GB)", Group: generalGroup,
			Help: "Target active KV cache in GB."},
		{Key: keySeed, Type: tInt, Default: int64(42), Label: "Random seed", Group: generalGroup, Help: "Random seed."},
		{Key: keyOutputDir, Type: tString, Default: ".", Label: "Output directory", Group: generalGroup,
			Help: "Directory for output files."},
		{Key: keyNoCSV, Type: tBool, Default: false, Label: "Skip CSV export", Group: generalGroup, Advanced: true,
			Help: "Skip CSV export."},
		{Key: keyJSON, Type: tBool, Default: false, Label: "Export JSON summary", Group: generalGroup, Aliases: []string{"export_json"},
			Help: "Export JSON summary (bench_summary.json)."},
		{Key: keyQuiet, Short: "q", Type: tBool, Default: false, Label: "Quiet", Group: generalGroup, Advanced: true,
			Help: "Suppress the progress display."},
		{Key: keyLogLevel, Type: tEnum, Enum: []string{"trace", "debug", "info", "warn", "error"}, Default: "info",
			Label: "Log level", Group: generalGroup, Advanced: true, Help: "Log level."},
		{Key: keyLogFormat, Type: tEnum, Enum: []string{"auto", "console", "json"}, Default: "auto",
			Label: "Log format", Group: generalGroup, Advanced: true,
			Help: "Log format: console (human-readable), json, or auto (console when stderr is a terminal, else json)."},
		{Key: keyTokenizer, Type: tString, Default: tokenize.Auto, Label: "Tokenizer", Group: generalGroup, Advanced: true,
			Help: "What prompt lengths are counted in: auto (the engine's /tokenize if it answers, else words), engine (its /tokenize, or fail), words (whitespace words, as the original tool: lengths are not the model's tokens), or the path of a Hugging Face tokenizer.json (or its directory), with the chat template of the tokenizer_config.json beside it."},
		{Key: keyDrain, Type: tDuration, Default: 30 * time.Second, Label: "Drain timeout", Group: generalGroup, Advanced: true,
			Help: "After Ctrl-C or a plugin failure, how long to wait for in-flight requests before cancelling them."},
		{Key: keyPercentiles, Type: tString, Default: stats.DefaultPercentiles, Label: "Percentiles", Group: generalGroup, Advanced: true,
			Help: "Percentiles the summary reports for TTFT, TPOT, ITL, E2E and the latencies from the schedule: a comma list, each in (0, 100] (e.g. 50,90,95,99,99.9)."},
	}
}

// percentiles returns --percentiles checked and normalised (ascending,
// without repeats); an error names where the value came from and what it
// was.
func percentiles(v *config.Values) ([]float64, error) {
	ps, err := stats.ParsePercentiles(v.String(keyPercentiles))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v.Origin(keyPercentiles), err)
	}
	return ps, nil
}

// hostRegistry returns a registry holding lmbench's own options.
func hostRegistry() *config.Registry {
	r := config.NewRegistry()
	for _, o := range slices.Concat(hostOptions(), metricsOptions(), limitOptions(), loadOptions(), shardOptions(), uploadOptions()) {
		if _, err := r.Add(o); err != nil {
			panic(err) // a programming error in hostOptions, caught by every test
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

// cliFlags are the flags that say what to do with the configuration
// rather than being part of it: they have no config key or variable.
type cliFlags struct {
	config         string
	exportConfig   string
	noInteractive  bool
	exporters      []string
	exporterPlugin []string
	help           bool
	report         bool
	sim            sim.Config // --sim-*: the built-in engine's model (with --engine-url builtin)
}

// runFlags is lmbench run's flag set: --config, the registry's options
// (lmbench's, then the plugins'), then the command-line-only flags. This
// is the one place general flags are registered.
func runFlags(reg *config.Registry, c *cliFlags) *pflag.FlagSet {
	fs := pflag.NewFlagSet("lmbench run", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	fs.StringVar(&c.config, "config", "", "Load configuration from a JSON, YAML or TOML file (keys as written by --export-config); environment variables and flags win over file values.")
	reg.RegisterFlags(fs, func(o *config.Option) bool { return o.Owner == "" })
	fs.BoolVar(&c.noInteractive, "no-interactive", false, "Disable the guided setup: fail if required arguments are missing.")
	fs.StringVar(&c.exportConfig, "export-config", "", "Export the resolved configuration (model auto-detected, tokens per GB resolved; no engine URL or secrets) to a .json, .yaml or .toml file and exit without running.")
	fs.StringArrayVar(&c.exporters, "exporter", nil, "Extra exporter plugin by name (repeatable); csv is on unless --no-csv.")
	fs.StringArrayVar(&c.exporterPlugin, "exporter-plugin", nil, "Path of an exporter plugin binary (repeatable).")
	fs.BoolVar(&c.report, "report", false, "At the end, write the run's HTML report (report.html, as lmbench report) into the output directory.")
	fs.BoolVarP(&c.help, "help", "h", false, "Show help.")
	c.sim = sim.DefaultConfig()
	c.sim.RegisterFlags(fs, simFlagPrefix)
	reg.RegisterFlags(fs, func(o *config.Option) bool { return o.Owner != "" })
	return fs
}
