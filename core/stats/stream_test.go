package stats

import (
	"math"
	"testing"
	"time"

	"github.com/lmbench/lmbench/core/record"
)

// A request whose 128 tokens arrived in one chunk says nothing of the
// engine's decoding: it is counted, and its decode speed, TPOT and ITL
// are left out; the one streamed token by token still counts.
func TestCoarseStreamsLeftOutOfDecodeFigures(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1700000000, 0)
	rec := func(id string, chunks int64, offsets []int64) record.Record {
		return record.Record{RequestID: id, Phase: record.Measure, Success: true, TTFT: 0.1, Latency: 1.1,
			DecodeSpeed: 128, ITL: 0.008, InputTokens: 10, OutputTokens: 128, UsageOutputTokens: 128, Chunks: chunks,
			ChunkOffsetsUs: offsets, Submit: t0, FirstToken: t0.Add(100 * time.Millisecond), Finish: t0.Add(1100 * time.Millisecond)}
	}
	var smooth []int64
	for i := range 128 {
		smooth = append(smooth, 100000+int64(i)*7874)
	}
	b := NewBuilder(t0, 2, Options{})
	for _, r := range []record.Record{rec("smooth", 128, smooth), rec("buffered", 1, []int64{100000})} {
		b.Add(&r)
	}
	f := b.Final(nil)
	if f.CoarseStreams != 1 {
		t.Errorf("CoarseStreams = %d, want 1", f.CoarseStreams)
	}
	if f.TPOT.N != 1 || f.SuccessfulRequests != 2 {
		t.Errorf("TPOT over %d requests of %d, want 1 of 2", f.TPOT.N, f.SuccessfulRequests)
	}
	if math.Abs(f.MeanDecodeSpeed-128) > 1e-9 {
		t.Errorf("mean decode speed %v, want the smooth request's 128", f.MeanDecodeSpeed)
	}
	for _, tt := range []struct {
		r    record.Record
		want bool
	}{
		{record.Record{Success: true, Chunks: 1, UsageOutputTokens: 128}, true},
		{record.Record{Success: true, Chunks: 40, UsageOutputTokens: 128}, false}, // about 3 a chunk: speculative decoding
		{record.Record{Success: true, Chunks: 0, UsageOutputTokens: 128}, false},  // a version-1 journal
		{record.Record{Success: true, Chunks: 1, UsageOutputTokens: 8}, false},    // too short to say
	} {
		if got := CoarseStream(&tt.r); got != tt.want {
			t.Errorf("CoarseStream(%d chunks, %d tokens) = %v, want %v", tt.r.Chunks, tt.r.UsageOutputTokens, got, tt.want)
		}
	}
}
