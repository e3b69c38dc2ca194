package htmlreport

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/lmbench/lmbench/core/analysis"
)

// SweepSummaryName is the file lmbench sweep writes beside its points'
// directories (docs/results-schema.md, "A sweep's files").
const SweepSummaryName = "sweep_summary.json"

// IsSweep says whether dir is a sweep's output directory.
func IsSweep(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, SweepSummaryName))
	return err == nil && st.Mode().IsRegular()
}

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
	Points    []SweepPoint
}

// SweepPoint is one point of a sweep; a figure not defined is NaN.
type SweepPoint struct {
	Point  int     `json:"point"`
	Value  float64 `json:"value"`
	Search bool    `json:"search"`
	Dir    string  `json:"dir"`
	Status string  `json:"status"`
	Error  *string `json:"error"`

	RequestedRate    num   `json:"requested_rate"`
	AchievedSendRate num   `json:"achieved_send_rate"`
	AchievedFraction num   `json:"achieved_fraction"`
	CompletionRate   num   `json:"completion_rate"`
	P99SlipMs        num   `json:"p99_schedule_slip_ms"`
	GoodputRPS       num   `json:"goodput_rps"`
	GoodShare        num   `json:"good_share"`
	Saturated        bool  `json:"saturated"`
	MeetsSLO         *bool `json:"meets_slo"`

	// Latency is p50 and p99 of ttft_ms, tpot_ms and e2e_ms, from the
	// point's run; LoadErr is why the run could not be read.
	Latency map[string][2]float64 `json:"-"`
	LoadErr string                `json:"-"`
}

// sweepLatencies are the summary metrics a sweep's latency curves draw.
var sweepLatencies = []struct{ key, name string }{{"ttft_ms", "TTFT"}, {"tpot_ms", "TPOT"}, {"e2e_ms", "E2E"}}

// LoadSweep reads the sweep in dir: sweep_summary.json and each point's
// run. An error names the file and what was wrong; a point whose run
// cannot be read keeps its summary's figures and says why.
func LoadSweep(dir string) (*Sweep, error) {
	path := filepath.Join(dir, SweepSummaryName)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: no %s: not a sweep's output directory", dir, SweepSummaryName)
	}
	if err != nil {
		return nil, err
	}
	var doc struct {
		Key       string       `json:"key"`
		Flag      string       `json:"flag"`
		SLO       *string      `json:"slo"`
		MinGood   float64      `json:"min_good_share"`
		Points    []SweepPoint `json:"points"`
		StoppedBy *string      `json:"stopped_by"`
		Complete  bool         `json:"complete"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: not a sweep summary: %w", path, err)
	}
	if doc.Key == "" {
		return nil, fmt.Errorf("%s: no \"key\" (want the swept configuration key)", path)
	}
	s := &Sweep{Dir: dir, Key: doc.Key, Flag: doc.Flag, MinGood: doc.MinGood, Complete: doc.Complete, Points: doc.Points}
	if doc.SLO != nil {
		s.SLO = *doc.SLO
	}
	if doc.StoppedBy != nil {
		s.StoppedBy = *doc.StoppedBy
	}
	for i := range s.Points {
		p := &s.Points[i]
		p.Latency = map[string][2]float64{}
		for _, l := range sweepLatencies {
			p.Latency[l.key] = [2]float64{math.NaN(), math.NaN()}
		}
		r, err := analysis.Load(filepath.Join(dir, p.Dir))
		if err != nil {
			p.LoadErr = err.Error()
			continue
		}
		for _, l := range sweepLatencies {
			if m, ok := r.Summary.Metrics[l.key]; ok {
				p.Latency[l.key] = [2]float64{percentileOf(m, 50), percentileOf(m, 99)}
			}
		}
	}
	// Search points follow the ladder's in the file; curves go by value.
	slices.SortStableFunc(s.Points, func(a, b SweepPoint) int { return cmp.Compare(a.Value, b.Value) })
	return s, nil
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
	if !slices.ContainsFunc(s.Points, func(p SweepPoint) bool { return !math.IsNaN(p.RequestedRate.f()) }) {
		noRate = fmt.Sprintf("no point has a requested rate: %s (%s) does not set one (a closed loop, a burst)", s.Key, s.Flag)
	}
	for _, l := range sweepLatencies {
		p := Panel{ID: "sweep-" + l.key[:len(l.key)-3], Title: l.name + " against achieved throughput", Kind: Curve,
			X: Axis{Label: thr}, Y: Axis{Label: l.name + " (ms)"}}
		for qi, q := range []string{"p50", "p99"} {
			ser := Series{Name: l.name + " " + q}
			for _, pt := range s.Points {
				ser.XY = append(ser.XY, Point{pt.CompletionRate.f(), pt.Latency[l.key][qi]})
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
			ser.XY = append(ser.XY, Point{pt.RequestedRate.f(), y(pt)})
		}
		return ser
	}
	switch {
	case noRate != "":
		good.Empty, rate.Empty = noRate, noRate
	case s.SLO == "":
		good.Empty = "the sweep set no --slo: goodput was not measured"
	default:
		good.Series = []Series{series("goodput", func(p SweepPoint) float64 { return p.GoodputRPS.f() }),
			series("achieved throughput", func(p SweepPoint) float64 { return p.CompletionRate.f() })}
	}
	if noRate == "" {
		rate.Series = []Series{series("achieved send rate", func(p SweepPoint) float64 { return p.AchievedSendRate.f() }),
			series("completion rate", func(p SweepPoint) float64 { return p.CompletionRate.f() }),
			series("achieved = requested", func(p SweepPoint) float64 { return p.RequestedRate.f() })}
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
		row := []string{strconv.Itoa(p.Point), strconv.FormatFloat(p.Value, 'g', -1, 64), status, p.RequestedRate.s(), p.AchievedSendRate.s(),
			analysis.Percent(p.AchievedFraction.f()), p.CompletionRate.s()}
		for _, l := range sweepLatencies {
			row = append(row, analysis.Num(p.Latency[l.key][0]), analysis.Num(p.Latency[l.key][1]))
		}
		row = append(row, p.P99SlipMs.s(), p.GoodputRPS.s(), analysis.Percent(p.GoodShare.f()),
			map[bool]string{true: "YES", false: "no"}[p.Saturated], meets, p.Dir)
		t.Rows = append(t.Rows, row)
		if p.LoadErr != "" {
			t.Warnings = append(t.Warnings, fmt.Sprintf("point %d: its run could not be read (%s): its latencies are n/a", p.Point, p.LoadErr))
		}
		if p.Saturated {
			t.Warnings = append(t.Warnings, fmt.Sprintf("point %d (%s=%s): saturated, sent below 90%% of the requested rate", p.Point, s.Key, strconv.FormatFloat(p.Value, 'g', -1, 64)))
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
