package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/engine/profile"
	"github.com/lmbench/lmbench/core/kvcache"
	"github.com/lmbench/lmbench/core/lmcache"
	"github.com/lmbench/lmbench/core/pluginset"
	"github.com/lmbench/lmbench/core/sim"
	"github.com/lmbench/lmbench/core/tokenize"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// Setup is what Prepare needs: the run's Spec and what is not part of
// it (the built-in engine's model, the shard, the secret, the workload).
type Setup struct {
	*config.Spec
	// Sim configures the built-in engine; SimFlags are the --sim-* flags
	// given (an error without the built-in engine).
	Sim      sim.Config
	SimFlags []string
	APIKey   string
	// Shard is the part of a sharded run to send (zero: all of it), named
	// by ShardOrigin in errors.
	Shard       protocol.Shard
	ShardOrigin string

	Workload *pluginset.Workload
	// Options are the workload's options set above its defaults.
	Options protocol.Values
	// OptionOrigin maps a workload option to where its value came from.
	OptionOrigin func(option string) string
}

// Prepared is a run ready to execute: the engine found, the model and
// tokens per GB known, the workload configured.
type Prepared struct {
	// Engine is where requests go: the Spec's endpoint, the built-in
	// engine's URLs filled in once it listens.
	Engine      config.Endpoint
	APIKey      string
	Model       string // matched on LMCache's /status
	Served      string // sent to the engine
	TokensPerGB int64
	Configured  protocol.Configured
	// ModelDetected and TokensResolved say which of them Prepare found out.
	ModelDetected, TokensResolved bool
	// Tokenizer is what prompt lengths are counted in: tokenize.Engine,
	// tokenize.Words or a file's.
	Tokenizer string
	// Sizing meters the tokenizer's queries (nil with no tokenizer): the
	// summary's "prompts sized in" line.
	Sizing *tokenize.Meter
	// StatusBlockSize is the KV block size /status reported (LMCache's,
	// or the built-in engine's); 0 when none was read.
	StatusBlockSize int
	// Profile is the engine: --engine-kind's, or what it answered.
	Profile profile.Profile

	closers []func()
}

// Close stops what Prepare started (the built-in engine).
func (p *Prepared) Close() {
	for i := len(p.closers) - 1; i >= 0; i-- {
		p.closers[i]()
	}
	p.closers = nil
}

// Prepare resolves what needs the network: it has the workload check its
// options first (precheck.go), then starts the built-in engine (when
// asked), detects the model, reads tokens per GB from LMCache when not
// given, and configures the workload. On error nothing it started
// keeps running.
func Prepare(ctx context.Context, s Setup, log zerolog.Logger) (_ *Prepared, err error) {
	tokOrigin := s.TokenizerOrigin
	if tokOrigin == "" {
		tokOrigin = "--tokenizer"
	}
	if s.Tokenizer != "" {
		if err := tokenize.Check(s.Tokenizer, tokOrigin); err != nil {
			return nil, config.UsageError{Err: err}
		}
	}
	if err := precheck(ctx, s); err != nil {
		return nil, err
	}
	p := &Prepared{APIKey: s.APIKey}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	if err := p.startEngine(s, log); err != nil {
		return nil, err
	}
	if err := p.findProfile(ctx, s, log); err != nil {
		return nil, err
	}
	if err := p.findModel(ctx, s, log); err != nil {
		return nil, err
	}
	if err := p.findTokensPerGB(ctx, s, log); err != nil {
		return nil, err
	}
	return p, p.configure(ctx, s, tokOrigin, log)
}

// startEngine starts the built-in engine when the run asks for it, and
// says where requests go.
func (p *Prepared) startEngine(s Setup, log zerolog.Logger) error {
	if !s.Engine.Builtin {
		if len(s.SimFlags) > 0 {
			return config.UsageError{Err: fmt.Errorf("%s: the built-in engine's flags need --engine-url builtin, got %q", strings.Join(s.SimFlags, ", "), config.RedactURL(s.Engine.Typed))}
		}
		if s.Engine.Stripped != "" {
			log.Warn().Msgf("%s: ignoring the endpoint path %s after the address (lmbench adds the paths itself)", s.Engine.Origin, s.Engine.Stripped)
		}
		p.Engine = s.Engine
		return nil
	}
	srv, err := sim.New(s.Sim, log.With().Str("component", "sim").Logger())
	if err != nil {
		return config.UsageError{Err: err}
	}
	base, err := srv.Start("127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("built-in engine: %w", err)
	}
	p.closers = append(p.closers, func() { srv.Close() })
	p.Engine = s.Engine.Started(base)
	log.Info().Str("url", base).Msg("built-in simulated engine started (a test double: not a real engine's numbers)")
	return nil
}

// findProfile names the engine: --engine-kind, else what it answers.
// A --reset-cache the engine cannot do is refused here, before traffic.
func (p *Prepared) findProfile(ctx context.Context, s Setup, log zerolog.Logger) error {
	if s.EngineKind != profile.Auto && s.EngineKind != "" {
		p.Profile = profile.Given(s.EngineKind, s.EngineKindOrigin)
	} else {
		p.Profile = profile.Detect(ctx, profile.Target{Base: p.Engine.Base, Root: p.Engine.Root, APIKey: p.APIKey,
			LMCache: s.LMCache.URL != ""})
	}
	pr := p.Profile
	log.Info().Str("engine_kind", string(pr.Kind)).Str("version", pr.Version).Str("from", pr.DetectedFrom).
		Msgf("engine: %s", pr.Name)
	if s.Cache.Reset != config.ResetNever && pr.Reset.Path == "" && pr.Kind != profile.Unknown {
		return config.UsageError{Err: fmt.Errorf("%s %s: %s has no prefix-cache reset; restart the engine for a cold start, "+
			"or leave it at %s", s.Cache.ResetOrigin, s.Cache.Reset, pr.Name, config.ResetNever)}
	}
	if !pr.ReportsCachedTokens() {
		log.Warn().Msgf("%s does not report cached tokens: the cache ledger infers reuse from TTFT", pr.Name)
	}
	return nil
}

// findModel detects the model when none was given, and checks the engine
// serves the one requests will name.
func (p *Prepared) findModel(ctx context.Context, s Setup, log zerolog.Logger) error {
	p.Model = s.Model
	if p.Model == "" {
		dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		model, err := profile.DetectModel(dctx, p.Engine.Base, p.APIKey, nil)
		cancel()
		var many *profile.ManyModelsError
		if errors.As(err, &many) {
			return config.UsageError{Err: err} // a choice the command line has to make
		}
		if err != nil {
			return err
		}
		log.Info().Str("model", model).Msg("model auto-detected")
		p.Model, p.ModelDetected = model, true
	}
	p.Served = s.ServedModel
	origin := s.ServedOrigin
	if p.Served == "" {
		p.Served, origin = p.Model, s.ModelOrigin
	}
	if p.ModelDetected && s.ServedModel == "" {
		return nil
	}
	if origin == "" {
		origin = "--model"
	}
	return checkServedModel(ctx, p.Engine.Base, p.APIKey, p.Served, origin, log)
}

// findTokensPerGB reads tokens per GB (and the KV block size) from an
// LMCache-shaped /status when not given.
func (p *Prepared) findTokensPerGB(ctx context.Context, s Setup, log zerolog.Logger) error {
	p.TokensPerGB = s.TokensPerGB
	status := statusSourceURL(s.LMCache.URL, s.Engine.Builtin, p.Engine.Root)
	if s.HasTokensPerGB && s.HasStatusSource() {
		p.StatusBlockSize = kvcache.StatusBlockSize(ctx, status, p.Model, log)
	}
	if !s.HasTokensPerGB {
		// Never a default LMCache URL (the original's quirk Q3): the caller
		// has made sure one was given, or the built-in engine serves its
		// own LMCache-shaped /status.
		tctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		tpg, layout, err := lmcache.TokensPerGB(tctx, status, p.Model, nil)
		cancel()
		if err != nil {
			return err
		}
		log.Info().Int64("cache_size_per_token", layout.CacheSizePerToken).Int64("world_size", layout.WorldSize).
			Int64("tokens_per_gb", tpg).Msg("tokens per GB from LMCache")
		p.TokensPerGB, p.TokensResolved = tpg, true
		p.StatusBlockSize = layout.BlockSize
	}
	if p.TokensPerGB <= 0 {
		return fmt.Errorf("%s: must be positive, got %d", s.TokensOrigin, p.TokensPerGB)
	}
	return nil
}

// configure has the workload configure itself for the run, counting
// with the run's tokenizer.
func (p *Prepared) configure(ctx context.Context, s Setup, tokOrigin string, log zerolog.Logger) error {
	w := s.Workload
	tok, err := p.tokenizer(ctx, s, tokOrigin, log)
	if err != nil {
		return err
	}
	var tokens protocol.TokenCounter // nil, not a nil *Meter, without a tokenizer
	if p.Sizing = tokenize.NewMeter(tok); p.Sizing != nil {
		tokens = p.Sizing
	}
	cr, err := w.Service().Configure(ctx, protocol.WorkloadConfig{Options: s.Options, Common: protocol.Common{
		Seed: s.Seed, Model: p.Model, KVCacheVolumeGB: s.KVCacheVolumeGB, TokensPerGB: p.TokensPerGB, Shard: s.Shard,
	}, Tokens: tokens})
	if err != nil {
		return err
	}
	if len(cr.Errors) > 0 { // bad input, as in precheck: exit 2
		return config.UsageError{Err: pluginset.FieldErrors(cr.Errors, "workload "+w.Name(), s.OptionOrigin)}
	}
	p.Configured = cr
	return nil
}

// Found is what preparing found out that the run's recorded configuration
// holds (config.Spec.Entries).
func (p *Prepared) Found(w *pluginset.Workload) config.Found {
	f := config.Found{Model: p.Model, TokensPerGB: p.TokensPerGB, Workload: w.Name(), Resolved: p.Configured.Resolved}
	if w.ByPath {
		f.Path = w.Path
	}
	return f
}

// statusSourceURL returns the server to read /status from: the LMCache
// URL if given, else the built-in engine (base: its root once started).
func statusSourceURL(lmcacheURL string, builtin bool, base string) string {
	if lmcacheURL != "" || !builtin {
		return lmcacheURL
	}
	return base
}
