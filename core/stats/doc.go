// Package stats aggregates measured requests into the numbers lmbench
// reports, with exactly the original tool's formulas (spec §4) plus
// inter-token latency and dispatch lag, and, beside them, the metrics of
// vLLM's benchmark (TTFT, TPOT, pooled ITL, E2E with mean, std, median and
// configurable percentiles), TTFT and E2E from the schedule, and the
// engine's prefix-cache figures.
//
// A run's summary comes from a [Builder] fed every record of the run (both
// phases), at its end:
//
//	b := stats.NewBuilder(measureStart, n, stats.Options{})
//	for _, r := range records {
//		b.Add(&r)
//	}
//	ps, _ := stats.ParsePercentiles("50,90,99")
//	final := b.Final(ps)
//
// A figure with nothing to cover (TTFT when nothing succeeded, TPOT
// without a 2-token answer, dispatch lag without a schedule) is NaN, which
// the report prints as "n/a" and writes as null; never 0.
//
// Under a Builder, [Collector] computes the original's numbers from one
// [Sample] per finished request (from any goroutine): [NewCollector] when
// the measured phase begins, [Collector.Add], [Collector.Final]. It keeps
// only the numbers percentiles need (five float64 per request at most);
// the Builder adds three per request and the pooled gaps (exactly up to
// [DefaultITLBudget], then in a DDSketch of relative accuracy
// [SketchAccuracy]). For the live display, [Live] keeps the same running
// numbers without percentiles in constant memory: [Live.Add] each sample,
// [Live.Current] to read them, [Live.Reset] after warmup.
package stats
