package telemetry

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/lmbench/lmbench/core/record"
)

// recorded returns a Provider whose ended spans land in the returned recorder.
func recorded() (*Provider, *tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	return New(sdktrace.WithSpanProcessor(rec)), rec
}

func attrMap(kvs []attribute.KeyValue) map[string]any {
	m := map[string]any{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.AsInterface()
	}
	return m
}

func byName(t *testing.T, spans []sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	for _, s := range spans {
		if s.Name() == name {
			return s
		}
	}
	t.Fatalf("no span %q", name)
	return nil
}

// traceparentIDs parses "00-<trace>-<span>-<flags>".
func traceparentIDs(t *testing.T, h http.Header) (trace.TraceID, trace.SpanID, string) {
	t.Helper()
	parts := strings.Split(h.Get("traceparent"), "-")
	if len(parts) != 4 || parts[0] != "00" {
		t.Fatalf("traceparent %q is not version 00 with four fields", h.Get("traceparent"))
	}
	tid, err := trace.TraceIDFromHex(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	sid, err := trace.SpanIDFromHex(parts[2])
	if err != nil {
		t.Fatal(err)
	}
	return tid, sid, parts[3]
}

// The whole span tree of a run: run → phases → requests, with the measured
// timestamps, the reserved span ids, GenAI attributes, tags and events.
func TestRunSpanTree(t *testing.T) {
	t.Parallel()
	p, rec := recorded()
	t0 := time.Unix(1_760_000_000, 123_456_789)
	at := func(d time.Duration) int64 { return t0.Add(d).UnixNano() }

	r := p.StartRun(context.Background(), RunInfo{
		RunID: "run-1", Workload: "long-doc-qa", Version: "1.2.3", Model: "m-7b",
		EngineURL: "http://user:secret@engine.local:8001/v1", Start: t0,
	})
	if h := r.Header(); h != nil {
		t.Fatalf("Header outside a phase = %v, want nil", h)
	}
	r.StartPhase("warmup", t0.Add(time.Millisecond))
	hWarm := r.Header()
	r.Request(&record.Record{
		Phase: record.Warmup, RequestID: "w0", Success: true, Seq: 1,
		TTFT: 0.25, Latency: 1.5, InputTokens: 100, OutputTokens: 8, CachedTokens: 64,
		Submit: t0.Add(2 * time.Millisecond), FirstToken: t0.Add(252 * time.Millisecond), Finish: t0.Add(1502 * time.Millisecond),
		Tags: map[string]string{"doc": "0"},
	}, Sent{Header: hWarm, MaxTokens: 16})
	r.EndPhase(t0.Add(2 * time.Second))

	r.StartPhase("measure", t0.Add(3*time.Second))
	hOK, hFail := r.Header(), r.Header()
	r.Request(&record.Record{
		Phase: record.Measure, RequestID: "q-doc3-1", Success: true, Seq: 2,
		TTFT: 0.0123456789, Latency: 0.5, DecodeSpeed: 40, ITL: 0.02, InputTokens: 2000, OutputTokens: 20, CachedTokens: 1984,
		Scheduled: t0.Add(3 * time.Second), Submit: t0.Add(3*time.Second + 17),
		FirstToken: t0.Add(3*time.Second + 17 + 12345679), Finish: t0.Add(3*time.Second + 500_000_017),
		Tags: map[string]string{"doc": "3", "query": "1"},
	}, Sent{Header: hOK, MaxTokens: 32})
	r.Request(&record.Record{
		Phase: record.Measure, RequestID: "q-doc4-1", Success: false, Seq: 3,
		Error: "HTTP 503: overloaded", TTFT: -1, Latency: 0.1,
		Submit: t0.Add(3*time.Second + 5), Finish: t0.Add(3*time.Second + 100_000_005),
	}, Sent{Header: hFail, MaxTokens: 32, Completion: true})
	r.EndPhase(t0.Add(4 * time.Second))
	r.End(RunEnd{End: t0.Add(5 * time.Second), Requests: 2, Failed: 1})

	spans := rec.Ended()
	if len(spans) != 6 {
		t.Fatalf("got %d spans, want 6 (run, 2 phases, 3 requests)", len(spans))
	}
	run := byName(t, spans, "lmbench run")
	warm, meas := byName(t, spans, "warmup"), byName(t, spans, "measure")
	var reqs []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.SpanKind() == trace.SpanKindClient {
			reqs = append(reqs, s)
		}
	}
	if len(reqs) != 3 {
		t.Fatalf("got %d client spans, want 3", len(reqs))
	}
	w0, ok, fail := reqs[0], reqs[1], reqs[2]

	// Structure: one trace; run is the root; phases under run; requests under their phase.
	tid := run.SpanContext().TraceID()
	for _, s := range spans {
		if s.SpanContext().TraceID() != tid {
			t.Errorf("span %q is in trace %s, want %s", s.Name(), s.SpanContext().TraceID(), tid)
		}
	}
	if run.Parent().IsValid() {
		t.Errorf("run span has parent %s, want none", run.Parent().SpanID())
	}
	for _, c := range []struct {
		child, parent sdktrace.ReadOnlySpan
	}{{warm, run}, {meas, run}, {w0, warm}, {ok, meas}, {fail, meas}} {
		if c.child.Parent().SpanID() != c.parent.SpanContext().SpanID() {
			t.Errorf("%s %q: parent %s, want %q (%s)", c.child.Name(), c.child.Attributes(), c.child.Parent().SpanID(), c.parent.Name(), c.parent.SpanContext().SpanID())
		}
	}

	// The traceparent sent names exactly the request span.
	for _, c := range []struct {
		h    http.Header
		span sdktrace.ReadOnlySpan
	}{{hWarm, w0}, {hOK, ok}, {hFail, fail}} {
		htid, hsid, flags := traceparentIDs(t, c.h)
		if htid != tid || hsid != c.span.SpanContext().SpanID() || flags != "01" {
			t.Errorf("traceparent %q, want trace %s span %s flags 01", c.h.Get("traceparent"), tid, c.span.SpanContext().SpanID())
		}
	}
	if hOK.Get("traceparent") == hFail.Get("traceparent") {
		t.Error("two requests got the same traceparent")
	}

	// Timestamps: exactly the record's, to the nanosecond.
	for _, c := range []struct {
		span       sdktrace.ReadOnlySpan
		start, end int64
	}{
		{run, t0.UnixNano(), at(5 * time.Second)},
		{warm, at(time.Millisecond), at(2 * time.Second)},
		{meas, at(3 * time.Second), at(4 * time.Second)},
		{w0, at(2 * time.Millisecond), at(1502 * time.Millisecond)},
		{ok, at(3*time.Second + 17), at(3*time.Second + 500_000_017)},
		{fail, at(3*time.Second + 5), at(3*time.Second + 100_000_005)},
	} {
		if got := c.span.StartTime().UnixNano(); got != c.start {
			t.Errorf("%s start = %d, want %d", c.span.Name(), got, c.start)
		}
		if got := c.span.EndTime().UnixNano(); got != c.end {
			t.Errorf("%s end = %d, want %d", c.span.Name(), got, c.end)
		}
	}

	// Names, kinds, attributes.
	if ok.Name() != "chat m-7b" || fail.Name() != "text_completion m-7b" {
		t.Errorf("request span names %q, %q; want chat m-7b, text_completion m-7b", ok.Name(), fail.Name())
	}
	wantRun := map[string]any{
		"lmbench.run.id": "run-1", "lmbench.workload": "long-doc-qa", "lmbench.version": "1.2.3",
		"gen_ai.provider.name": "openai", "gen_ai.request.model": "m-7b",
		"server.address": "engine.local", "server.port": int64(8001),
		"lmbench.requests": int64(2), "lmbench.requests.failed": int64(1), "lmbench.interrupted": false,
	}
	if d := cmp.Diff(wantRun, attrMap(run.Attributes())); d != "" {
		t.Errorf("run attributes (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]any{"lmbench.phase": "measure", "lmbench.requests": int64(2), "lmbench.requests.failed": int64(1)}, attrMap(meas.Attributes())); d != "" {
		t.Errorf("measure attributes (-want +got):\n%s", d)
	}
	ttft := 0.0123456789 // a variable: the product is computed at run time, as in the code
	wantOK := map[string]any{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "m-7b",
		"server.address": "engine.local", "server.port": int64(8001),
		"gen_ai.request.stream": true, "gen_ai.request.temperature": 0.0, "gen_ai.request.max_tokens": int64(32),
		"gen_ai.usage.input_tokens": int64(2000), "gen_ai.usage.output_tokens": int64(20),
		"gen_ai.usage.cache_read.input_tokens": int64(1984), "gen_ai.response.time_to_first_chunk": 0.0123456789,
		"lmbench.request.id": "q-doc3-1", "lmbench.phase": "measure", "lmbench.seq": int64(2), "lmbench.success": true,
		"lmbench.ttft_ms": ttft * 1e3, "lmbench.latency_ms": 500.0, "lmbench.itl_ms": 20.0,
		"lmbench.decode_speed": 40.0, "lmbench.cached_tokens": int64(1984),
		"lmbench.scheduled_unix_ns": at(3 * time.Second),
		"lmbench.tag.doc":           "3", "lmbench.tag.query": "1",
	}
	if d := cmp.Diff(wantOK, attrMap(ok.Attributes())); d != "" {
		t.Errorf("request attributes (-want +got):\n%s", d)
	}
	wantFail := map[string]any{
		"gen_ai.operation.name": "text_completion", "gen_ai.provider.name": "openai", "gen_ai.request.model": "m-7b",
		"server.address": "engine.local", "server.port": int64(8001),
		"gen_ai.request.stream": true, "gen_ai.request.temperature": 0.0, "gen_ai.request.max_tokens": int64(32),
		"error.type":         "503",
		"lmbench.request.id": "q-doc4-1", "lmbench.phase": "measure", "lmbench.seq": int64(3), "lmbench.success": false,
		"lmbench.latency_ms": 100.0,
	}
	if d := cmp.Diff(wantFail, attrMap(fail.Attributes())); d != "" {
		t.Errorf("failed request attributes (-want +got):\n%s", d)
	}
	// The phase attribute is the record's phase, warm-up included.
	if got := attrMap(w0.Attributes())["lmbench.phase"]; got != "warmup" {
		t.Errorf("warm-up request lmbench.phase = %v, want warmup", got)
	}

	// Events and status.
	type event struct {
		Name string
		At   int64
	}
	events := func(s sdktrace.ReadOnlySpan) (out []event) {
		for _, e := range s.Events() {
			out = append(out, event{e.Name, e.Time.UnixNano()})
		}
		return out
	}
	if d := cmp.Diff([]event{{"first_token", at(3*time.Second + 17 + 12345679)}, {"finish", at(3*time.Second + 500_000_017)}}, events(ok)); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]event{{"finish", at(3*time.Second + 100_000_005)}}, events(fail)); d != "" {
		t.Errorf("failed request events (-want +got):\n%s", d)
	}
	if ok.Status().Code != codes.Unset {
		t.Errorf("successful request status = %v", ok.Status())
	}
	if fail.Status() != (sdktrace.Status{Code: codes.Error, Description: "HTTP 503: overloaded"}) {
		t.Errorf("failed request status = %+v, want Error with the message", fail.Status())
	}
	if meas.Status().Code != codes.Error || warm.Status().Code != codes.Unset {
		t.Errorf("phase statuses: warmup %v, measure %v; want Unset, Error", warm.Status(), meas.Status())
	}
	// Nothing of the engine URL but host and port.
	for _, s := range spans {
		for _, kv := range s.Attributes() {
			if strings.Contains(kv.Value.Emit(), "secret") || strings.Contains(kv.Value.Emit(), "user") {
				t.Errorf("span %q attribute %s = %q leaks the URL's credentials", s.Name(), kv.Key, kv.Value.Emit())
			}
		}
	}
}

func TestRunEndStatus(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		end  RunEnd
		want sdktrace.Status
	}{
		"ok":          {RunEnd{}, sdktrace.Status{Code: codes.Unset}},
		"interrupted": {RunEnd{Interrupted: true}, sdktrace.Status{Code: codes.Error, Description: "interrupted"}},
		"error":       {RunEnd{Err: errors.New("step: plugin died")}, sdktrace.Status{Code: codes.Error, Description: "step: plugin died"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, rec := recorded()
			r := p.StartRun(context.Background(), RunInfo{Start: time.Unix(10, 0)})
			r.StartPhase("measure", time.Unix(11, 0)) // left open: End closes it
			c.end.End = time.Unix(12, 0)
			r.End(c.end)
			spans := rec.Ended()
			if len(spans) != 2 {
				t.Fatalf("got %d spans, want phase and run", len(spans))
			}
			if got := byName(t, spans, "measure").EndTime(); !got.Equal(time.Unix(12, 0)) {
				t.Errorf("open phase ended at %v, want the run's end", got)
			}
			if got := byName(t, spans, "lmbench run").Status(); got != c.want {
				t.Errorf("status = %+v, want %+v", got, c.want)
			}
		})
	}
}

// A nil Provider records nothing and every Run method is a no-op.
func TestNilProviderIsOff(t *testing.T) {
	t.Parallel()
	var p *Provider
	r := p.StartRun(context.Background(), RunInfo{})
	if r != nil {
		t.Fatal("StartRun on a nil Provider returned a Run")
	}
	r.StartPhase("measure", time.Now())
	if h := r.Header(); h != nil {
		t.Errorf("Header = %v, want nil", h)
	}
	r.Request(&record.Record{}, Sent{})
	r.EndPhase(time.Now())
	r.End(RunEnd{})
	if err := p.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
	if p.Exporters() != nil {
		t.Error("nil Provider names exporters")
	}
}

// A request whose traceparent is missing or from another trace still gets
// a span, with a fresh id, under its phase.
func TestRequestWithoutReservedID(t *testing.T) {
	t.Parallel()
	p, rec := recorded()
	r := p.StartRun(context.Background(), RunInfo{Start: time.Unix(1, 0)})
	r.StartPhase("measure", time.Unix(1, 0))
	foreign := http.Header{"Traceparent": {"00-0102030405060708090a0b0c0d0e0f10-0102030405060708-01"}}
	r.Request(&record.Record{RequestID: "a", Success: true, Submit: time.Unix(2, 0), Finish: time.Unix(3, 0)}, Sent{})
	r.Request(&record.Record{RequestID: "b", Success: true, Submit: time.Unix(2, 0), Finish: time.Unix(3, 0)}, Sent{Header: foreign})
	r.End(RunEnd{End: time.Unix(4, 0)})
	phase := byName(t, rec.Ended(), "measure")
	n := 0
	for _, s := range rec.Ended() {
		if s.SpanKind() != trace.SpanKindClient {
			continue
		}
		n++
		if s.Parent().SpanID() != phase.SpanContext().SpanID() || s.SpanContext().TraceID() != phase.SpanContext().TraceID() {
			t.Errorf("request span %v not under the phase", s.Attributes())
		}
		if s.SpanContext().SpanID().String() == "0102030405060708" {
			t.Error("a foreign trace's span id was reused")
		}
	}
	if n != 2 {
		t.Errorf("got %d request spans, want 2", n)
	}
}

func TestServerAttrs(t *testing.T) {
	t.Parallel()
	for url, want := range map[string]map[string]any{
		"http://localhost:8000/v1":        {"server.address": "localhost", "server.port": int64(8000)},
		"https://u:p@api.example.com/v1":  {"server.address": "api.example.com", "server.port": int64(443)},
		"http://[::1]/v1":                 {"server.address": "::1", "server.port": int64(80)},
		"":                                {},
		"builtin (http://127.0.0.1:1/v1)": {},
	} {
		if d := cmp.Diff(want, attrMap(serverAttrs(url))); d != "" {
			t.Errorf("serverAttrs(%q) (-want +got):\n%s", url, d)
		}
	}
}

func TestErrorType(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string]string{
		"HTTP 500: engine on fire":     "500",
		"HTTP 429":                     "429",
		"HTTP whatever":                "_OTHER",
		"context deadline exceeded":    "canceled",
		"dial tcp: connection refused": "_OTHER",
	} {
		if got := errorType(msg); got != want {
			t.Errorf("errorType(%q) = %q, want %q", msg, got, want)
		}
	}
}

// With a parent-based sampler and an unsampled parent (TRACEPARENT with
// flags 00), the engine is told not to sample either.
func TestUnsampledParentPropagates(t *testing.T) {
	t.Parallel()
	p, rec := recorded()
	parent, err := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	if err != nil {
		t.Fatal(err)
	}
	psid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	p.parent = trace.NewSpanContext(trace.SpanContextConfig{TraceID: parent, SpanID: psid, Remote: true})
	r := p.StartRun(context.Background(), RunInfo{Start: time.Unix(1, 0)})
	r.StartPhase("measure", time.Unix(1, 0))
	tid, _, flags := traceparentIDs(t, r.Header())
	if tid != parent || flags != "00" {
		t.Errorf("traceparent trace %s flags %s, want %s and 00", tid, flags, parent)
	}
	r.End(RunEnd{End: time.Unix(2, 0)})
	if n := len(rec.Ended()); n != 0 {
		t.Errorf("%d spans recorded for an unsampled trace", n)
	}
}
