package bench

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// The engine caps a result's chunk times where the journal caps a
// record's chunk offsets; engine does not import record, so this keeps
// the two equal.
func TestChunkLimitsAgree(t *testing.T) {
	t.Parallel()
	if engine.MaxChunkTimes != record.MaxChunkOffsets {
		t.Errorf("engine.MaxChunkTimes = %d, record.MaxChunkOffsets = %d; want them equal", engine.MaxChunkTimes, record.MaxChunkOffsets)
	}
}

// resultSender answers each request with the result its function builds,
// submitted now.
type resultSender func(req engine.Request, submit time.Time) engine.Result

func (f resultSender) Send(_ context.Context, req engine.Request) engine.Result {
	return f(req, time.Now())
}

// TestExecuteRecordsChunkTimes: the observer carries each chunk's offset
// (in whole microseconds), the chunk count, the engine's own output count
// and what the engine said about its answer from the result into the
// journal and the exporters, and flags a list the engine cut short.
func TestExecuteRecordsChunkTimes(t *testing.T) {
	t.Parallel()
	us := func(n int64) time.Duration { return time.Duration(n) * time.Microsecond }
	longTimes := make([]time.Duration, engine.MaxChunkTimes)
	longWant := make([]int64, engine.MaxChunkTimes)
	for i := range longTimes {
		longTimes[i] = us(40_000+int64(i)*10_000) + 999 // the nanoseconds are dropped
		longWant[i] = 40_000 + int64(i)*10_000
	}
	results := map[string]func(submit time.Time) engine.Result{
		"short": func(submit time.Time) engine.Result {
			times := []time.Duration{us(1_500) + 999, us(2_000), us(3_000)}
			return engine.Result{Success: true, Submit: submit, FirstToken: submit.Add(times[0]), LastToken: submit.Add(times[2]),
				Finish: submit.Add(us(3_100)), InputTokens: 10, OutputTokens: 3, UsageOutputTokens: 3, Chunks: 3, ChunkTimes: times,
				ITL: 750 * time.Microsecond, FinishReason: "stop", ResponseID: "chatcmpl-short", ResponseModel: "org/m"}
		},
		"long": func(submit time.Time) engine.Result { // no usage: OutputTokens is the chunk count
			n := engine.MaxChunkTimes + 2
			return engine.Result{Success: true, Submit: submit, FirstToken: submit.Add(longTimes[0]),
				LastToken: submit.Add(us(200_000_000)), Finish: submit.Add(us(200_000_001)), InputTokens: 10, OutputTokens: n,
				Chunks: n, ChunkTimes: longTimes, FinishReason: "length", ResponseID: "chatcmpl-long", ResponseModel: "org/m"}
		},
		"failed": func(submit time.Time) engine.Result {
			return engine.Result{Submit: submit, Finish: submit.Add(time.Millisecond), Error: "HTTP 500: engine on fire"}
		},
	}
	snd := resultSender(func(req engine.Request, submit time.Time) engine.Result {
		res := results[req.ID](submit)
		res.ID = req.ID
		return res
	})
	exp := &fakeExporter{}
	p, _ := plan(t, batches(nil, []protocol.Request{chat("short", nil), chat("long", nil), chat("failed", nil)}), snd, exp)
	if _, err := Execute(context.Background(), p); err != nil {
		t.Fatal(err)
	}

	type chunkFields struct {
		Chunks, UsageOutputTokens, OutputTokens int64
		ChunkOffsetsUs                          []int64
		Truncated                               bool
		FinishReason, ResponseID, ResponseModel string
	}
	want := map[string]chunkFields{
		"short":  {3, 3, 3, []int64{1_500, 2_000, 3_000}, false, "stop", "chatcmpl-short", "org/m"},
		"long":   {engine.MaxChunkTimes + 2, 0, engine.MaxChunkTimes + 2, longWant, true, "length", "chatcmpl-long", "org/m"},
		"failed": {},
	}
	j := readJournal(t, p)
	if len(j.Records) != len(want) {
		t.Fatalf("journal has %d records, want %d", len(j.Records), len(want))
	}
	for _, r := range j.Records {
		got := chunkFields{r.Chunks, r.UsageOutputTokens, r.OutputTokens, r.ChunkOffsetsUs, r.ChunkOffsetsTruncated,
			r.FinishReason, r.ResponseID, r.ResponseModel}
		if d := cmp.Diff(want[r.RequestID], got); d != "" {
			t.Errorf("%s in the journal (-want +got):\n%s", r.RequestID, d)
		}
		// The first offset is the TTFT, in the journal's own numbers.
		if len(r.ChunkOffsetsUs) > 0 && r.FirstToken.Sub(r.Submit).Microseconds() != r.ChunkOffsetsUs[0] {
			t.Errorf("%s: first token - submit = %v, first offset %d µs", r.RequestID, r.FirstToken.Sub(r.Submit), r.ChunkOffsetsUs[0])
		}
	}
	exp.mu.Lock()
	defer exp.mu.Unlock()
	var exported []record.Record
	for _, r := range exp.records {
		exported = append(exported, *r)
	}
	if d := cmp.Diff(j.Records, exported, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("exporter records differ from the journal (-journal +exporter):\n%s", d)
	}
}
