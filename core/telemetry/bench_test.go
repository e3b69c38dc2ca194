package telemetry

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/lmbench/lmbench/core/record"
)

// BenchmarkRequestSpan is what tracing adds to one request on the host's
// loop: Header before the send, Request after. "off" is a nil Run, as the
// host has with no OTEL_* set; "on" records into the SDK's batch processor
// with a discarding exporter.
func BenchmarkRequestSpan(b *testing.B) {
	rec := &record.Record{
		Phase: record.Measure, RequestID: "q-doc3-1", Success: true, Seq: 2,
		TTFT: 0.0123, Latency: 0.5, DecodeSpeed: 40, ITL: 0.02, InputTokens: 2000, OutputTokens: 20, CachedTokens: 1984,
		Submit: time.Unix(0, 1), FirstToken: time.Unix(0, 2), Finish: time.Unix(0, 3),
		Tags: map[string]string{"doc": "3", "query": "1"},
	}
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			var r *Run
			if on {
				p := New(sdktrace.WithBatcher(tracetest.NewNoopExporter(), sdktrace.WithMaxQueueSize(1<<16)))
				defer p.Shutdown(context.Background())
				r = p.StartRun(context.Background(), RunInfo{Model: "m", EngineURL: "http://localhost:8000/v1", Start: time.Now()})
				r.StartPhase("measure", time.Now())
			}
			b.ReportAllocs()
			for b.Loop() {
				h := r.Header()
				r.Request(rec, Sent{Header: h, MaxTokens: 32})
			}
		})
	}
}
