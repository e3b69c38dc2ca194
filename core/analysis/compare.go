package analysis

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/lmbench/lmbench/core/config"
	"github.com/lmbench/lmbench/core/stats"
)

// Options tune a comparison.
type Options struct {
	// Resamples is the number of bootstrap resamples (0: DefaultResamples).
	// Past WorkBudget values touched in all, fewer are drawn (never fewer
	// than MinResamples); Comparison.Resamples says how many.
	Resamples int
	// Seed seeds the resampling (0: DefaultSeed): the same runs and seed
	// always give the same intervals.
	Seed uint64
}

const (
	DefaultResamples = 2000
	MinResamples     = 200
	DefaultSeed      = 1
	// WorkBudget caps resamples × values per resample, so a run with
	// millions of pooled ITL gaps still compares in seconds.
	WorkBudget = 400_000_000
	// Level is the confidence level of every interval.
	Level = 0.95
)

// Comparison is run B set against run A (the baseline).
type Comparison struct {
	A, B *Run
	Rows []Row
	// Resamples and Seed are the bootstrap's.
	Resamples int
	Seed      uint64
	// Pairing is the per-request pairing; nil when the runs do not share
	// their workload and seed (PairNote says why).
	Pairing  *Pairing
	PairNote string
	// Answers sets the paired requests' answers side by side; nil when
	// the runs cannot be paired.
	Answers *Agreement
	// ConfigDiff lists the configuration keys whose values differ
	// ("key: A's → B's"), output_dir aside.
	ConfigDiff []string
	// SameRun: A and B are one run (the same run id), read twice: every
	// difference is zero by construction, not a finding.
	SameRun bool
}

// Row is one metric of a comparison. A figure that is not defined
// (TPOT of one-token answers) is NaN, and so is everything built on it.
type Row struct {
	Metric Metric
	A, B   float64
	Delta  float64 // B − A
	Ratio  float64 // B / A
	// Lo and Hi bound the 95% bootstrap interval of Ratio.
	Lo, Hi float64
	// Beyond: the interval excludes 1.
	Beyond bool
}

// CompareAll compares every run after the first with the first.
func CompareAll(runs []*Run, opt Options) []Comparison {
	var out []Comparison
	for _, r := range runs[1:] {
		out = append(out, Compare(runs[0], r, opt))
	}
	return out
}

// Compare sets b against a: each headline metric with its ratio and a
// percentile-bootstrap interval of it. Each resample draws, independently
// for each run, its measured requests with replacement (every latency
// metric of that resample uses the same draw) and, for the throughputs,
// its time windows with replacement.
func Compare(a, b *Run, opt Options) Comparison {
	if opt.Seed == 0 {
		opt.Seed = DefaultSeed
	}
	sa, sb := newSample(a), newSample(b)
	c := Comparison{A: a, B: b, Seed: opt.Seed, Resamples: resamples(opt.Resamples, sa.work()+sb.work())}
	c.ConfigDiff = configDiff(a, b)
	c.SameRun = a.Header.ID != "" && a.Header.ID == b.Header.ID
	var buf []float64
	for _, m := range Headline {
		va, vb := sa.value(m, nil, nil, &buf), sb.value(m, nil, nil, &buf)
		c.Rows = append(c.Rows, Row{Metric: m, A: va, B: vb, Delta: vb - va, Ratio: ratio(vb, va), Lo: math.NaN(), Hi: math.NaN()})
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x6c6d62656e6368))
	ratios := make([][]float64, len(Headline))
	ca, cb := make([]int, sa.records), make([]int, sb.records)
	wa, wb := make([]int, Windows), make([]int, Windows)
	for range c.Resamples {
		draw(rng, ca)
		draw(rng, cb)
		draw(rng, wa)
		draw(rng, wb)
		for i, m := range Headline {
			if r := ratio(sb.value(m, cb, wb, &buf), sa.value(m, ca, wa, &buf)); !math.IsNaN(r) && !math.IsInf(r, 0) {
				ratios[i] = append(ratios[i], r)
			}
		}
	}
	for i := range c.Rows {
		row := &c.Rows[i]
		if math.IsNaN(row.Ratio) || math.IsInf(row.Ratio, 0) {
			continue
		}
		row.Lo, row.Hi = interval(ratios[i], c.Resamples)
		row.Beyond = !math.IsNaN(row.Lo) && (row.Lo > 1 || row.Hi < 1)
	}
	c.Pairing, c.PairNote = pairable(a, b)
	if c.Pairing == nil && c.PairNote == "" {
		c.Pairing = Pair(a, b, opt.Seed, c.Resamples)
		c.Answers = Agree(a, b)
	}
	return c
}

// resamples is how many to draw: asked (or the default), capped by the
// work budget, at least MinResamples.
func resamples(asked, work int) int {
	if asked <= 0 {
		asked = DefaultResamples
	}
	if work > 0 && asked*work > WorkBudget {
		asked = max(MinResamples, WorkBudget/work)
	}
	return asked
}

// draw fills counts with a resample: len(counts) draws with replacement
// among len(counts) items, counts[i] how often item i was drawn.
func draw(rng *rand.Rand, counts []int) {
	clear(counts)
	for range counts {
		counts[rng.IntN(len(counts))]++
	}
}

func ratio(b, a float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) || a == 0 {
		return math.NaN()
	}
	return b / a
}

// interval is the percentile interval of the bootstrap ratios at Level;
// NaN when fewer than half the resamples gave a ratio (a metric defined
// by too few requests to resample).
func interval(ratios []float64, resamples int) (lo, hi float64) {
	if len(ratios) == 0 || 2*len(ratios) < resamples {
		return math.NaN(), math.NaN()
	}
	slices.Sort(ratios)
	tail := (1 - Level) / 2 * 100
	return stats.Percentile(ratios, tail), stats.Percentile(ratios, 100-tail)
}

// pairable says whether a and b can be paired by request id: the same
// workload and seed. It returns a note saying why not ("" when they can).
func pairable(a, b *Run) (*Pairing, string) {
	if a.Header.Workload != b.Header.Workload {
		return nil, fmt.Sprintf("not paired: the workloads differ (%s, %s)", a.Header.Workload, b.Header.Workload)
	}
	ra, rb := config.ReadRecorded(a.Header.Config), config.ReadRecorded(b.Header.Config)
	switch {
	case !ra.HasSeed || !rb.HasSeed:
		return nil, "not paired: a run's configuration records no seed"
	case ra.Seed != rb.Seed:
		return nil, fmt.Sprintf("not paired: the seeds differ (%d, %d)", ra.Seed, rb.Seed)
	}
	return nil, ""
}

// configDiff lists the keys of the runs' recorded configurations whose
// values differ, in sorted order.
func configDiff(a, b *Run) []string {
	var ca, cb map[string]json.RawMessage
	json.Unmarshal(a.Header.Config, &ca)
	json.Unmarshal(b.Header.Config, &cb)
	keys := map[string]bool{}
	for k := range ca {
		keys[k] = true
	}
	for k := range cb {
		keys[k] = true
	}
	var out []string
	for _, k := range sortedKeys(keys) {
		if k == "output_dir" {
			continue
		}
		va, vb := compact(ca[k]), compact(cb[k])
		if va != vb {
			out = append(out, fmt.Sprintf("%s: %s → %s", k, orNone(va), orNone(vb)))
		}
	}
	return out
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "(unset)"
	}
	return s
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
