package analysis

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Letter is the name of the i-th run of a comparison in tables: A, B, …
func Letter(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return fmt.Sprintf("R%d", i+1)
}

// TextOptions tune WriteComparisons.
type TextOptions struct {
	// Pairs lists every paired request, not only their distribution.
	Pairs bool
}

// WriteComparisons prints comparisons as terminal tables: the runs, then
// per comparison each headline metric with its delta, ratio and 95%
// interval (marked "*" beyond noise), then the per-request pairing.
func WriteComparisons(w io.Writer, runs []*Run, comps []Comparison, opt TextOptions) error {
	ew := &errWriter{w: w}
	fmt.Fprintln(ew, "Runs:")
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	for i, r := range runs {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", Letter(i), r.Source, r.Header.Workload, RunLine(r))
	}
	tw.Flush()
	for ci, c := range comps {
		a, b := "A", Letter(ci+1)
		fmt.Fprintf(ew, "\n== %s against %s ==\n", b, a)
		if c.SameRun {
			fmt.Fprintf(ew, "Note: %s and %s are the same run (run id %s): every difference below is zero by construction\n", a, b, c.A.Header.ID)
		}
		switch {
		case len(c.ConfigDiff) == 0 && (c.A.recordsSim() || c.B.recordsSim()):
			fmt.Fprintln(ew, "Configuration differences: none")
		case len(c.ConfigDiff) == 0:
			// Runs recorded before the built-in engine's settings were.
			fmt.Fprintln(ew, "Configuration differences: none recorded (the built-in engine's --sim-* settings are not part of a run's configuration)")
		default:
			fmt.Fprintf(ew, "Configuration differences (%s → %s):\n", a, b)
			for _, d := range c.ConfigDiff {
				fmt.Fprintf(ew, "  %s\n", d)
			}
		}
		labels := []string{"Metric"}
		for _, row := range c.Rows {
			labels = append(labels, row.Metric.Label+" ("+row.Metric.Unit+")")
		}
		width := 0
		for _, l := range labels {
			width = max(width, len(l))
		}
		var tb strings.Builder
		tw := tabwriter.NewWriter(&tb, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "%-*s\t%s\t%s\tDelta\tRatio %s/%s\t95%% CI of ratio\t\t\n", width, labels[0], a, b, b, a)
		for i, row := range c.Rows {
			mark := ""
			if row.Beyond {
				mark = "*"
			}
			fmt.Fprintf(tw, "%-*s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", width, labels[i+1],
				Num(row.A), Num(row.B), Signed(row.Delta), Ratio(row.Ratio), Interval(row.Lo, row.Hi), mark)
		}
		tw.Flush()
		for _, l := range strings.SplitAfter(tb.String(), "\n") {
			fmt.Fprint(ew, strings.TrimRight(l, " \n")+strings.Repeat("\n", strings.Count(l, "\n")))
		}
		fmt.Fprintf(ew, "* beyond noise: the 95%% interval of the ratio excludes 1. Intervals: %d bootstrap resamples (seed %d) of each run's\n"+
			"  measured requests, with replacement; throughput's, of its %d time windows.\n", c.Resamples, c.Seed, Windows)
		writePairing(ew, c, a, b, opt)
		writeAgreement(ew, c.Answers, a, b)
	}
	return ew.err
}

// maxDivergingShown bounds the diverging answers the terminal lists (the
// JSON and the HTML report list them all).
const maxDivergingShown = 20

func writeAgreement(w io.Writer, ag *Agreement, a, b string) {
	if ag == nil {
		return
	}
	if ag.Pairs == 0 {
		fmt.Fprintf(w, "Answers: %s\n", ag.Note)
		return
	}
	fmt.Fprintf(w, "Answers (%d paired): identical %d (%s), mean token similarity %s", ag.Pairs, ag.Identical,
		Percent(ag.IdenticalShare()), Ratio(ag.Similarity))
	if len(ag.Diverging) > 0 {
		fmt.Fprintf(w, ", first divergence at token %s (median)", Num(ag.Divergence))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, gs := range []struct {
		what   string
		groups []AgreementGroup
	}{{"by cached share", ag.ByShare}, {"by reuse tier", ag.ByTier}} {
		for _, g := range gs.groups {
			fmt.Fprintf(tw, "  %s\t%s\t%d paired\tidentical %s\tsimilarity %s\n", gs.what, g.Label, g.Pairs,
				Percent(g.IdenticalShare()), Ratio(g.Similarity))
		}
	}
	tw.Flush()
	for _, s := range ag.Scores {
		fmt.Fprintf(w, "  score %s: %s %s, %s %s\n", s.Key, a, Percent(s.A), b, Percent(s.B))
	}
	if len(ag.Diverging) == 0 {
		return
	}
	fmt.Fprintf(w, "! %d answers differ, though every request was decoded greedily (temperature 0):\n", len(ag.Diverging))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  request id\tcached %s\tcached %s\ttier\tfrom token\tsimilarity\tanswer %s\tanswer %s\n", a, b, a, b)
	for i, d := range ag.Diverging {
		if i == maxDivergingShown {
			fmt.Fprintf(tw, "  … %d more (lmbench compare --json or lmbench report lists them all)\n", len(ag.Diverging)-i)
			break
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", d.ID, Percent(d.CachedA), Percent(d.CachedB), orDash(d.Tier),
			d.At, Ratio(d.Similarity), Clip(d.A, 40), Clip(d.B, 40))
	}
	tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Clip quotes s on one line, cut to n runes.
func Clip(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return strconv.Quote(string(r[:n])) + "…"
	}
	return strconv.Quote(s)
}

func writePairing(w io.Writer, c Comparison, a, b string, opt TextOptions) {
	p := c.Pairing
	if p == nil {
		fmt.Fprintf(w, "Per-request pairing: %s\n", c.PairNote)
		return
	}
	fmt.Fprintf(w, "Per-request pairing (same workload and seed): %d requests paired by id", len(p.Pairs))
	if p.OnlyA+p.OnlyB > 0 {
		fmt.Fprintf(w, "; unpaired: %d only in %s, %d only in %s", p.OnlyA, a, p.OnlyB, b)
	}
	fmt.Fprintln(w)
	if len(p.Pairs) == 0 {
		return
	}
	fmt.Fprintf(w, "  TTFT ratio %s/%s per request: median %s (95%% CI %s), p10 %s, p90 %s\n",
		b, a, Ratio(p.Median), Interval(p.MedianLo, p.MedianHi), Ratio(p.P10), Ratio(p.P90))
	fmt.Fprintf(w, "  faster in %s: %d of %d (%s); slower: %d; equal: %d\n", b, p.Faster, len(p.Pairs),
		Percent(p.FasterShare()), p.Slower, len(p.Pairs)-p.Faster-p.Slower)
	if !opt.Pairs {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  request id\tTTFT %s (ms)\tTTFT %s (ms)\t%s/%s\t\n", a, b, b, a)
	for _, pr := range p.Pairs {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t\n", pr.ID, Num(pr.A), Num(pr.B), Ratio(pr.Ratio))
	}
	tw.Flush()
}

// RunLine is a run's one-line description: id, measured requests, status.
func RunLine(r *Run) string {
	res := r.Summary.Results
	return fmt.Sprintf("run %s, %d measured (%d failed), %s", r.Header.ID, res.TotalRequests, res.FailedRequests, r.Status())
}

// Num formats a figure with about four significant digits; "n/a" for NaN.
func Num(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "n/a"
	case a >= 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	case a == 0:
		return "0"
	default:
		return fmt.Sprintf("%.3g", v)
	}
}

// Signed is Num with its sign.
func Signed(v float64) string {
	if v > 0 {
		return "+" + Num(v)
	}
	return Num(v)
}

// Ratio formats a ratio: three decimals, one past 10.
func Ratio(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "n/a"
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f", v)
	case math.Abs(v) < 0.01:
		return fmt.Sprintf("%.2g", v)
	}
	return fmt.Sprintf("%.3f", v)
}

// Interval formats [lo, hi]; "n/a" when not defined.
func Interval(lo, hi float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return "n/a"
	}
	return "[" + Ratio(lo) + ", " + Ratio(hi) + "]"
}

// Percent formats a share as a percentage.
func Percent(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", v*100)
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return len(p), nil
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, nil
}
