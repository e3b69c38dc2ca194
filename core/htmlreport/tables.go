package htmlreport

import (
	"fmt"
	"math"
	"strings"

	"github.com/lmbench/lmbench/core/analysis"
)

// blockTables are the tables of the summary's engine_metrics,
// cache_ledger, prompt_tokens, load and goodput blocks, in that order.
func blockTables(r *analysis.Run) []table {
	b := blocksOf(r)
	out := []table{engineTable(b.EngineMetrics), engineLatencyTable(r, b.EngineMetrics), ledgerTable(b.CacheLedger),
		promptTokensTable(b.PromptTokens), loadTable(b.Load), goodputTable(b.Goodput)}
	if b.Shards != nil {
		out = append(out, shardsTable(b.Shards))
	}
	if b.Engine != nil { // a summary from before engine profiles has none: no table
		out = append([]table{engineProfileTable(b.Engine)}, out...)
	}
	return out
}

// engineProfileTable is the engine the run measured and what lmbench
// could and could not measure on it; the cannots are its warnings.
func engineProfileTable(e *engineBlock) table {
	name := e.Name
	if e.Version != nil && *e.Version != "" {
		name += " " + *e.Version
	}
	t := table{Title: "Engine", Note: fmt.Sprintf("%s (%s), from %s", name, e.Kind, e.DetectedFrom), Head: []string{"lmbench can measure"}}
	for _, c := range e.Can {
		t.Rows = append(t.Rows, []string{c})
	}
	if len(e.Can) == 0 {
		t.Empty = "nothing beyond the requests' own timings"
	}
	t.Warnings = append(t.Warnings, e.Cannot...)
	if len(e.Cannot) == 0 {
		t.OK = "every figure lmbench reports is measured on this engine"
	}
	return t
}

// shardsTable is a merged run's shards: how each ended and its clock.
func shardsTable(parts []shardPart) table {
	t := table{Title: "Shards (a merged run)", Head: []string{"shard", "host", "status", "sent", "records", "clock offset (ms)", "± (ms)", "start lateness (ms)"}}
	for _, p := range parts {
		id := fmt.Sprintf("%d/%d", p.Index, p.Count)
		if p.Missing {
			t.Rows = append(t.Rows, []string{id, "", "MISSING", "", "", "", "", ""})
			t.Warnings = append(t.Warnings, "shard "+id+" is missing from the merge: the figures cover the other shards only")
			continue
		}
		host, pm := "", "n/a (not measured)"
		if p.Host != nil {
			host = *p.Host
		}
		if p.Clock.Samples > 0 {
			pm = num(p.Clock.RTT.f() / 2).s()
		}
		t.Rows = append(t.Rows, []string{id, host, p.Status, p.Sent.s(), p.Records.s(), p.Clock.Offset.s(), pm, p.Late.s()})
		if p.Status != "completed" {
			why := ""
			if p.Reason != nil {
				why = ": " + *p.Reason
			}
			t.Warnings = append(t.Warnings, "shard "+id+" "+p.Status+why)
		}
		if l := math.Abs(p.Late.f()); l > 1000 {
			t.Warnings = append(t.Warnings, fmt.Sprintf("shard %s started %s ms from the common start: its part of the schedule ran shifted", id, p.Late.s()))
		}
	}
	if len(t.Warnings) == 0 {
		t.OK = "every shard completed, within a second of the common start"
	}
	t.Note = "Every figure of this report is computed from all the shards' records, on the reference clock (the barrier's, or the hosts' own with --start-at: offset 0, not measured)."
	return t
}

func noBlock(key string) string {
	return fmt.Sprintf("the summary has no %s block (written before lmbench recorded it, or recomputed from the journal)", key)
}

func engineTable(em *engineMetrics) table {
	t := table{Title: "Engine metrics per phase", Head: []string{"figure", "warm-up", "measured"}}
	if em == nil {
		t.Empty = "the summary has no engine_metrics block (--no-metrics, a summary recomputed from the journal, or one written before lmbench read the engine's metrics)"
		return t
	}
	t.Note = fmt.Sprintf("Deltas of the engine's own counters and the largest of its gauges between the samples that bound each phase, from %s (%d scrapes, %d failed).", em.URL, em.Scrapes, em.Failed)
	if em.Engine == nil {
		why := "no scrape held a metric lmbench reads"
		if em.FirstError != nil {
			why = *em.FirstError
		}
		t.Empty = "the engine exposed no /metrics: " + why
		return t
	}
	t.Note += " Engine: " + *em.Engine + "."
	pct := func(n num) string { return analysis.Percent(n.f()) }
	w, m := em.Warmup, em.Measure
	for _, row := range []struct {
		label string
		w, m  string
	}{
		{"prefix-cache queries (tokens)", w.Queries.s(), m.Queries.s()},
		{"prefix-cache hits (tokens)", w.Hits.s(), m.Hits.s()},
		{"prefix-cache hit rate", pct(w.HitRate), pct(m.HitRate)},
		{"KV-connector (external) hits (tokens)", w.External.s(), m.External.s()},
		{"LMCache requested tokens", w.LMCacheReq.s(), m.LMCacheReq.s()},
		{"LMCache hit tokens", w.LMCacheHits.s(), m.LMCacheHits.s()},
		{"preemptions", w.Preemptions.s(), m.Preemptions.s()},
		{"most requests running", w.RunningMax.s(), m.RunningMax.s()},
		{"most requests waiting", w.WaitingMax.s(), m.WaitingMax.s()},
		{"largest KV-cache usage", pct(w.KVUsageMax), pct(m.KVUsageMax)},
	} {
		t.Rows = append(t.Rows, []string{row.label, row.w, row.m})
	}
	t.Warnings = em.Notes
	return t
}

// engineLatencyTable sets the engine's latency histograms (measured
// phase) beside lmbench's own figures for the same requests.
func engineLatencyTable(r *analysis.Run, em *engineMetrics) table {
	t := table{Title: "Engine latencies beside lmbench's (measured phase, ms)", Head: []string{"metric", "measured by", "count", "mean", "P50", "P90", "P99"},
		Note: "The engine's from its histograms' deltas over the phase (percentiles interpolated inside its buckets, so only as fine as they are; TTFT from when the engine received the request); lmbench's from the summary (TTFT from when lmbench sent it)."}
	if em == nil || em.Engine == nil {
		t.Empty = "no engine metrics (see the table above)"
		return t
	}
	for _, m := range []struct {
		label, key string
		engine     map[string]num
	}{{"TTFT", "ttft_ms", em.Measure.TTFT}, {"ITL", "itl_ms", em.Measure.ITL}, {"E2E", "e2e_ms", em.Measure.E2E}} {
		row := []string{m.label, "engine"}
		for _, k := range []string{"count", "mean", "p50", "p90", "p99"} {
			v, ok := m.engine[k]
			if !ok {
				v = num(math.NaN())
			}
			row = append(row, v.s())
		}
		t.Rows = append(t.Rows, row)
		row = []string{m.label, "lmbench"}
		ms, ok := r.Summary.Metrics[m.key]
		if !ok {
			t.Rows = append(t.Rows, append(row, "n/a", "n/a", "n/a", "n/a", "n/a"))
			continue
		}
		row = append(row, fmt.Sprint(ms.Count), analysis.Num(ms.Mean))
		for _, p := range []float64{50, 90, 99} {
			row = append(row, analysis.Num(ms.Percentile(p)))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func ledgerTable(l *cacheLedger) table {
	t := table{Title: "Cache ledger", Head: []string{"figure", "warm-up", "measured"},
		Note: "The cached tokens the requests reported beside the engine's counters, and the reuse the workload declared beside what it got. Verdicts are the run's warnings."}
	if l == nil {
		t.Empty = noBlock("cache_ledger")
		return t
	}
	w, m := l.Warmup, l.Measure
	agrees := func(p ledgerPhase) string {
		if p.Agrees == "no" {
			return "NO: they differ by more than one block per request"
		}
		return p.Agrees
	}
	for _, row := range []struct {
		label string
		w, m  string
	}{
		{"requests", w.Requests.s(), m.Requests.s()},
		{"cached tokens the requests reported", w.JournalCached.s(), m.JournalCached.s()},
		{"requests reporting cached tokens", w.Reporting.s(), m.Reporting.s()},
		{"engine's hit tokens (/metrics)", w.EngineHits.s(), m.EngineHits.s()},
		{"difference (reported − engine)", w.Difference.s(), m.Difference.s()},
		{"tolerance (one block per request)", w.Tolerance.s(), m.Tolerance.s()},
		{"agree", agrees(w), agrees(m)},
		{"requests declaring their reuse", w.Declared.s(), m.Declared.s()},
		{"expected cached tokens (declared)", w.Expected.s(), m.Expected.s()},
		{"cached tokens of those requests", w.DeclaredCached.s(), m.DeclaredCached.s()},
		{"requests short of their expected reuse", w.Short.s(), m.Short.s()},
		{"cold requests with hits", w.ColdWithHits.s(), m.ColdWithHits.s()},
		{"requests expecting less than a block", w.BelowOneBlock.s(), m.BelowOneBlock.s()},
	} {
		t.Rows = append(t.Rows, []string{row.label, row.w, row.m})
	}
	if rs := l.Reset; rs != nil {
		status := "no answer"
		if rs.Status != nil {
			status = fmt.Sprint(*rs.Status)
		}
		line := fmt.Sprintf("cache reset %s (%s): HTTP %s, cleared %s", rs.When, rs.URL, status, rs.Cleared)
		if rs.Error != nil {
			line += "; " + *rs.Error
		}
		if rs.Detail != "" {
			line += "; " + rs.Detail
		}
		t.Rows = append(t.Rows, []string{line})
	} else {
		t.Rows = append(t.Rows, []string{"cache reset: none (--reset-cache never)"})
	}
	t.Warnings = l.Verdicts
	if len(l.Verdicts) == 0 {
		t.OK = "Verdict: nothing flagged."
	}
	return t
}

func promptTokensTable(p *promptTokens) table {
	t := table{Title: "Prompt tokens, stated against measured", Head: []string{"phase", "requests", "stated", "measured (usage.prompt_tokens)", "requests differing", "mean difference (measured − stated)"}}
	if p == nil {
		t.Empty = noBlock("prompt_tokens")
		return t
	}
	t.Note = "The prompt lengths the workload stated, counted with the " + p.Tokenizer + " tokenizer, against the engine's count; over the successful requests that stated one."
	for _, ph := range []struct {
		name string
		p    promptPhase
	}{{"warm-up", p.Warmup}, {"measured", p.Measure}} {
		t.Rows = append(t.Rows, []string{ph.name, ph.p.Requests.s(), ph.p.Stated.s(), ph.p.Measured.s(), ph.p.Differing.s(), ph.p.MeanDifference.s()})
	}
	return t
}

func loadTable(l *loadBlock) table {
	t := table{Title: "Load, requested against achieved", Head: []string{"figure", "value"}}
	if l == nil {
		t.Empty = noBlock("load")
		return t
	}
	below := "n/a"
	if l.BelowRequested != nil {
		below = map[bool]string{true: "YES", false: "no"}[*l.BelowRequested]
	}
	t.Rows = [][]string{
		{"requested rate (req/s)", l.RequestedRate.s()},
		{"achieved send rate (req/s)", l.AchievedSendRate.s()},
		{"achieved / requested", analysis.Percent(l.AchievedFraction.f())},
		{"below requested (under 95%)", below},
		{"completion rate (successful req/s)", l.CompletionRate.s()},
	}
	var slip []string
	for _, k := range []string{"count", "mean", "p50", "p90", "p99", "max"} {
		if v, ok := l.Slip[k]; ok {
			slip = append(slip, k+" "+v.s())
		}
	}
	if len(slip) == 0 {
		slip = []string{"n/a"}
	}
	t.Rows = append(t.Rows, []string{"schedule slip, submit − due (ms)", strings.Join(slip, ", ")})
	t.Note = "requested_rate is n/a when the workload's schedule sets none (a closed loop, a burst)."
	if l.Warning != nil {
		t.Warnings = []string{*l.Warning}
	}
	return t
}

func goodputTable(g *goodputBlock) table {
	t := table{Title: "Goodput: requests within the SLO", Head: []string{"limit", "SLO (ms)", "attainment (share of measured requests)"}}
	if g == nil {
		t.Empty = noBlock("goodput")
		return t
	}
	if g.GoodReqs == nil || math.IsNaN(g.GoodReqs.f()) {
		t.Empty = "the run set no SLO (--slo ttft:200,tpot:50 measures goodput)"
		return t
	}
	for _, k := range []string{"ttft", "tpot", "itl", "e2e"} {
		lim, ok := g.SLO[k]
		if !ok || math.IsNaN(lim.f()) {
			continue
		}
		t.Rows = append(t.Rows, []string{k, lim.s(), analysis.Percent(g.Attainment[k].f())})
	}
	all, ok := g.Attainment["all"]
	if !ok {
		all = num(math.NaN())
	}
	t.Rows = append(t.Rows, []string{"all (good requests)", "", analysis.Percent(all.f())})
	t.Note = fmt.Sprintf("%s good requests, goodput %s req/s. A request is good when it succeeded and met every limit given.", g.GoodReqs.s(), g.GoodputRPS.s())
	return t
}
