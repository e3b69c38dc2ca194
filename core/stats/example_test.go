package stats_test

import (
	"fmt"
	"math"
	"time"

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
