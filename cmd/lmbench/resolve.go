package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sync/atomic"

	"github.com/rs/zerolog"
	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/cmd/lmbench/internal/ui"
	"github.com/lmbench/lmbench/core/bench"
	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/merge"
	"github.com/lmbench/lmbench/core/shard"
	"github.com/lmbench/lmbench/core/sim"
)

// session is one lmbench command: its streams, its logger and the
// plugins it started (reused when the configuration is resolved again
// after the guided setup).
type session struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	logOut         *ui.SwitchWriter
	log            zerolog.Logger
	hasLog         bool
	plugins        *bench.Plugins // nil until the logger is known
	closers        []func()       // e.g. the built-in engine
	// journal is the running benchmark's journal, for a third Ctrl-C's
	// message ("" until the run starts); set and read on other goroutines.
	journal atomic.Pointer[string]
}

func newSession(stdin io.Reader, stdout, stderr io.Writer) *session {
	return &session{stdin: stdin, stdout: stdout, stderr: stderr, logOut: ui.NewSwitchWriter(stderr), log: zerolog.Nop()}
}

// setLog sets the session's logger, once.
func (s *session) setLog(log zerolog.Logger) {
	s.log, s.hasLog = log, true
	s.plugins = bench.NewPlugins(log, version)
}

// close stops every plugin the session started.
func (s *session) close() {
	for _, c := range slices.Backward(s.closers) {
		c()
	}
	if s.plugins != nil {
		s.plugins.Close()
	}
}

// resolved is the layered configuration, before anything is contacted.
type resolved struct {
	cli  cliFlags
	fs   *pflag.FlagSet
	reg  *config.Registry
	vals *config.Values
	// spec is the run's settings, typed and checked (config.Build), once
	// the guided setup is done.
	spec *config.Spec
	wl   *bench.Workload // nil when no workload was named
	exps []*bench.ExporterPlugin
	// shard is the sharded run's settings (nil: not sharded), once
	// checkShard has read them.
	shard *shard.Part
	// upload is --upload-to, once checkUpload has read it (nil: none).
	upload *merge.Upload
	// sim is the built-in engine's configuration, once prepare has built
	// it (with --engine-url builtin only).
	sim sim.Config
}

// resolve parses args in two passes. The first learns, from the flags,
// the environment, the config file and answers, which plugins to load;
// their option schemas join the registry, and the second pass parses
// every flag strictly and layers every source. answers are guided-setup
// values (nil when there was no form).
func (s *session) resolve(args []string, answers map[string]string) (*resolved, error) {
	var c1 cliFlags
	reg1 := hostRegistry()
	fs1 := runFlags(reg1, &c1)
	fs1.ParseErrorsAllowlist.UnknownFlags = true
	if err := fs1.Parse(args); err != nil {
		return nil, usageError{err}
	}
	v1, err := reg1.Load(config.Sources{File: c1.config, Flags: fs1, Answers: answers, Partial: true})
	if err != nil {
		return nil, err
	}
	if !s.hasLog {
		ch := config.ReadChoice(v1)
		log, err := newLogger(s.logOut, ch.LogLevel, ch.LogFormat, isTerminal(s.stderr))
		if err != nil {
			return nil, err
		}
		s.setLog(log)
	}
	r := &resolved{cli: c1, fs: fs1, reg: reg1, vals: v1}
	if ch := config.ReadChoice(v1); c1.help && ch.Workload == "" && ch.Plugin == "" {
		return r, nil // help for every workload
	}
	if err := s.loadPlugins(r); err != nil {
		return nil, err
	}
	if err := s.strict(r, args, answers); err != nil {
		return nil, err
	}
	return r, nil
}

// loadPlugins starts the workload and the exporters the first pass named.
func (s *session) loadPlugins(r *resolved) (err error) {
	v, ch := r.vals, config.ReadChoice(r.vals)
	switch {
	case ch.Workload != "" && ch.Plugin != "":
		return usageError{fmt.Errorf("%s and %s both name the workload (%q and %q): give one",
			ch.WorkloadOrigin, ch.PluginOrigin, ch.Workload, ch.Plugin)}
	case ch.Plugin != "":
		r.wl, err = s.plugins.Workload(ch.Plugin, true, ch.PluginOrigin)
	case ch.Workload != "":
		r.wl, err = s.plugins.Workload(ch.Workload, false, ch.WorkloadOrigin)
	}
	if err != nil {
		return cliError(err)
	}
	expNames := distinct(r.cli.exporters)
	if config.ReadOutput(v).CSV && !slices.Contains(expNames, "csv") {
		expNames = append([]string{"csv"}, expNames...)
	}
	for i, n := range append(expNames, r.cli.exporterPlugin...) {
		e, err := s.plugins.Exporter(n, exporterOrigin(i >= len(expNames)))
		if err != nil {
			return cliError(err)
		}
		r.exps = append(r.exps, e)
	}
	return nil
}

// strict is the second pass: every option known, every flag strict, every
// source layered.
func (s *session) strict(r *resolved, args []string, answers map[string]string) (err error) {
	r.reg = hostRegistry()
	for _, l := range r.plugins() {
		if _, err := r.reg.AddPlugin(l.Name(), l.Prefix(), l.Options()); err != nil {
			return err
		}
	}
	r.cli = cliFlags{}
	r.fs = runFlags(r.reg, &r.cli)
	if err := r.fs.Parse(args); err != nil {
		name, prefix := "", ""
		if r.wl != nil {
			name, prefix = r.wl.Name(), r.wl.Prefix()
		}
		return usageError{config.FlagError(err, r.fs, name, prefix)}
	}
	if r.fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q (flags start with --)", r.fs.Arg(0))}
	}
	// Without a workload, file keys and variables may belong to the one
	// the guided setup is about to pick: they are checked once it is known.
	r.vals, err = r.reg.Load(config.Sources{File: r.cli.config, Flags: r.fs, Answers: answers, Partial: r.wl == nil,
		Elsewhere: func() *config.Elsewhere { return s.plugins.Elsewhere(r.inUse()) }})
	if r.vals != nil {
		// Warned about even when another key is wrong: both are worth fixing.
		workload := ""
		if r.wl != nil {
			workload = r.wl.Name()
		}
		for _, ig := range r.vals.Ignored {
			field := "key"
			if ig.Env {
				field = "variable"
			}
			s.log.Warn().Str(field, ig.Name).Str("plugin", ig.Owner.Plugin).Msg(ig.Message(workload))
		}
	}
	if err != nil {
		return err
	}
	// An unknown variable is as a config key no plugin has: an error.
	return r.vals.UnknownEnvError(r.fs)
}

// plugins returns the workload (if any) and the exporters.
func (r *resolved) plugins() []bench.Plugin {
	var out []bench.Plugin
	if r.wl != nil {
		out = append(out, r.wl)
	}
	for _, e := range r.exps {
		out = append(out, e)
	}
	return out
}

// inUse names the plugins in use as kind/name.
func (r *resolved) inUse() []string {
	var out []string
	for _, p := range r.plugins() {
		out = append(out, p.Kind()+"/"+p.Name())
	}
	return out
}

// cliError makes a bench.UsageError exit 2, as a mistake on the command line.
func cliError(err error) error {
	var ue bench.UsageError
	if errors.As(err, &ue) {
		return usageError{err}
	}
	return err
}

// missing lists the required arguments still unset (config.Missing).
func (r *resolved) missing() (labels, keys []string) { return config.Missing(r.vals, r.wl != nil) }

// exporterOrigin is the flag an exporter came from.
func exporterOrigin(byPath bool) string {
	if byPath {
		return "--exporter-plugin"
	}
	return "--exporter"
}
