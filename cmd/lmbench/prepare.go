package main

import (
	"context"
	"os"

	"github.com/lmbench/lmbench/core/bench"
	"github.com/lmbench/lmbench/core/config"
)

// prepare has core prepare the run (built-in engine, model, tokens per GB,
// the workload's Configure) from its Spec.
func (s *session) prepare(ctx context.Context, r *resolved) (*bench.Prepared, error) {
	if err := s.simEngine(r); err != nil {
		return nil, usageError{err}
	}
	p, err := bench.Prepare(ctx, bench.Setup{
		Spec: r.spec, Sim: r.sim, SimFlags: config.SimGiven(r.vals, config.LayerFlag),
		Shard: r.shard.WorkloadShard(), ShardOrigin: r.spec.Shard.Origin,
		APIKey:   os.Getenv("OPENAI_API_KEY"),
		Workload: r.wl, Options: r.vals.PluginValues(r.wl.Name()), OptionOrigin: r.vals.PluginOrigin(r.wl.Prefix()),
	}, s.log)
	if err != nil {
		return nil, cliError(err)
	}
	s.closers = append(s.closers, p.Close)
	return p, nil
}

// simEngine builds the built-in engine's configuration from the --sim-*
// options, with --engine-url builtin. Without it, their variables and
// file keys are ignored with a warning (Prepare refuses their flags).
func (s *session) simEngine(r *resolved) error {
	v := r.vals
	if !r.spec.Engine.Builtin {
		if keys := config.SimGiven(v, config.LayerFile); len(keys) > 0 {
			s.log.Warn().Msgf("ignoring the built-in engine's settings in %s (%d sim_* keys): %s is not builtin",
				v.File, len(keys), r.spec.Engine.Origin)
		}
		if vars := config.SimGiven(v, config.LayerEnv); len(vars) > 0 {
			s.log.Warn().Strs("variables", vars).Msgf("ignoring the built-in engine's variables: %s is not builtin", r.spec.Engine.Origin)
		}
		return nil
	}
	var err error
	r.sim, err = config.SimConfig(v)
	return err
}

// exportEntries is the run's portable configuration (config.Spec.Entries)
// and, with the built-in engine, its settings: replaying the file starts
// the same engine.
func exportEntries(r *resolved, p *bench.Prepared) []config.Entry {
	out := r.spec.Entries(p.Found(r.wl))
	if r.spec.Engine.Builtin {
		out = append(out, config.SimEntries(r.sim)...)
	}
	return out
}
