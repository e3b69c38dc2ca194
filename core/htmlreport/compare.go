package htmlreport

import (
	"fmt"
	"math"

	"github.com/lmbench/lmbench/core/analysis"
)

// ComparePanels are the charts of the comparison section: every run's
// TTFT distribution on one plot, each comparison's ratios with their
// intervals, and, for paired runs, the per-request TTFT ratios.
func ComparePanels(runs []*analysis.Run, comps []analysis.Comparison) []Panel {
	var ps []Panel
	for _, d := range latencies {
		var series []Series
		for i, r := range runs {
			series = append(series, Series{Name: runLabel(i, r), XY: ecdf(d.values(newView(r)))})
		}
		ps = append(ps, cdfPanel(d.id+"-cdf", d.name+" distributions of the runs (CDF)",
			fmt.Sprintf("Share of each run's %s whose %s is at most x.", d.of, d.what), d.name+" (ms)", series))
	}

	forest := Panel{ID: "ratios", Title: "Ratios to run A, with 95% intervals", Kind: Forest,
		X: Axis{Label: "ratio to run A (1 = the same)"}, Marks: []Mark{{X: 1, Label: "no change"}}}
	for _, m := range analysis.Headline {
		forest.Y.Categories = append(forest.Y.Categories, m.Label)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for ci, c := range comps {
		s := Series{Name: fmt.Sprintf("%s / A", analysis.Letter(ci+1))}
		for k, row := range c.Rows {
			if math.IsNaN(row.Ratio) || math.IsNaN(row.Lo) {
				continue
			}
			s.Intervals = append(s.Intervals, Interval{Cat: k, Value: row.Ratio, Lo: row.Lo, Hi: row.Hi})
			lo, hi = min(lo, row.Lo), max(hi, row.Hi)
		}
		if len(s.Intervals) > 0 {
			forest.Series = append(forest.Series, s)
		}
	}
	forest.X.Log = lo > 0 && hi/lo >= 4
	forest.Caption = "Each headline metric of every run divided by run A's: the point is the ratio, the bar its 95% bootstrap interval; a bar clear of 1 is beyond noise."
	if forest.X.Log {
		forest.Caption += " Logarithmic x axis."
	}
	if len(forest.Series) == 0 {
		forest.Empty = "no metric is defined in both runs"
	}
	ps = append(ps, forest)

	for ci, c := range comps {
		if c.Pairing == nil || len(c.Pairing.Pairs) == 0 {
			continue
		}
		b := analysis.Letter(ci + 1)
		var ratios []float64
		for _, pr := range c.Pairing.Pairs {
			ratios = append(ratios, pr.Ratio)
		}
		p := cdfPanel("paired-"+b, fmt.Sprintf("Per-request TTFT ratio %s/A (paired by request id)", b),
			fmt.Sprintf("For the %d requests that succeeded in both runs, the share whose TTFT in %s divided by its TTFT in A is at most x; left of 1 got faster.", len(ratios), b),
			fmt.Sprintf("TTFT ratio %s/A per request (1 = the same)", b), []Series{{Name: b + "/A", XY: ecdf(ratios)}})
		p.Marks = []Mark{{X: 1, Label: "no change"}}
		ps = append(ps, p)
	}
	return ps
}

// runLabel names run i in legends: its letter and name.
func runLabel(i int, r *analysis.Run) string {
	return analysis.Letter(i) + ": " + r.Name()
}
