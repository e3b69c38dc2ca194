package config

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"
)

// SimFlagPrefix starts the built-in engine's flags on lmbench run.
const SimFlagPrefix = "sim-"

// SimGroup is the form and help group of the built-in engine's options.
const SimGroup = "Built-in engine"

// SimKeyPrefix starts the config key of every built-in engine option
// (sim_gpu_gb); its variables start with LMBENCH_SIM_.
const SimKeyPrefix = "sim_"

// RunFlags are lmbench run's flags that say what to do with the
// configuration rather than being part of it: they have no config key or
// variable.
type RunFlags struct {
	Config          string
	ExportConfig    string
	NoInteractive   bool
	Exporters       []string
	ExporterPlugins []string
	Help            bool
	Report          bool
}

// RunFlagSet is lmbench run's flag set over reg: --config, the registry's
// options (lmbench's, then the plugins'), then the command-line-only
// flags, set into f. This is the one place general flags are registered.
func RunFlagSet(reg *Registry, f *RunFlags) *pflag.FlagSet {
	fs := pflag.NewFlagSet("lmbench run", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	fs.StringVar(&f.Config, "config", "", "Load configuration from a JSON, YAML or TOML file (keys as written by --export-config); environment variables and flags win over file values.")
	reg.RegisterFlags(fs, func(o *Option) bool { return o.Owner == "" })
	fs.BoolVar(&f.NoInteractive, "no-interactive", false, "Disable the guided setup: fail if required arguments are missing.")
	fs.StringVar(&f.ExportConfig, "export-config", "", "Export the resolved configuration (model auto-detected, tokens per GB resolved; no engine URL or secrets) to a .json, .yaml or .toml file and exit without running.")
	fs.StringArrayVar(&f.Exporters, "exporter", nil, "Extra exporter plugin by name (repeatable); csv is on unless --no-csv.")
	fs.StringArrayVar(&f.ExporterPlugins, "exporter-plugin", nil, "Path of an exporter plugin binary (repeatable).")
	fs.BoolVar(&f.Report, "report", false, "At the end, write the run's HTML report (report.html, as lmbench report) into the output directory.")
	fs.BoolVarP(&f.Help, "help", "h", false, "Show help.")
	reg.RegisterFlags(fs, func(o *Option) bool { return o.Owner != "" })
	return fs
}

// CheckExportPath fails on a file --export-config cannot write by its
// extension.
func CheckExportPath(path string) error {
	if _, err := Parser(path); err != nil {
		return fmt.Errorf("--export-config %s: %w", path, err)
	}
	return nil
}

// With is a copy of v with overrides (values by config key) on top, as
// if given as flags: a sweep's point is its run with the swept option,
// the output directory and the summary file set.
func (v *Values) With(overrides map[string]any) (*Values, error) {
	out := &Values{reg: v.reg, k: v.k.Copy(), src: make(map[string]Layer, len(v.src)), File: v.File,
		UnknownEnv: v.UnknownEnv, Ignored: v.Ignored}
	for k, l := range v.src {
		out.src[k] = l
	}
	m := map[string]any{}
	for key, val := range overrides {
		o, ok := v.reg.byKey[key]
		if !ok {
			return nil, fmt.Errorf("unknown config key %q", key)
		}
		x, err := coerce(o, val)
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", o.Flag, err)
		}
		m[o.Key] = x
	}
	out.merge(m, LayerFlag)
	return out, nil
}

// UsageError is a mistake on the command line (an option's value, a plugin
// that is not there or of the wrong kind): the CLI exits 2 for it.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }
