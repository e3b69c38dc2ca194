package main

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/lmbench/lmbench/sdk/arrival"
	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/workload"
)

// fiftySessions: 1 GB × 1000 tokens/GB / (10 + 10) = 50 sessions, so that
// at 20 req/s a session's turn comes round every 2.5 s on average, far
// longer than an answer takes: no session ever holds the queue, and every
// request is sent exactly when due.
var fiftySessions = workload.Common{Seed: 42, KVCacheVolumeGB: 1, TokensPerGB: 1000}

func openLoop(kind string, burstiness float64) map[string]any {
	return map[string]any{
		"shared-prompt-length": 10, "chat-history-length": 10, "user-input-length": 2, "output-length": 1,
		"qps": 20.0, "duration": 60.0, "arrival": kind, "burstiness": burstiness,
	}
}

// gapStats is the achieved rate (requests sent in the duration, per
// second) and the coefficient of variation of the gaps between sends.
func gapStats(sent []sdktest.Sent, duration time.Duration) (rate, cv float64) {
	var gaps []float64
	for i := 1; i < len(sent); i++ {
		gaps = append(gaps, (sent[i].Offset - sent[i-1].Offset).Seconds())
	}
	var mean, ss float64
	for _, g := range gaps {
		mean += g
	}
	mean /= float64(len(gaps))
	for _, g := range gaps {
		ss += (g - mean) * (g - mean)
	}
	return float64(len(sent)) / duration.Seconds(), math.Sqrt(ss/float64(len(gaps))) / mean
}

// runOpenLoop runs 60 s of virtual time at 20 req/s with the given seed
// and checks that every request went out when due, at the due time of the
// seed's schedule normalised to 1,200 requests in the 60 s.
func runOpenLoop(t *testing.T, kind string, burstiness float64, seed int64) []sdktest.Sent {
	t.Helper()
	c := fiftySessions
	c.Seed = seed
	tr := sdktest.Run(t, Definition, sdktest.Options{
		Options: openLoop(kind, burstiness),
		Common:  c,
		Engine:  sdktest.FixedEngine(time.Millisecond),
	})
	want, err := arrival.New(kind, 20, burstiness, seed)
	if err != nil {
		t.Fatal(err)
	}
	want.Normalize(1200)
	m := tr.Measured()
	for k, s := range m {
		if due := want.Due(k); s.Scheduled != due || s.Offset != due {
			t.Fatalf("request %d (%s): sent at %v, scheduled %v; want both at the schedule's %v", k, s.ID, s.Offset, s.Scheduled, due)
		}
	}
	if next := want.Due(len(m)); next < time.Minute || m[len(m)-1].Offset >= time.Minute {
		t.Errorf("%d requests sent, the last at %v; the next is due at %v: want every request due in the 60 s", len(m), m[len(m)-1].Offset, next)
	}
	if tr.Planned != len(m) {
		t.Errorf("planned %d requests, sent %d", tr.Planned, len(m))
	}
	return m
}

// Poisson arrivals at 20 req/s over 60 s of virtual time: the engine sees
// 1,200 requests, 20 req/s (within 3%, exactly: the schedule is normalised
// as vLLM's), with gaps of CV 0.9–1.1: 0.959 for seed 42, 0.950–1.045 over
// seeds 1–20.
func TestPoissonArrivals(t *testing.T) {
	t.Parallel()
	for seed := range int64(21) {
		if seed == 0 {
			seed = 42
		}
		m := runOpenLoop(t, arrival.Poisson, 1, seed)
		rate, cv := gapStats(m, time.Minute)
		t.Logf("poisson seed %d: %d requests, %.3f req/s, gap CV %.3f", seed, len(m), rate, cv)
		if math.Abs(rate/20-1) > 0.03 {
			t.Errorf("seed %d: achieved %.3f req/s, want 20 within 3%%", seed, rate)
		}
		if cv < 0.9 || cv > 1.1 {
			t.Errorf("seed %d: gap CV %.3f, want 0.9–1.1", seed, cv)
		}
	}
}

// Gamma arrivals of burstiness 0.5 at 20 req/s over 60 s: gaps of CV near
// √2 = 1.414 (within 10%: 1.405 for seed 42, 1.328–1.495 over seeds
// 1–20), 20 req/s.
func TestBurstyArrivals(t *testing.T) {
	t.Parallel()
	for seed := range int64(21) {
		if seed == 0 {
			seed = 42
		}
		m := runOpenLoop(t, arrival.Gamma, 0.5, seed)
		rate, cv := gapStats(m, time.Minute)
		t.Logf("gamma 0.5 seed %d: %d requests, %.3f req/s, gap CV %.3f", seed, len(m), rate, cv)
		if math.Abs(cv/math.Sqrt2-1) > 0.1 {
			t.Errorf("seed %d: gap CV %.3f, want √2 = 1.414 within 10%%", seed, cv)
		}
		if math.Abs(rate/20-1) > 0.03 {
			t.Errorf("seed %d: achieved %.3f req/s, want 20 within 3%%", seed, rate)
		}
	}
}

// Constant arrivals are the original's k/qps, whatever the burstiness
// default: the golden transcript (TestGolden) pins that too.
func TestConstantArrivalsAreKOverQPS(t *testing.T) {
	t.Parallel()
	m := runOpenLoop(t, arrival.Constant, 1, 42)
	if len(m) != 1200 {
		t.Fatalf("%d requests, want 1200", len(m))
	}
	for k, s := range m {
		if want := time.Duration(k) * 50 * time.Millisecond; s.Offset != want {
			t.Fatalf("request %d sent at %v, want %v", k, s.Offset, want)
		}
	}
}

// The seed draws the schedule: another seed, other due times; the same
// seed, the same stream (CheckWorkload checks that too).
func TestSeedDrawsTheSchedule(t *testing.T) {
	t.Parallel()
	opts := openLoop(arrival.Poisson, 1)
	opts["duration"] = 5.0
	a := sdktest.Run(t, Definition, sdktest.Options{Options: opts, Common: fiftySessions})
	c := fiftySessions
	c.Seed = 7
	b := sdktest.Run(t, Definition, sdktest.Options{Options: opts, Common: c})
	if cmp.Equal(offsets(a.Measured()), offsets(b.Measured())) {
		t.Error("seeds 42 and 7 gave the same send times")
	}
}

func offsets(sent []sdktest.Sent) []time.Duration {
	var out []time.Duration
	for _, s := range sent {
		out = append(out, s.Offset)
	}
	return out
}

func TestArrivalBanner(t *testing.T) {
	t.Parallel()
	opts := openLoop(arrival.Gamma, 0.5)
	opts["duration"] = 1.0
	tr := sdktest.Run(t, Definition, sdktest.Options{Options: opts, Common: fiftySessions})
	if got, want := tr.Banner[len(tr.Banner)-1], (workload.Field{Label: "Arrival", Value: "gamma, 20 req/s, burstiness 0.5"}); got != want {
		t.Errorf("last banner line %+v, want %+v", got, want)
	}
	if d := cmp.Diff(arrival.Kinds, enumOf(t, "arrival")); d != "" {
		t.Errorf("--mrc-arrival's values (-want arrival.Kinds +got):\n%s", d)
	}
}

func enumOf(t *testing.T, name string) []string {
	t.Helper()
	specs, err := option.Specs(Definition.Defaults)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		if s.Name == name {
			return s.Enum
		}
	}
	t.Fatalf("no option %s", name)
	return nil
}

func TestInvalidArrivalOptions(t *testing.T) {
	t.Parallel()
	sdktest.CheckFieldErrors(t, Definition, sdktest.Options{Common: threeSessions}, []sdktest.FieldErrorCase{
		{Name: "unknown arrival", Options: with("arrival", "bursty"),
			Want: []option.FieldError{{Option: "arrival", Message: `must be one of constant, poisson, gamma, got "bursty"`}}},
		{Name: "burstiness 0", Options: with("arrival", "gamma", "burstiness", 0.0),
			Want: []option.FieldError{{Option: "burstiness", Message: "must be a positive, finite gamma shape, got 0"}}},
		{Name: "burstiness NaN", Options: with("arrival", "gamma", "burstiness", math.NaN()),
			Want: []option.FieldError{{Option: "burstiness", Message: "must be a positive, finite gamma shape, got NaN"}}},
		{Name: "burstiness with poisson", Options: with("arrival", "poisson", "burstiness", 0.5),
			Want: []option.FieldError{{Option: "burstiness", Message: "applies to gamma arrivals only (poisson is gamma with burstiness 1), got 0.5 with poisson"}}},
		{Name: "burstiness with the default arrival", Options: with("burstiness", 2.0),
			Want: []option.FieldError{{Option: "burstiness", Message: "applies to gamma arrivals only (poisson is gamma with burstiness 1), got 2 with constant"}}},
		{Name: "qps keeps the original's message", Options: with("arrival", "poisson", "qps", 0.0),
			Want: []option.FieldError{{Option: "qps", Message: "qps must be positive, got 0.0"}}},
	})
}

func TestContractPoisson(t *testing.T) {
	sdktest.CheckWorkload(t, Definition, sdktest.Options{
		Options: map[string]any{"shared-prompt-length": 20, "chat-history-length": 30, "qps": 10.0, "duration": 2.0, "arrival": "poisson"},
		Common:  workload.Common{KVCacheVolumeGB: 1, TokensPerGB: 150},
	})
}

// Handing requests over ahead changes how often the workload is stepped,
// never what is sent or when: a host with look-ahead and a protocol
// minor 0 host send the same requests at the same times, the first with a
// fraction of the Steps (500 sessions at 200 req/s: a session's turn
// comes round every 2.5 s, past the window). With 5 sessions at 50 req/s and 150 ms answers a
// session is often still busy when its turn is handed over, so the
// look-ahead path also stops at a busy session and resumes on its answer.
func TestLookAheadSendsTheSame(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		common  workload.Common
		qps     float64
		latency time.Duration
		fewer   bool
	}{
		{name: "sessions always ready", common: workload.Common{Seed: 42, KVCacheVolumeGB: 10, TokensPerGB: 1000}, qps: 200, latency: time.Millisecond, fewer: true},
		{name: "busy sessions hold the queue", common: workload.Common{Seed: 42, KVCacheVolumeGB: 0.1, TokensPerGB: 1000}, qps: 50, latency: 150 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := openLoop(arrival.Poisson, 1)
			opts["qps"], opts["duration"] = tc.qps, 10.0
			run := func(caps []string) *sdktest.Transcript {
				return sdktest.Run(t, Definition, sdktest.Options{Options: opts, Common: tc.common, Engine: sdktest.FixedEngine(tc.latency), HostCapabilities: caps})
			}
			ahead, old := run(nil), run([]string{})
			if len(old.Measured()) < 100 {
				t.Fatalf("only %d requests sent", len(old.Measured()))
			}
			// The same requests; the expected reuse only a host with the
			// capability hears.
			if d := cmp.Diff(old.Requests, ahead.Requests, cmpopts.IgnoreFields(sdktest.Sent{}, "ExpectedCachedTokens", "TargetTier")); d != "" {
				t.Errorf("requests with look-ahead differ from minor 0 (-minor 0 +look-ahead):\n%s", d)
			}
			// Warmup is a closed loop, one Step a session and a last one.
			warm := len(old.Warmup()) + 1
			if a, o := ahead.Steps-warm, old.Steps-warm; tc.fewer && a*5 > o {
				t.Errorf("%d measured Steps with look-ahead, %d without: want far fewer", a, o)
			}
		})
	}
}
