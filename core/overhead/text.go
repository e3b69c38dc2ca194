package overhead

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// WriteText writes c as lmbench calibrate prints it, in the run summary's
// layout: a titled block of label and value lines, n/a for an undefined
// figure. journal is the schedule's journal, named in the block.
func (c *Calibration) WriteText(w io.Writer, journal string) {
	const width = 56
	line := func(label, value string) {
		label += ":"
		fmt.Fprintf(w, "%s%s%s\n", label, strings.Repeat(" ", max(width-len([]rune(label))-len([]rune(value)), 1)), value)
	}
	num := func(v float64) string {
		if math.IsNaN(v) {
			return "n/a"
		}
		return fmt.Sprintf("%.2f", v)
	}
	title := " Client calibration (zero-cost engine) "
	pad := width - len(title)
	fmt.Fprintf(w, "%s%s%s\n", strings.Repeat("=", pad/2), title, strings.Repeat("=", pad-pad/2))
	fmt.Fprintf(w, "Schedule of %s\n", journal)
	line("Requests x replays", fmt.Sprintf("%d x %d", c.Requests, c.Repeat))
	line("Schedule span (s)", num(c.Span.Seconds()))
	line("CPUs", fmt.Sprint(c.CPUs))
	line("Failed requests", fmt.Sprint(c.Failed))
	line("Client-added TTFT P50 (ms)", num(c.TTFTP50Ms))
	line("Client-added TTFT P99 (ms)", num(c.TTFTP99Ms))
	line("Client-added TTFT max (ms)", num(c.TTFTMaxMs))
	line("Dispatch lag P50 (ms)", num(c.DispatchLagP50Ms))
	line("Dispatch lag P99 (ms)", num(c.DispatchLagP99Ms))
	line("Dispatch lag max (ms)", num(c.DispatchLagMaxMs))
	fmt.Fprintln(w, strings.Repeat("=", width))
}
