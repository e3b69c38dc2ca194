package sweep

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable writes the sweep's points as a table, one row a point in the
// order they ran, then the best point when there is an SLO: what a sweep
// ends with, after each point's own summary. A figure not defined is n/a.
func WriteTable(w io.Writer, r *Result) {
	fmt.Fprintf(w, "\nlmbench sweep: %d points of %s\n", len(r.Points), r.Key)
	if r.PredictedFrom != nil {
		fmt.Fprintf(w, "predicted: the built-in engine served the twin profile %s; these are predictions, not measurements\n", *r.PredictedFrom)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "point\t"+r.Key+"\tstatus\trequested/s\tachieved/s\tp50 TTFT ms\tp99 TTFT ms\tgood share\tverdict\t")
	for _, p := range r.Points {
		verdict := "ok"
		switch {
		case p.Status != Completed:
			verdict = p.Status
		case p.Saturated:
			verdict = "saturated"
		case p.MeetsSLO != nil && !*p.MeetsSLO:
			verdict = "breaks SLO"
		case p.MeetsSLO != nil:
			verdict = "meets SLO"
		}
		if p.Search {
			verdict += " (search)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", p.Number, FormatValue(p.Value), p.Status,
			opt(p.RequestedRate, "%.1f"), opt(p.AchievedSendRate, "%.1f"), opt(p.P50TTFTMs, "%.1f"), opt(p.P99TTFTMs, "%.1f"),
			optShare(p.GoodShare), verdict)
	}
	tw.Flush()
	switch {
	case r.SLO != nil && r.Best != nil:
		fmt.Fprintf(w, "best: %s=%s (point %d, %s), the highest that met the SLO %s\n", r.Key, FormatValue(r.Best.Value), r.Best.Number, r.Best.Dir, *r.SLO)
	case r.SLO != nil:
		fmt.Fprintf(w, "best: none: no point met the SLO %s\n", *r.SLO)
	}
}

func opt(v *float64, format string) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf(format, *v)
}

func optShare(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.0f%%", *v*100)
}
