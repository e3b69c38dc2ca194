package host

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/core/kvcache"
	"github.com/lmbench/lmbench/core/lmcache"
	"github.com/lmbench/lmbench/core/sim"
	"github.com/lmbench/lmbench/core/tokenize"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// BuiltinEngine is the engine URL that starts the built-in simulated
// engine inside the run.
const BuiltinEngine = "builtin"

// Setup is what Prepare needs, as the configuration resolved it; each
// Origin names the flag, key or variable a value came from, for errors.
type Setup struct {
	EngineURL    string // "builtin", a URL, host:port, or a port
	EngineOrigin string
	// Sim configures the built-in engine; SimFlags are the --sim-* flags
	// given (an error without the built-in engine).
	Sim      sim.Config
	SimFlags []string

	LMCacheURL    string
	LMCacheOrigin string
	// Model is matched on LMCache's /status ("" = detect it from
	// /v1/models); ServedModel is sent to the engine ("" = Model). The
	// origins name where each came from, for errors.
	Model, ServedModel        string
	ModelOrigin, ServedOrigin string
	// TokensPerGB is read from LMCache's /status unless HasTokensPerGB.
	TokensPerGB     int64
	HasTokensPerGB  bool
	TokensOrigin    string
	KVCacheVolumeGB float64
	KVOrigin        string
	Seed            int64
	APIKey          string
	// Shard is the part of a sharded run to send (zero: all of it), named
	// by ShardOrigin in errors.
	Shard       protocol.Shard
	ShardOrigin string

	// Tokenizer is --tokenizer (auto, engine, words, or a tokenizer.json
	// path; "" = auto), named by TokenizerOrigin in errors and warnings.
	Tokenizer, TokenizerOrigin string

	Workload *Workload
	// Options are the workload's options set above its defaults.
	Options protocol.Values
	// OptionOrigin maps a workload option to where its value came from.
	OptionOrigin func(option string) string
}

// Prepared is a run ready to execute: the engine found, the model and
// tokens per GB known, the workload configured.
type Prepared struct {
	EngineURL   string // where requests go
	ReportURL   string // as shown in the summary (no credentials)
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
	// StatusBlockSize is the KV block size /status reported (LMCache's,
	// or the built-in engine's); 0 when none was read.
	StatusBlockSize int

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
	if s.KVCacheVolumeGB <= 0 {
		return nil, fmt.Errorf("%s: must be positive, got %s", s.KVOrigin, strconv.FormatFloat(s.KVCacheVolumeGB, 'g', -1, 64))
	}
	tokOrigin := s.TokenizerOrigin
	if tokOrigin == "" {
		tokOrigin = "--tokenizer"
	}
	if s.Tokenizer != "" {
		if err := tokenize.Check(s.Tokenizer, tokOrigin); err != nil {
			return nil, UsageError{err}
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
	engineURL := PortOnly(s.EngineURL)
	if engineURL == BuiltinEngine {
		srv, err := sim.New(s.Sim, log.With().Str("component", "sim").Logger())
		if err != nil {
			return nil, UsageError{err}
		}
		base, err := srv.Start("127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("built-in engine: %w", err)
		}
		p.closers = append(p.closers, func() { srv.Close() })
		p.EngineURL, p.ReportURL = base, "builtin ("+base+")"
		log.Info().Str("url", base).Msg("built-in simulated engine started (a test double: not a real engine's numbers)")
	} else {
		if len(s.SimFlags) > 0 {
			return nil, UsageError{fmt.Errorf("%s: the built-in engine's flags need --engine-url builtin, got %q", strings.Join(s.SimFlags, ", "), RedactURL(engineURL))}
		}
		base, stripped, err := engine.CheckBaseURL(engineURL)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.EngineOrigin, err)
		}
		if stripped != "" {
			log.Warn().Msgf("%s: ignoring the endpoint path %s after the address (lmbench adds the paths itself)", s.EngineOrigin, stripped)
		}
		p.EngineURL, p.ReportURL = base, RedactURL(base)
	}
	if s.LMCacheURL != "" {
		if _, _, err := engine.CheckBaseURL(PortOnly(s.LMCacheURL)); err != nil {
			return nil, fmt.Errorf("%s: %w", s.LMCacheOrigin, err)
		}
	}

	p.Model = s.Model
	if p.Model == "" {
		dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		model, err := engine.DetectModel(dctx, engine.NormalizeURL(p.EngineURL), p.APIKey, nil)
		cancel()
		if err != nil {
			return nil, err
		}
		log.Info().Str("model", model).Msg("model auto-detected")
		p.Model, p.ModelDetected = model, true
	}
	p.Served = s.ServedModel
	origin := s.ServedOrigin
	if p.Served == "" {
		p.Served, origin = p.Model, s.ModelOrigin
	}
	if !p.ModelDetected || s.ServedModel != "" {
		if origin == "" {
			origin = "--model"
		}
		if err := checkServedModel(ctx, engine.NormalizeURL(p.EngineURL), p.APIKey, p.Served, origin, log); err != nil {
			return nil, err
		}
	}
	p.TokensPerGB = s.TokensPerGB
	if s.HasTokensPerGB && HasStatusSource(s.LMCacheURL, engineURL) {
		p.StatusBlockSize = kvcache.StatusBlockSize(ctx, statusSourceURL(PortOnly(s.LMCacheURL), engineURL, p.EngineURL), p.Model, log)
	}
	if !s.HasTokensPerGB {
		// Never a default LMCache URL (the original's quirk Q3): the caller
		// has made sure one was given, or the built-in engine serves its
		// own LMCache-shaped /status.
		tctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		tpg, layout, err := lmcache.TokensPerGB(tctx, statusSourceURL(PortOnly(s.LMCacheURL), engineURL, p.EngineURL), p.Model, nil)
		cancel()
		if err != nil {
			return nil, err
		}
		log.Info().Int64("cache_size_per_token", layout.CacheSizePerToken).Int64("world_size", layout.WorldSize).
			Int64("tokens_per_gb", tpg).Msg("tokens per GB from LMCache")
		p.TokensPerGB, p.TokensResolved = tpg, true
		p.StatusBlockSize = layout.BlockSize
	}
	if p.TokensPerGB <= 0 {
		return nil, fmt.Errorf("%s: must be positive, got %d", s.TokensOrigin, p.TokensPerGB)
	}

	w := s.Workload
	tokens, err := p.tokenizer(ctx, s, tokOrigin, log)
	if err != nil {
		return nil, err
	}
	cr, err := w.Service().Configure(ctx, protocol.WorkloadConfig{Options: s.Options, Common: protocol.Common{
		Seed: s.Seed, Model: p.Model, KVCacheVolumeGB: s.KVCacheVolumeGB, TokensPerGB: p.TokensPerGB, Shard: s.Shard,
	}, Tokens: tokens})
	if err != nil {
		return nil, err
	}
	if len(cr.Errors) > 0 {
		return nil, FieldErrors(cr.Errors, "workload "+w.Name(), s.OptionOrigin)
	}
	p.Configured = cr
	return p, nil
}

// HasStatusSource reports whether tokens per GB can be read from an
// LMCache-shaped /status: given an LMCache URL, or with the built-in
// engine, whose /status reports its own tokens per GB.
func HasStatusSource(lmcacheURL, engineURL string) bool {
	return lmcacheURL != "" || PortOnly(engineURL) == BuiltinEngine
}

// statusSourceURL returns the server to read /status from: the LMCache
// URL if given, else the built-in engine (base: its URL once started).
func statusSourceURL(lmcacheURL, engineURL, base string) string {
	if lmcacheURL != "" || engineURL != BuiltinEngine {
		return lmcacheURL
	}
	return base
}

// CheckURL tells whether an engine or LMCache address, as typed, is one:
// an http(s) scheme or none, a host, no query (engine.CheckBaseURL).
func CheckURL(raw string) error {
	_, _, err := engine.CheckBaseURL(PortOnly(raw))
	return err
}

// PortOnly reads a bare port number as a server on this machine
// ("8000" → "http://localhost:8000"), as the original's setup does.
func PortOnly(u string) string {
	if n, err := strconv.Atoi(strings.TrimSpace(u)); err == nil && n > 0 && n < 65536 {
		return "http://localhost:" + strconv.Itoa(n)
	}
	return u
}

// RedactURL drops credentials from a URL before it is printed or exported.
func RedactURL(s string) string { return engine.RedactURL(s) }
