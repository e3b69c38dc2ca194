package htmlreport

import (
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/lmbench/lmbench/core/analysis"
	"github.com/lmbench/lmbench/core/sweep"
)

// SweepSummaryName is the file lmbench sweep writes beside its points'
// directories (docs/results-schema.md, "A sweep's files").
const SweepSummaryName = sweep.SummaryName

// Sweep is a sweep read back: its summary and, for each point, the
// latencies of the point's own run.
type Sweep struct {
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
	Points []SweepPoint
}

// SweepPoint is one point of a sweep, as sweep_summary.json has it, and
// its run's latencies.
type SweepPoint struct {
	sweep.Point
	// Latency is p50 and p99 of ttft_ms, tpot_ms and e2e_ms, from the
	// point's run (NaN: not defined); LoadErr is why the run could not
	// be read.
	Latency map[string][2]float64
	LoadErr string
}

// sweepLatencies are the summary metrics a sweep's latency curves draw.
var sweepLatencies = []struct{ key, name string }{{"ttft_ms", "TTFT"}, {"tpot_ms", "TPOT"}, {"e2e_ms", "E2E"}}

// LoadSweep reads the sweep in dir: sweep_summary.json and each point's
// run. An error names the file and what was wrong; a point whose run
// cannot be read keeps its summary's figures and says why.
func LoadSweep(dir string) (*Sweep, error) {
	res, err := sweep.Read(dir)
	if err != nil {
		return nil, err
	}
	s := &Sweep{Dir: dir, Key: res.Key, Flag: res.Flag, MinGood: res.MinGood, Complete: res.Complete}
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
		p := SweepPoint{Point: rp, Latency: map[string][2]float64{}}
		for _, l := range sweepLatencies {
			p.Latency[l.key] = [2]float64{math.NaN(), math.NaN()}
		}
		r, err := analysis.Load(filepath.Join(dir, p.Dir))
		if err != nil {
			p.LoadErr = err.Error()
		} else {
			for _, l := range sweepLatencies {
				if m, ok := r.Summary.Metrics[l.key]; ok {
					p.Latency[l.key] = [2]float64{percentileOf(m, 50), percentileOf(m, 99)}
				}
			}
		}
		s.Points = append(s.Points, p)
	}
	// Search points follow the ladder's in the file; curves go by value.
	slices.SortStableFunc(s.Points, func(a, b SweepPoint) int { return cmp.Compare(a.Value, b.Value) })
	return s, nil
}

// fig is a point's figure: NaN when not defined.
func fig(v *float64) num {
	if v == nil {
		return num(math.NaN())
	}
	return num(*v)
}

// Name is the sweep's directory's last element.
func (s *Sweep) Name() string { return filepath.Base(filepath.Clean(s.Dir)) }

// SweepPanels are a sweep's curves, one point per sweep point: each
// latency's p50 and p99 against the achieved throughput, goodput against
// the requested rate, and the achieved rate against the requested.
func SweepPanels(s *Sweep) []Panel {
	var ps []Panel
	const thr = "achieved throughput, successful requests per second of the measured phase (req/s)"
	noRate := ""
	if !slices.ContainsFunc(s.Points, func(p SweepPoint) bool { return !math.IsNaN(fig(p.RequestedRate).f()) }) {
		noRate = fmt.Sprintf("no point has a requested rate: %s (%s) does not set one (a closed loop, a burst)", s.Key, s.Flag)
	}
	for _, l := range sweepLatencies {
		p := Panel{ID: "sweep-" + l.key[:len(l.key)-3], Title: l.name + " against achieved throughput", Kind: Curve,
			X: Axis{Label: thr}, Y: Axis{Label: l.name + " (ms)"}}
		for qi, q := range []string{"p50", "p99"} {
			ser := Series{Name: l.name + " " + q}
			for _, pt := range s.Points {
				ser.XY = append(ser.XY, Point{fig(pt.CompletionRate).f(), pt.Latency[l.key][qi]})
			}
			if defined(ser.XY) {
				p.Series = append(p.Series, ser)
			}
		}
		p.Caption = fmt.Sprintf("Each point of the sweep over %s: its %s median and 99th percentile (the successful measured requests) at the throughput it achieved, joined in order of %s.", s.Key, l.name, s.Key)
		if len(p.Series) == 0 {
			p.Empty = "no point has both a throughput and a " + l.name
		}
		ps = append(ps, p)
	}
	good := Panel{ID: "sweep-goodput", Title: "Goodput against the requested rate", Kind: Curve,
		X: Axis{Label: "requested rate (req/s)"}, Y: Axis{Label: "requests per second (req/s)"},
		Caption: fmt.Sprintf("Each point's goodput (measured requests meeting every SLO limit, %s, per second) and achieved throughput, at the rate it asked for.", s.SLO)}
	rate := Panel{ID: "sweep-rate", Title: "Achieved against requested rate", Kind: Curve,
		X: Axis{Label: "requested rate (req/s)"}, Y: Axis{Label: "rate (req/s)"},
		Caption: "Each point's send rate (measured requests out per second) and completion rate at the rate it asked for; on the \"achieved = requested\" line the engine kept up."}
	series := func(name string, y func(SweepPoint) float64) Series {
		ser := Series{Name: name}
		for _, pt := range s.Points {
			ser.XY = append(ser.XY, Point{fig(pt.RequestedRate).f(), y(pt)})
		}
		return ser
	}
	switch {
	case noRate != "":
		good.Empty, rate.Empty = noRate, noRate
	case s.SLO == "":
		good.Empty = "the sweep set no --slo: goodput was not measured"
	default:
		good.Series = []Series{series("goodput", func(p SweepPoint) float64 { return fig(p.GoodputRPS).f() }),
			series("achieved throughput", func(p SweepPoint) float64 { return fig(p.CompletionRate).f() })}
	}
	if noRate == "" {
		rate.Series = []Series{series("achieved send rate", func(p SweepPoint) float64 { return fig(p.AchievedSendRate).f() }),
			series("completion rate", func(p SweepPoint) float64 { return fig(p.CompletionRate).f() }),
			series("achieved = requested", func(p SweepPoint) float64 { return fig(p.RequestedRate).f() })}
	}
	for _, p := range []*Panel{&good, &rate} {
		p.Series = slices.DeleteFunc(p.Series, func(s Series) bool { return !defined(s.XY) })
		if p.Empty == "" && len(p.Series) == 0 {
			p.Empty = "no point has the figures"
		}
	}
	if len(s.Points) == 0 {
		for i := range ps {
			ps[i].Series, ps[i].Empty = nil, "the sweep finished no point"
		}
		good.Series, good.Empty, rate.Series, rate.Empty = nil, "the sweep finished no point", nil, "the sweep finished no point"
	}
	return append(ps, good, rate)
}

// defined says whether some point has both coordinates.
func defined(pts []Point) bool {
	return slices.ContainsFunc(pts, func(p Point) bool { return !math.IsNaN(p.X) && !math.IsNaN(p.Y) })
}

// sweepTable is the points as a table.
func sweepTable(s *Sweep) table {
	t := table{Title: "Points", Head: []string{"point", s.Key, "status", "requested (req/s)", "sent (req/s)", "sent / requested", "completed (req/s)",
		"TTFT P50 (ms)", "TTFT P99", "TPOT P50", "TPOT P99", "E2E P50", "E2E P99", "slip P99 (ms)", "goodput (req/s)", "good share", "saturated", "meets SLO", "directory"}}
	for _, p := range s.Points {
		status := p.Status
		if p.Error != nil {
			status += ": " + *p.Error
		}
		if p.Search {
			status += " (search)"
		}
		meets := "n/a"
		if p.MeetsSLO != nil {
			meets = map[bool]string{true: "yes", false: "NO"}[*p.MeetsSLO]
		}
		row := []string{strconv.Itoa(p.Number), strconv.FormatFloat(p.Value, 'g', -1, 64), status, fig(p.RequestedRate).s(), fig(p.AchievedSendRate).s(),
			analysis.Percent(fig(p.AchievedFraction).f()), fig(p.CompletionRate).s()}
		for _, l := range sweepLatencies {
			row = append(row, analysis.Num(p.Latency[l.key][0]), analysis.Num(p.Latency[l.key][1]))
		}
		row = append(row, fig(p.P99SlipMs).s(), fig(p.GoodputRPS).s(), analysis.Percent(fig(p.GoodShare).f()),
			map[bool]string{true: "YES", false: "no"}[p.Saturated], meets, p.Dir)
		t.Rows = append(t.Rows, row)
		if p.LoadErr != "" {
			t.Warnings = append(t.Warnings, fmt.Sprintf("point %d: its run could not be read (%s): its latencies are n/a", p.Number, p.LoadErr))
		}
		if p.Saturated {
			t.Warnings = append(t.Warnings, fmt.Sprintf("point %d (%s=%s): saturated, sent below 90%% of the requested rate", p.Number, s.Key, strconv.FormatFloat(p.Value, 'g', -1, 64)))
		}
	}
	if len(t.Rows) == 0 {
		t.Empty = "the sweep finished no point"
	}
	t.Note = fmt.Sprintf("Latencies from each point's bench_summary.json (the successful measured requests); rates, goodput and verdicts from %s. Saturated: sent below 90%% of the requested rate; meets SLO: good share at least %s.", SweepSummaryName, analysis.Percent(s.MinGood))
	return t
}

type sweepSection struct {
	ID, Name, Dir, Line string
	Table               table
	Figures             []figure
}

func newSweepSection(i int, s *Sweep) (sweepSection, error) {
	sec := sweepSection{ID: fmt.Sprintf("sweep-%d", i), Name: s.Name(), Dir: s.Dir, Table: sweepTable(s)}
	sec.Line = fmt.Sprintf("%d points over %s (%s)", len(s.Points), s.Key, s.Flag)
	if s.SLO != "" {
		sec.Line += ", SLO " + s.SLO
	}
	if s.PredictedFrom != "" {
		sec.Line += "; PREDICTED by the built-in engine serving the twin profile " + s.PredictedFrom + ", not measured"
	}
	switch {
	case s.StoppedBy != "":
		sec.Line += "; stopped early: " + s.StoppedBy
	case !s.Complete:
		sec.Line += "; not complete (still running, killed, or a point failed)"
	}
	figs, err := figures(sec.ID, SweepPanels(s))
	if err != nil {
		return sec, err
	}
	sec.Figures = figs
	return sec, nil
}
