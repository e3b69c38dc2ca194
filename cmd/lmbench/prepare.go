package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/lmbench/lmbench/core/bench"
	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/core/lmcache"
	"github.com/lmbench/lmbench/core/sim"
	"github.com/lmbench/lmbench/sdk/option"
	workloadv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/workload/v1"
)

// prepared is the configuration after contacting the engine and LMCache
// and configuring the workload.
type prepared struct {
	engineURL   string // where requests go
	reportURL   string // as shown in the summary (no credentials)
	apiKey      string
	model       string // matched on LMCache's /status
	served      string // sent to the engine
	tokensPerGB int64
	cr          *workloadv1.ConfigureResponse
	entries     []config.Entry // the resolved, portable configuration
}

// prepare resolves what needs the network: the built-in engine, the model
// (auto-detected when not given), tokens per GB (from LMCache when not
// given), then configures the workload.
func (s *session) prepare(ctx context.Context, r *resolved) (*prepared, error) {
	v, log := r.vals, s.log
	if vol := v.Float(keyKVVolume); vol <= 0 {
		return nil, fmt.Errorf("%s: must be positive, got %s", v.Origin(keyKVVolume), strconv.FormatFloat(vol, 'g', -1, 64))
	}
	p := &prepared{apiKey: os.Getenv("OPENAI_API_KEY")}
	engineURL := portOnly(v.String(keyEngineURL))
	if engineURL == builtinEngine {
		srv, err := sim.New(r.cli.sim, log.With().Str("component", "sim").Logger())
		if err != nil {
			return nil, usageError{err}
		}
		base, err := srv.Start("127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("built-in engine: %w", err)
		}
		s.closers = append(s.closers, func() { srv.Close() })
		p.engineURL, p.reportURL = base, "builtin ("+base+")"
		log.Info().Str("url", base).Msg("built-in simulated engine started (a test double: not a real engine's numbers)")
	} else {
		var simFlags []string
		r.fs.Visit(func(f *pflag.Flag) {
			if strings.HasPrefix(f.Name, simFlagPrefix) {
				simFlags = append(simFlags, "--"+f.Name)
			}
		})
		if len(simFlags) > 0 {
			return nil, usageError{fmt.Errorf("%s: the built-in engine's flags need --engine-url builtin, got %q", strings.Join(simFlags, ", "), redactURL(engineURL))}
		}
		if err := checkURL(engineURL); err != nil {
			return nil, fmt.Errorf("%s: %w", v.Origin(keyEngineURL), err)
		}
		p.engineURL, p.reportURL = engineURL, redactURL(engine.NormalizeURL(engineURL))
	}

	p.model = v.String(keyModel)
	if p.model == "" {
		dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		model, err := engine.DetectModel(dctx, engine.NormalizeURL(p.engineURL), p.apiKey, nil)
		cancel()
		if err != nil {
			return nil, err
		}
		log.Info().Str("model", model).Msg("model auto-detected")
		p.model = model
		if err := v.Set(keyModel, model); err != nil {
			return nil, err
		}
	}
	p.served = v.String(keyServedModel)
	if p.served == "" {
		p.served = p.model
	}
	if !v.Has(keyTokensPerGB) {
		// Never a default LMCache URL (the original's quirk Q3): missing()
		// has made sure one was given, or the built-in engine serves its own
		// LMCache-shaped /status.
		tctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		tpg, layout, err := lmcache.TokensPerGB(tctx, statusSourceURL(portOnly(v.String(keyLMCacheURL)), engineURL, p.engineURL), p.model, nil)
		cancel()
		if err != nil {
			return nil, err
		}
		log.Info().Int64("cache_size_per_token", layout.CacheSizePerToken).Int64("world_size", layout.WorldSize).
			Int64("tokens_per_gb", tpg).Msg("tokens per GB from LMCache")
		if err := v.Set(keyTokensPerGB, tpg); err != nil {
			return nil, err
		}
	}
	p.tokensPerGB = v.Int(keyTokensPerGB)
	if p.tokensPerGB <= 0 {
		return nil, fmt.Errorf("%s: must be positive, got %d", v.Origin(keyTokensPerGB), p.tokensPerGB)
	}

	wl := r.wl
	cr, err := wl.client.Workload().Configure(ctx, &workloadv1.ConfigureRequest{Options: r.pluginOptions(wl), Common: &workloadv1.Common{
		Seed: v.Int(keySeed), Model: p.model, KvCacheVolumeGb: v.Float(keyKVVolume), TokensPerGb: p.tokensPerGB,
	}})
	if err != nil {
		return nil, wl.client.Wrap("Configure", err)
	}
	if errs := cr.GetErrors(); len(errs) > 0 {
		return nil, bench.FieldErrors(errs, r.origin(wl))
	}
	p.cr = cr
	p.entries = exportEntries(r, p)
	return p, nil
}

// exportEntries is the portable configuration (spec §6.5): no engine URL,
// no LMCache URL, no secrets; the workload's options as it resolved them.
func exportEntries(r *resolved, p *prepared) []config.Entry {
	v := r.vals
	out := []config.Entry{{Key: keyModel, Value: p.model}}
	if s := v.String(keyServedModel); s != "" {
		out = append(out, config.Entry{Key: keyServedModel, Value: s})
	}
	out = append(out,
		config.Entry{Key: keyWorkload, Value: r.wl.info.GetName()},
		config.Entry{Key: keyKVVolume, Value: v.Float(keyKVVolume)},
		config.Entry{Key: keyTokensPerGB, Value: p.tokensPerGB},
	)
	res := p.cr.GetResolved()
	for _, o := range r.reg.Owned(r.wl.info.GetName()) {
		val := v.Get(o.Key)
		if rv, ok := res[o.Name]; ok {
			if x, err := o.Parse(config.Format(option.Interface(rv))); err == nil {
				val = x
			}
			if o.Type == tDuration {
				val = time.Duration(rv.GetIntValue())
			}
		}
		if val != nil {
			out = append(out, config.Entry{Key: o.Key, Value: val})
		}
	}
	return append(out, config.Entry{Key: keySeed, Value: v.Int(keySeed)})
}

// portOnly reads a bare port number as a server on this machine
// ("8000" → "http://localhost:8000"), as the original's setup does.
// checkURL tells whether an engine or LMCache address, as typed, makes a
// URL once normalised.
func checkURL(raw string) error {
	if _, err := url.Parse(engine.NormalizeURL(portOnly(raw))); err != nil {
		return fmt.Errorf("%q is not a URL: %v", redactURL(raw), err)
	}
	return nil
}

func portOnly(u string) string {
	if n, err := strconv.Atoi(strings.TrimSpace(u)); err == nil && n > 0 && n < 65536 {
		return "http://localhost:" + strconv.Itoa(n)
	}
	return u
}
