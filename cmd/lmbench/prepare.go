package main

import (
	"context"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/host"
)

// prepare has core prepare the run (built-in engine, model, tokens per GB,
// the workload's Configure) from its Spec.
func (s *session) prepare(ctx context.Context, r *resolved) (*host.Prepared, error) {
	var simFlags []string
	r.fs.Visit(func(f *pflag.Flag) {
		if strings.HasPrefix(f.Name, simFlagPrefix) {
			simFlags = append(simFlags, "--"+f.Name)
		}
	})
	p, err := host.Prepare(ctx, host.Setup{
		Spec: r.spec, Sim: r.cli.sim, SimFlags: simFlags,
		Shard: r.shard.WorkloadShard(), ShardOrigin: r.vals.Origin(keyShard),
		APIKey:   os.Getenv("OPENAI_API_KEY"),
		Workload: r.wl, Options: r.vals.PluginValues(r.wl.Name()), OptionOrigin: r.vals.PluginOrigin(r.wl.Prefix()),
	}, s.log)
	if err != nil {
		return nil, cliError(err)
	}
	s.closers = append(s.closers, p.Close)
	return p, nil
}

// exportEntries is the run's portable configuration (config.Spec.Entries).
func exportEntries(r *resolved, p *host.Prepared) []config.Entry {
	return r.spec.Entries(p.Found(r.wl))
}
