package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/pseudoword"
	"github.com/lmbench/lmbench/sdk/pyrand"
	"github.com/lmbench/lmbench/sdk/pyrepr"
	"github.com/lmbench/lmbench/sdk/workload"
)

// The original's constants.
const (
	breakerTokens   = 32   // random breaker between prefix and suffix
	minSuffixTokens = 100  // a shorter suffix is refused
	uniqueIDTokens  = 4    // rough token cost of "PREFIX_<8 hex>" and "BR_<8 hex>"
	maxOutputTokens = 1    // every request, both passes
	overflowFactor  = 1.05 // the pool holds this many times the targeted tier
	vocabSize       = 8000 // pseudo-words in the pool, as long-doc-permutator's
)

// Per-component seed offsets: each component samples the shared vocabulary
// with its own generator, so no two prefixes (nor a prefix and the suffix)
// share a chunk of content.
const (
	suffixSeedOffset  = 1
	breakerSeedOffset = 2
	prefixSeedOffset  = 1000 // prefix i uses seed + 1000 + i
)

// Limits that keep a run within what a plugin can generate and send: a
// request crosses the process boundary in one message.
const (
	maxContextLength = 1 << 24
	maxPrefixes      = 1 << 24
)

// config is the original's PrefixSuffixTunerConfig: the options plus the
// derived sizes.
type config struct {
	ContextLength int
	PrefixRatio   float64
	Thrash        float64
	NumPrefixes   int
	PrefixTokens  int
	SuffixTokens  int
	BreakerTokens int
}

// Validate checks the options with the original's messages, all at once.
func (o Options) Validate() error {
	var errs []error
	if o.ContextLength <= 0 {
		errs = append(errs, option.Errorf("context-length", "context_length must be positive, got %d", o.ContextLength))
	} else if o.ContextLength > maxContextLength {
		errs = append(errs, option.Errorf("context-length", "context_length must be at most %d tokens, got %d", maxContextLength, o.ContextLength))
	}
	if !(0 < o.PrefixRatio && o.PrefixRatio < 1) {
		errs = append(errs, option.Errorf("prefix-ratio", "prefix_ratio must be in (0.0, 1.0), got %s", pyrepr.Float(o.PrefixRatio)))
	}
	if !(o.Thrash > 0) {
		errs = append(errs, option.Errorf("thrash", "thrash (GB) must be positive, got %s", pyrepr.Float(o.Thrash)))
	}
	return errors.Join(errs...)
}

// validate checks a resolved config as the original's __post_init__ does.
// The derived fields cannot be set by users; this guards the arithmetic.
func (c config) validate() error {
	var errs []error
	if err := (Options{ContextLength: c.ContextLength, PrefixRatio: c.PrefixRatio, Thrash: c.Thrash}).Validate(); err != nil {
		errs = append(errs, err)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"num_prefixes", c.NumPrefixes}, {"prefix_tokens", c.PrefixTokens}, {"suffix_tokens", c.SuffixTokens}, {"breaker_tokens", c.BreakerTokens}} {
		if f.v < 1 {
			errs = append(errs, fmt.Errorf("%s must be >= 1, got %d", f.name, f.v))
		}
	}
	return errors.Join(errs...)
}

// resolve derives the token split and the pool size from the options, with
// the original's float arithmetic: prefix_tokens = max(round(context_length ×
// prefix_ratio), 1) (ties to even, as Python's round), suffix_tokens =
// context_length − prefix_tokens − 32, and num_prefixes =
// max(int(thrash × 1.05 × tokens_per_gb / prefix_tokens), 1), sized by prefix
// tokens as the design document says.
func resolve(o Options, tokensPerGB int64) (config, error) {
	if err := o.Validate(); err != nil {
		return config{}, err
	}
	c := config{ContextLength: o.ContextLength, PrefixRatio: o.PrefixRatio, Thrash: o.Thrash, BreakerTokens: breakerTokens}
	c.PrefixTokens = max(int(math.RoundToEven(float64(o.ContextLength)*o.PrefixRatio)), 1)
	c.SuffixTokens = o.ContextLength - c.PrefixTokens - c.BreakerTokens
	if c.SuffixTokens < minSuffixTokens {
		// The original's message, then the values it came from: the user
		// gave context_length and prefix_ratio, not suffix_tokens.
		return config{}, option.Errorf("prefix-ratio",
			"suffix_tokens=%d is below minimum %d; reduce prefix_ratio or increase context_length "+
				"(context_length %d - prefix_tokens %d (%d x prefix_ratio %s) - %d breaker tokens)",
			c.SuffixTokens, minSuffixTokens, o.ContextLength, c.PrefixTokens, o.ContextLength, pyrepr.Float(o.PrefixRatio), c.BreakerTokens)
	}
	if tokensPerGB <= 0 {
		return config{}, fmt.Errorf("tokens_per_gb_kvcache must be positive, got %d", tokensPerGB)
	}
	f := o.Thrash * overflowFactor * float64(tokensPerGB) / float64(c.PrefixTokens)
	if math.IsNaN(f) || f >= maxPrefixes {
		return config{}, option.Errorf("thrash",
			"thrash x 1.05 x tokens_per_gb / prefix_tokens = %g prefixes, more than the %d supported; lower thrash (GB)", f, maxPrefixes)
	}
	c.NumPrefixes = max(int(f), 1)
	return c, c.validate()
}

// tierTokens is the targeted tier's capacity in tokens.
func (c config) tierTokens(tokensPerGB int64) float64 { return c.Thrash * float64(tokensPerGB) }

// text is Python's " ".join(rng.choices(vocab, k=k)) after header + " ".
func text(header string, vocab []string, rng *pyrand.Random, k int) string {
	return header + " " + pseudoword.Join(vocab, rng.Choices(len(vocab), k))
}

// prefixText is prefix i: "PREFIX_<i as 8 hex digits>" and max(prefix_tokens
// − 4, 1) pseudo-words drawn with random.Random(seed + 1000 + i).
func prefixText(i, prefixTokens int, vocab []string, seed int64) string {
	return text(fmt.Sprintf("PREFIX_%08x", i), vocab, pyrand.New(seed+prefixSeedOffset+int64(i)), max(prefixTokens-uniqueIDTokens, 1))
}

// suffixText is the shared suffix: "SUFFIX" and max(suffix_tokens − 1, 1)
// pseudo-words drawn with random.Random(seed + 1).
func suffixText(suffixTokens int, vocab []string, seed int64) string {
	return text("SUFFIX", vocab, pyrand.New(seed+suffixSeedOffset), max(suffixTokens-1, 1))
}

// breakerText draws the next breaker from rng (random.Random(seed + 2),
// shared by all breakers of a run): "BR_<randrange(2**32) as 8 hex digits>"
// and max(breaker_tokens − 4, 1) pseudo-words.
func breakerText(breakerTokens int, vocab []string, rng *pyrand.Random) string {
	id := rng.RandRange(0, 1<<32)
	return text(fmt.Sprintf("BR_%08x", id), vocab, rng, max(breakerTokens-uniqueIDTokens, 1))
}

type tuner struct {
	cfg      config
	seed     int64
	log      zerolog.Logger
	content  *workload.Registry
	vocab    []string
	suffix   workload.Segment // registered with the first request
	breakers *pyrand.Random
	next     [3]int      // next prefix to send, by pass (1 and 2)
	exact    *exactParts // lengths in the engine's tokens; nil: in words, as the original
}

func newTuner(o Options, env workload.Env) (workload.Workload, error) {
	if err := refuseShard(env.Shard); err != nil {
		return nil, err // a host that skips the check-only Configure
	}
	cfg, err := resolve(o, env.TokensPerGB)
	if err != nil {
		return nil, err
	}
	if limit := math.MaxInt64 - prefixSeedOffset - int64(cfg.NumPrefixes-1); env.Seed > limit {
		return nil, option.Errorf("", "--seed %d is too large: prefix i is drawn with seed+1000+i, so for %d prefixes the seed must be at most %d",
			env.Seed, cfg.NumPrefixes, limit)
	}
	w := &tuner{
		cfg:      cfg,
		seed:     env.Seed,
		log:      env.Logger,
		content:  env.Content,
		vocab:    pseudoword.Vocab(vocabSize, env.Seed),
		breakers: pyrand.New(env.Seed + breakerSeedOffset),
	}
	if env.Tokenizer != nil {
		e, n, err := buildExact(o, cfg, env, w.vocab)
		if err != nil {
			return nil, err
		}
		w.exact, w.cfg.NumPrefixes = e, n
		cfg = w.cfg
	}
	w.log.Debug().Msgf("Computed num_prefixes=%d from thrash=%.2f GB (target tier), overflow factor %.3f -> pool=%.2f GB, tokens_per_gb_kvcache=%d, prefix_tokens=%d",
		cfg.NumPrefixes, cfg.Thrash, overflowFactor, cfg.Thrash*overflowFactor, env.TokensPerGB, cfg.PrefixTokens)
	if tier, pool := cfg.tierTokens(env.TokensPerGB), float64(cfg.NumPrefixes)*float64(cfg.PrefixTokens); pool <= tier {
		w.log.Warn().Msgf("the prefix pool (%d prefixes x %d tokens = %.0f tokens) does not exceed the targeted tier (%.2f GB = %.0f tokens): "+
			"pass 2 can hit that tier unless it also holds the breakers and suffix; raise --psf-thrash or lower --psf-context-length",
			cfg.NumPrefixes, cfg.PrefixTokens, pool, cfg.Thrash, tier)
	}
	return w, nil
}

func (w *tuner) Resolved() map[string]any {
	return map[string]any{
		"num-prefixes":   w.cfg.NumPrefixes,
		"prefix-tokens":  w.cfg.PrefixTokens,
		"suffix-tokens":  w.cfg.SuffixTokens,
		"breaker-tokens": w.cfg.BreakerTokens,
	}
}

func (w *tuner) PlannedRequests() int { return w.cfg.NumPrefixes }

// Banner is the original's log_config, field for field.
func (w *tuner) Banner() []workload.Field {
	c := w.cfg
	f2 := func(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }
	b := []workload.Field{
		{Label: "Context length", Value: strconv.Itoa(c.ContextLength) + " tokens"},
		{Label: "Prefix tokens", Value: fmt.Sprintf("%d (ratio=%s)", c.PrefixTokens, pyrepr.Float(c.PrefixRatio))},
		{Label: "Breaker tokens", Value: strconv.Itoa(c.BreakerTokens) + " (random per request)"},
		{Label: "Suffix tokens", Value: strconv.Itoa(c.SuffixTokens) + " (shared, deterministic)"},
		{Label: "Target tier", Value: fmt.Sprintf("%s GB (overflow x%s = %s GB)", f2(c.Thrash), f2(overflowFactor), f2(c.Thrash*overflowFactor))},
		{Label: "Prefix pool size", Value: strconv.Itoa(c.NumPrefixes)},
		{Label: "Pool tokens", Value: f2(float64(c.NumPrefixes)*float64(c.PrefixTokens)/1e6) + "M"},
		{Label: "Total measured", Value: strconv.Itoa(c.NumPrefixes) + " requests (pass 2 of 2)"},
	}
	if w.exact != nil {
		b = append(b, workload.Field{Label: "Tokenizer",
			Value: fmt.Sprintf("the model's (lengths exact; pool sized by prefix + %d of chat template)", w.exact.template)})
	}
	return b
}

// request builds the request for prefix i in pass p (1 or 2): the prefix,
// a fresh breaker and the shared suffix, space-separated, in one user
// message. The prefix is regenerated from its seed rather than kept, so a
// pool much larger than memory allows still runs; the suffix crosses the
// process boundary once.
func (w *tuner) request(pass, i int) workload.Request {
	if w.exact != nil {
		if w.suffix.Ref == "" {
			w.suffix = w.content.Register("suffix", w.exact.suffix)
		}
		return workload.Chat(fmt.Sprintf("pass%d_p%d", pass, i), workload.User(workload.Text(w.exact.head(pass, i)), w.suffix)).
			WithMaxTokens(maxOutputTokens).
			WithPromptTokens(w.exact.stated[pass][i]).
			Tag("prefix", strconv.Itoa(i)).
			Tag("pass", strconv.Itoa(pass))
	}
	if w.suffix.Ref == "" {
		w.suffix = w.content.Register("suffix", suffixText(w.cfg.SuffixTokens, w.vocab, w.seed))
	}
	head := prefixText(i, w.cfg.PrefixTokens, w.vocab, w.seed) + " " + breakerText(w.cfg.BreakerTokens, w.vocab, w.breakers) + " "
	req := workload.Chat(fmt.Sprintf("pass%d_p%d", pass, i), workload.User(workload.Text(head), w.suffix)).
		WithMaxTokens(maxOutputTokens).
		Tag("prefix", strconv.Itoa(i)).
		Tag("pass", strconv.Itoa(pass))
	if pass == 1 {
		// Every prefix is new in pass 1. Pass 2's reuse depends on
		// which tier --psf-thrash overflows, which the workload is not
		// told: it declares none.
		req = req.WithExpectedReuse(0, "")
	}
	return req
}

// Step sends the pool once per phase, in pool order, one request at a time:
// the next request goes out only once the previous one has finished.
func (w *tuner) Step(_ context.Context, in workload.StepInput) (workload.StepOutput, error) {
	var pass int
	switch in.Phase {
	case workload.Warmup:
		pass = 1
	case workload.Measure:
		pass = 2
	default:
		return workload.StepOutput{}, fmt.Errorf("unknown phase %v", in.Phase)
	}
	if in.InFlight > 0 {
		return workload.WaitForFinish(), nil
	}
	n, i := w.cfg.NumPrefixes, w.next[pass]
	if i == n {
		if pass == 1 {
			w.log.Info().Msgf("Pass 1 complete: %d prefixes populated", n)
		}
		return workload.Done(), nil
	}
	w.next[pass]++
	if pass == 1 {
		if i == 0 {
			w.log.Info().Msgf("Pass 1 (warmup): %d requests", n)
		}
		w.log.Info().Msgf("Pass 1 dispatched %d/%d", i+1, n)
	} else {
		w.log.Debug().Msgf("Pass 2 %d/%d", i+1, n)
	}
	return workload.Send(w.request(pass, i)).WaitForFinish(), nil
}

// OnFinished reports failed pass-1 requests; the host counts pass-2
// failures itself.
func (w *tuner) OnFinished(_ context.Context, results []workload.Result) error {
	for _, r := range results {
		if r.Phase == workload.Warmup && !r.Success {
			w.log.Warn().Msgf("Pass 1 %s failed: %s", r.ID, r.Error)
		}
	}
	return nil
}
