package invocation

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/lmbench/lmbench/core/bench"
	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/config/simconfig"
	"github.com/lmbench/lmbench/core/merge"
	"github.com/lmbench/lmbench/core/outdir"
	"github.com/lmbench/lmbench/core/shard"
	"github.com/lmbench/lmbench/core/sweep"
)

// Run is a run built and prepared: ready to export or execute.
type Run struct {
	*Resolved
	Prepared *bench.Prepared
	s        *Session
}

// Start builds the run's Spec (every check that needs no network), its
// shard and upload, then prepares it (the built-in engine, the model,
// tokens per GB, the workload's Configure); the session stops what it
// started. A sharded run that fails here leaves the barrier, saying why.
func (s *Session) Start(ctx context.Context, r *Resolved) (_ *Run, err error) {
	if r.Spec, err = config.Build(r.Values); err != nil {
		return nil, config.UsageError{Err: err} // bad input, refused before anything is contacted: exit 2
	}
	if r.Flags.ExportConfig == "" && r.sweep == nil {
		// A directory holding a run is refused before anything is contacted.
		if err := outdir.Check(&r.Spec.Output); err != nil {
			return nil, err
		}
	}
	if r.shard, err = shard.FromSpec(r.Spec.Shard); err != nil {
		return nil, err
	}
	if r.shard != nil {
		defer func() {
			if err != nil {
				r.shard.Leave(err.Error(), s.Log)
			}
		}()
	}
	if r.upload, err = merge.OpenUpload(r.Spec.Upload); err != nil {
		return nil, err
	}
	if err := s.notSweep(r); err != nil {
		return nil, err
	}
	if r.shard != nil && r.Spec.Engine.Builtin {
		s.Log.Warn().Msg("--shard with the built-in engine: each shard runs an engine of its own; give the shards one engine (lmbench sim, or a real one) to measure one")
	}
	if err := s.simEngine(r); err != nil {
		return nil, config.UsageError{Err: err}
	}
	p, err := bench.Prepare(ctx, bench.Setup{
		Spec: r.Spec, Sim: r.sim, SimFlags: simconfig.Given(r.Values, config.LayerFlag),
		Shard: r.shard.WorkloadShard(), ShardOrigin: r.Spec.Shard.Origin,
		APIKey:   os.Getenv("OPENAI_API_KEY"),
		Workload: r.Workload, Options: r.Values.PluginValues(r.Workload.Name()), OptionOrigin: r.Values.PluginOrigin(r.Workload.Prefix()),
	}, s.Log)
	if err != nil {
		return nil, err
	}
	s.OnClose(p.Close)
	return &Run{Resolved: r, Prepared: p, s: s}, nil
}

// simEngine builds the built-in engine's configuration from the --sim-*
// options, with --engine-url builtin. Without it, their variables and
// file keys are ignored with a warning (Prepare refuses their flags).
func (s *Session) simEngine(r *Resolved) error {
	v := r.Values
	if !r.Spec.Engine.Builtin {
		if keys := simconfig.Given(v, config.LayerFile); len(keys) > 0 {
			s.Log.Warn().Msgf("ignoring the built-in engine's settings in %s (%d sim_* keys): %s is not builtin",
				v.File, len(keys), r.Spec.Engine.Origin)
		}
		if vars := simconfig.Given(v, config.LayerEnv); len(vars) > 0 {
			s.Log.Warn().Strs("variables", vars).Msgf("ignoring the built-in engine's variables: %s is not builtin", r.Spec.Engine.Origin)
		}
		return nil
	}
	var err error
	r.sim, err = simconfig.Config(v)
	return err
}

// notSweep refuses lmbench sweep's flags on lmbench run, and warns that
// their file keys and variables are ignored.
func (s *Session) notSweep(r *Resolved) error {
	if r.sweep != nil {
		return nil
	}
	if flags := sweep.Given(r.Values, config.LayerFlag); len(flags) > 0 {
		return config.UsageError{Err: fmt.Errorf("%s: lmbench sweep's options; lmbench run runs one point (lmbench sweep --help)", strings.Join(flags, ", "))}
	}
	for _, l := range []config.Layer{config.LayerFile, config.LayerEnv} {
		if given := sweep.Given(r.Values, l); len(given) > 0 {
			s.Log.Warn().Strs("ignored", given).Msg("ignoring lmbench sweep's options: lmbench run runs one point")
		}
	}
	return nil
}

// entries is the run's portable configuration (config.Spec.Entries)
// and, with the built-in engine, its settings: replaying the file starts
// the same engine.
func (x *Run) entries() []config.Entry {
	out := x.Spec.Entries(x.Prepared.Found(x.Workload))
	if x.Spec.Engine.Builtin {
		out = append(out, simconfig.Entries(x.sim)...)
	}
	return out
}

// ExportConfig writes the run's configuration to path (--export-config),
// a sweep's options too, and returns the command that replays it. A sharded run then leaves the
// barrier: it will not start.
func (x *Run) ExportConfig(path string) (replay string, err error) {
	var names []string
	for _, e := range x.Exporters {
		names = append(names, e.Name())
	}
	entries, cmd := append(x.entries(), x.Spec.OutputEntries(names...)...), "run"
	if x.sweep != nil {
		entries, cmd = append(entries, x.sweep.Entries()...), "sweep"
	}
	err = config.Write(path, entries)
	x.leave(ExitOK, err)
	if err != nil {
		return "", err
	}
	// The file holds the workload (by path too) and the output options;
	// the exporters are flags, which a file cannot hold.
	replay = "lmbench " + cmd + " --engine-url " + ShellQuote(config.RedactURL(x.Spec.Engine.Typed))
	for i, n := range x.Flags.Exporters {
		if !slices.Contains(x.Flags.Exporters[:i], n) {
			replay += " --exporter " + ShellQuote(n)
		}
	}
	for _, p := range x.Flags.ExporterPlugins {
		replay += " --exporter-plugin " + ShellQuote(p)
	}
	return replay + " --config " + ShellQuote(path), nil
}

// leave tells the barrier, when sharded, that this shard goes.
func (x *Run) leave(code int, err error) {
	if x.shard == nil {
		return
	}
	why := fmt.Sprintf("exit %d", code)
	if err != nil {
		why = err.Error()
	}
	x.shard.Leave(why, x.s.Log)
}

// ShellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and -_./:=@%+,
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
