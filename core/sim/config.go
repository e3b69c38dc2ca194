package sim

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/spf13/pflag"
)

// Config is the simulated engine's cost model and identity. Start from
// DefaultConfig; the zero value is not valid. Config is comparable with ==;
// cmp.Diff needs cmpopts.IgnoreUnexported(sim.Config{}) for the flag
// prefix RegisterFlags records.
type Config struct {
	// Model is the one model name served; requests naming another get a 404.
	Model string
	// PrefillPerToken is the GPU time to prefill one uncached prompt token.
	PrefillPerToken time.Duration
	// DecodePerToken is the time between two output tokens of one request.
	DecodePerToken time.Duration
	// TimeScale multiplies every delay: 1 is real time, 0.01 is 100x
	// faster, 0 sleeps never.
	TimeScale float64
	// BlockSize is the number of tokens in one prefix-cache block.
	BlockSize int
	// CacheTokens is the prefix cache's capacity in tokens (rounded down to
	// whole blocks); 0 turns caching off.
	CacheTokens int
	// DefaultMaxTokens is the output length when a request sets neither
	// max_tokens nor max_completion_tokens.
	DefaultMaxTokens int

	// flagPrefix ("--" plus RegisterFlags' prefix, empty before it is
	// called) lets Validate name the flag the user typed, not the Go field.
	flagPrefix string
}

// DefaultConfig returns a model of a mid-size GPU: 50µs per prefilled token
// (a 4,000-token document costs 200ms), 10ms per output token, a 16-token
// block and room for a million cached tokens.
func DefaultConfig() Config {
	return Config{
		Model:            "lmbench-sim",
		PrefillPerToken:  50 * time.Microsecond,
		DecodePerToken:   10 * time.Millisecond,
		TimeScale:        1,
		BlockSize:        16,
		CacheTokens:      1_000_000,
		DefaultMaxTokens: 16,
	}
}

// RegisterFlags binds the fields to flags named prefix+"model",
// prefix+"prefill-per-token" and so on, with the current values as
// defaults. Call it on a DefaultConfig.
func (c *Config) RegisterFlags(fs *pflag.FlagSet, prefix string) {
	c.flagPrefix = "--" + prefix
	fs.StringVar(&c.Model, prefix+"model", c.Model,
		"model name the simulated engine serves (requests naming another model get 404)")
	fs.DurationVar(&c.PrefillPerToken, prefix+"prefill-per-token", c.PrefillPerToken,
		"simulated GPU time to prefill one uncached prompt token; prefills run one at a time, "+
			"so time to first token = queue wait + uncached tokens x this")
	fs.DurationVar(&c.DecodePerToken, prefix+"decode-per-token", c.DecodePerToken,
		"simulated time between two output tokens of one request (decodes of different requests run concurrently)")
	fs.Float64Var(&c.TimeScale, prefix+"time-scale", c.TimeScale,
		"multiplies every simulated delay: 1 = real time, 0.01 = 100x faster, 0 = no delays at all")
	fs.IntVar(&c.BlockSize, prefix+"block-size", c.BlockSize,
		"prefix-cache block size in tokens (a token is one whitespace-separated word); only whole leading blocks can hit")
	fs.IntVar(&c.CacheTokens, prefix+"cache-tokens", c.CacheTokens,
		"prefix-cache capacity in tokens, least recently used blocks evicted first; 0 turns caching off")
	fs.IntVar(&c.DefaultMaxTokens, prefix+"default-max-tokens", c.DefaultMaxTokens,
		"output tokens generated when a request sets neither max_tokens nor max_completion_tokens")
}

// Validate reports every invalid field, naming the flag when RegisterFlags
// was called and the Go field otherwise.
func (c Config) Validate() error {
	var errs []error
	bad := func(flag, field, format string, args ...any) {
		name := "sim.Config." + field
		if c.flagPrefix != "" {
			name = c.flagPrefix + flag
		}
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{name}, args...)...))
	}
	if c.Model == "" {
		bad("model", "Model", "must not be empty")
	}
	if c.PrefillPerToken < 0 {
		bad("prefill-per-token", "PrefillPerToken", "must be >= 0, got %v", c.PrefillPerToken)
	}
	if c.DecodePerToken < 0 {
		bad("decode-per-token", "DecodePerToken", "must be >= 0, got %v", c.DecodePerToken)
	}
	switch {
	case math.IsNaN(c.TimeScale) || math.IsInf(c.TimeScale, 0):
		bad("time-scale", "TimeScale", "must be a finite number, got %v", c.TimeScale)
	case c.TimeScale < 0:
		bad("time-scale", "TimeScale", "must be >= 0, got %v", c.TimeScale)
	}
	if c.BlockSize < 1 {
		bad("block-size", "BlockSize", "must be >= 1, got %d", c.BlockSize)
	}
	if c.CacheTokens < 0 || (c.CacheTokens > 0 && c.BlockSize >= 1 && c.CacheTokens < c.BlockSize) {
		bad("cache-tokens", "CacheTokens", "must be 0 (off) or at least one block (%d tokens), got %d",
			max(c.BlockSize, 1), c.CacheTokens)
	}
	if c.DefaultMaxTokens < 1 {
		bad("default-max-tokens", "DefaultMaxTokens", "must be >= 1, got %d", c.DefaultMaxTokens)
	}
	return errors.Join(errs...)
}

// scaled converts a modelled duration to wall-clock time.
func (c Config) scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * c.TimeScale)
}
