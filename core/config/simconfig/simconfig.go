package simconfig

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/sim"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// simSetting is one field of sim.Config as an option. name is the
// setting as sim.FieldError names it and as lmbench sim's flag
// ("gpu-gb"); field points into a sim.Config at a string, int, int64,
// float64, bool or time.Duration, which gives the option its type and
// default.
type simSetting struct {
	name     string
	help     string
	min, max *float64
	field    func(*sim.Config) any
}

func bound(f float64) *float64 { return &f }

// simSettings are the built-in engine's settings, in the order lmbench
// sim --help lists them. A help text may name another setting as {name}:
// it is written as that setting's flag.
var simSettings = []simSetting{
	{"model", "model name the simulated engine serves (requests naming another model get 404)", nil, nil,
		func(c *sim.Config) any { return &c.Model }},
	{"max-model-len", "largest prompt plus output, in tokens; longer requests get 400 as in vLLM", bound(2), nil,
		func(c *sim.Config) any { return &c.MaxModelLen }},
	{"default-max-tokens", "output tokens generated when a request sets neither max_tokens nor max_completion_tokens", bound(1), nil,
		func(c *sim.Config) any { return &c.DefaultMaxTokens }},
	{"eos-after", "answers end at the end-of-sequence token after this many output tokens (finish_reason stop) unless the request sets ignore_eos, never before its min_tokens; 0 = every answer runs to max_tokens", bound(0), nil,
		func(c *sim.Config) any { return &c.EOSAfter }},
	{"prefill-per-token", "GPU time to prefill one prompt token no cache tier holds; prefills run one at a time, in arrival order", nil, nil,
		func(c *sim.Config) any { return &c.PrefillPerToken }},
	{"cpu-load-per-token", "GPU time to load one cached token from the CPU tier (GPU-tier hits are free)", nil, nil,
		func(c *sim.Config) any { return &c.CPULoadPerToken }},
	{"disk-load-per-token", "GPU time to load one cached token from the disk tier", nil, nil,
		func(c *sim.Config) any { return &c.DiskLoadPerToken }},
	{"decode-per-token", "time between two output tokens of one request (decodes of different requests run as one batch, concurrently)", nil, nil,
		func(c *sim.Config) any { return &c.DecodePerToken }},
	{"decode-per-seq", "what each other request decoding at the same time adds to the gap between two output tokens (a step costs {decode-per-token} + this x (running batch - 1)); 0 = decodes never slow each other", nil, nil,
		func(c *sim.Config) any { return &c.DecodePerSeq }},
	{"prefill-overhead", "fixed GPU time added to every prefill", nil, nil,
		func(c *sim.Config) any { return &c.PrefillOverhead }},
	{"prefill-growth", "what every 1,000 prompt tokens add to the cost of each computed token (attention's growth with context): a token costs {prefill-per-token} + this x prompt tokens / 1000", nil, nil,
		func(c *sim.Config) any { return &c.PrefillGrowth }},
	{"max-num-seqs", "most requests served at once, as vLLM's --max-num-seqs: the others wait in arrival order for one to finish; 0 = no cap", bound(0), nil,
		func(c *sim.Config) any { return &c.MaxNumSeqs }},
	{"time-scale", "multiplies every simulated delay: 1 = real time, 0.01 = 100x faster, 0 = no delays at all", bound(0), nil,
		func(c *sim.Config) any { return &c.TimeScale }},
	{"block-size", "KV-cache block size in tokens (a token is one whitespace-separated word); only whole blocks are cached", bound(1), nil,
		func(c *sim.Config) any { return &c.BlockSize }},
	{"tokens-per-gb", "tokens per GB of KV cache: converts the tier sizes to tokens; /status reports cache_size_per_token = 2^30 / (this x world size)", bound(1), nil,
		func(c *sim.Config) any { return &c.TokensPerGB }},
	{"world-size", "tensor-parallel world size reported by /status", bound(1), nil,
		func(c *sim.Config) any { return &c.WorldSize }},
	{"gpu-gb", "GPU (HBM) KV-cache tier size in GB, LRU; 0 = off", bound(0), nil,
		func(c *sim.Config) any { return &c.GPUGB }},
	{"cpu-gb", "CPU (DRAM) tier size in GB, LRU; every computed block is also written here; blocks evicted from it are demoted to disk; 0 = off", bound(0), nil,
		func(c *sim.Config) any { return &c.CPUGB }},
	{"disk-gb", "disk tier size in GB, LRU; holds blocks demoted from the tiers above; 0 = off", bound(0), nil,
		func(c *sim.Config) any { return &c.DiskGB }},
	{"blend", "CacheBlend-style reuse: cached chunks found after the cached prefix are reused, not recomputed (except {blend-recompute} of their tokens)", nil, nil,
		func(c *sim.Config) any { return &c.Blend }},
	{"blend-recompute", "fraction of each blended chunk's tokens recomputed anyway (0 to 1)", bound(0), bound(1),
		func(c *sim.Config) any { return &c.BlendRecompute }},
	{"tokenizer-mode", "words: a token is a whitespace-separated word; subword: a word of more than 3 characters costs 1-6 tokens (by its hash), " +
		"the chat template adds 3 tokens per message and 2 for the generation prompt, /tokenize with add_special_tokens adds a BOS token", nil, nil,
		func(c *sim.Config) any { return &c.Tokenizer }},
	{"no-tokenize", "answer /tokenize and /detokenize with 404, as an engine without them", nil, nil,
		func(c *sim.Config) any { return &c.NoTokenize }},
	{"kind", "the engine it answers as: builtin (itself) or ollama (Ollama's /api/version and model list; no cached tokens in usage, no /tokenize, /metrics or cache reset), for trying what lmbench does on such an engine", nil, nil,
		func(c *sim.Config) any { return &c.Kind }},
	{"extra-models", "more model names to list and serve after {model}, comma-separated (an engine serving several models)", nil, nil,
		func(c *sim.Config) any { return &c.ExtraModels }},
	{"answers", "answer needle questions (\"What is the X?\") from the prompt's facts (\"The X is V.\"), \"I do not know.\" without one, as the needle-qa workload asks them, instead of filler tokens", nil, nil,
		func(c *sim.Config) any { return &c.Answers }},
	{"profile", "a twin profile (lmbench fit -o FILE): serve the engine with its fitted settings; a setting given explicitly overrides the profile's", nil, nil,
		func(c *sim.Config) any { return &c.Profile }},
	{"fault-seed", "seed of the fault draws (request n draws from (seed, n))", nil, nil,
		func(c *sim.Config) any { return &c.Faults.Seed }},
	{"fault-http-500", "fraction of requests answered with HTTP 500 at once", bound(0), bound(1),
		func(c *sim.Config) any { return &c.Faults.HTTP500 }},
	{"fault-cut-stream", "fraction of requests whose connection is cut mid-way (after half the output tokens of a stream)", bound(0), bound(1),
		func(c *sim.Config) any { return &c.Faults.CutStream }},
	{"fault-malformed-sse", "fraction of streams in which one token chunk is replaced by a line that is not valid JSON", bound(0), bound(1),
		func(c *sim.Config) any { return &c.Faults.MalformedSSE }},
	{"fault-slow-first-token", "fraction of requests whose first token is delayed by {fault-slow-first-token-delay}", bound(0), bound(1),
		func(c *sim.Config) any { return &c.Faults.SlowFirstToken }},
	{"fault-slow-first-token-delay", "extra delay of a slow first token (scaled by the time scale)", nil, nil,
		func(c *sim.Config) any { return &c.Faults.SlowFirstTokenDelay }},
	{"fault-stall-after-headers", "fraction of requests answered with 200 headers and then nothing, the connection kept open (a hung engine)", bound(0), bound(1),
		func(c *sim.Config) any { return &c.Faults.StallAfterHeaders }},
	{"fault-stall-mid-stream", "fraction of requests that stop sending after half the output tokens, the connection kept open", bound(0), bound(1),
		func(c *sim.Config) any { return &c.Faults.StallMidStream }},
	{"fault-hold-after-done", "fraction of requests whose response is held open after [DONE] instead of ending (a proxy that keeps streams open)", bound(0), bound(1),
		func(c *sim.Config) any { return &c.Faults.HoldAfterDone }},
	{"fault-die-after", "kill the engine as the N-th completion request arrives: listener and every connection closed, later connections refused (0 = never)", bound(0), nil,
		func(c *sim.Config) any { return &c.Faults.DieAfter }},
	{"fault-reset-noop", "POST /reset_prefix_cache answers 200 but clears nothing (a reset that did not take)", nil, nil,
		func(c *sim.Config) any { return &c.Faults.ResetNoop }},
	{"fault-blend-corrupt", "fraction of blended chunks (see {blend}) whose content is lost to the answer (see {answers}), drawn per chunk from {fault-seed} and its content: non-prefix reuse that changes answers", bound(0), bound(1),
		func(c *sim.Config) any { return &c.Faults.BlendCorrupt }},
	{"fault-slow-hits", "cached tokens cost as much as prefilled ones (still reported cached): hits that bring no TTFT gain", nil, nil,
		func(c *sim.Config) any { return &c.Faults.SlowHits }},
}

// Key is the config key of a built-in engine setting: "gpu-gb" is
// sim_gpu_gb.
func Key(name string) string { return config.SimKeyPrefix + strings.ReplaceAll(name, "-", "_") }

// Options are the built-in engine's settings as options: key
// sim_<name>, variable LMBENCH_SIM_<NAME>, flag flagPrefix+name ("sim-"
// on lmbench run, "" on lmbench sim), defaults from sim.DefaultConfig.
func Options(flagPrefix string) []config.Option {
	def := sim.DefaultConfig()
	out := make([]config.Option, 0, len(simSettings))
	for _, s := range simSettings {
		typ, val := fieldValue(s.field(&def))
		help := s.help
		for i := strings.IndexByte(help, '{'); i >= 0; i = strings.IndexByte(help, '{') {
			j := strings.IndexByte(help, '}')
			help = help[:i] + "--" + flagPrefix + help[i+1:j] + help[j+1:]
		}
		out = append(out, config.Option{
			Key: Key(s.name), Flag: flagPrefix + s.name, Type: typ, Default: val, Help: help,
			Label: s.name, Group: config.SimGroup, Advanced: true, Min: s.min, Max: s.max,
		})
	}
	return out
}

// NewRegistry holds the built-in engine's settings under lmbench sim's
// flags (--gpu-gb), with the keys and variables lmbench run gives them
// (sim_gpu_gb, LMBENCH_SIM_GPU_GB).
func NewRegistry() *config.Registry {
	r := config.NewRegistry()
	for _, o := range Options("") {
		if _, err := r.Add(o); err != nil {
			panic(err) // a programming error in the table, caught by every test
		}
	}
	return r
}

// fieldValue is a sim.Config field's option type and its value as the
// registry types it.
func fieldValue(p any) (protocol.OptionType, any) {
	switch x := p.(type) {
	case *string:
		return protocol.OptionString, *x
	case *int:
		return protocol.OptionInt, int64(*x)
	case *int64:
		return protocol.OptionInt, *x
	case *float64:
		return protocol.OptionFloat, *x
	case *bool:
		return protocol.OptionBool, *x
	case *time.Duration:
		return protocol.OptionDuration, *x
	}
	panic(fmt.Sprintf("sim setting of type %T", p)) // a programming error in simSettings
}

// setField stores an option's typed value (as Values holds it) in the
// field p points at.
func setField(p, v any) {
	switch x := p.(type) {
	case *string:
		*x, _ = v.(string)
	case *int:
		n, _ := v.(int64)
		*x = int(n)
	case *int64:
		*x, _ = v.(int64)
	case *float64:
		*x, _ = v.(float64)
	case *bool:
		*x, _ = v.(bool)
	case *time.Duration:
		*x, _ = v.(time.Duration)
	}
}

// Config builds the built-in engine's configuration from the resolved
// values of the Options (each unset one keeps sim.DefaultConfig's) and
// validates it. Every invalid setting is reported, naming where its value
// came from (the flag, the variable or the file's key), what it was and
// what is expected: "--sim-gpu-gb: must be 0 (off) or a positive number of
// GB, got -1".
func Config(v *config.Values) (sim.Config, error) {
	cfg := sim.DefaultConfig()
	profile, err := profileValues(v)
	if err != nil {
		return cfg, err
	}
	for _, s := range simSettings {
		k := Key(s.name)
		if x, ok := profile[s.name]; ok && !v.UserSet(k) {
			setField(s.field(&cfg), x)
		} else if x := v.Get(k); x != nil {
			setField(s.field(&cfg), x)
		}
	}
	err = cfg.Validate()
	if err == nil {
		return cfg, nil
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return cfg, err
	}
	var errs []error
	for _, e := range joined.Unwrap() {
		var fe *sim.FieldError
		if errors.As(e, &fe) {
			e = fmt.Errorf("%s: %s", v.Origin(Key(fe.Name)), fe.Reason)
		}
		errs = append(errs, e)
	}
	return cfg, errors.Join(errs...)
}

// Entries are the built-in engine's settings as cfg has them, for
// --export-config and the run's recorded configuration: every sim_* key.
func Entries(cfg sim.Config) []config.Entry {
	out := make([]config.Entry, 0, len(simSettings))
	for _, s := range simSettings {
		_, val := fieldValue(s.field(&cfg))
		out = append(out, config.Entry{Key: Key(s.name), Value: val})
	}
	return out
}

// Given lists where the built-in engine's settings that layer l set
// were given ("--sim-gpu-gb", "LMBENCH_SIM_CPU_GB"), in the table's
// order: lmbench run refuses them, or warns about them, without the
// built-in engine.
func Given(v *config.Values, l config.Layer) []string {
	var out []string
	for _, s := range simSettings {
		if k := Key(s.name); v.Layer(k) == l {
			out = append(out, v.Origin(k))
		}
	}
	return out
}
