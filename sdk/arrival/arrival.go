package arrival

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lmbench/lmbench/sdk/option"
)

// The kinds of arrival process.
const (
	Constant = "constant"
	Poisson  = "poisson"
	Gamma    = "gamma"
)

// Kinds are the kind names New accepts, in the order to offer them; an
// options struct spells them in its enum tag: `enum:"constant,poisson,gamma"`.
var Kinds = []string{Constant, Poisson, Gamma}

// stream is the second word of the PCG seed, so a schedule's draws differ
// from those of anything else a workload seeds with the same run seed.
const stream = 0x617272697661_6c73 // "arrivals"

// blockLen is how many due times a Schedule keeps at once; it remembers
// where each earlier block began, so memory stays flat over a long run
// and an earlier k costs at most one block of redraws.
const blockLen = 1024

// Schedule is the due times of an arrival process. It is not safe for
// concurrent use (a workload's Step and OnFinished never run concurrently).
type Schedule struct {
	kind             string
	rate, burstiness float64

	// Random kinds only: checkpoints[b] is the state at the start of block
	// b (due time of request b·blockLen, generator after its gaps), and
	// block holds the due times, in seconds, of block cached.
	checkpoints []checkpoint
	cached      int
	block       [blockLen]float64
	scale       float64 // Normalize's factor, 1 without
}

type checkpoint struct {
	sum float64 // seconds
	src rand.PCG
}

// New returns the schedule of kind (one of Kinds) at rate requests per
// second; burstiness is the gamma shape, and must be 1 for the other
// kinds. The same seed gives the same schedule. Invalid parameters are
// reported together, as *option.FieldError naming "kind", "rate" and
// "burstiness" (Names.Check names a workload's own options instead).
func New(kind string, rate, burstiness float64, seed int64) (*Schedule, error) {
	if err := (Names{Kind: "kind", Rate: "rate", Burstiness: "burstiness"}).Check(kind, rate, burstiness); err != nil {
		return nil, err
	}
	s := &Schedule{kind: kind, rate: rate, burstiness: burstiness, cached: -1, scale: 1}
	if kind != Constant {
		s.checkpoints = []checkpoint{{src: *rand.NewPCG(uint64(seed), stream)}}
	}
	return s, nil
}

// Kind, Rate and Burstiness are the schedule's parameters.
func (s *Schedule) Kind() string        { return s.kind }
func (s *Schedule) Rate() float64       { return s.rate }
func (s *Schedule) Burstiness() float64 { return s.burstiness }

// String describes the schedule for a banner: "poisson, 20 req/s" or
// "gamma, 20 req/s, burstiness 0.5".
func (s *Schedule) String() string {
	out := s.kind + ", " + num(s.rate) + " req/s"
	if s.kind == Gamma {
		out += ", burstiness " + num(s.burstiness)
	}
	return out
}

// Due is when request k (from 0) is due, as an offset from the start of
// the phase: 0 for k <= 0. Asking for increasing k costs O(1) amortised;
// the answer for k never depends on what was asked before.
func (s *Schedule) Due(k int) time.Duration {
	if k <= 0 {
		return 0
	}
	if s.kind == Constant {
		return duration(float64(k) / s.rate)
	}
	return duration(s.sum(k) * s.scale)
}

// sum is the sum of the first k gaps, in seconds, before Normalize.
func (s *Schedule) sum(k int) float64 {
	b := k / blockLen
	if b != s.cached {
		s.fill(b)
	}
	return s.block[k%blockLen]
}

// MaxNormalize is the largest n Normalize draws up front (about two
// seconds of work); past it, Normalize leaves the schedule as drawn.
const MaxNormalize = 1 << 24

// Normalize rescales every gap by one factor so that request n is due at
// n/rate, as with constant arrivals: a run of a known length then
// achieves exactly the requested rate for every seed, while the gaps keep
// their shape (vLLM's `bench serve` does the same to its N requests,
// "to close the gap" of the 1–2% by which a random sum misses N/rate).
// Without it, the count of a Poisson stream over 60 s at 20 req/s is
// 1200 ± 35 (2.9%). It draws n gaps at once, so it does nothing for n <= 0
// or n > MaxNormalize, nor for a constant schedule (already exact) or one
// whose first n gaps are all 0.
func (s *Schedule) Normalize(n int) {
	if s.kind == Constant || n <= 0 || n > MaxNormalize {
		return
	}
	if total := s.sum(n); total > 0 && !math.IsInf(total, 1) {
		s.scale = float64(n) / s.rate / total
	}
}

// fill computes block b into s.block, drawing the blocks before it first
// if no checkpoint reaches it yet.
func (s *Schedule) fill(b int) {
	for len(s.checkpoints) <= b {
		s.compute(len(s.checkpoints) - 1)
	}
	if s.cached != b {
		s.compute(b)
	}
}

// compute draws block b from its checkpoint, and records the next
// block's checkpoint if it is new.
func (s *Schedule) compute(b int) {
	cp := s.checkpoints[b]
	src := cp.src
	r := rand.New(&src)
	s.block[0] = cp.sum
	for i := 1; i < blockLen; i++ {
		s.block[i] = s.block[i-1] + s.gap(r)
	}
	next := s.block[blockLen-1] + s.gap(r)
	if b == len(s.checkpoints)-1 {
		s.checkpoints = append(s.checkpoints, checkpoint{sum: next, src: src})
	}
	s.cached = b
}

// gap draws one inter-arrival gap in seconds.
func (s *Schedule) gap(r *rand.Rand) float64 {
	if s.kind == Poisson || s.burstiness == 1 {
		return exponential(r) / s.rate
	}
	return standardGamma(r, s.burstiness) / (s.rate * s.burstiness)
}

// uniform is in the open interval (0, 1). The draws below use the
// generator's raw 64-bit words only (PCG's output is specified), not
// math/rand's derived distributions, so a seed's schedule is the same
// whatever the Go release.
func uniform(r *rand.Rand) float64 {
	return (float64(r.Uint64()>>11) + 0.5) / (1 << 53)
}

// exponential has mean 1.
func exponential(r *rand.Rand) float64 { return -math.Log(uniform(r)) }

// normal is standard normal (Box–Muller, one value per pair of draws).
func normal(r *rand.Rand) float64 {
	return math.Sqrt(-2*math.Log(uniform(r))) * math.Cos(2*math.Pi*uniform(r))
}

// standardGamma draws from the gamma distribution of the given shape and
// scale 1: Marsaglia and Tsang's method (2000), with Gamma(a) =
// Gamma(a+1)·U^(1/a) for a shape below 1.
func standardGamma(r *rand.Rand, shape float64) float64 {
	if shape < 1 {
		return standardGamma(r, shape+1) * math.Pow(uniform(r), 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := normal(r)
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := uniform(r)
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// duration converts seconds to a Duration, rounding to the nanosecond and
// saturating instead of overflowing.
func duration(s float64) time.Duration {
	ns := math.Round(s * 1e9)
	if ns >= math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(ns)
}

// Names are the option names a workload gives the parameters of New, so
// that Check's errors point at its own flags. An empty name skips that
// parameter: the workload checks it itself (with messages of its own, or
// because 0 means something else there, such as "no rate: all at once").
type Names struct{ Kind, Rate, Burstiness string }

// Check validates the parameters of New, reporting every problem together
// as *option.FieldError (joined) with the option names of n.
func (n Names) Check(kind string, rate, burstiness float64) error {
	var errs []error
	if n.Kind != "" && !slices.Contains(Kinds, kind) {
		errs = append(errs, option.Errorf(n.Kind, "must be one of %s, got %q", strings.Join(Kinds, ", "), kind))
	}
	if n.Rate != "" && !(rate > 0 && !math.IsInf(rate, 1)) {
		errs = append(errs, option.Errorf(n.Rate, "must be a positive, finite number of requests per second, got %s", num(rate)))
	}
	if n.Burstiness != "" {
		switch {
		case !(burstiness > 0 && !math.IsInf(burstiness, 1)):
			errs = append(errs, option.Errorf(n.Burstiness, "must be a positive, finite gamma shape, got %s", num(burstiness)))
		case burstiness != 1 && kind != Gamma && slices.Contains(Kinds, kind):
			errs = append(errs, option.Errorf(n.Burstiness, "applies to gamma arrivals only (poisson is gamma with burstiness 1), got %s with %s", num(burstiness), kind))
		}
	}
	return errors.Join(errs...)
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
