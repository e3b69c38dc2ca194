package arrival

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lmbench/lmbench/sdk/option"
)

// gaps returns the first n inter-arrival gaps of s, in seconds.
func gaps(s *Schedule, n int) []float64 {
	out := make([]float64, n)
	prev := s.Due(0)
	for k := 1; k <= n; k++ {
		d := s.Due(k)
		out[k-1] = (d - prev).Seconds()
		prev = d
	}
	return out
}

// meanCV is the mean and coefficient of variation (population standard
// deviation over the mean) of xs.
func meanCV(xs []float64) (mean, cv float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss/float64(len(xs))) / mean
}

func mustNew(t *testing.T, kind string, rate, burstiness float64, seed int64) *Schedule {
	t.Helper()
	s, err := New(kind, rate, burstiness, seed)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The statistics of 200,000 gaps at 20 req/s, for fixed seeds (so the
// test is deterministic): the mean gap is 1/rate within 1%, and the CV of
// the gaps is 1/√burstiness within 2% (0 for constant). The seeds are
// arbitrary; each figure holds for any seed with overwhelming probability
// (the standard error of the mean is 0.22% for Poisson, 0.32% for
// burstiness 0.5).
func TestGapStatistics(t *testing.T) {
	t.Parallel()
	const n, rate = 200_000, 20.0
	for _, tc := range []struct {
		kind       string
		burstiness float64
		wantCV     float64
	}{
		{Constant, 1, 0},
		{Poisson, 1, 1},
		{Gamma, 1, 1},
		{Gamma, 0.5, math.Sqrt2},
		{Gamma, 0.25, 2},
		{Gamma, 2, 1 / math.Sqrt2},
		{Gamma, 4, 0.5},
		{Gamma, 100, 0.1},
	} {
		for _, seed := range []int64{1, 42, 20260101} {
			s := mustNew(t, tc.kind, rate, tc.burstiness, seed)
			mean, cv := meanCV(gaps(s, n))
			t.Logf("%s burstiness %g seed %d: rate %.4f req/s, CV %.4f", tc.kind, tc.burstiness, seed, 1/mean, cv)
			if math.Abs(mean*rate-1) > 0.01 {
				t.Errorf("%s burstiness %g seed %d: mean gap %.6f s, want 1/%g = %.6f s within 1%%", tc.kind, tc.burstiness, seed, mean, rate, 1/rate)
			}
			if tc.wantCV == 0 {
				if cv > 1e-6 {
					t.Errorf("constant seed %d: CV %g, want 0 (gaps differ by nanosecond rounding at most)", seed, cv)
				}
			} else if math.Abs(cv/tc.wantCV-1) > 0.02 {
				t.Errorf("%s burstiness %g seed %d: CV %.4f, want %.4f within 2%%", tc.kind, tc.burstiness, seed, cv, tc.wantCV)
			}
		}
	}
}

// Poisson gaps are exponential, not merely of CV 1: the share of gaps
// below each quantile of Exp(rate) matches it (a coarse Kolmogorov–Smirnov
// check: within 0.005 at 200,000 gaps, where the 99.9% bound is 0.0044).
func TestPoissonGapsAreExponential(t *testing.T) {
	t.Parallel()
	const n, rate = 200_000, 5.0
	g := gaps(mustNew(t, Poisson, rate, 1, 7), n)
	slices.Sort(g)
	for _, p := range []float64{0.1, 0.25, 0.5, 0.632, 0.75, 0.9, 0.99} {
		q := -math.Log(1-p) / rate // the p-quantile of Exp(rate)
		got := float64(sortedBelow(g, q)) / n
		if math.Abs(got-p) > 0.005 {
			t.Errorf("share of gaps below the %.3f quantile (%.4f s): %.4f", p, q, got)
		}
	}
}

func sortedBelow(sorted []float64, x float64) int {
	i, _ := slices.BinarySearch(sorted, x)
	return i
}

// Gamma with burstiness 1 is Poisson: the same draws, the same schedule.
func TestGammaOneIsPoisson(t *testing.T) {
	t.Parallel()
	p, g := mustNew(t, Poisson, 3, 1, 9), mustNew(t, Gamma, 3, 1, 9)
	for k := range 5000 {
		if p.Due(k) != g.Due(k) {
			t.Fatalf("request %d: poisson due %v, gamma(1) %v", k, p.Due(k), g.Due(k))
		}
	}
}

// The same seed gives the same schedule; another seed another one.
func TestDeterministicPerSeed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind       string
		burstiness float64
	}{{Poisson, 1}, {Gamma, 0.7}} {
		kind := tc.kind
		a, b, c := mustNew(t, kind, 10, tc.burstiness, 42), mustNew(t, kind, 10, tc.burstiness, 42), mustNew(t, kind, 10, tc.burstiness, 43)
		same := 0
		for k := range 3000 {
			if a.Due(k) != b.Due(k) {
				t.Fatalf("%s: request %d due %v and %v with the same seed", kind, k, a.Due(k), b.Due(k))
			}
			if a.Due(k) == c.Due(k) {
				same++
			}
		}
		if same > 1 { // request 0, due at 0 for every seed
			t.Errorf("%s: seeds 42 and 43 agree on %d of 3000 due times", kind, same)
		}
	}
}

// The first due times of seed 42 are pinned: a change to the draws would
// silently change every workload's schedule and golden transcript.
func TestPinnedSchedule(t *testing.T) {
	t.Parallel()
	got := map[string][]time.Duration{}
	for _, kind := range []string{Constant, Poisson, Gamma} {
		b := 1.0
		if kind == Gamma {
			b = 0.5
		}
		s := mustNew(t, kind, 4, b, 42)
		for k := range 5 {
			got[kind] = append(got[kind], s.Due(k))
		}
	}
	want := map[string][]time.Duration{
		Constant: {0, 250 * time.Millisecond, 500 * time.Millisecond, 750 * time.Millisecond, time.Second},
		Poisson:  {0, 422494443, 865628634, 896514764, 898343516},
		Gamma:    {0, 1187681512, 1207568472, 1368137308, 1377419840},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("due times of seed 42 (-want +got):\n%s", d)
	}
}

// No drift: Due(k) is the same whatever was asked before it, in order,
// backwards, at random, across many blocks; and a constant schedule puts
// request k at round(k/rate) exactly, however many came before.
func TestNoDrift(t *testing.T) {
	t.Parallel()
	const n = 5*blockLen + 17
	for _, kind := range []string{Constant, Poisson, Gamma} {
		b := 1.0
		if kind == Gamma {
			b = 0.3
		}
		inOrder := mustNew(t, kind, 3, b, 5)
		want := make([]time.Duration, n)
		for k := range want {
			want[k] = inOrder.Due(k)
		}
		backwards := mustNew(t, kind, 3, b, 5)
		for k := n - 1; k >= 0; k-- {
			if got := backwards.Due(k); got != want[k] {
				t.Fatalf("%s: request %d asked backwards is due %v, in order %v", kind, k, got, want[k])
			}
		}
		jumping := mustNew(t, kind, 3, b, 5)
		for i := range n / 2 {
			k := (i * 7919) % n // a prime stride: half the ks, each once, scattered
			if got := jumping.Due(k); got != want[k] {
				t.Fatalf("%s: request %d asked out of order is due %v, in order %v", kind, k, got, want[k])
			}
		}
		// Asking the same k again, or an earlier block after a later one,
		// changes nothing either.
		if inOrder.Due(3) != want[3] || inOrder.Due(n-1) != want[n-1] || inOrder.Due(blockLen) != want[blockLen] {
			t.Errorf("%s: a repeated question got another answer", kind)
		}
		for k := 1; k < n; k++ {
			if want[k] < want[k-1] {
				t.Fatalf("%s: request %d due at %v, before request %d at %v", kind, k, want[k], k-1, want[k-1])
			}
		}
	}
	c := mustNew(t, Constant, 3, 1, 0)
	for _, k := range []int{1, 2, 3, 1000, 1_000_000, 1_000_000_001} {
		if got, want := c.Due(k), time.Duration(math.Round(float64(k)/3*1e9)); got != want {
			t.Errorf("constant at 3 req/s: request %d due %v, want round(k/3 s) = %v", k, got, want)
		}
	}
	if c.Due(-5) != 0 || c.Due(0) != 0 {
		t.Errorf("requests 0 and below are due at 0")
	}
}

// Normalize makes a run of known length exact for every seed: over 50
// seeds, Poisson and gamma 0.5 at 20 req/s put exactly 1,200 requests in
// the first 60 s (unnormalised: 1200 ± 35), request 1200 at 60 s, and the
// gaps keep their CV (1 and √2, within 10% over 1,200 gaps).
func TestNormalize(t *testing.T) {
	t.Parallel()
	const n, rate = 1200, 20.0
	for _, tc := range []struct {
		kind       string
		burstiness float64
		wantCV     float64
	}{{Poisson, 1, 1}, {Gamma, 0.5, math.Sqrt2}} {
		spread := map[int]bool{}
		for seed := range int64(50) {
			raw := mustNew(t, tc.kind, rate, tc.burstiness, seed)
			s := mustNew(t, tc.kind, rate, tc.burstiness, seed)
			s.Normalize(n)
			if d := s.Due(n) - time.Minute; d < -1 || d > 1 {
				t.Fatalf("%s seed %d: request %d due at %v, want 60s", tc.kind, seed, n, s.Due(n))
			}
			if s.Due(n-1) >= time.Minute {
				t.Fatalf("%s seed %d: request %d due at %v, want before 60s", tc.kind, seed, n-1, s.Due(n-1))
			}
			if _, cv := meanCV(gaps(s, n)); math.Abs(cv/tc.wantCV-1) > 0.1 {
				t.Errorf("%s seed %d: normalised gaps have CV %.3f, want %.3f within 10%%", tc.kind, seed, cv, tc.wantCV)
			}
			// One factor for every gap: the ratios of due times are the drawn ones.
			if r, w := float64(s.Due(700))/float64(s.Due(300)), float64(raw.Due(700))/float64(raw.Due(300)); math.Abs(r/w-1) > 1e-6 {
				t.Errorf("%s seed %d: Due(700)/Due(300) = %g normalised, %g drawn", tc.kind, seed, r, w)
			}
			k := 0
			for raw.Due(k) < time.Minute {
				k++
			}
			spread[k] = true
		}
		if len(spread) < 10 {
			t.Errorf("%s: unnormalised counts in 60 s over 50 seeds take only %d values: the test shows nothing", tc.kind, len(spread))
		}
	}
	c := mustNew(t, Constant, 3, 1, 0)
	c.Normalize(10)
	p := mustNew(t, Poisson, 3, 1, 0)
	want := p.Due(10)
	p.Normalize(0)
	p.Normalize(MaxNormalize + 1)
	if c.Due(10) != 3333333333 || p.Due(10) != want {
		t.Errorf("Normalize of a constant schedule, or for n 0 or past MaxNormalize, changed the schedule")
	}
}

// A huge k, or a tiny rate, saturates instead of overflowing.
func TestSaturates(t *testing.T) {
	t.Parallel()
	if got := mustNew(t, Constant, 1e-300, 1, 0).Due(1); got != time.Duration(math.MaxInt64) {
		t.Errorf("constant at 1e-300 req/s: request 1 due %v, want the largest duration", got)
	}
	if got := mustNew(t, Poisson, 1e-300, 1, 0).Due(3); got != time.Duration(math.MaxInt64) {
		t.Errorf("poisson at 1e-300 req/s: request 3 due %v, want the largest duration", got)
	}
}

func TestString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind       string
		rate, b    float64
		want       string
		wantParams []any
	}{
		{Constant, 2.5, 1, "constant, 2.5 req/s", []any{Constant, 2.5, 1.0}},
		{Poisson, 20, 1, "poisson, 20 req/s", []any{Poisson, 20.0, 1.0}},
		{Gamma, 20, 0.5, "gamma, 20 req/s, burstiness 0.5", []any{Gamma, 20.0, 0.5}},
	} {
		s := mustNew(t, tc.kind, tc.rate, tc.b, 1)
		if got := s.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
		if d := cmp.Diff(tc.wantParams, []any{s.Kind(), s.Rate(), s.Burstiness()}); d != "" {
			t.Errorf("parameters (-want +got):\n%s", d)
		}
	}
}

func TestInvalid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		kind       string
		rate, b    float64
		names      Names
		wantFields []option.FieldError
	}{
		{"unknown kind", "bursty", 1, 1, Names{"kind", "rate", "burstiness"},
			[]option.FieldError{{Option: "kind", Message: `must be one of constant, poisson, gamma, got "bursty"`}}},
		{"rate 0", Poisson, 0, 1, Names{"kind", "rate", "burstiness"},
			[]option.FieldError{{Option: "rate", Message: "must be a positive, finite number of requests per second, got 0"}}},
		{"rate NaN and inf burstiness", Gamma, math.NaN(), math.Inf(1), Names{"kind", "rate", "burstiness"},
			[]option.FieldError{
				{Option: "rate", Message: "must be a positive, finite number of requests per second, got NaN"},
				{Option: "burstiness", Message: "must be a positive, finite gamma shape, got +Inf"},
			}},
		{"rate inf", Constant, math.Inf(1), 1, Names{"kind", "rate", "burstiness"},
			[]option.FieldError{{Option: "rate", Message: "must be a positive, finite number of requests per second, got +Inf"}}},
		{"burstiness 0", Gamma, 1, 0, Names{"kind", "rate", "burstiness"},
			[]option.FieldError{{Option: "burstiness", Message: "must be a positive, finite gamma shape, got 0"}}},
		{"burstiness with poisson", Poisson, 1, 0.5, Names{"kind", "rate", "burstiness"},
			[]option.FieldError{{Option: "burstiness", Message: "applies to gamma arrivals only (poisson is gamma with burstiness 1), got 0.5 with poisson"}}},
		{"burstiness with constant, a workload's names", Constant, -1, 2, Names{"mrc-arrival", "qps", "mrc-burstiness"},
			[]option.FieldError{
				{Option: "qps", Message: "must be a positive, finite number of requests per second, got -1"},
				{Option: "mrc-burstiness", Message: "applies to gamma arrivals only (poisson is gamma with burstiness 1), got 2 with constant"},
			}},
		{"the rate left to the workload", Poisson, 0, 1, Names{Kind: "arrival", Burstiness: "burstiness"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.names.Check(tc.kind, tc.rate, tc.b)
			var got []option.FieldError
			for _, fe := range option.FieldErrors(err) {
				got = append(got, *fe)
			}
			if d := cmp.Diff(tc.wantFields, got); d != "" {
				t.Errorf("field errors (-want +got):\n%s", d)
			}
			if tc.names == (Names{"kind", "rate", "burstiness"}) {
				s, err := New(tc.kind, tc.rate, tc.b, 1)
				var fe *option.FieldError
				if s != nil || !errors.As(err, &fe) {
					t.Errorf("New = %v, %v; want no schedule and a *option.FieldError", s, err)
				}
			}
		})
	}
}

// BenchmarkDue is the cost of the next due time, as a workload asks.
func BenchmarkDue(b *testing.B) {
	s, err := New(Gamma, 1000, 0.5, 1)
	if err != nil {
		b.Fatal(err)
	}
	k := 0
	for b.Loop() {
		s.Due(k)
		k++
	}
}
