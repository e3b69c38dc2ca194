package htmlreport

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/lmbench/lmbench/core/analysis"
	"github.com/lmbench/lmbench/core/sweep"
)

// SweepSummaryName is the file lmbench sweep writes beside its points'
// directories (docs/results-schema.md, "A sweep's files").
const SweepSummaryName = sweep.SummaryName

// fig is a point's figure: NaN when not defined.
func fig(v *float64) num {
	if v == nil {
		return num(math.NaN())
	}
	return num(*v)
}

// SweepPanels are a sweep's curves, one point per sweep point: each
// latency's p50 and p99 against the achieved throughput, goodput against
// the requested rate, and the achieved rate against the requested.
func SweepPanels(s *sweep.Loaded) []Panel {
	var ps []Panel
	const thr = "achieved throughput, successful requests per second of the measured phase (req/s)"
	noRate := ""
	if !slices.ContainsFunc(s.Points, func(p sweep.LoadedPoint) bool { return !math.IsNaN(fig(p.RequestedRate).f()) }) {
		noRate = fmt.Sprintf("no point has a requested rate: %s (%s) does not set one (a closed loop, a burst)", s.Key, s.Flag)
	}
	for _, l := range sweep.Latencies {
		p := Panel{ID: "sweep-" + l.Key[:len(l.Key)-3], Title: l.Name + " against achieved throughput", Kind: Curve,
			X: Axis{Label: thr}, Y: Axis{Label: l.Name + " (ms)"}}
		for qi, q := range []string{"p50", "p99"} {
			ser := Series{Name: l.Name + " " + q}
			for _, pt := range s.Points {
				ser.XY = append(ser.XY, Point{fig(pt.CompletionRate).f(), pt.Latency[l.Key][qi]})
			}
			if defined(ser.XY) {
				p.Series = append(p.Series, ser)
			}
		}
		p.Caption = fmt.Sprintf("Each point of the sweep over %s: its %s median and 99th percentile (the successful measured requests) at the throughput it achieved, joined in order of %s.", s.Key, l.Name, s.Key)
		if len(p.Series) == 0 {
			p.Empty = "no point has both a throughput and a " + l.Name
		}
		ps = append(ps, p)
	}
	good := Panel{ID: "sweep-goodput", Title: "Goodput against the requested rate", Kind: Curve,
		X: Axis{Label: "requested rate (req/s)"}, Y: Axis{Label: "requests per second (req/s)"},
		Caption: fmt.Sprintf("Each point's goodput (measured requests meeting every SLO limit, %s, per second) and achieved throughput, at the rate it asked for.", s.SLO)}
	rate := Panel{ID: "sweep-rate", Title: "Achieved against requested rate", Kind: Curve,
		X: Axis{Label: "requested rate (req/s)"}, Y: Axis{Label: "rate (req/s)"},
		Caption: "Each point's send rate (measured requests out per second) and completion rate at the rate it asked for; on the \"achieved = requested\" line the engine kept up."}
	series := func(name string, y func(sweep.LoadedPoint) float64) Series {
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
		good.Series = []Series{series("goodput", func(p sweep.LoadedPoint) float64 { return fig(p.GoodputRPS).f() }),
			series("achieved throughput", func(p sweep.LoadedPoint) float64 { return fig(p.CompletionRate).f() })}
	}
	if noRate == "" {
		rate.Series = []Series{series("achieved send rate", func(p sweep.LoadedPoint) float64 { return fig(p.AchievedSendRate).f() }),
			series("completion rate", func(p sweep.LoadedPoint) float64 { return fig(p.CompletionRate).f() }),
			series("achieved = requested", func(p sweep.LoadedPoint) float64 { return fig(p.RequestedRate).f() })}
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
func sweepTable(s *sweep.Loaded) table {
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
		for _, l := range sweep.Latencies {
			row = append(row, analysis.Num(p.Latency[l.Key][0]), analysis.Num(p.Latency[l.Key][1]))
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

func newSweepSection(i int, s *sweep.Loaded) (sweepSection, error) {
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
