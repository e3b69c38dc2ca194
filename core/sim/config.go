package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/lmbench/lmbench/core/sim/tokenizer"
)

// Tokenizer modes (Config.Tokenizer): package tokenizer's.
const (
	// TokenizerWords: a token is a whitespace-separated word (the default).
	TokenizerWords = tokenizer.Words
	// TokenizerSubword: a word costs 1 to 6 tokens and the chat template
	// adds tokens per message.
	TokenizerSubword = tokenizer.Subword
)

// Config is the simulated engine's cost model, KV-cache tiers, faults and
// identity. Start from DefaultConfig; the zero value is not valid. Config
// is comparable with ==. core/config declares its settings as options
// (flags, keys, variables).
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
	// DecodePerToken is the time between two output tokens of one request
	// decoding alone.
	DecodePerToken time.Duration
	// DecodePerSeq is what each other request decoding at the same time
	// adds to that gap: a step costs DecodePerToken + DecodePerSeq × (the
	// running batch − 1). 0 (the default): decodes never slow each other.
	DecodePerSeq time.Duration
	// PrefillOverhead is a fixed GPU time added to every prefill (the
	// scheduler's step, the sampling of the first token).
	PrefillOverhead time.Duration
	// PrefillGrowth is what every 1,000 prompt tokens add to the cost of
	// each computed token (attention grows with the context): a computed
	// token costs PrefillPerToken + PrefillGrowth × prompt tokens / 1,000.
	PrefillGrowth time.Duration
	// MaxNumSeqs, above 0, caps the requests the engine serves at once,
	// as vLLM's --max-num-seqs: the others wait, in arrival order, for one
	// to finish. 0 (the default): no cap.
	MaxNumSeqs int
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
	// Kind is the engine it answers as: KindBuiltin (itself, the default)
	// or KindOllama: Ollama's /api/version and model list, no cached
	// tokens in usage, no /tokenize, /metrics or cache reset.
	Kind string
	// ExtraModels are more model names it lists and serves besides Model,
	// comma-separated, in the order /v1/models lists them after Model.
	ExtraModels string
	// Answers makes the engine answer needle questions ("What is the
	// access code of vault 17?") from the facts in the prompt ("The access
	// code of vault 17 is 4832."), instead of its vocabulary's filler.
	Answers bool

	// Profile is the twin profile (lmbench fit's) the cost settings came
	// from, "" when none: the engine is then a twin of a measured one, and
	// what runs against it measure are predictions.
	Profile string

	// Faults are injected failures, for tests and demos.
	Faults Faults
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
	// BlendCorrupt is the probability that a blended chunk (Blend) loses
	// its content for the answer (Answers): a non-prefix reuse that
	// breaks what the model reads. Drawn per chunk from (Seed, the chunk's
	// content), so it strikes the same chunks in every run.
	BlendCorrupt float64
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
		Kind:             KindBuiltin,
		Faults:           Faults{Seed: 1, SlowFirstTokenDelay: 2 * time.Second},
	}
}

// FieldError is one invalid setting: Name is the setting as the flags
// name it without a prefix ("gpu-gb"), Field the Go field ("GPUGB"),
// Reason what is wrong with it and what is expected. Error names the Go
// field; a caller that knows where the value came from names that instead.
type FieldError struct {
	Name, Field, Reason string
}

func (e *FieldError) Error() string { return "sim.Config." + e.Field + ": " + e.Reason }

// Validate reports every invalid field, each a *FieldError, joined.
func (c Config) Validate() error {
	var errs []error
	bad := func(name, field, format string, args ...any) {
		errs = append(errs, &FieldError{Name: name, Field: field, Reason: fmt.Sprintf(format, args...)})
	}
	c.checkRequests(bad)
	c.checkTimes(bad)
	c.checkCache(bad)
	c.checkFaults(bad)
	return errors.Join(errs...)
}

// complain records one invalid field for Validate.
type complain func(name, field, format string, args ...any)

// checkRequests checks the model and the request lengths.
func (c Config) checkRequests(bad complain) {
	if c.Model == "" {
		bad("model", "Model", "must not be empty")
	}
	if c.MaxModelLen < 2 {
		bad("max-model-len", "MaxModelLen", "must be >= 2, got %d", c.MaxModelLen)
	}
	if c.DefaultMaxTokens < 1 {
		bad("default-max-tokens", "DefaultMaxTokens", "must be >= 1, got %d", c.DefaultMaxTokens)
	}
	if c.MaxNumSeqs < 0 {
		bad("max-num-seqs", "MaxNumSeqs", "must be >= 0 (0: no cap), got %d", c.MaxNumSeqs)
	}
	if c.EOSAfter < 0 {
		bad("eos-after", "EOSAfter", "must be >= 0 (0: no early end), got %d", c.EOSAfter)
	}
	if c.Kind != KindBuiltin && c.Kind != KindOllama {
		bad("kind", "Kind", "must be %s or %s, got %q", KindBuiltin, KindOllama, c.Kind)
	}
	for _, m := range c.extraModels() {
		if m == "" || m == c.Model {
			bad("extra-models", "ExtraModels", "must be model names other than %q, separated by commas, got %q", c.Model, c.ExtraModels)
			break
		}
	}
}

// The engines the simulator can answer as (Config.Kind).
const (
	KindBuiltin = "builtin"
	KindOllama  = "ollama"
)

// extraModels is ExtraModels as a list (nil when empty).
func (c Config) extraModels() []string {
	if strings.TrimSpace(c.ExtraModels) == "" {
		return nil
	}
	out := strings.Split(c.ExtraModels, ",")
	for i := range out {
		out[i] = strings.TrimSpace(out[i])
	}
	return out
}

// serves reports whether model is one the engine serves.
func (c Config) serves(model string) bool {
	return model == c.Model || slices.Contains(c.extraModels(), model)
}

// checkTimes checks the cost model's durations and the time scale.
func (c Config) checkTimes(bad complain) {
	for _, d := range []struct {
		name, field string
		v           time.Duration
	}{
		{"prefill-per-token", "PrefillPerToken", c.PrefillPerToken},
		{"cpu-load-per-token", "CPULoadPerToken", c.CPULoadPerToken},
		{"disk-load-per-token", "DiskLoadPerToken", c.DiskLoadPerToken},
		{"decode-per-token", "DecodePerToken", c.DecodePerToken},
		{"decode-per-seq", "DecodePerSeq", c.DecodePerSeq},
		{"prefill-overhead", "PrefillOverhead", c.PrefillOverhead},
		{"prefill-growth", "PrefillGrowth", c.PrefillGrowth},
		{"fault-slow-first-token-delay", "Faults.SlowFirstTokenDelay", c.Faults.SlowFirstTokenDelay},
	} {
		if d.v < 0 {
			bad(d.name, d.field, "must be >= 0, got %v", d.v)
		}
	}
	switch {
	case math.IsNaN(c.TimeScale) || math.IsInf(c.TimeScale, 0):
		bad("time-scale", "TimeScale", "must be a finite number, got %v", c.TimeScale)
	case c.TimeScale < 0:
		bad("time-scale", "TimeScale", "must be >= 0, got %v", c.TimeScale)
	}
}

// checkCache checks the block size, the sizes of the tiers, tokens per
// GB, the tokenizer mode and blending (in the order Validate always
// reported them).
func (c Config) checkCache(bad complain) {
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
		name, field string
		gb          float64
	}{{"gpu-gb", "GPUGB", c.GPUGB}, {"cpu-gb", "CPUGB", c.CPUGB}, {"disk-gb", "DiskGB", c.DiskGB}} {
		switch {
		case math.IsNaN(t.gb) || math.IsInf(t.gb, 0) || t.gb < 0:
			bad(t.name, t.field, "must be 0 (off) or a positive number of GB, got %v", t.gb)
		case t.gb > 0 && c.BlockSize >= 1 && c.TokensPerGB >= 1 && c.tierBlocks(t.gb) < 1:
			bad(t.name, t.field, "%v GB holds less than one %d-token block at %d tokens per GB; use 0 (off) or at least %v",
				t.gb, c.BlockSize, c.TokensPerGB, float64(c.BlockSize)/float64(c.TokensPerGB))
		case t.gb*float64(max(c.TokensPerGB, 1)) > 1<<40:
			bad(t.name, t.field, "%v GB is more than the simulator can track (2^40 tokens)", t.gb)
		}
	}
	if err := tokenizer.CheckMode(c.Tokenizer); err != nil {
		bad("tokenizer-mode", "Tokenizer", "%v", err)
	}
	if math.IsNaN(c.BlendRecompute) || c.BlendRecompute < 0 || c.BlendRecompute > 1 {
		bad("blend-recompute", "BlendRecompute", "must be between 0 and 1, got %v", c.BlendRecompute)
	}
}

// checkFaults checks the fault rates and the kill count.
func (c Config) checkFaults(bad complain) {
	for _, f := range []struct {
		name, field string
		v           float64
	}{
		{"fault-http-500", "Faults.HTTP500", c.Faults.HTTP500},
		{"fault-cut-stream", "Faults.CutStream", c.Faults.CutStream},
		{"fault-malformed-sse", "Faults.MalformedSSE", c.Faults.MalformedSSE},
		{"fault-slow-first-token", "Faults.SlowFirstToken", c.Faults.SlowFirstToken},
		{"fault-stall-after-headers", "Faults.StallAfterHeaders", c.Faults.StallAfterHeaders},
		{"fault-stall-mid-stream", "Faults.StallMidStream", c.Faults.StallMidStream},
		{"fault-hold-after-done", "Faults.HoldAfterDone", c.Faults.HoldAfterDone},
		{"fault-blend-corrupt", "Faults.BlendCorrupt", c.Faults.BlendCorrupt},
	} {
		if math.IsNaN(f.v) || f.v < 0 || f.v > 1 {
			bad(f.name, f.field, "must be a fraction between 0 and 1, got %v", f.v)
		}
	}
	if c.Faults.BlendCorrupt > 0 && (!c.Blend || !c.Answers) {
		bad("fault-blend-corrupt", "Faults.BlendCorrupt", "%v needs blend and answers on (only a blended chunk can be corrupted, and only an answer shows it)", c.Faults.BlendCorrupt)
	}
	if c.Faults.DieAfter < 0 {
		bad("fault-die-after", "Faults.DieAfter", "must be >= 0 (0 = never), got %d", c.Faults.DieAfter)
	}
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
