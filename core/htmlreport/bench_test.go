package htmlreport

import (
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lmbench/lmbench/core/analysis"
	"github.com/lmbench/lmbench/core/record"
)

// bigRun is a synthetic run of n measured requests of 64 chunks each, one
// every 10 ms, tagged with 20 documents and 4 queries.
func bigRun(b *testing.B, n int, scale float64) *analysis.Run {
	b.Helper()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := record.Run{ID: fmt.Sprint("big", scale), Workload: "w", TagKeys: []string{"doc", "query"}, Started: t0,
		Config: []byte(`{"workload":"w","seed":1}`)}
	rng := rand.New(rand.NewPCG(1, 2))
	recs := make([]record.Record, 0, n)
	for i := range n {
		s := t0.Add(time.Duration(i) * 10 * time.Millisecond)
		ttft := time.Duration((5 + rng.ExpFloat64()*20) * scale * float64(time.Millisecond))
		offs := make([]int64, 64)
		for k := range offs {
			offs[k] = ttft.Microseconds() + int64(k)*10_000
		}
		lat := ttft + 630*time.Millisecond
		recs = append(recs, record.Record{RunID: h.ID, Phase: record.Measure, RequestID: fmt.Sprint("r", i),
			Tags: map[string]string{"doc": fmt.Sprint(i % 20), "query": fmt.Sprint(i % 4)}, Success: true,
			TTFT: ttft.Seconds(), Latency: lat.Seconds(), InputTokens: 1000, CachedTokens: 900, OutputTokens: 64, Chunks: 64,
			Scheduled: s, Submit: s, FirstToken: s.Add(ttft), Finish: s.Add(lat), Seq: int64(i + 1), ChunkOffsetsUs: offs})
	}
	r, err := analysis.NewRun(h, recs, nil)
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// BenchmarkWriteTwoRuns is the report of two runs of 20,000 requests
// (1.3M inter-chunk gaps each), comparison included.
func BenchmarkWriteTwoRuns(b *testing.B) {
	runs := []*analysis.Run{bigRun(b, 20_000, 1), bigRun(b, 20_000, 1.1)}
	b.ResetTimer()
	for b.Loop() {
		if err := Write(io.Discard, runs, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
