package bench

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/report"
	"github.com/lmbench/lmbench/core/telemetry"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// With Plan.Tracing, every journalled request has a span with exactly the
// journal's submit and finish times, under its phase's span, whose id is
// the one in the traceparent the sender got; without it, no header is sent.
func TestExecuteTracing(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprint("tracing=", on), func(t *testing.T) {
			t.Parallel()
			snd := &fakeSender{outcomes: map[string]answer{"m1": {fail: true, ttft: 30 * time.Millisecond}}}
			wl := batches([]protocol.Request{chat("w0", nil)},
				[]protocol.Request{chat("m0", map[string]string{"doc": "0"}), chat("m1", map[string]string{"doc": "1"})})
			p, _ := plan(t, wl, snd)
			rec := tracetest.NewSpanRecorder()
			if on {
				p.Tracing = telemetry.New(sdktrace.WithSpanProcessor(rec))
			}
			res, err := Execute(context.Background(), p)
			if err != nil || res.Err != nil {
				t.Fatalf("Execute = %v, %v", err, res.Err)
			}
			j := readJournal(t, p)
			headers := map[string]string{}
			for _, r := range snd.sent() {
				if !on && r.Header != nil {
					t.Errorf("%s sent with headers %v with tracing off", r.ID, r.Header)
				}
				headers[r.ID] = r.Header.Get("traceparent")
			}
			if len(headers) != 3 {
				t.Fatalf("sent %v, want 3 requests", headers)
			}
			if !on {
				if n := len(rec.Ended()); n != 0 {
					t.Errorf("%d spans with tracing off", n)
				}
				return
			}

			spans := map[string]sdktrace.ReadOnlySpan{}
			byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
			for _, s := range rec.Ended() {
				byID[s.SpanContext().SpanID()] = s
				if v, ok := attr(s, "lmbench.request.id"); ok {
					spans[v] = s
				} else {
					spans[s.Name()] = s
				}
			}
			run := spans["lmbench run"]
			if run == nil || spans["warmup"] == nil || spans["measure"] == nil {
				t.Fatalf("missing run or phase spans: %v", spans)
			}
			if got, want := run.StartTime().UnixNano(), j.Run.Started.UnixNano(); got != want {
				t.Errorf("run span start %d, journal started %d", got, want)
			}
			if v, _ := attr(run, "lmbench.run.id"); v != res.RunID {
				t.Errorf("run span lmbench.run.id = %q, want %q", v, res.RunID)
			}
			if len(j.Records) != 3 || len(spans) != 6 {
				t.Fatalf("%d journal records and %d spans, want 3 and 6", len(j.Records), len(spans))
			}
			for _, r := range j.Records {
				s := spans[r.RequestID]
				if s == nil {
					t.Errorf("no span for %s", r.RequestID)
					continue
				}
				if !s.StartTime().Equal(r.Submit) || !s.EndTime().Equal(r.Finish) {
					t.Errorf("%s span [%v, %v], journal submit/finish [%v, %v]", r.RequestID,
						s.StartTime(), s.EndTime(), r.Submit, r.Finish)
				}
				for _, e := range s.Events() {
					if e.Name == telemetry.EventFirstToken && !e.Time.Equal(r.FirstToken) {
						t.Errorf("%s first_token event at %v, journal %v", r.RequestID, e.Time, r.FirstToken)
					}
				}
				phase := byID[s.Parent().SpanID()]
				if phase == nil || phase.Name() != r.Phase.String() || phase.Parent().SpanID() != run.SpanContext().SpanID() {
					t.Errorf("%s is not under its phase span under the run span", r.RequestID)
				}
				want := "00-" + s.SpanContext().TraceID().String() + "-" + s.SpanContext().SpanID().String() + "-01"
				if tp := headers[r.RequestID]; tp != want {
					t.Errorf("%s: engine got traceparent %q, span is %q", r.RequestID, tp, want)
				}
				if v, _ := attr(s, "lmbench.tag.doc"); r.Phase == record.Measure && v != r.Tags["doc"] {
					t.Errorf("%s lmbench.tag.doc = %q, want %q", r.RequestID, v, r.Tags["doc"])
				}
			}
			if st := spans["m1"].Status(); !strings.Contains(st.Description, "engine on fire") {
				t.Errorf("failed request status %+v", st)
			}
		})
	}
}

func attr(s sdktrace.ReadOnlySpan, key string) (string, bool) {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.Emit(), true
		}
	}
	return "", false
}

// instantSender answers at once: the benchmark measures the host, not an engine.
type instantSender struct{}

func (instantSender) Send(_ context.Context, req engine.Request) engine.Result {
	now := time.Now()
	return engine.Result{ID: req.ID, Success: true, Submit: now, FirstToken: now, LastToken: now, Finish: now,
		InputTokens: 100, OutputTokens: 1, Chunks: 1}
}

// windowWorkload sends n measured requests, at most window in flight.
func windowWorkload(n, window int) *fakeWorkload {
	sent := 0
	tags := map[string]string{"doc": "1", "query": "2"}
	return &fakeWorkload{step: func(r protocol.StepRequest) (protocol.StepResponse, error) {
		if r.Phase == protocol.Warmup || sent == n {
			return protocol.StepResponse{Next: nextDone}, nil
		}
		reqs := make([]protocol.Request, min(window-r.InFlight, n-sent))
		for i := range reqs {
			reqs[i] = chat(fmt.Sprint("r", sent), tags) // ids are unique in a run
			sent++
		}
		return protocol.StepResponse{Requests: reqs, Next: waitForFinish}, nil
	}}
}

// BenchmarkExecuteTracing is the host's whole per-request cost (dispatch,
// journal, stats, export queue) with tracing off and on (SDK batch
// processor into a discarding exporter); one op is one request.
func BenchmarkExecuteTracing(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprint("tracing=", on), func(b *testing.B) {
			p := Plan{
				Workload: windowWorkload(b.N, 64), Plugin: "bench", Sender: instantSender{},
				Capabilities: protocol.Capabilities{protocol.FinishedInStep},
				Report:       report.Config{Model: "m", Workload: "bench", OutputDir: b.TempDir()},
				Version:      "bench", Log: zerolog.Nop(), Stdout: io.Discard,
			}
			if on {
				p.Tracing = telemetry.New(sdktrace.WithBatcher(tracetest.NewNoopExporter(), sdktrace.WithMaxQueueSize(1<<16)))
				defer p.Tracing.Shutdown(context.Background())
			}
			b.ReportAllocs()
			b.ResetTimer()
			res, err := Execute(context.Background(), p)
			b.StopTimer()
			if err != nil || res.Err != nil || res.Final.TotalRequests != b.N {
				b.Fatalf("Execute = %v, %v, %d requests", err, res.Err, res.Final.TotalRequests)
			}
		})
	}
}
