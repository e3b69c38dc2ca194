package sim

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/spf13/pflag"
)

// Config is the simulated engine's cost model, KV-cache tiers, faults and
// identity. Start from DefaultConfig; the zero value is not valid. Config
// is comparable with ==; cmp.Diff needs cmpopts.IgnoreUnexported(sim.Config{})
// for the flag prefix RegisterFlags records.
type Config struct {
	// Model is the one model name served; requests naming another get a 404.
	Model string
	// MaxModelLen bounds prompt plus output tokens, as vLLM's
	// --max-model-len: a longer request gets a 400.
	MaxModelLen int
	// DefaultMaxTokens is the output length when a request sets neither
	// max_tokens nor max_completion_tokens.
	DefaultMaxTokens int
	// EOSAfter, above 0, makes every answer reach the end-of-sequence
	// token after this many output tokens and stop there (finish_reason
	// "stop"), as a real model ends before max_tokens, unless the request
	// sets ignore_eos; never before its min_tokens. 0 (the default): every
	// answer runs to max_tokens.
	EOSAfter int

	// PrefillPerToken is the GPU time to prefill one prompt token that no
	// tier holds.
	PrefillPerToken time.Duration
	// CPULoadPerToken and DiskLoadPerToken are the GPU time to load one
	// cached token from the CPU or disk tier (a GPU-tier hit costs nothing).
	CPULoadPerToken  time.Duration
	DiskLoadPerToken time.Duration
	// DecodePerToken is the time between two output tokens of one request.
	DecodePerToken time.Duration
	// TimeScale multiplies every delay: 1 is real time, 0.01 is 100x
	// faster, 0 sleeps never.
	TimeScale float64

	// BlockSize is the number of tokens in one KV-cache block.
	BlockSize int
	// TokensPerGB converts the tier capacities to tokens; /status reports
	// the matching cache_size_per_token = 2^30 / (TokensPerGB × WorldSize).
	TokensPerGB int
	// WorldSize is the tensor-parallel world size /status reports.
	WorldSize int
	// GPUGB, CPUGB and DiskGB are the tier capacities in GB; 0 turns a tier
	// off.
	GPUGB, CPUGB, DiskGB float64

	// Blend turns on CacheBlend-style reuse of chunks that are not part of
	// the cached prefix; BlendRecompute is the fraction of a reused chunk's
	// tokens that is recomputed anyway.
	Blend          bool
	BlendRecompute float64

	// Tokenizer is TokenizerWords (a token is a word) or TokenizerSubword
	// (words cost 1 to 6 tokens, the chat template adds tokens per message).
	Tokenizer string
	// NoTokenize turns off /tokenize and /detokenize (404), as on an engine
	// without them.
	NoTokenize bool

	// Faults are injected failures, for tests and demos.
	Faults Faults

	// flagPrefix ("--" plus RegisterFlags' prefix, empty before it is
	// called) lets Validate name the flag the user typed, not the Go field.
	flagPrefix string
}

// Faults are seeded failure rates, each the probability (0 to 1) that a
// request suffers that fault. Request n (in arrival order, from 0) draws
// its faults from a generator seeded with (Seed, n), so a run with the
// same arrival order fails the same requests.
type Faults struct {
	Seed int64
	// HTTP500 answers 500 at once, before the request is queued.
	HTTP500 float64
	// CutStream ends the connection mid-way: after half the output tokens
	// of a stream, or before a whole response is written.
	CutStream float64
	// MalformedSSE replaces one token chunk of a stream with a line that is
	// not valid JSON (the stream still ends with [DONE]).
	MalformedSSE float64
	// SlowFirstToken delays the first token by SlowFirstTokenDelay (scaled
	// by TimeScale), after the prefill and off the GPU.
	SlowFirstToken      float64
	SlowFirstTokenDelay time.Duration
	// StallAfterHeaders answers 200 with the response's headers and then
	// sends nothing, keeping the connection open until the client leaves:
	// an engine hung before its first token.
	StallAfterHeaders float64
	// StallMidStream stops sending after half the output tokens of a
	// stream (half the body of a whole response), keeping the connection
	// open: an engine hung mid-decode. CutStream, drawn too, wins.
	StallMidStream float64
	// HoldAfterDone keeps the response open after [DONE] (after a whole
	// response's body), never ending it: a proxy that holds streams open.
	HoldAfterDone float64
	// DieAfter, when > 0, kills the engine as the DieAfter-th completion
	// request arrives: the listener and every connection close, that
	// request and every one in flight fail with a broken connection, and
	// new connections are refused, as if the process was killed. 0 = never.
	DieAfter int
	// ResetNoop makes POST /reset_prefix_cache answer 200 without clearing
	// anything, as a reset that silently did not take.
	ResetNoop bool
	// SlowHits makes every reused token (prefix or blended, from any tier)
	// cost as much as a prefilled one, while still reporting it cached: an
	// engine whose hits bring no speedup, for the tools that check for one.
	SlowHits bool
}

// DefaultConfig models a mid-size GPU serving an 8B model with LMCache:
// 50µs per prefilled token (a 4,000-token document costs 200ms), 5µs per
// token loaded from CPU memory, 20µs from disk, 10ms per output token,
// 16-token blocks, 8,192 tokens per GB (128 KiB of KV cache per token), 8
// GB of GPU KV cache and 32 GB of CPU memory, no disk tier.
func DefaultConfig() Config {
	return Config{
		Model:            "lmbench-sim",
		MaxModelLen:      131072,
		DefaultMaxTokens: 16,
		PrefillPerToken:  50 * time.Microsecond,
		CPULoadPerToken:  5 * time.Microsecond,
		DiskLoadPerToken: 20 * time.Microsecond,
		DecodePerToken:   10 * time.Millisecond,
		TimeScale:        1,
		BlockSize:        16,
		TokensPerGB:      8192,
		WorldSize:        1,
		GPUGB:            8,
		CPUGB:            32,
		DiskGB:           0,
		BlendRecompute:   0.15,
		Tokenizer:        TokenizerWords,
		Faults:           Faults{Seed: 1, SlowFirstTokenDelay: 2 * time.Second},
	}
}

// RegisterFlags binds the fields to flags named prefix+"model",
// prefix+"prefill-per-token" and so on, with the current values as
// defaults. Call it on a DefaultConfig.
func (c *Config) RegisterFlags(fs *pflag.FlagSet, prefix string) {
	c.flagPrefix = "--" + prefix
	fs.StringVar(&c.Model, prefix+"model", c.Model,
		"model name the simulated engine serves (requests naming another model get 404)")
	fs.IntVar(&c.MaxModelLen, prefix+"max-model-len", c.MaxModelLen,
		"largest prompt plus output, in tokens; longer requests get 400 as in vLLM")
	fs.IntVar(&c.DefaultMaxTokens, prefix+"default-max-tokens", c.DefaultMaxTokens,
		"output tokens generated when a request sets neither max_tokens nor max_completion_tokens")
	fs.IntVar(&c.EOSAfter, prefix+"eos-after", c.EOSAfter,
		"answers end at the end-of-sequence token after this many output tokens (finish_reason stop) unless the request sets ignore_eos, never before its min_tokens; 0 = every answer runs to max_tokens")
	fs.DurationVar(&c.PrefillPerToken, prefix+"prefill-per-token", c.PrefillPerToken,
		"GPU time to prefill one prompt token no cache tier holds; prefills run one at a time, in arrival order")
	fs.DurationVar(&c.CPULoadPerToken, prefix+"cpu-load-per-token", c.CPULoadPerToken,
		"GPU time to load one cached token from the CPU tier (GPU-tier hits are free)")
	fs.DurationVar(&c.DiskLoadPerToken, prefix+"disk-load-per-token", c.DiskLoadPerToken,
		"GPU time to load one cached token from the disk tier")
	fs.DurationVar(&c.DecodePerToken, prefix+"decode-per-token", c.DecodePerToken,
		"time between two output tokens of one request (decodes of different requests run as one batch, concurrently)")
	fs.Float64Var(&c.TimeScale, prefix+"time-scale", c.TimeScale,
		"multiplies every simulated delay: 1 = real time, 0.01 = 100x faster, 0 = no delays at all")
	fs.IntVar(&c.BlockSize, prefix+"block-size", c.BlockSize,
		"KV-cache block size in tokens (a token is one whitespace-separated word); only whole blocks are cached")
	fs.IntVar(&c.TokensPerGB, prefix+"tokens-per-gb", c.TokensPerGB,
		"tokens per GB of KV cache: converts the tier sizes to tokens; /status reports cache_size_per_token = 2^30 / (this x world size)")
	fs.IntVar(&c.WorldSize, prefix+"world-size", c.WorldSize,
		"tensor-parallel world size reported by /status")
	fs.Float64Var(&c.GPUGB, prefix+"gpu-gb", c.GPUGB,
		"GPU (HBM) KV-cache tier size in GB, LRU; 0 = off")
	fs.Float64Var(&c.CPUGB, prefix+"cpu-gb", c.CPUGB,
		"CPU (DRAM) tier size in GB, LRU; every computed block is also written here; blocks evicted from it are demoted to disk; 0 = off")
	fs.Float64Var(&c.DiskGB, prefix+"disk-gb", c.DiskGB,
		"disk tier size in GB, LRU; holds blocks demoted from the tiers above; 0 = off")
	fs.BoolVar(&c.Blend, prefix+"blend", c.Blend,
		"CacheBlend-style reuse: cached chunks found after the cached prefix are reused, not recomputed (except --"+prefix+"blend-recompute of their tokens)")
	fs.Float64Var(&c.BlendRecompute, prefix+"blend-recompute", c.BlendRecompute,
		"fraction of each blended chunk's tokens recomputed anyway (0 to 1)")
	fs.StringVar(&c.Tokenizer, prefix+"tokenizer-mode", c.Tokenizer,
		"words: a token is a whitespace-separated word; subword: a word of more than 3 characters costs 1-6 tokens (by its hash), "+
			"the chat template adds 3 tokens per message and 2 for the generation prompt, /tokenize with add_special_tokens adds a BOS token")
	fs.BoolVar(&c.NoTokenize, prefix+"no-tokenize", c.NoTokenize,
		"answer /tokenize and /detokenize with 404, as an engine without them")
	fs.Int64Var(&c.Faults.Seed, prefix+"fault-seed", c.Faults.Seed,
		"seed of the fault draws (request n draws from (seed, n))")
	fs.Float64Var(&c.Faults.HTTP500, prefix+"fault-http-500", c.Faults.HTTP500,
		"fraction of requests answered with HTTP 500 at once")
	fs.Float64Var(&c.Faults.CutStream, prefix+"fault-cut-stream", c.Faults.CutStream,
		"fraction of requests whose connection is cut mid-way (after half the output tokens of a stream)")
	fs.Float64Var(&c.Faults.MalformedSSE, prefix+"fault-malformed-sse", c.Faults.MalformedSSE,
		"fraction of streams in which one token chunk is replaced by a line that is not valid JSON")
	fs.Float64Var(&c.Faults.SlowFirstToken, prefix+"fault-slow-first-token", c.Faults.SlowFirstToken,
		"fraction of requests whose first token is delayed by --"+prefix+"fault-slow-first-token-delay")
	fs.DurationVar(&c.Faults.SlowFirstTokenDelay, prefix+"fault-slow-first-token-delay", c.Faults.SlowFirstTokenDelay,
		"extra delay of a slow first token (scaled by the time scale)")
	fs.Float64Var(&c.Faults.StallAfterHeaders, prefix+"fault-stall-after-headers", c.Faults.StallAfterHeaders,
		"fraction of requests answered with 200 headers and then nothing, the connection kept open (a hung engine)")
	fs.Float64Var(&c.Faults.StallMidStream, prefix+"fault-stall-mid-stream", c.Faults.StallMidStream,
		"fraction of requests that stop sending after half the output tokens, the connection kept open")
	fs.Float64Var(&c.Faults.HoldAfterDone, prefix+"fault-hold-after-done", c.Faults.HoldAfterDone,
		"fraction of requests whose response is held open after [DONE] instead of ending (a proxy that keeps streams open)")
	fs.IntVar(&c.Faults.DieAfter, prefix+"fault-die-after", c.Faults.DieAfter,
		"kill the engine as the N-th completion request arrives: listener and every connection closed, later connections refused (0 = never)")
	fs.BoolVar(&c.Faults.ResetNoop, prefix+"fault-reset-noop", c.Faults.ResetNoop,
		"POST /reset_prefix_cache answers 200 but clears nothing (a reset that did not take)")
	fs.BoolVar(&c.Faults.SlowHits, prefix+"fault-slow-hits", c.Faults.SlowHits,
		"cached tokens cost as much as prefilled ones (still reported cached): hits that bring no TTFT gain")
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
	if c.MaxModelLen < 2 {
		bad("max-model-len", "MaxModelLen", "must be >= 2, got %d", c.MaxModelLen)
	}
	if c.DefaultMaxTokens < 1 {
		bad("default-max-tokens", "DefaultMaxTokens", "must be >= 1, got %d", c.DefaultMaxTokens)
	}
	if c.EOSAfter < 0 {
		bad("eos-after", "EOSAfter", "must be >= 0 (0: no early end), got %d", c.EOSAfter)
	}
	for _, d := range []struct {
		flag, field string
		v           time.Duration
	}{
		{"prefill-per-token", "PrefillPerToken", c.PrefillPerToken},
		{"cpu-load-per-token", "CPULoadPerToken", c.CPULoadPerToken},
		{"disk-load-per-token", "DiskLoadPerToken", c.DiskLoadPerToken},
		{"decode-per-token", "DecodePerToken", c.DecodePerToken},
		{"fault-slow-first-token-delay", "Faults.SlowFirstTokenDelay", c.Faults.SlowFirstTokenDelay},
	} {
		if d.v < 0 {
			bad(d.flag, d.field, "must be >= 0, got %v", d.v)
		}
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
	if c.WorldSize < 1 {
		bad("world-size", "WorldSize", "must be >= 1, got %d", c.WorldSize)
	}
	switch {
	case c.TokensPerGB < 1:
		bad("tokens-per-gb", "TokensPerGB", "must be >= 1, got %d", c.TokensPerGB)
	case c.WorldSize >= 1:
		if per := c.CacheSizePerToken(); per < 1 || (1<<30)/(per*int64(c.WorldSize)) != int64(c.TokensPerGB) {
			bad("tokens-per-gb", "TokensPerGB",
				"%d cannot be reported exactly through /status (2^30 / (cache_size_per_token x world size %d) must give it back); use a power of two or a value <= %d",
				c.TokensPerGB, c.WorldSize, 32767/c.WorldSize)
		}
	}
	for _, t := range []struct {
		flag, field string
		gb          float64
	}{{"gpu-gb", "GPUGB", c.GPUGB}, {"cpu-gb", "CPUGB", c.CPUGB}, {"disk-gb", "DiskGB", c.DiskGB}} {
		switch {
		case math.IsNaN(t.gb) || math.IsInf(t.gb, 0) || t.gb < 0:
			bad(t.flag, t.field, "must be 0 (off) or a positive number of GB, got %v", t.gb)
		case t.gb > 0 && c.BlockSize >= 1 && c.TokensPerGB >= 1 && c.tierBlocks(t.gb) < 1:
			bad(t.flag, t.field, "%v GB holds less than one %d-token block at %d tokens per GB; use 0 (off) or at least %v",
				t.gb, c.BlockSize, c.TokensPerGB, float64(c.BlockSize)/float64(c.TokensPerGB))
		case t.gb*float64(max(c.TokensPerGB, 1)) > 1<<40:
			bad(t.flag, t.field, "%v GB is more than the simulator can track (2^40 tokens)", t.gb)
		}
	}
	if err := checkTokenizerMode(c.Tokenizer); err != nil {
		bad("tokenizer-mode", "Tokenizer", "%v", err)
	}
	if math.IsNaN(c.BlendRecompute) || c.BlendRecompute < 0 || c.BlendRecompute > 1 {
		bad("blend-recompute", "BlendRecompute", "must be between 0 and 1, got %v", c.BlendRecompute)
	}
	for _, f := range []struct {
		flag, field string
		v           float64
	}{
		{"fault-http-500", "Faults.HTTP500", c.Faults.HTTP500},
		{"fault-cut-stream", "Faults.CutStream", c.Faults.CutStream},
		{"fault-malformed-sse", "Faults.MalformedSSE", c.Faults.MalformedSSE},
		{"fault-slow-first-token", "Faults.SlowFirstToken", c.Faults.SlowFirstToken},
		{"fault-stall-after-headers", "Faults.StallAfterHeaders", c.Faults.StallAfterHeaders},
		{"fault-stall-mid-stream", "Faults.StallMidStream", c.Faults.StallMidStream},
		{"fault-hold-after-done", "Faults.HoldAfterDone", c.Faults.HoldAfterDone},
	} {
		if math.IsNaN(f.v) || f.v < 0 || f.v > 1 {
			bad(f.flag, f.field, "must be a fraction between 0 and 1, got %v", f.v)
		}
	}
	if c.Faults.DieAfter < 0 {
		bad("fault-die-after", "Faults.DieAfter", "must be >= 0 (0 = never), got %d", c.Faults.DieAfter)
	}
	return errors.Join(errs...)
}

// CacheSizePerToken is the KV-cache bytes per token /status reports:
// 2^30 / (TokensPerGB × WorldSize), so that LMCache clients computing
// tokens per GB as 2^30 / (cache_size_per_token × world_size) get
// TokensPerGB back.
func (c Config) CacheSizePerToken() int64 {
	d := int64(c.TokensPerGB) * int64(c.WorldSize)
	if d <= 0 {
		return 0
	}
	return (1 << 30) / d
}

// tierBlocks converts a tier size in GB to whole blocks.
func (c Config) tierBlocks(gb float64) int {
	return int(math.Floor(gb * float64(c.TokensPerGB) / float64(c.BlockSize)))
}

// scaled converts a modelled duration to wall-clock time.
func (c Config) scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * c.TimeScale)
}
