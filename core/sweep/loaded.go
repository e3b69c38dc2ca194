package sweep

import (
	"cmp"
	"math"
	"path/filepath"
	"slices"

	"github.com/lmbench/lmbench/core/analysis"
)

// Loaded is a sweep read back for its report: its summary and, for each
// point, the latencies of the point's own run.
type Loaded struct {
	Dir       string
	Key, Flag string
	// SLO is --slo as given ("" without one).
	SLO       string
	MinGood   float64
	StoppedBy string
	Complete  bool
	// PredictedFrom is the twin profile a predicted sweep ran on ("": a
	// measured sweep).
	PredictedFrom string
	// Points are by value (the search's among the ladder's).
	Points []LoadedPoint
}

// LoadedPoint is one point of a sweep, as sweep_summary.json has it, and
// its run's latencies.
type LoadedPoint struct {
	Point
	// Latency is p50 and p99 of ttft_ms, tpot_ms and e2e_ms, from the
	// point's run (NaN: not defined); LoadErr is why the run could not
	// be read.
	Latency map[string][2]float64
	LoadErr string
}

// Latencies are the summary metrics a sweep's latency curves draw: the
// key in bench_summary.json and the name shown.
var Latencies = []struct{ Key, Name string }{{"ttft_ms", "TTFT"}, {"tpot_ms", "TPOT"}, {"e2e_ms", "E2E"}}

// Load reads the sweep in dir: sweep_summary.json and each point's
// run. An error names the file and what was wrong; a point whose run
// cannot be read keeps its summary's figures and says why.
func Load(dir string) (*Loaded, error) {
	res, err := Read(dir)
	if err != nil {
		return nil, err
	}
	s := &Loaded{Dir: dir, Key: res.Key, Flag: res.Flag, MinGood: res.MinGood, Complete: res.Complete}
	if res.SLO != nil {
		s.SLO = *res.SLO
	}
	if res.PredictedFrom != nil {
		s.PredictedFrom = *res.PredictedFrom
	}
	if res.StoppedBy != nil {
		s.StoppedBy = *res.StoppedBy
	}
	for _, rp := range res.Points {
		p := LoadedPoint{Point: rp, Latency: map[string][2]float64{}}
		for _, l := range Latencies {
			p.Latency[l.Key] = [2]float64{math.NaN(), math.NaN()}
		}
		r, err := analysis.Load(filepath.Join(dir, p.Dir))
		if err != nil {
			p.LoadErr = err.Error()
		} else {
			for _, l := range Latencies {
				if m, ok := r.Summary.Metrics[l.Key]; ok {
					p.Latency[l.Key] = [2]float64{m.Percentile(50), m.Percentile(99)}
				}
			}
		}
		s.Points = append(s.Points, p)
	}
	// Search points follow the ladder's in the file; curves go by value.
	slices.SortStableFunc(s.Points, func(a, b LoadedPoint) int { return cmp.Compare(a.Value, b.Value) })
	return s, nil
}

// Name is the sweep's directory's last element.
func (s *Loaded) Name() string { return filepath.Base(filepath.Clean(s.Dir)) }
