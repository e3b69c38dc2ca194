package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/sim"

	pluginv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/plugin/v1"
)

// general holds lmbench run's own flags (the original's, spec §1.1, plus new ones).
type general struct {
	config         string
	engineURL      string
	lmcacheURL     string
	model          string
	workload       string
	workloadPlugin string
	kvCacheVolume  float64
	tokensPerGB    int64
	seed           int64
	outputDir      string
	noCSV          bool
	json           bool
	quiet          bool
	noInteractive  bool
	exportConfig   string
	exporters      []string
	exporterPlugin []string
	logLevel       string
	drainTimeout   time.Duration
	help           bool
	sim            sim.Config // --sim-*: the built-in engine's model (with --engine-url builtin)
}

func (g *general) register(fs *pflag.FlagSet) {
	fs.StringVar(&g.config, "config", "", "Load configuration from a JSON file (keys as exported by --export-config); command-line flags win over file values.")
	fs.StringVar(&g.engineURL, "engine-url", "", "Inference engine URL (e.g. http://localhost:8000), or \"builtin\" for the built-in simulated engine. Set OPENAI_API_KEY if authentication is needed.")
	fs.StringVar(&g.lmcacheURL, "lmcache-url", "", "LMCache MP server URL for auto-detecting tokens per GB.")
	fs.StringVar(&g.model, "model", "", "Model name (auto-detected from the engine's /v1/models if omitted).")
	fs.StringVar(&g.workload, "workload", "", "Workload, by name (see lmbench plugins).")
	fs.StringVar(&g.workloadPlugin, "workload-plugin", "", "Path of a workload plugin binary to run (instead of --workload).")
	fs.Float64Var(&g.kvCacheVolume, "kv-cache-volume", 100.0, "Target active KV cache in GB.")
	fs.Int64Var(&g.tokensPerGB, "tokens-per-gb-kvcache", 0, "Tokens per GB of KV cache (required if --lmcache-url is not set).")
	fs.Int64Var(&g.seed, "seed", 42, "Random seed.")
	fs.StringVar(&g.outputDir, "output-dir", ".", "Directory for output files.")
	fs.BoolVar(&g.noCSV, "no-csv", false, "Skip CSV export.")
	fs.BoolVar(&g.json, "json", false, "Export JSON summary (bench_summary.json).")
	fs.BoolVarP(&g.quiet, "quiet", "q", false, "Suppress real-time progress display.")
	fs.BoolVar(&g.noInteractive, "no-interactive", false, "Disable interactive mode. Errors if required arguments are missing.")
	fs.StringVar(&g.exportConfig, "export-config", "", "Export resolved configuration to a JSON file and exit. Does not run the benchmark.")
	fs.StringArrayVar(&g.exporters, "exporter", nil, "Extra exporter plugin by name (repeatable); csv is on unless --no-csv.")
	fs.StringArrayVar(&g.exporterPlugin, "exporter-plugin", nil, "Path of an exporter plugin binary (repeatable).")
	fs.StringVar(&g.logLevel, "log-level", "info", "Log level: trace, debug, info, warn, error.")
	fs.DurationVar(&g.drainTimeout, "drain-timeout", 30*time.Second, "After Ctrl-C or a plugin failure, how long to wait for in-flight requests before cancelling them.")
	fs.BoolVarP(&g.help, "help", "h", false, "Show help.")
	g.sim = sim.DefaultConfig()
	g.sim.RegisterFlags(fs, "sim-")
	fs.SortFlags = false
}

// configKeys maps the original's exported config keys to flags (spec §6.5).
var configKeys = map[string]string{
	"engine_url":            "engine-url",
	"lmcache_url":           "lmcache-url",
	"model":                 "model",
	"workload":              "workload",
	"kv_cache_volume":       "kv-cache-volume",
	"tokens_per_gb_kvcache": "tokens-per-gb-kvcache",
	"seed":                  "seed",
	"output_dir":            "output-dir",
	"no_csv":                "no-csv",
	"json":                  "json",
	"export_json":           "json",
	"quiet":                 "quiet",
}

// optionFlag is a plugin option registered as a flag.
type optionFlag struct {
	flag string // full flag name without dashes
	key  string // config key
	spec *pluginv1.OptionSpec
}

// pluginFlags registers one flag per option of a plugin: --<prefix>-<name>.
func pluginFlags(fs *pflag.FlagSet, prefix string, specs []*pluginv1.OptionSpec) []optionFlag {
	var out []optionFlag
	for _, sp := range specs {
		name := prefix + "-" + sp.GetName()
		help := sp.GetHelp()
		if len(sp.GetEnumValues()) > 0 {
			help += " One of: " + strings.Join(sp.GetEnumValues(), ", ") + "."
		}
		d := sp.GetDefault()
		switch sp.GetType() {
		case pluginv1.OptionType_OPTION_TYPE_INT:
			fs.Int64(name, d.GetIntValue(), help)
		case pluginv1.OptionType_OPTION_TYPE_FLOAT:
			fs.Float64(name, d.GetFloatValue(), help)
		case pluginv1.OptionType_OPTION_TYPE_BOOL:
			fs.Bool(name, d.GetBoolValue(), help)
		case pluginv1.OptionType_OPTION_TYPE_DURATION:
			fs.Duration(name, time.Duration(d.GetIntValue()), help)
		default:
			fs.String(name, d.GetStringValue(), help)
		}
		out = append(out, optionFlag{flag: name, key: strings.ReplaceAll(name, "-", "_"), spec: sp})
	}
	return out
}

// optionValues returns the values of the flags the user set (the plugin
// applies its own defaults to the rest).
func optionValues(fs *pflag.FlagSet, flags []optionFlag) (map[string]*pluginv1.OptionValue, error) {
	out := map[string]*pluginv1.OptionValue{}
	for _, f := range flags {
		if !fs.Changed(f.flag) {
			continue
		}
		var v *pluginv1.OptionValue
		switch f.spec.GetType() {
		case pluginv1.OptionType_OPTION_TYPE_INT:
			x, _ := fs.GetInt64(f.flag)
			v = &pluginv1.OptionValue{Kind: &pluginv1.OptionValue_IntValue{IntValue: x}}
		case pluginv1.OptionType_OPTION_TYPE_FLOAT:
			x, _ := fs.GetFloat64(f.flag)
			v = &pluginv1.OptionValue{Kind: &pluginv1.OptionValue_FloatValue{FloatValue: x}}
		case pluginv1.OptionType_OPTION_TYPE_BOOL:
			x, _ := fs.GetBool(f.flag)
			v = &pluginv1.OptionValue{Kind: &pluginv1.OptionValue_BoolValue{BoolValue: x}}
		case pluginv1.OptionType_OPTION_TYPE_DURATION:
			x, _ := fs.GetDuration(f.flag)
			v = &pluginv1.OptionValue{Kind: &pluginv1.OptionValue_IntValue{IntValue: int64(x)}}
		default:
			x, _ := fs.GetString(f.flag)
			if vals := f.spec.GetEnumValues(); len(vals) > 0 && !slices.Contains(vals, x) {
				return nil, usageError{fmt.Errorf("--%s: must be one of %s, got %q", f.flag, strings.Join(vals, ", "), x)}
			}
			v = &pluginv1.OptionValue{Kind: &pluginv1.OptionValue_StringValue{StringValue: x}}
		}
		out[f.spec.GetName()] = v
	}
	return out, nil
}
