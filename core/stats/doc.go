// Package stats aggregates measured requests into the numbers lmbench
// reports, with exactly the original tool's formulas (spec §4) plus
// inter-token latency and dispatch lag.
//
// Start with [NewCollector] when the measured phase begins, [Collector.Add]
// one [Sample] per finished request (from any goroutine) and
// [Collector.Final] for the summary:
//
//	c := stats.NewCollector(time.Now())
//	c.Add(stats.Sample{Success: true, TTFT: 0.3, Latency: 2, DecodeSpeed: 48,
//		DispatchLag: math.NaN(), Finish: time.Now()})
//	final := c.Final()
//
// The collector keeps only the numbers percentiles need (five float64 per
// request at most), not the requests themselves. For the live display,
// [Live] keeps the same running numbers without percentiles in constant
// memory: [Live.Add] each sample, [Live.Current] to read them,
// [Live.Reset] after warmup.
package stats
