package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/lmbench/lmbench/sdk/host/fault"
)

// Overhead is the run's overhead certificate: how much latency lmbench's
// own client may have added during the measured phase (core/bench measures
// and judges it; this package prints it). Durations are milliseconds; a
// figure that is not defined is NaN, printed "n/a" and written null.
type Overhead struct {
	// PhaseSeconds is how long the probe ran: the measured phase.
	PhaseSeconds float64

	// Dispatch lag, submit − scheduled, over every measured request
	// (Requests of them). A request without a schedule of its own was due
	// when the Step that returned it was: the phase's start for a burst.
	Requests                                             int
	DispatchLagP50Ms, DispatchLagP99Ms, DispatchLagMaxMs float64

	// Send spread: for each group of two or more requests due at the same
	// instant (SpreadGroups of them), its last submit − its first.
	SpreadGroups                     int
	SendSpreadP99Ms, SendSpreadMaxMs float64

	// Event-loop lag: how late a goroutine woken every LoopPeriodMs
	// received its tick (LoopSamples ticks): the delay any goroutine of
	// the client, a response reader too, waits to run.
	LoopSamples                int
	LoopPeriodMs               float64
	LoopLagP99Ms, LoopLagMaxMs float64

	// CPU is the process's user+system time over the phase, as a share of
	// one core and of the machine's CPUs.
	CPUSeconds                        float64
	CPUCorePercent, CPUMachinePercent float64
	CPUs                              int

	// Go's stop-the-world GC pauses during the phase: their number (-1:
	// unknown) and, from the runtime's histogram, upper bounds of their
	// total and of the longest.
	GCPauses                     int64
	GCPauseTotalMs, GCPauseMaxMs float64

	// How long the workload (Workload) took to answer each of its Steps
	// in the measured phase (Steps of them): while it thinks, nothing it
	// returns can go out, so a slow Step shows as dispatch lag.
	Workload             string
	Steps                int
	StepP99Ms, StepMaxMs float64

	Verdict Verdict
}

// Verdict is the certificate's conclusion.
type Verdict struct {
	// Saturated: the client was too busy to vouch for its latency;
	// CPUOver and LagOver say which threshold it crossed.
	Saturated, CPUOver, LagOver bool
	// BoundMs (not saturated): the client added at most this much latency
	// at p99, the larger of the dispatch lag's and the event loop's p99.
	BoundMs float64
	// InflationMs (saturated): how much TTFT may be inflated at p99, the
	// dispatch lag's p99 plus the event loop's.
	InflationMs float64
	// StepSlow: the dispatch lag is the workload's, not the client's: its
	// slowest Step took more than the lag threshold and at least half the
	// dispatch lag's p99.
	StepSlow bool
	// The thresholds the run was judged by.
	CPUThresholdPercent, LagThresholdMs float64
}

// Text is the verdict as one line.
func (o *Overhead) Text() string {
	v := o.Verdict
	if v.StepSlow {
		plugin := fmt.Sprintf("WARNING: %s: requests went out as late as its Steps answered "+
			"(Step p99 %s ms over %d steps; dispatch lag p99 %s ms)",
			fault.SlowStep(o.Workload, o.StepMaxMs/1000), ms2(o.StepP99Ms), o.Steps, ms2(o.DispatchLagP99Ms))
		if v.CPUOver || o.LoopLagP99Ms > v.LagThresholdMs {
			plugin += "; " + strings.TrimPrefix(o.clientText(), "WARNING: ")
		}
		return plugin
	}
	return o.clientText()
}

// clientText is the verdict on the client alone.
func (o *Overhead) clientText() string {
	v := o.Verdict
	if !v.Saturated {
		if math.IsNaN(v.BoundMs) {
			return "Client-added latency: n/a (no measured request, no probe sample)"
		}
		return fmt.Sprintf("Client-added latency at most %s ms at p99", ms2(v.BoundMs))
	}
	var why []string
	if v.CPUOver {
		why = append(why, fmt.Sprintf("CPU %s%% of the machine > %s%%", ms2(o.CPUMachinePercent), num(v.CPUThresholdPercent)))
	}
	if v.LagOver {
		for _, l := range []struct {
			name string
			p99  float64
		}{{"dispatch lag", o.DispatchLagP99Ms}, {"event-loop lag", o.LoopLagP99Ms}} {
			if l.p99 > v.LagThresholdMs {
				why = append(why, fmt.Sprintf("%s p99 %s ms > %s ms", l.name, ms2(l.p99), num(v.LagThresholdMs)))
			}
		}
	}
	return fmt.Sprintf("WARNING: the client was saturated (%s): its TTFT may be inflated by up to %s ms at p99 "+
		"(dispatch lag p99 + event-loop lag p99)", strings.Join(why, "; "), ms2(v.InflationMs))
}

// ms2 is a figure with two decimals, "n/a" when not defined.
func ms2(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", v)
}

// num is a threshold as written: 80, 10, 2.5.
func num(v float64) string { return fmt.Sprint(v) }

// overheadSection is the terminal's "Client overhead" section: the
// figures, then the verdict wrapped to Width; "" without a certificate.
func overheadSection(o *Overhead) string {
	if o == nil {
		return ""
	}
	gc := any(o.GCPauses)
	if o.GCPauses < 0 {
		gc = "n/a"
	}
	var b strings.Builder
	b.WriteString(center(" Client overhead ", Width, '-') + "\n")
	for _, e := range []entry{
		{"Requests (dispatch lag)", o.Requests},
		{"Dispatch lag P50 (ms)", o.DispatchLagP50Ms},
		{"Dispatch lag P99 (ms)", o.DispatchLagP99Ms},
		{"Dispatch lag max (ms)", o.DispatchLagMaxMs},
		{"Groups due together", o.SpreadGroups},
		{"Send spread P99 (ms)", o.SendSpreadP99Ms},
		{"Send spread max (ms)", o.SendSpreadMaxMs},
		{"Event-loop lag P99 (ms)", o.LoopLagP99Ms},
		{"Event-loop lag max (ms)", o.LoopLagMaxMs},
		{"Client CPU (% of one core)", o.CPUCorePercent},
		{fmt.Sprintf("Client CPU (%% of %d CPUs)", o.CPUs), o.CPUMachinePercent},
		{"GC pauses", gc},
		{"GC pause total (ms)", o.GCPauseTotalMs},
		{"GC pause max (ms)", o.GCPauseMaxMs},
	} {
		b.WriteString(e.String() + "\n")
	}
	if o.Steps > 0 { // none timed: a summary rebuilt from a journal
		for _, e := range []entry{{"Workload Steps", o.Steps}, {"Step time P99 (ms)", o.StepP99Ms},
			{"Step time max (ms)", o.StepMaxMs}} {
			b.WriteString(e.String() + "\n")
		}
	}
	for _, l := range wrap(o.Text(), Width) {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// wrap breaks s at spaces into lines of at most width characters (a
// longer word gets a line of its own).
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case len([]rune(line))+1+len([]rune(w)) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// withOverhead appends bench_summary.json's "overhead" member to doc;
// without a certificate (a summary computed from a killed run's journal)
// doc is unchanged.
func withOverhead(doc []kv, o *Overhead) []kv {
	if o == nil {
		return doc
	}
	var gc any = o.GCPauses
	if o.GCPauses < 0 {
		gc = nil
	}
	var steps any // null: no Step timed (a summary rebuilt from a journal)
	if o.Steps > 0 {
		steps = []kv{{"workload", o.Workload}, {"count", o.Steps}, {"p99", o.StepP99Ms}, {"max", o.StepMaxMs}}
	}
	v := o.Verdict
	bound, inflation := v.BoundMs, math.NaN()
	if v.Saturated {
		bound, inflation = math.NaN(), v.InflationMs
	}
	return append(doc, kv{"overhead", []kv{
		{"phase_s", o.PhaseSeconds},
		{"dispatch_lag_ms", []kv{
			{"count", o.Requests}, {"p50", o.DispatchLagP50Ms}, {"p99", o.DispatchLagP99Ms}, {"max", o.DispatchLagMaxMs},
		}},
		{"send_spread_ms", []kv{
			{"groups", o.SpreadGroups}, {"p99", o.SendSpreadP99Ms}, {"max", o.SendSpreadMaxMs},
		}},
		{"loop_lag_ms", []kv{
			{"samples", o.LoopSamples}, {"period", o.LoopPeriodMs}, {"p99", o.LoopLagP99Ms}, {"max", o.LoopLagMaxMs},
		}},
		{"cpu", []kv{
			{"seconds", o.CPUSeconds}, {"core_percent", o.CPUCorePercent},
			{"machine_percent", o.CPUMachinePercent}, {"cpus", o.CPUs},
		}},
		{"gc_pauses", []kv{
			{"count", gc}, {"total_ms", o.GCPauseTotalMs}, {"max_ms", o.GCPauseMaxMs},
		}},
		{"steps_ms", steps},
		{"verdict", []kv{
			{"saturated", v.Saturated},
			{"step_slow", v.StepSlow},
			{"cpu_over_threshold", v.CPUOver},
			{"lag_over_threshold", v.LagOver},
			{"client_added_p99_ms", bound},
			{"ttft_inflation_p99_ms", inflation},
			{"cpu_threshold_percent", v.CPUThresholdPercent},
			{"lag_threshold_ms", v.LagThresholdMs},
			{"text", o.Text()},
		}},
	}})
}
