package telemetry

import (
	"context"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/lmbench/lmbench/core/record"
)

// Attribute keys of lmbench's own (the GenAI, server and error ones come
// from the semantic conventions).
const (
	KeyRunID         = attribute.Key("lmbench.run.id")
	KeyWorkload      = attribute.Key("lmbench.workload")
	KeyVersion       = attribute.Key("lmbench.version")
	KeyPhase         = attribute.Key("lmbench.phase")
	KeyRequestID     = attribute.Key("lmbench.request.id")
	KeySeq           = attribute.Key("lmbench.seq")
	KeySuccess       = attribute.Key("lmbench.success")
	KeyTTFTMs        = attribute.Key("lmbench.ttft_ms")
	KeyLatencyMs     = attribute.Key("lmbench.latency_ms")
	KeyITLMs         = attribute.Key("lmbench.itl_ms")
	KeyDecodeSpeed   = attribute.Key("lmbench.decode_speed")
	KeyCachedTokens  = attribute.Key("lmbench.cached_tokens")
	KeyRequests      = attribute.Key("lmbench.requests")
	KeyFailed        = attribute.Key("lmbench.requests.failed")
	KeyInterrupted   = attribute.Key("lmbench.interrupted")
	KeyScheduledUnix = attribute.Key("lmbench.scheduled_unix_ns")
	// TagPrefix precedes each workload tag key: lmbench.tag.doc = "7".
	TagPrefix = "lmbench.tag."
)

// Event names on a request span.
const (
	EventFirstToken = "first_token"
	EventFinish     = "finish"
)

// RunInfo describes a run for its root span.
type RunInfo struct {
	RunID, Workload, Version, Model string
	// EngineURL is the engine's base URL; only its host and port are
	// recorded (server.address, server.port), never credentials or path.
	EngineURL string
	// Start is the run's start (the journal's started_unix_ns).
	Start time.Time
}

// RunEnd is how a run ended, for the root span.
type RunEnd struct {
	End              time.Time
	Requests, Failed int // measured requests
	Interrupted      bool
	Err              error // the run's error, if any (status Error)
}

// Sent is what the host sent for a request, beyond its journal record.
type Sent struct {
	// Header is the headers from Run.Header that went with the request;
	// their traceparent names the span. Nil gives the span a fresh id.
	Header     http.Header
	MaxTokens  int
	Completion bool // text_completion rather than chat
}

// Run records one run. Its methods are called from one goroutine (the
// run loop's); a nil *Run records nothing.
type Run struct {
	p        *Provider
	ctx      context.Context // holds the run span
	span     trace.Span
	common   []attribute.KeyValue // on every request span
	model    string
	phase    trace.Span
	phaseCtx context.Context
	// Requests and failures of the current phase.
	phaseRequests, phaseFailed int
}

// StartRun starts the root span of a run (a child of TRACEPARENT when the
// environment has one). It returns nil for a nil Provider.
func (p *Provider) StartRun(ctx context.Context, info RunInfo) *Run {
	if p == nil {
		return nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if p.parent.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, p.parent)
	}
	common := []attribute.KeyValue{
		semconv.GenAIProviderNameOpenAI, // the API flavour spoken; server.address names the engine
		semconv.GenAIRequestModel(info.Model),
	}
	common = append(common, serverAttrs(info.EngineURL)...)
	attrs := append([]attribute.KeyValue{
		KeyRunID.String(info.RunID), KeyWorkload.String(info.Workload), KeyVersion.String(info.Version),
	}, common...)
	ctx, span := p.tracer.Start(ctx, "lmbench run", trace.WithTimestamp(info.Start),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return &Run{p: p, ctx: ctx, span: span, common: common, model: info.Model}
}

// serverAttrs returns server.address and server.port of an engine URL.
func serverAttrs(engineURL string) []attribute.KeyValue {
	u, err := url.Parse(engineURL)
	if err != nil || u.Host == "" {
		return nil
	}
	out := []attribute.KeyValue{semconv.ServerAddress(u.Hostname())}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if n, err := strconv.Atoi(port); err == nil {
		out = append(out, semconv.ServerPort(n))
	}
	return out
}

// StartPhase starts a phase's span ("warmup", "measure") as a child of the
// run span; the previous phase, if still open, ends first.
func (r *Run) StartPhase(name string, start time.Time) {
	if r == nil {
		return
	}
	if r.phase != nil {
		r.EndPhase(start)
	}
	r.phaseCtx, r.phase = r.p.tracer.Start(r.ctx, name, trace.WithTimestamp(start),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(KeyPhase.String(name)))
	r.phaseRequests, r.phaseFailed = 0, 0
}

// EndPhase ends the current phase's span with its request counts.
func (r *Run) EndPhase(end time.Time) {
	if r == nil || r.phase == nil {
		return
	}
	r.phase.SetAttributes(KeyRequests.Int(r.phaseRequests), KeyFailed.Int(r.phaseFailed))
	if r.phaseFailed > 0 {
		r.phase.SetStatus(codes.Error, strconv.Itoa(r.phaseFailed)+" requests failed")
	}
	r.phase.End(trace.WithTimestamp(end))
	r.phase, r.phaseCtx = nil, nil
}

// Header reserves the span id of a request about to be sent in the current
// phase and returns the W3C trace context headers (traceparent, and
// tracestate when there is one) that name it. It returns nil outside a
// phase. Pass the same headers to Request once the request finished.
func (r *Run) Header() http.Header {
	if r == nil || r.phase == nil {
		return nil
	}
	psc := r.phase.SpanContext()
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: psc.TraceID(), SpanID: newSpanID(),
		TraceFlags: psc.TraceFlags(), TraceState: psc.TraceState(),
	})
	h := make(http.Header, 2)
	r.p.prop.Inject(trace.ContextWithSpanContext(context.Background(), sc), propagation.HeaderCarrier(h))
	return h
}

// Request records a finished request's span under the current phase. Its
// times are the record's: start at submit, end at finish, events at first
// token and finish, so the span says what the journal says to the
// nanosecond. sent.Header, from Header, gives the span the id the engine saw.
func (r *Run) Request(rec *record.Record, sent Sent) {
	if r == nil || r.phase == nil {
		return
	}
	r.phaseRequests++
	if !rec.Success {
		r.phaseFailed++
	}
	ctx := r.phaseCtx
	if len(sent.Header) > 0 {
		sc := trace.SpanContextFromContext(r.p.prop.Extract(context.Background(), propagation.HeaderCarrier(sent.Header)))
		if sc.IsValid() && sc.TraceID() == r.phase.SpanContext().TraceID() {
			ctx = context.WithValue(ctx, presetSpanID{}, sc.SpanID())
		}
	}
	op, opName := semconv.GenAIOperationNameChat, "chat"
	if sent.Completion {
		op, opName = semconv.GenAIOperationNameTextCompletion, "text_completion"
	}
	name := opName
	if r.model != "" {
		name += " " + r.model
	}
	_, span := r.p.tracer.Start(ctx, name,
		trace.WithTimestamp(rec.Submit), trace.WithSpanKind(trace.SpanKindClient))
	if !span.IsRecording() { // sampled out
		return
	}
	// Set after Start rather than passed to it: one copy fewer, and none
	// at all for a span that is not recorded.
	span.SetAttributes(requestAttrs(r.common, op, rec, sent)...)
	if rec.Success && !rec.FirstToken.IsZero() {
		span.AddEvent(EventFirstToken, trace.WithTimestamp(rec.FirstToken),
			trace.WithAttributes(KeyTTFTMs.Float64(rec.TTFT*1e3)))
	}
	finish := rec.Finish
	span.AddEvent(EventFinish, trace.WithTimestamp(finish), trace.WithAttributes(
		KeySuccess.Bool(rec.Success), semconv.GenAIUsageOutputTokens(int(rec.OutputTokens))))
	if !rec.Success {
		span.SetStatus(codes.Error, rec.Error)
	}
	span.End(trace.WithTimestamp(finish))
}

// requestAttrs builds a request span's attributes: GenAI semantic
// conventions first, then lmbench's measurements and the workload's tags.
func requestAttrs(common []attribute.KeyValue, op attribute.KeyValue, rec *record.Record, sent Sent) []attribute.KeyValue {
	tags := rec.Tags
	attrs := make([]attribute.KeyValue, 0, len(common)+20+len(tags))
	attrs = append(attrs, op)
	attrs = append(attrs, common...)
	attrs = append(attrs,
		semconv.GenAIRequestStream(true),
		semconv.GenAIRequestTemperature(0),
		KeyRequestID.String(rec.RequestID),
		KeyPhase.String(rec.Phase.String()),
		KeySeq.Int64(rec.Seq),
		KeySuccess.Bool(rec.Success),
		KeyLatencyMs.Float64(rec.Latency*1e3),
	)
	if sent.MaxTokens > 0 {
		attrs = append(attrs, semconv.GenAIRequestMaxTokens(sent.MaxTokens))
	}
	if !rec.Scheduled.IsZero() {
		attrs = append(attrs, KeyScheduledUnix.Int64(rec.Scheduled.UnixNano()))
	}
	if rec.Success {
		attrs = append(attrs,
			semconv.GenAIUsageInputTokens(int(rec.InputTokens)),
			semconv.GenAIUsageOutputTokens(int(rec.OutputTokens)),
			semconv.GenAIUsageCacheReadInputTokens(int(rec.CachedTokens)),
			semconv.GenAIResponseTimeToFirstChunk(rec.TTFT),
			KeyTTFTMs.Float64(rec.TTFT*1e3),
			KeyITLMs.Float64(rec.ITL*1e3),
			KeyDecodeSpeed.Float64(rec.DecodeSpeed),
			KeyCachedTokens.Int64(rec.CachedTokens),
		)
	} else {
		attrs = append(attrs, semconv.ErrorTypeKey.String(errorType(rec.Error)))
	}
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		attrs = append(attrs, attribute.String(TagPrefix+k, tags[k]))
	}
	return attrs
}

// errorType is a low-cardinality class of an error message (error.type):
// the HTTP status code for "HTTP 503: …", else "_OTHER".
func errorType(msg string) string {
	if code, ok := strings.CutPrefix(msg, "HTTP "); ok {
		code, _, _ = strings.Cut(code, ":")
		if _, err := strconv.Atoi(code); err == nil {
			return code
		}
	}
	if strings.Contains(msg, "deadline exceeded") || strings.Contains(msg, "context canceled") {
		return "canceled"
	}
	return "_OTHER"
}

// End ends the run span.
func (r *Run) End(e RunEnd) {
	if r == nil {
		return
	}
	if r.phase != nil {
		r.EndPhase(e.End)
	}
	r.span.SetAttributes(KeyRequests.Int(e.Requests), KeyFailed.Int(e.Failed), KeyInterrupted.Bool(e.Interrupted))
	switch {
	case e.Err != nil:
		r.span.SetStatus(codes.Error, e.Err.Error())
	case e.Interrupted:
		r.span.SetStatus(codes.Error, "interrupted")
	}
	r.span.End(trace.WithTimestamp(e.End))
}
