package stats_test

import (
	"fmt"
	"math"
	"time"

	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/stats"
)

func Example() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := stats.NewCollector(start)
	c.Add(stats.Sample{
		Success: true, TTFT: 0.3, Latency: 2.0, DecodeSpeed: 48,
		InputTokens: 10000, OutputTokens: 96,
		DispatchLag: math.NaN(), // not scheduled
		Finish:      start.Add(2 * time.Second),
	})
	c.Add(stats.Sample{Success: false, Latency: 0.1, DispatchLag: math.NaN(), Finish: start.Add(4 * time.Second)})

	f := c.Final()
	fmt.Printf("%d ok, %d failed in %.1f s\n", f.SuccessfulRequests, f.FailedRequests, f.ElapsedTime)
	fmt.Printf("TTFT mean %.0f ms, p99 %.0f ms; input %.0f tok/s\n", f.MeanTTFTMs, f.P99TTFTMs, f.InputThroughput)
	// Output:
	// 1 ok, 1 failed in 4.0 s
	// TTFT mean 300 ms, p99 300 ms; input 2500 tok/s
}

func ExampleBuilder() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	b := stats.NewBuilder(start, 2, stats.Options{})
	// Two answers of 4 and 2 chunks; the first stalls 50 ms once.
	b.Add(&record.Record{
		Phase: record.Measure, Success: true, TTFT: 0.1, Latency: 0.17, OutputTokens: 4,
		Scheduled: start, Submit: start, FirstToken: at(100), Finish: at(170),
		ChunkOffsetsUs: []int64{100_000, 110_000, 160_000, 170_000},
	})
	b.Add(&record.Record{
		Phase: record.Measure, Success: true, TTFT: 0.2, Latency: 0.21, OutputTokens: 2,
		Scheduled: start, Submit: start, FirstToken: at(200), Finish: at(210),
		ChunkOffsetsUs: []int64{200_000, 210_000},
	})
	ps, _ := stats.ParsePercentiles("50,99")
	f := b.Final(ps)
	fmt.Printf("TPOT mean %.1f ms; pooled ITL median %.1f ms, p99 %.1f ms (%s)\n",
		f.TPOT.Mean, f.ITL.Median, f.ITL.Percentiles[1].Value, f.ITLMethod)
	// Output:
	// TPOT mean 16.7 ms; pooled ITL median 10.0 ms, p99 48.8 ms (exact)
}
