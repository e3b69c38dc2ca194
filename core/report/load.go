package report

import (
	"math"
	"strconv"
	"strings"

	"github.com/lmbench/lmbench/core/stats"
)

// loadSections are the terminal's load and goodput sections: the rate the
// workload asked for against the one achieved, the schedule's slip, and a
// warning when the achieved rate fell short; then goodput under the SLO.
func loadSections(f stats.Final, ps []float64) string {
	var b strings.Builder
	l, g := f.Load, f.Goodput
	b.WriteString(center(" Load (requested vs achieved) ", Width, '-') + "\n")
	entries := []entry{
		{"Requested rate (req/s)", l.RequestedRate},
		{"Achieved send rate (req/s)", l.SendRate},
		{"Achieved/requested (%)", l.Achieved() * 100},
		{"Completion rate (req/s)", l.CompletionRate},
	}
	vals := distValues(l.Slip, ps)
	for i, p := range ps {
		entries = append(entries, entry{"Schedule slip P" + stats.FormatPercentile(p) + " (ms)", vals[3+i]})
	}
	entries = append(entries, entry{"Schedule slip max (ms)", l.SlipMax})
	if l.Warning() != "" {
		// The whole sentence is in the JSON summary and the log.
		entries = append(entries, entry{"WARNING", "achieved < " + strconv.Itoa(int(stats.LoadWarnBelow*100)) + "% of requested"})
	}
	for _, e := range entries {
		b.WriteString(e.String() + "\n")
	}
	b.WriteString(center(" Goodput (SLO) ", Width, '-') + "\n")
	slo, good := any("n/a"), any("n/a")
	if g.SLO.Set() {
		slo, good = g.SLO.String(), g.Good
	}
	for _, e := range []entry{
		{"SLO (ms)", slo},
		{"Good requests", good},
		{"Goodput (req/s)", g.Rate},
		{"TTFT attainment (%)", g.TTFT * 100},
		{"TPOT attainment (%)", g.TPOT * 100},
		{"ITL attainment (%)", g.ITL * 100},
		{"E2E attainment (%)", g.E2E * 100},
		{"All limits met (%)", g.All * 100},
	} {
		b.WriteString(e.String() + "\n")
	}
	return b.String()
}

// withLoad appends the "load" and "goodput" objects to the summary.
func withLoad(doc []kv, f stats.Final, ps []float64) []kv {
	l, g := f.Load, f.Goodput
	slip := append(distJSON(l.Slip, ps), kv{"max", l.SlipMax})
	var warning any
	if w := l.Warning(); w != "" {
		warning = w
	}
	a := l.Achieved()
	var below any
	if !math.IsNaN(a) {
		below = a < stats.LoadWarnBelow
	}
	limit := func(ms float64) any {
		if ms > 0 {
			return ms
		}
		return nil
	}
	var good any
	if g.SLO.Set() {
		good = g.Good
	}
	return append(doc,
		kv{"load", []kv{
			{"requested_rate", l.RequestedRate},
			{"achieved_send_rate", l.SendRate},
			{"achieved_fraction", a},
			{"completion_rate", l.CompletionRate},
			{"below_requested", below},
			{"warning", warning},
			{"schedule_slip_ms", slip},
		}},
		kv{"goodput", []kv{
			{"slo_ms", []kv{{"ttft", limit(g.SLO.TTFT)}, {"tpot", limit(g.SLO.TPOT)}, {"itl", limit(g.SLO.ITL)}, {"e2e", limit(g.SLO.E2E)}}},
			{"good_requests", good},
			{"goodput_rps", g.Rate},
			{"attainment", []kv{{"ttft", g.TTFT}, {"tpot", g.TPOT}, {"itl", g.ITL}, {"e2e", g.E2E}, {"all", g.All}}},
		}},
	)
}
