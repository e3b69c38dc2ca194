package enginemetrics

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Snapshot is one scrape, folded: each known metric present as one value
// (Values: counters and gauges) or one histogram (Hists), keyed by
// Def.Key. A metric the engine does not expose is absent.
type Snapshot struct {
	Values map[string]float64
	Hists  map[string]Hist
}

// Hist is a histogram folded over its series: cumulative counts at each
// finite upper bound (ascending), the total count (the +Inf bucket) and
// the sum of the observations.
type Hist struct {
	Bounds []float64
	Cum    []float64
	Count  float64
	Sum    float64
}

// Parse reads Prometheus text exposition (format 0.0.4) and folds the
// metrics of Defs. Metric names are read as UTF-8 (vLLM's names hold
// colons, which the legacy scheme accepts too; UTF-8 accepts both).
func Parse(r io.Reader) (Snapshot, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return Snapshot{}, fmt.Errorf("parsing the exposition: %w", err)
	}
	return fold(fams), nil
}

// fold folds the families of Defs out of fams.
func fold(fams map[string]*dto.MetricFamily) Snapshot {
	s := Snapshot{Values: map[string]float64{}, Hists: map[string]Hist{}}
	for _, d := range Defs {
		mf := find(fams, d)
		if mf == nil {
			continue
		}
		switch d.Kind {
		case Histogram:
			if h, ok := foldHist(mf); ok {
				s.Hists[d.Key] = h
			}
		default:
			if v, ok := foldValue(mf, d.Fold); ok {
				s.Values[d.Key] = v
			}
		}
	}
	return s
}

// find returns the first of d's names fams holds (a counter also without
// its _total suffix), or nil.
func find(fams map[string]*dto.MetricFamily, d Def) *dto.MetricFamily {
	for _, n := range d.Names {
		if mf, ok := fams[n]; ok && len(mf.GetMetric()) > 0 {
			return mf
		}
		if d.Kind == Counter {
			if mf, ok := fams[strings.TrimSuffix(n, "_total")]; ok && len(mf.GetMetric()) > 0 {
				return mf
			}
		}
	}
	return nil
}

// value is a series' value whatever type the exposition gave it.
func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return math.NaN()
}

func foldValue(mf *dto.MetricFamily, f Fold) (float64, bool) {
	var vs []float64
	for _, m := range mf.GetMetric() {
		if v := value(m); !math.IsNaN(v) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return 0, false
	}
	switch f {
	case Max:
		return slices.Max(vs), true
	case Mean:
		var sum float64
		for _, v := range vs {
			sum += v
		}
		return sum / float64(len(vs)), true
	default:
		var sum float64
		for _, v := range vs {
			sum += v
		}
		return sum, true
	}
}

func foldHist(mf *dto.MetricFamily) (Hist, bool) {
	type series struct {
		bounds, cum []float64
	}
	var all []series
	var h Hist
	bounds := map[float64]bool{}
	for _, m := range mf.GetMetric() {
		mh := m.GetHistogram()
		if mh == nil {
			continue
		}
		var s series
		for _, b := range mh.GetBucket() {
			ub := b.GetUpperBound()
			if math.IsInf(ub, +1) {
				continue
			}
			c := b.GetCumulativeCountFloat()
			if c == 0 {
				c = float64(b.GetCumulativeCount())
			}
			s.bounds = append(s.bounds, ub)
			s.cum = append(s.cum, c)
			bounds[ub] = true
		}
		count := mh.GetSampleCountFloat()
		if count == 0 {
			count = float64(mh.GetSampleCount())
		}
		h.Count += count
		h.Sum += mh.GetSampleSum()
		all = append(all, s)
	}
	if len(all) == 0 {
		return Hist{}, false
	}
	for b := range bounds {
		h.Bounds = append(h.Bounds, b)
	}
	slices.Sort(h.Bounds)
	h.Cum = make([]float64, len(h.Bounds))
	for _, s := range all {
		for i, b := range h.Bounds {
			h.Cum[i] += cumAt(s.bounds, s.cum, b)
		}
	}
	return h, true
}

// cumAt is a series' cumulative count at bound b: at its largest bound
// not above b (series of one engine share their bounds; this only matters
// when engines of different versions are folded together).
func cumAt(bounds, cum []float64, b float64) float64 {
	var c float64
	for i, ub := range bounds {
		if ub > b {
			break
		}
		c = cum[i]
	}
	return c
}

// Quantile estimates the q-quantile (0 to 1) of the observations as
// Prometheus' histogram_quantile does: linear interpolation inside the
// bucket holding it (from 0 for the first bucket); the highest finite
// bound when it falls in the +Inf bucket. NaN when the histogram is empty.
func (h Hist) Quantile(q float64) float64 {
	if h.Count <= 0 || math.IsNaN(q) {
		return math.NaN()
	}
	rank := q * h.Count
	lower, below := 0.0, 0.0
	for i, ub := range h.Bounds {
		if h.Cum[i] >= rank {
			in := h.Cum[i] - below
			if in <= 0 {
				return ub
			}
			return lower + (ub-lower)*(rank-below)/in
		}
		lower, below = ub, h.Cum[i]
	}
	if len(h.Bounds) == 0 {
		return math.NaN()
	}
	return h.Bounds[len(h.Bounds)-1]
}

// Mean is the mean observation, NaN when empty.
func (h Hist) Mean() float64 {
	if h.Count <= 0 {
		return math.NaN()
	}
	return h.Sum / h.Count
}

// Sub is h - earlier: the observations made between two scrapes. ok is
// false when a count went down (the engine restarted, or the histogram
// was reset) and the difference means nothing.
func (h Hist) Sub(earlier Hist) (d Hist, ok bool) {
	d = Hist{Bounds: h.Bounds, Cum: make([]float64, len(h.Bounds)), Count: h.Count - earlier.Count,
		Sum: h.Sum - earlier.Sum}
	if d.Count < 0 {
		return Hist{}, false
	}
	for i, b := range h.Bounds {
		d.Cum[i] = h.Cum[i] - cumAt(earlier.Bounds, earlier.Cum, b)
		if d.Cum[i] < 0 {
			return Hist{}, false
		}
	}
	return d, true
}
