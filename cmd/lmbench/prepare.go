package main

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/host"
	"github.com/lmbench/lmbench/core/stats"
)

// prepare has core prepare the run (built-in engine, model, tokens per GB,
// the workload's Configure) from the resolved configuration, and records
// what it found out in the configuration, so --export-config writes it.
func (s *session) prepare(ctx context.Context, r *resolved) (*host.Prepared, error) {
	v := r.vals
	var simFlags []string
	r.fs.Visit(func(f *pflag.Flag) {
		if strings.HasPrefix(f.Name, simFlagPrefix) {
			simFlags = append(simFlags, "--"+f.Name)
		}
	})
	p, err := host.Prepare(ctx, host.Setup{
		EngineURL: v.String(keyEngineURL), EngineOrigin: v.Origin(keyEngineURL),
		Sim: r.cli.sim, SimFlags: simFlags,
		LMCacheURL: v.String(keyLMCacheURL), LMCacheOrigin: v.Origin(keyLMCacheURL),
		Model: v.String(keyModel), ServedModel: v.String(keyServedModel),
		TokensPerGB: v.Int(keyTokensPerGB), HasTokensPerGB: v.Has(keyTokensPerGB), TokensOrigin: v.Origin(keyTokensPerGB),
		KVCacheVolumeGB: v.Float(keyKVVolume), KVOrigin: v.Origin(keyKVVolume),
		Seed:  v.Int(keySeed),
		Shard: r.shard.workloadShard(), ShardOrigin: v.Origin(keyShard),
		Tokenizer: v.String(keyTokenizer), TokenizerOrigin: v.Origin(keyTokenizer),
		APIKey:   os.Getenv("OPENAI_API_KEY"),
		Workload: r.wl, Options: r.pluginOptions(r.wl), OptionOrigin: r.origin(r.wl),
	}, s.log)
	if err != nil {
		return nil, cliError(err)
	}
	s.closers = append(s.closers, p.Close)
	if p.ModelDetected {
		if err := v.Set(keyModel, p.Model); err != nil {
			return nil, err
		}
	}
	if err := v.Set(keyTokenizer, p.Tokenizer); err != nil { // what was used, recorded with the run
		return nil, err
	}
	if p.TokensResolved {
		if err := v.Set(keyTokensPerGB, p.TokensPerGB); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// exportEntries is the portable configuration (spec §6.5): no engine URL,
// no LMCache URL, no secrets; the workload's options as it resolved them.
// A workload run by path is written as workload_plugin, so the file
// replays it.
func exportEntries(r *resolved, p *host.Prepared) []config.Entry {
	v := r.vals
	out := []config.Entry{{Key: keyModel, Value: p.Model}}
	if s := v.String(keyServedModel); s != "" {
		out = append(out, config.Entry{Key: keyServedModel, Value: s})
	}
	if r.wl.ByPath {
		out = append(out, config.Entry{Key: keyWorkloadPlugin, Value: r.wl.Path})
	} else {
		out = append(out, config.Entry{Key: keyWorkload, Value: r.wl.Name()})
	}
	out = append(out,
		config.Entry{Key: keyKVVolume, Value: v.Float(keyKVVolume)},
		config.Entry{Key: keyTokensPerGB, Value: p.TokensPerGB},
	)
	res := p.Configured.Resolved
	for _, o := range r.reg.Owned(r.wl.Name()) {
		val := v.Get(o.Key)
		if rv, ok := res[o.Name]; ok {
			if x, err := o.Parse(config.Format(rv)); err == nil {
				val = x
			}
			if n, ok := rv.(int64); ok && o.Type == tDuration {
				val = time.Duration(n)
			}
		}
		if val != nil {
			out = append(out, config.Entry{Key: o.Key, Value: val})
		}
	}
	out = append(out, config.Entry{Key: keySeed, Value: v.Int(keySeed)})
	out = append(out, limitEntries(v)...)
	// Only when set: the journal's header records it, and the summary
	// (at the run's end and on re-export) reads it from there.
	if v.UserSet(keyPercentiles) {
		if ps, err := percentiles(v); err == nil {
			out = append(out, config.Entry{Key: keyPercentiles, Value: stats.FormatPercentiles(ps)})
		}
	}
	return append(out, loadEntries(v)...)
}
