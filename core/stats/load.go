package stats

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lmbench/lmbench/core/record"
)

// Load is the load a run asked for set against the load it achieved.
type Load struct {
	// RequestedRate is the measured requests per second the workload's
	// schedule asked for; NaN when it set none (a closed loop, a burst).
	RequestedRate float64
	// SendRate is the rate measured requests went out at: (n-1) over the
	// time from the first submit to the last; NaN below 2 requests.
	SendRate float64
	// CompletionRate is successful requests per second of the measured
	// phase (NaN when it took no time).
	CompletionRate float64
	// Slip is the dispatch lag (submit - due) of the requests with a
	// schedule of their own, in ms, with its maximum (NaN: none).
	Slip    Dist
	SlipMax float64
}

// Achieved is SendRate/RequestedRate; NaN when either is not defined.
func (l Load) Achieved() float64 {
	if math.IsNaN(l.RequestedRate) || l.RequestedRate <= 0 || math.IsNaN(l.SendRate) {
		return math.NaN()
	}
	return l.SendRate / l.RequestedRate
}

// LoadWarnBelow is the achieved fraction of the requested rate under which
// the summary warns.
const LoadWarnBelow = 0.95

// Warning is the summary's warning when the achieved send rate fell below
// LoadWarnBelow of the requested rate ("" otherwise).
func (l Load) Warning() string {
	a := l.Achieved()
	if math.IsNaN(a) || a >= LoadWarnBelow {
		return ""
	}
	return fmt.Sprintf("requests went out at %.2f req/s, %.1f%% of the %s req/s requested: the client or the engine could not keep up (see the schedule slip)",
		l.SendRate, a*100, strconv.FormatFloat(l.RequestedRate, 'g', -1, 64))
}

// SLO holds per-request limits in milliseconds, vLLM's --goodput: a
// request is good when it succeeded and meets every limit set. 0 is not
// set. TPOT and ITL are 0 for a request with fewer than 2 output tokens
// (vLLM's TPOT), so they meet any limit.
type SLO struct{ TTFT, TPOT, ITL, E2E float64 }

// sloKeys are the limits in order, with vLLM's e2el accepted for e2e.
var sloKeys = []string{"ttft", "tpot", "itl", "e2e"}

func (s *SLO) fields() []*float64 { return []*float64{&s.TTFT, &s.TPOT, &s.ITL, &s.E2E} }

// Set reports whether any limit is set.
func (s SLO) Set() bool { return s != SLO{} }

// String is the canonical form, "ttft:200,tpot:50" ("" when none is set).
func (s SLO) String() string {
	var parts []string
	for i, f := range s.fields() {
		if *f > 0 {
			parts = append(parts, sloKeys[i]+":"+strconv.FormatFloat(*f, 'g', -1, 64))
		}
	}
	return strings.Join(parts, ",")
}

// ParseSLO reads limits as vLLM's --goodput writes them: KEY:MS pairs
// separated by commas or spaces, keys ttft, tpot, itl and e2e (or e2el),
// each value in milliseconds, above 0. "" sets none.
func ParseSLO(text string) (SLO, error) {
	var s SLO
	seen := map[string]bool{}
	for _, pair := range strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' }) {
		k, v, ok := strings.Cut(pair, ":")
		k = strings.ToLower(strings.TrimSpace(k))
		if k == "e2el" {
			k = "e2e"
		}
		i := slices.Index(sloKeys, k)
		if !ok || i < 0 {
			return SLO{}, fmt.Errorf("%q: want KEY:MILLISECONDS with KEY one of ttft, tpot, itl, e2e (e.g. ttft:200,tpot:50)", pair)
		}
		if seen[k] {
			return SLO{}, fmt.Errorf("%q: %s is given twice", pair, k)
		}
		seen[k] = true
		ms, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(ms > 0) || math.IsInf(ms, 0) {
			return SLO{}, fmt.Errorf("%q: the %s limit must be a number of milliseconds above 0, got %q", pair, k, v)
		}
		*s.fields()[i] = ms
	}
	return s, nil
}

// Goodput is how many measured requests met the SLO.
type Goodput struct {
	SLO SLO // the limits; none set: every figure is NaN
	// Good counts the successful measured requests that met every limit.
	Good int
	// Rate is Good per second of the measured phase (NaN without an SLO).
	Rate float64
	// Attainment is, per limit, the fraction of measured requests that
	// met it (a failed request meets none), NaN for a limit not set; All
	// is Good over the measured requests.
	TTFT, TPOT, ITL, E2E, All float64
}

// figures are what the SLO judges of one measured request, in ms.
type figures struct {
	success              bool
	ttft, tpot, itl, e2e float64
}

func figuresOf(r *record.Record) figures {
	f := figures{success: r.Success, ttft: r.TTFT * 1000, e2e: r.Latency * 1000}
	if tpot, ok := r.TPOT(); ok {
		f.tpot = tpot * 1000
	}
	for i := 1; i < len(r.ChunkOffsetsUs); i++ {
		f.itl = max(f.itl, float64(r.ChunkOffsetsUs[i]-r.ChunkOffsetsUs[i-1])/1000)
	}
	return f
}

// loadTally is what a Builder keeps for Load and Goodput.
type loadTally struct {
	firstSubmit, lastSubmit time.Time
	sent                    int
	lagMs                   []float64
	reqs                    []figures
}

func (t *loadTally) add(r *record.Record) {
	t.reqs = append(t.reqs, figuresOf(r))
	if !r.Submit.IsZero() {
		t.sent++
		if t.firstSubmit.IsZero() || r.Submit.Before(t.firstSubmit) {
			t.firstSubmit = r.Submit
		}
		if r.Submit.After(t.lastSubmit) {
			t.lastSubmit = r.Submit
		}
		if r.ExplicitSchedule && !r.Scheduled.IsZero() {
			t.lagMs = append(t.lagMs, ms(r.Submit.Sub(r.Scheduled)))
		}
	}
}

// Judge fills f.Load and f.Goodput: requested is the workload's requested
// rate (0: none), slo the limits (none set: goodput is not defined). Call
// it after Final, with the Final it returned.
func (b *Builder) Judge(f *Final, requested float64, slo SLO) {
	t := &b.load
	l := Load{RequestedRate: math.NaN(), SendRate: math.NaN(), CompletionRate: math.NaN(), SlipMax: math.NaN()}
	if requested > 0 && !math.IsInf(requested, 0) {
		l.RequestedRate = requested
	}
	if span := t.lastSubmit.Sub(t.firstSubmit); t.sent >= 2 && span > 0 {
		l.SendRate = float64(t.sent-1) / span.Seconds()
	}
	if f.ElapsedTime > 0 {
		l.CompletionRate = float64(f.SuccessfulRequests) / f.ElapsedTime
	}
	slices.Sort(t.lagMs)
	l.Slip = describe(t.lagMs, f.Percentiles)
	if n := len(t.lagMs); n > 0 {
		l.SlipMax = t.lagMs[n-1]
	}
	f.Load = l

	g := Goodput{SLO: slo, Rate: math.NaN(), TTFT: math.NaN(), TPOT: math.NaN(), ITL: math.NaN(), E2E: math.NaN(), All: math.NaN()}
	if slo.Set() && len(t.reqs) > 0 {
		limits := slo.fields()
		var met [4]int
		for _, r := range t.reqs {
			if !r.success {
				continue
			}
			good := true
			for i, v := range []float64{r.ttft, r.tpot, r.itl, r.e2e} {
				switch {
				case *limits[i] <= 0:
				case v <= *limits[i]:
					met[i]++
				default:
					good = false
				}
			}
			if good {
				g.Good++
			}
		}
		n := float64(len(t.reqs))
		for i, a := range []*float64{&g.TTFT, &g.TPOT, &g.ITL, &g.E2E} {
			if *limits[i] > 0 {
				*a = float64(met[i]) / n
			}
		}
		g.All = float64(g.Good) / n
		if f.ElapsedTime > 0 {
			g.Rate = float64(g.Good) / f.ElapsedTime
		}
	}
	f.Goodput = g
}
