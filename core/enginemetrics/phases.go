package enginemetrics

import (
	"math"
	"time"
)

// Scrape points: where in the run a sample was taken.
const (
	PointRunStart     = "run_start"     // before the warmup phase (after a reset before it)
	PointWarmupEnd    = "warmup_end"    // every warmup request finished
	PointMeasureStart = "measure_start" // before the measured phase (after a reset before it)
	PointMeasureEnd   = "measure_end"   // every measured request finished
	PointRunEnd       = "run_end"       // after the run loop stopped, however it stopped
	PointInterval     = "interval"      // every --metrics-interval
	PointReset        = "reset"         // around a cache reset's check
)

// Phase names, as the journal spells them.
const (
	Warmup  = "warmup"
	Measure = "measure"
)

// Sample is one scrape of the engine's /metrics.
type Sample struct {
	Time time.Time
	// Elapsed is the time since the scraper was created, in seconds.
	Elapsed float64
	Point   string
	// Phase is the phase running when the sample was taken ("" before,
	// between and after the phases).
	Phase string
	// Err is why the scrape failed ("" when it did not); Snap is empty then.
	Err  string
	Snap Snapshot
}

// OK reports whether the scrape succeeded.
func (s Sample) OK() bool { return s.Err == "" }

// GaugeStats are a gauge's values over a phase's samples.
type GaugeStats struct {
	N              int
	Min, Mean, Max float64
	// Inside counts the samples taken inside the phase (every
	// --metrics-interval), not at its boundaries: with none, Max is not a
	// peak (at a boundary the engine is idle, or nearly).
	Inside int
}

// PhaseStats are a phase's figures from the engine's metrics. A figure
// that could not be computed (a boundary scrape failed, the engine has no
// such metric, a counter went down) is missing from its map.
type PhaseStats struct {
	Name string
	// Start and End are the boundary samples used (zero Time: none).
	Start, End Sample
	Counters   map[string]float64 // End - Start, for every counter both hold
	Gauges     map[string]GaugeStats
	Hists      map[string]Hist // End - Start
	// Reset lists the counters and histograms that went down across the
	// phase (an engine restart): their deltas are left out.
	Reset []string
}

// Counter is a counter's delta over the phase, NaN when not known.
func (p PhaseStats) Counter(key string) float64 {
	if v, ok := p.Counters[key]; ok {
		return v
	}
	return math.NaN()
}

// Has reports whether the phase has the counter's delta.
func (p PhaseStats) Has(key string) bool {
	_, ok := p.Counters[key]
	return ok
}

// Phases computes the warmup and measured phases' figures from a run's
// samples: a phase runs from its start point (run_start, measure_start)
// to its end point (warmup_end; measure_end, else run_end for a run cut
// short), using the last successful sample taken at each; gauges range
// over every successful sample taken during the phase and at its ends.
func Phases(samples []Sample) [2]PhaseStats {
	return [2]PhaseStats{
		phase(samples, Warmup, []string{PointRunStart}, []string{PointWarmupEnd}),
		phase(samples, Measure, []string{PointMeasureStart}, []string{PointMeasureEnd, PointRunEnd}),
	}
}

// phase is one phase's deltas and gauge ranges, between the last good
// sample at one of starts and the last good one at one of ends.
func phase(samples []Sample, name string, starts, ends []string) PhaseStats {
	p := PhaseStats{Name: name, Counters: map[string]float64{}, Gauges: map[string]GaugeStats{}, Hists: map[string]Hist{}}
	start, okS := lastAt(samples, starts)
	end, okE := lastAt(samples, ends)
	if okS {
		p.Start = start
	}
	if okE {
		p.End = end
	}
	if okS && okE {
		p.deltas(start, end)
	}
	in := func(s Sample) bool {
		if !s.OK() {
			return false
		}
		if s.Phase == name {
			return true
		}
		return (okS && s.Time.Equal(start.Time) && s.Point == start.Point) ||
			(okE && s.Time.Equal(end.Time) && s.Point == end.Point)
	}
	for _, d := range Defs {
		if d.Kind != Gauge {
			continue
		}
		if g, ok := gaugeOver(samples, d.Key, in); ok {
			p.Gauges[d.Key] = g
		}
	}
	return p
}

// lastAt is the last good sample taken at one of points, in their order.
func lastAt(samples []Sample, points []string) (Sample, bool) {
	for _, pt := range points {
		for i := len(samples) - 1; i >= 0; i-- {
			if s := samples[i]; s.Point == pt && s.OK() {
				return s, true
			}
		}
	}
	return Sample{}, false
}

// deltas sets the counters' and histograms' change from start to end; one
// that went down was reset (the engine restarted) and is listed instead.
func (p *PhaseStats) deltas(start, end Sample) {
	for _, d := range Defs {
		switch d.Kind {
		case Counter:
			a, okA := start.Snap.Values[d.Key]
			b, okB := end.Snap.Values[d.Key]
			if !okA || !okB {
				continue
			}
			if b < a {
				p.Reset = append(p.Reset, d.Key)
				continue
			}
			p.Counters[d.Key] = b - a
		case Histogram:
			a, okA := start.Snap.Hists[d.Key]
			b, okB := end.Snap.Hists[d.Key]
			if !okA || !okB {
				continue
			}
			if h, ok := b.Sub(a); ok {
				p.Hists[d.Key] = h
			} else {
				p.Reset = append(p.Reset, d.Key)
			}
		}
	}
}

// gaugeOver is a gauge's range and mean over the samples in the phase.
func gaugeOver(samples []Sample, key string, in func(Sample) bool) (GaugeStats, bool) {
	var g GaugeStats
	var sum float64
	for _, s := range samples {
		v, ok := s.Snap.Values[key]
		if !ok || !in(s) {
			continue
		}
		if g.N == 0 || v < g.Min {
			g.Min = v
		}
		if g.N == 0 || v > g.Max {
			g.Max = v
		}
		sum += v
		g.N++
		if s.Point == PointInterval {
			g.Inside++
		}
	}
	if g.N == 0 {
		return g, false
	}
	g.Mean = sum / float64(g.N)
	return g, true
}
