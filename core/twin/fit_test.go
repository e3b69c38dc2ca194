package twin

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// truth is an engine unlike the built-in defaults: a dearer prefill
// growing with context, an overhead, CPU loads at 8µs, decode steps
// slowing by 0.4ms per other request, 12 requests at most.
var truth = Params{
	PrefillPerToken: 80e-6, PrefillGrowth: 20e-6, PrefillOverhead: 4e-3,
	CPULoadPerToken: 8e-6, DiskLoad: 20e-6, DecodePerToken: 6e-3, DecodePerSeq: 0.4e-3, MaxNumSeqs: 12,
}

// synthetic is a run of n requests at rate per second through p's model:
// prompts of 200 to 2,000 tokens, every third with half of it cached in
// the CPU tier, 64 to 256 output tokens.
func synthetic(p Params, n int, rate float64, seed uint64) Run {
	rng := rand.New(rand.NewPCG(seed, 1))
	jobs := make([]Job, n)
	t := 0.0
	for i := range jobs {
		t += rng.ExpFloat64() / rate
		j := Job{Arrive: t, Prompt: 200 + rng.IntN(1800), OutputTokens: 64 + rng.IntN(193)}
		if i%3 == 0 {
			j.CachedCPU = j.Prompt / 2
		}
		jobs[i] = j
	}
	out := Replay(p, jobs)
	r := Run{Dir: "synthetic", TierNote: "synthetic"}
	for i, o := range out {
		q := Request{Job: jobs[i], FirstToken: o.FirstToken, Finish: o.Finish, Tokens: o.Tokens}
		q.TTFT, q.E2E = o.FirstToken-q.Arrive, o.Finish-q.Arrive
		q.TPOT, q.HasTPOT = (o.Finish-o.FirstToken)/float64(q.OutputTokens-1), true
		r.Requests = append(r.Requests, q)
	}
	return r
}

// TestFitRecoversKnownEngine fits two runs generated from known
// parameters (one light, one queueing behind the cap) and finds each
// within 10%, naming the disk tier as not identified.
func TestFitRecoversKnownEngine(t *testing.T) {
	t.Parallel()
	runs := []Run{synthetic(truth, 300, 4, 1), synthetic(truth, 300, 8, 2)}
	prof, err := Fit(runs)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"prefill-per-token": truth.PrefillPerToken, "prefill-growth": truth.PrefillGrowth, "prefill-overhead": truth.PrefillOverhead,
		"cpu-load-per-token": truth.CPULoadPerToken, "decode-per-token": truth.DecodePerToken, "decode-per-seq": truth.DecodePerSeq,
		"max-num-seqs": float64(truth.MaxNumSeqs),
	}
	for name, w := range want {
		p, ok := prof.Param(name)
		switch {
		case !ok || !p.Identified:
			t.Errorf("%s: not identified (%s); want %g", name, p.Why, w)
		case math.Abs(p.Value-w) > 0.1*w:
			t.Errorf("%s = %g ± %g, want %g within 10%%", name, p.Value, p.Uncertainty, w)
		}
	}
	if d, _ := prof.Param("disk-load-per-token"); d.Identified || !strings.Contains(d.Why, "disk tier") {
		t.Errorf("disk-load-per-token: identified %v (%q); want not identified, naming the disk tier", d.Identified, d.Why)
	}
	if e := prof.Residuals.TTFT; e.N != 600 || e.Median > 0.02 {
		t.Errorf("TTFT residuals %+v; want 600 requests, median under 2%% on the model's own data", e)
	}
	if got := prof.Settings["max-num-seqs"]; got != "12" {
		t.Errorf("settings max-num-seqs = %q, want 12", got)
	}
}

// TestFitNamesWhatItCannotSee: light load with one prompt length and no
// cache hits leaves the growth, the tiers, the batch slope and the cap
// unidentified, each saying why.
func TestFitNamesWhatItCannotSee(t *testing.T) {
	t.Parallel()
	p := truth
	p.MaxNumSeqs = 0
	jobs := make([]Job, 40)
	for i := range jobs {
		jobs[i] = Job{Arrive: float64(i), Prompt: 500 + i%2, OutputTokens: 8}
	}
	out := Replay(p, jobs)
	r := Run{Dir: "sparse"}
	for i, o := range out {
		r.Requests = append(r.Requests, Request{Job: jobs[i], FirstToken: o.FirstToken, Finish: o.Finish, Tokens: o.Tokens,
			TTFT: o.FirstToken - jobs[i].Arrive, E2E: o.Finish - jobs[i].Arrive})
	}
	prof, err := Fit([]Run{r})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"prefill-growth", "cpu-load-per-token", "disk-load-per-token", "decode-per-seq", "max-num-seqs"} {
		if x, _ := prof.Param(name); x.Identified || x.Why == "" {
			t.Errorf("%s: identified %v, why %q; want not identified, with a reason", name, x.Identified, x.Why)
		}
	}
	if d, _ := prof.Param("decode-per-token"); !d.Identified || math.Abs(d.Value-p.DecodePerToken) > 0.01*p.DecodePerToken {
		t.Errorf("decode-per-token = %+v, want %g", d, p.DecodePerToken)
	}
	if _, ok := prof.Settings["prefill-growth"]; ok {
		t.Errorf("settings %v hold prefill-growth, which was not identified", prof.Settings)
	}
}
