package main

import (
	"io"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/config"
)

// simFlagPrefix starts the built-in engine's flags on lmbench run.
const simFlagPrefix = "sim-"

// hostRegistry returns a registry holding lmbench's own options.
func hostRegistry() *config.Registry {
	return config.NewRunRegistry(config.SimOptions(simFlagPrefix))
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
	reg.RegisterFlags(fs, func(o *config.Option) bool { return o.Owner != "" })
	return fs
}
