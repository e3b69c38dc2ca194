package bench

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/core/report"
	"github.com/lmbench/lmbench/core/telemetry"
	workloadv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/workload/v1"
)

// headerSender records the headers each request was sent with.
type headerSender struct {
	*fakeSender
	mu      sync.Mutex
	headers map[string]http.Header
}

func (s *headerSender) Send(ctx context.Context, req engine.Request) engine.Result {
	s.mu.Lock()
	s.headers[req.ID] = req.Header
	s.mu.Unlock()
	return s.fakeSender.Send(ctx, req)
}

// With Plan.Tracing, every journalled request has a span with exactly the
// journal's submit and finish times, under its phase's span, whose id is
// the one in the traceparent the sender got; without it, no header is sent.
func TestExecuteTracing(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{true, false} {
		name := "off"
		if on {
			name = "on"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			snd := &headerSender{fakeSender: &fakeSender{outcomes: map[string]outcome{
				"m1": {fail: true, ttft: 30 * time.Millisecond},
			}}, headers: map[string]http.Header{}}
			wl := batches([]*workloadv1.Request{chat("w0", nil)},
				[]*workloadv1.Request{chat("m0", map[string]string{"doc": "0"}), chat("m1", map[string]string{"doc": "1"})})
			p, _ := plan(t, wl, nil)
			p.Sender = snd
			rec := tracetest.NewSpanRecorder()
			if on {
				p.Tracing = telemetry.New(sdktrace.WithSpanProcessor(rec))
			}
			res, err := Execute(context.Background(), p)
			if err != nil || res.Err != nil {
				t.Fatalf("Execute = %v, %v", err, res.Err)
			}
			meta, recs := readJournal(t, p)
			if !on {
				for id, h := range snd.headers {
					if h != nil {
						t.Errorf("%s sent with headers %v with tracing off", id, h)
					}
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
			if got, want := run.StartTime().UnixNano(), meta.GetStartedUnixNs(); got != want {
				t.Errorf("run span start %d, journal started_unix_ns %d", got, want)
			}
			if v, _ := attr(run, "lmbench.run.id"); v != res.RunID {
				t.Errorf("run span lmbench.run.id = %q, want %q", v, res.RunID)
			}
			if len(recs) != 3 || len(spans) != 6 {
				t.Fatalf("%d journal records and %d spans, want 3 and 6", len(recs), len(spans))
			}
			for _, r := range recs {
				s := spans[r.GetRequestId()]
				if s == nil {
					t.Errorf("no span for %s", r.GetRequestId())
					continue
				}
				if s.StartTime().UnixNano() != r.GetSubmitUnixNs() || s.EndTime().UnixNano() != r.GetFinishUnixNs() {
					t.Errorf("%s span [%d, %d], journal submit/finish [%d, %d]", r.GetRequestId(),
						s.StartTime().UnixNano(), s.EndTime().UnixNano(), r.GetSubmitUnixNs(), r.GetFinishUnixNs())
				}
				for _, e := range s.Events() {
					if e.Name == telemetry.EventFirstToken && e.Time.UnixNano() != r.GetFirstTokenUnixNs() {
						t.Errorf("%s first_token event at %d, journal %d", r.GetRequestId(), e.Time.UnixNano(), r.GetFirstTokenUnixNs())
					}
				}
				phase := byID[s.Parent().SpanID()]
				if phase == nil || phase.Name() != telemetry.PhaseName(r.GetPhase()) || phase.Parent().SpanID() != run.SpanContext().SpanID() {
					t.Errorf("%s is not under its phase span under the run span", r.GetRequestId())
				}
				tp := snd.headers[r.GetRequestId()].Get("traceparent")
				want := "00-" + s.SpanContext().TraceID().String() + "-" + s.SpanContext().SpanID().String() + "-01"
				if tp != want {
					t.Errorf("%s: engine got traceparent %q, span is %q", r.GetRequestId(), tp, want)
				}
				if v, _ := attr(s, "lmbench.tag.doc"); r.GetPhase() == 2 && v != r.GetTags()["doc"] {
					t.Errorf("%s lmbench.tag.doc = %q, want %q", r.GetRequestId(), v, r.GetTags()["doc"])
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
	req := chat("r", map[string]string{"doc": "1", "query": "2"})
	return &fakeWorkload{step: func(r *workloadv1.StepRequest) (*workloadv1.StepResponse, error) {
		if r.Phase == workloadv1.Phase_PHASE_WARMUP || sent == n {
			return &workloadv1.StepResponse{Next: done()}, nil
		}
		k := min(window-int(r.InFlight), n-sent)
		reqs := make([]*workloadv1.Request, k)
		for i := range reqs {
			reqs[i] = req
		}
		sent += k
		return &workloadv1.StepResponse{Requests: reqs, Next: &workloadv1.StepResponse_WaitForFinish{WaitForFinish: true}}, nil
	}}
}

// BenchmarkExecuteTracing is the host's whole per-request cost (dispatch,
// journal, stats, export queue) with tracing off and on (SDK batch
// processor into a discarding exporter); one op is one request.
func BenchmarkExecuteTracing(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			p := Plan{
				Workload: windowWorkload(b.N, 64), Sender: instantSender{},
				Report:  report.Config{Model: "m", Workload: "bench", OutputDir: b.TempDir()},
				Version: "bench", Log: zerolog.Nop(), Stdout: io.Discard,
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
