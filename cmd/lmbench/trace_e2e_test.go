package main

// End-to-end tracing: the real lmbench binary, configured only by the
// standard OTEL_* variables, sends its spans to a real OTLP receiver started
// here and a traceparent with each request to the engine.

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/telemetry/otlptest"
)

// traceparentEngine is the fake engine behind a server that records the
// traceparent header of every completion request.
type traceparentEngine struct {
	*fakeEngine
	url string
	mu  sync.Mutex
	tps []string // one per completion request, "" when absent
}

func newTraceparentEngine(t *testing.T, opts ...func(*fakeEngine)) *traceparentEngine {
	e := &traceparentEngine{fakeEngine: newFakeEngine(t, opts...)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "completions") {
			e.mu.Lock()
			e.tps = append(e.tps, r.Header.Get("traceparent"))
			e.mu.Unlock()
		}
		e.serve(w, r)
	}))
	t.Cleanup(srv.Close)
	e.url = srv.URL
	return e
}

func (e *traceparentEngine) traceparents() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.tps...)
}

func attrOf(s otlptest.Span, key string) *commonpb.AnyValue {
	v, _ := s.Attr(key)
	return v
}

func spanID(s *tracepb.Span) string  { return hex.EncodeToString(s.GetSpanId()) }
func traceID(s *tracepb.Span) string { return hex.EncodeToString(s.GetTraceId()) }

// offEnv clears the variables that would turn tracing on from the
// environment the tests run in.
var offEnv = []string{"OTEL_TRACES_EXPORTER=", "OTEL_EXPORTER_OTLP_ENDPOINT=", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=",
	"OTEL_SDK_DISABLED=", "TRACEPARENT=", "OTEL_EXPORTER_OTLP_PROTOCOL=", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL="}

func TestTracesReachOTLPReceiverAndEngine(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	for _, proto := range []string{"grpc", "http/protobuf"} {
		t.Run(strings.ReplaceAll(proto, "/", "-"), func(t *testing.T) {
			t.Parallel()
			start := otlptest.StartGRPC
			if proto == "http/protobuf" {
				start = otlptest.StartHTTP
			}
			rcv, err := start()
			if err != nil {
				t.Fatal(err)
			}
			defer rcv.Close()
			eng := newTraceparentEngine(t)
			out := t.TempDir()
			const secret = "sk-trace-secret-4417"
			r := lmbench(t, append(offEnv, "OPENAI_API_KEY="+secret,
				"OTEL_EXPORTER_OTLP_ENDPOINT="+rcv.Endpoint(), "OTEL_EXPORTER_OTLP_PROTOCOL="+proto,
				"OTEL_SERVICE_NAME=lmbench-e2e", "OTEL_RESOURCE_ATTRIBUTES=deployment.environment.name=ci"),
				"run", "--engine-url", eng.url, "--workload", "long-doc-qa", "--tokens-per-gb-kvcache", "8192",
				"--kv-cache-volume", "1", "--ldqa-document-length", "200", "--no-interactive", "-q", "--output-dir", out)
			if r.code != 0 {
				t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
			}
			if !strings.Contains(r.stderr, "recording traces") {
				t.Errorf("stderr does not say traces are recorded:\n%s", r.stderr)
			}
			journal, err := record.ReadJournal(filepath.Join(out, record.JournalName))
			if err != nil {
				t.Fatal(err)
			}
			// The binary flushed before exiting: everything is there already.
			spans := rcv.Spans()
			checkTrace(t, journal.Run, journal.Records, spans, eng.traceparents())
			for _, s := range spans {
				if got := s.Resource["service.name"]; got != "lmbench-e2e" || s.Resource["deployment.environment.name"] != "ci" {
					t.Errorf("resource %v: want service.name lmbench-e2e and OTEL_RESOURCE_ATTRIBUTES", s.Resource)
					break
				}
			}
			for _, s := range spans {
				if strings.Contains(fmt.Sprint(s.Span, s.Resource), secret) {
					t.Errorf("span %q carries the API key", s.GetName())
				}
			}
		})
	}
}

// checkTrace checks the spans against the journal and the engine's view:
// run → phase → request, times equal to the journal's to the nanosecond,
// attributes present, and one traceparent per request naming its span.
func checkTrace(t *testing.T, run record.Run, recs []record.Record, spans []otlptest.Span, tps []string) {
	t.Helper()
	var runSpan otlptest.Span
	phases := map[string]otlptest.Span{} // by span id
	reqs := map[string]otlptest.Span{}   // by request id
	for _, s := range spans {
		switch {
		case s.GetName() == "lmbench run":
			runSpan = s
		case s.GetName() == "warmup" || s.GetName() == "measure":
			phases[spanID(s.Span)] = s
		default:
			id := attrOf(s, "lmbench.request.id").GetStringValue()
			if _, dup := reqs[id]; dup || id == "" {
				t.Errorf("request span %q: request id %q missing or repeated", s.GetName(), id)
			}
			reqs[id] = s
		}
	}
	journalPhases := map[record.Phase]bool{}
	for _, rec := range recs {
		journalPhases[rec.Phase] = true
	}
	if runSpan.Span == nil || len(phases) != len(journalPhases) {
		t.Fatalf("got %d spans: run span present %v, %d phase spans; want the run and %d phases", len(spans), runSpan.Span != nil, len(phases), len(journalPhases))
	}
	if len(runSpan.GetParentSpanId()) != 0 {
		t.Errorf("run span has a parent")
	}
	if runSpan.GetStartTimeUnixNano() != uint64(run.Started.UnixNano()) {
		t.Errorf("run span starts at %d, journal started_unix_ns %d", runSpan.GetStartTimeUnixNano(), run.Started.UnixNano())
	}
	if got := attrOf(runSpan, "lmbench.run.id").GetStringValue(); got != run.ID {
		t.Errorf("run span lmbench.run.id %q, journal %q", got, run.ID)
	}
	for _, p := range phases {
		if spanID(p.Span) == spanID(runSpan.Span) || hex.EncodeToString(p.GetParentSpanId()) != spanID(runSpan.Span) || traceID(p.Span) != traceID(runSpan.Span) {
			t.Errorf("phase %q is not a child of the run span", p.GetName())
		}
	}
	if len(recs) == 0 || len(reqs) != len(recs) {
		t.Fatalf("%d request spans for %d journal records", len(reqs), len(recs))
	}
	bySpanID := map[string]string{}
	for _, rec := range recs {
		s, ok := reqs[rec.RequestID]
		if !ok {
			t.Errorf("no span for request %s", rec.RequestID)
			continue
		}
		bySpanID[spanID(s.Span)] = rec.RequestID
		phase, ok := phases[hex.EncodeToString(s.GetParentSpanId())]
		if !ok || phase.GetName() != rec.Phase.String() {
			t.Errorf("%s: parent is not its phase span (%v)", rec.RequestID, rec.Phase)
		}
		if s.GetKind() != tracepb.Span_SPAN_KIND_CLIENT || s.GetName() != "chat fake-model" {
			t.Errorf("%s: span %q kind %v, want client span \"chat fake-model\"", rec.RequestID, s.GetName(), s.GetKind())
		}
		if s.GetStartTimeUnixNano() != uint64(rec.Submit.UnixNano()) || s.GetEndTimeUnixNano() != uint64(rec.Finish.UnixNano()) {
			t.Errorf("%s: span [%d, %d], journal submit/finish [%d, %d]", rec.RequestID,
				s.GetStartTimeUnixNano(), s.GetEndTimeUnixNano(), rec.Submit.UnixNano(), rec.Finish.UnixNano())
		}
		events := map[string]uint64{}
		for _, e := range s.GetEvents() {
			events[e.GetName()] = e.GetTimeUnixNano()
		}
		if events["first_token"] != uint64(rec.FirstToken.UnixNano()) || events["finish"] != uint64(rec.Finish.UnixNano()) {
			t.Errorf("%s: events %v, journal first token %d finish %d", rec.RequestID, events, rec.FirstToken.UnixNano(), rec.Finish.UnixNano())
		}
		for key, want := range map[string]any{
			"gen_ai.operation.name":     "chat",
			"gen_ai.provider.name":      "openai",
			"gen_ai.request.model":      "fake-model",
			"gen_ai.usage.input_tokens": rec.InputTokens, "gen_ai.usage.output_tokens": rec.OutputTokens,
			"lmbench.phase":   rec.Phase.String(),
			"lmbench.ttft_ms": rec.TTFT * 1e3,
			"lmbench.tag.doc": rec.Tags["doc"],
			"server.address":  "127.0.0.1",
		} {
			v, ok := s.Attr(key)
			var got any
			switch x := v.GetValue().(type) {
			case *commonpb.AnyValue_StringValue:
				got = x.StringValue
			case *commonpb.AnyValue_IntValue:
				got = x.IntValue
			case *commonpb.AnyValue_DoubleValue:
				got = x.DoubleValue
			}
			if !ok || got != want {
				t.Errorf("%s: %s = %v, want %v", rec.RequestID, key, got, want)
			}
		}
		if _, ok := s.Attr("gen_ai.request.max_tokens"); !ok {
			t.Errorf("%s: no gen_ai.request.max_tokens", rec.RequestID)
		}
	}
	// The engine saw exactly one traceparent per request, each naming that
	// request's span in the run's trace.
	if len(tps) != len(recs) {
		t.Errorf("engine saw %d completion requests, journal has %d", len(tps), len(recs))
	}
	seen := map[string]bool{}
	for _, tp := range tps {
		parts := strings.Split(tp, "-")
		if len(parts) != 4 || parts[0] != "00" || parts[1] != traceID(runSpan.Span) || parts[3] != "01" {
			t.Errorf("engine got traceparent %q, want 00-%s-<span>-01", tp, traceID(runSpan.Span))
			continue
		}
		id, ok := bySpanID[parts[2]]
		if !ok || seen[id] {
			t.Errorf("engine traceparent %q names no request span (or one named twice)", tp)
		}
		seen[id] = true
	}
}

// Without any OTEL_* variable nothing is exported and no traceparent is sent.
func TestNoTracingByDefault(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newTraceparentEngine(t)
	r := lmbench(t, offEnv, "run", "--engine-url", eng.url, "--workload", "long-doc-qa", "--tokens-per-gb-kvcache", "8192",
		"--kv-cache-volume", "1", "--ldqa-document-length", "200", "--no-interactive", "-q", "--output-dir", t.TempDir())
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	tps := eng.traceparents()
	if len(tps) == 0 {
		t.Fatal("engine saw no request")
	}
	for _, tp := range tps {
		if tp != "" {
			t.Fatalf("engine got traceparent %q with tracing off", tp)
		}
	}
	if strings.Contains(r.stderr, "recording traces") {
		t.Errorf("stderr says traces are recorded:\n%s", r.stderr)
	}
}

// A bad OTEL_* variable stops the run before any request, naming it.
func TestBadOTLPEndpointIsAnError(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	eng := newTraceparentEngine(t)
	r := lmbench(t, append(offEnv, "OTEL_EXPORTER_OTLP_ENDPOINT=collector:4317"), "run", "--engine-url", eng.url,
		"--workload", "long-doc-qa", "--tokens-per-gb-kvcache", "8192", "--kv-cache-volume", "1",
		"--ldqa-document-length", "200", "--no-interactive", "-q", "--output-dir", t.TempDir())
	if r.code == 0 || !strings.Contains(r.stderr, `OTEL_EXPORTER_OTLP_ENDPOINT: expected a URL`) || !strings.Contains(r.stderr, `"collector:4317"`) {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if n := len(eng.traceparents()); n != 0 {
		t.Errorf("engine saw %d requests", n)
	}
}

// Ctrl-C: the run stops early, and the spans of every request that
// finished (and the run span, marked interrupted) still reach the receiver.
func TestInterruptFlushesSpans(t *testing.T) {
	t.Parallel()
	needBinaries(t)
	rcv, err := otlptest.StartGRPC()
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Close()
	eng := newTraceparentEngine(t, withDelay(50*time.Millisecond))
	out := t.TempDir()
	cmd, _, stderr := startLmbench(t, append(offEnv,
		"OTEL_EXPORTER_OTLP_ENDPOINT="+rcv.Endpoint(), "OTEL_EXPORTER_OTLP_PROTOCOL=grpc"),
		"run", "--engine-url", eng.url, "--workload", "long-doc-qa",
		"--tokens-per-gb-kvcache", "10000", "--kv-cache-volume", "0.2", "--ldqa-document-length", "100",
		"--ldqa-num-inflight-requests", "2", "--no-interactive", "-q", "--output-dir", out)
	// 20 warmup requests, then 40 measured ones, two at a time.
	waitFor(t, "measured requests", func() bool { return len(eng.traceparents()) >= 24 })
	cmd.Process.Signal(os.Interrupt)
	if code := exitCode(cmd.Wait()); code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, stderr)
	}
	journal, err := record.ReadJournal(filepath.Join(out, record.JournalName))
	if err != nil {
		t.Fatal(err)
	}
	spans := rcv.Spans()
	checkTrace(t, journal.Run, journal.Records, spans, eng.traceparents())
	measured := 0
	for _, r := range journal.Records {
		if r.Phase == record.Measure {
			measured++
		}
	}
	if measured == 0 || measured >= 40 {
		t.Errorf("%d of 40 measured requests journalled: the interrupt did not land mid-measure", measured)
	}
	for _, s := range spans {
		if s.GetName() == "lmbench run" && !attrOf(s, "lmbench.interrupted").GetBoolValue() {
			t.Error("run span is not marked interrupted")
		}
	}
}
