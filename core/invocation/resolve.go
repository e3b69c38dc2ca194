package invocation

import (
	"fmt"
	"slices"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/config/simconfig"
	"github.com/lmbench/lmbench/core/merge"
	"github.com/lmbench/lmbench/core/pluginset"
	"github.com/lmbench/lmbench/core/shard"
	"github.com/lmbench/lmbench/core/sim"
	"github.com/lmbench/lmbench/core/sweep"
)

// Resolved is a run's layered configuration, before anything is
// contacted, and then (after Start) what it was built into.
type Resolved struct {
	Flags    config.RunFlags
	FlagSet  *pflag.FlagSet
	Registry *config.Registry
	Values   *config.Values
	// Workload is nil when none was named; Exporters are in the order
	// named, csv first unless --no-csv.
	Workload  *pluginset.Workload
	Exporters []*pluginset.ExporterPlugin

	// Spec is the run's settings, typed and checked (config.Build), once
	// Start has built it.
	Spec *config.Spec
	// shard is the sharded run's part (nil: not sharded); upload is
	// --upload-to (nil: none); sim is the built-in engine's configuration
	// (with --engine-url builtin only).
	shard  *shard.Part
	upload *merge.Upload
	sim    sim.Config
	args   []string
	// sweep is lmbench sweep's options (nil: lmbench run).
	sweep *sweep.Settings
}

// Registry returns a registry holding lmbench run's own options, the
// built-in engine's (flags --sim-*) and lmbench sweep's (hidden).
func Registry() *config.Registry {
	return config.NewRunRegistry(simconfig.Options(config.SimFlagPrefix), sweep.Options())
}

// Resolve parses args in two passes. The first learns, from the flags,
// the environment, the config file and answers, which plugins to load;
// their option schemas join the registry, and the second pass parses
// every flag strictly and layers every source. answers are guided-setup
// values (nil when there was no form). A mistake on the command line is
// a config.UsageError.
func (s *Session) Resolve(args []string, answers map[string]string) (*Resolved, error) {
	r := &Resolved{Registry: Registry(), args: args}
	r.FlagSet = config.RunFlagSet(r.Registry, &r.Flags)
	r.FlagSet.ParseErrorsAllowlist.UnknownFlags = true
	if err := r.FlagSet.Parse(args); err != nil {
		return nil, config.UsageError{Err: err}
	}
	var err error
	r.Values, err = r.Registry.Load(config.Sources{File: r.Flags.Config, Flags: r.FlagSet, Answers: answers, Partial: true})
	if err != nil { // a config file, a variable or a flag refused: bad input, exit 2
		return nil, config.UsageError{Err: err}
	}
	ch := config.ReadChoice(r.Values)
	if !s.hasLog {
		log, err := s.NewLog(ch.LogLevel, ch.LogFormat)
		if err != nil {
			return nil, config.UsageError{Err: err}
		}
		s.SetLog(log)
	}
	if r.Flags.Help && ch.Workload == "" && ch.Plugin == "" {
		return r, nil // help for every workload
	}
	if err := s.loadPlugins(r); err != nil {
		return nil, err
	}
	if err := s.strict(r, answers); err != nil {
		return nil, err
	}
	return r, nil
}

// loadPlugins starts the workload and the exporters the first pass named.
func (s *Session) loadPlugins(r *Resolved) (err error) {
	ch := config.ReadChoice(r.Values)
	switch {
	case ch.Workload != "" && ch.Plugin != "":
		return config.UsageError{Err: fmt.Errorf("%s and %s both name the workload (%q and %q): give one",
			ch.WorkloadOrigin, ch.PluginOrigin, ch.Workload, ch.Plugin)}
	case ch.Plugin != "":
		r.Workload, err = s.Plugins.Workload(ch.Plugin, true, ch.PluginOrigin)
	case ch.Workload != "":
		r.Workload, err = s.Plugins.Workload(ch.Workload, false, ch.WorkloadOrigin)
	}
	if err != nil {
		return err
	}
	r.Exporters, err = s.exporters(r.Flags, config.ReadOutput(r.Values).CSV)
	return err
}

// exporters starts the exporters flags name (csv first when csv and not
// named), then those given by path.
func (s *Session) exporters(f config.RunFlags, csv bool) ([]*pluginset.ExporterPlugin, error) {
	var names []string
	for _, n := range f.Exporters {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if csv && !slices.Contains(names, "csv") {
		names = append([]string{"csv"}, names...)
	}
	var out []*pluginset.ExporterPlugin
	for i, n := range append(names, f.ExporterPlugins...) {
		e, err := s.Plugins.Exporter(n, ExporterOrigin(i >= len(names)))
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// ExporterOrigin is the flag an exporter came from.
func ExporterOrigin(byPath bool) string {
	if byPath {
		return "--exporter-plugin"
	}
	return "--exporter"
}

// strict is the second pass: every option known, every flag strict, every
// source layered.
func (s *Session) strict(r *Resolved, answers map[string]string) (err error) {
	r.Registry = Registry()
	for _, l := range r.Plugins() {
		if _, err := r.Registry.AddPlugin(l.Name(), l.Prefix(), l.Options()); err != nil {
			return err
		}
	}
	r.Flags = config.RunFlags{}
	r.FlagSet = config.RunFlagSet(r.Registry, &r.Flags)
	if err := r.FlagSet.Parse(r.args); err != nil {
		name, prefix := "", ""
		if r.Workload != nil {
			name, prefix = r.Workload.Name(), r.Workload.Prefix()
		}
		return config.UsageError{Err: config.FlagError(err, r.FlagSet, name, prefix)}
	}
	if r.FlagSet.NArg() > 0 {
		return config.UsageError{Err: fmt.Errorf("unexpected argument %q (flags start with --)", r.FlagSet.Arg(0))}
	}
	// Without a workload, file keys and variables may belong to the one
	// the guided setup is about to pick: they are checked once it is known.
	r.Values, err = r.Registry.Load(config.Sources{File: r.Flags.Config, Flags: r.FlagSet, Answers: answers, Partial: r.Workload == nil,
		Elsewhere: func() *config.Elsewhere { return s.Plugins.Elsewhere(r.inUse()) }})
	if r.Values != nil {
		s.warnIgnored(r) // even when another key is wrong: both are worth fixing
	}
	if err != nil {
		return config.UsageError{Err: err}
	}
	// An unknown variable is as a config key no plugin has: an error.
	if err := r.Values.UnknownEnvError(r.FlagSet); err != nil {
		return config.UsageError{Err: err}
	}
	return nil
}

// warnIgnored warns about the file keys and variables of plugins the run
// does not use.
func (s *Session) warnIgnored(r *Resolved) {
	workload := ""
	if r.Workload != nil {
		workload = r.Workload.Name()
	}
	for _, ig := range r.Values.Ignored {
		field := "key"
		if ig.Env {
			field = "variable"
		}
		s.Log.Warn().Str(field, ig.Name).Str("plugin", ig.Owner.Plugin).Msg(ig.Message(workload))
	}
}

// Plugins returns the workload (if any) and the exporters.
func (r *Resolved) Plugins() []pluginset.Plugin {
	var out []pluginset.Plugin
	if r.Workload != nil {
		out = append(out, r.Workload)
	}
	for _, e := range r.Exporters {
		out = append(out, e)
	}
	return out
}

// inUse names the plugins in use as kind/name.
func (r *Resolved) inUse() []string {
	var out []string
	for _, p := range r.Plugins() {
		out = append(out, p.Kind()+"/"+p.Name())
	}
	return out
}

// Missing lists the required arguments still unset (config.Missing).
func (r *Resolved) Missing() (labels, keys []string) {
	return config.Missing(r.Values, r.Workload != nil)
}

// WorkloadOptions are a workload's options and the values the file and
// the environment give them, for the guided setup's form: the run's own
// when it is the workload already chosen.
func (s *Session) WorkloadOptions(r *Resolved, name string) ([]*config.Option, *config.Values, error) {
	if r.Workload != nil && r.Workload.Name() == name {
		return r.Registry.Owned(name), r.Values, nil
	}
	l, err := s.Plugins.Workload(name, false, "workload")
	if err != nil {
		return nil, nil, err
	}
	reg := config.NewRegistry()
	opts, err := reg.AddPlugin(l.Name(), l.Prefix(), l.Options())
	if err != nil {
		return nil, nil, err
	}
	v, err := reg.Load(config.Sources{File: r.Flags.Config, Partial: true})
	return opts, v, err
}
