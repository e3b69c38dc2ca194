package telemetry

import (
	"context"
	"encoding/binary"
	"math/rand/v2"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// scope is the instrumentation scope of every span lmbench records.
const scope = "github.com/lmbench/lmbench/core/telemetry"

// Provider records runs as traces. A nil *Provider is valid and records
// nothing; build one with FromEnv (the standard OTEL_* variables) or New.
type Provider struct {
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
	prop   propagation.TraceContext
	// parent is the span the run span is a child of (TRACEPARENT), if any.
	parent trace.SpanContext
	// exporters names what the spans go to, for the startup log line.
	exporters []string
}

// New returns a Provider over an SDK tracer provider built with opts (for
// instance sdktrace.WithBatcher(exporter) or sdktrace.WithSpanProcessor).
// It adds the ID generator that lets a request span carry the id sent to
// the engine, so opts must not set another one.
func New(opts ...sdktrace.TracerProviderOption) *Provider {
	opts = append(opts, sdktrace.WithIDGenerator(idGenerator{}))
	tp := sdktrace.NewTracerProvider(opts...)
	return &Provider{tp: tp, tracer: tp.Tracer(scope, trace.WithSchemaURL(semconv.SchemaURL))}
}

// Exporters names where spans go (e.g. "otlp grpc http://collector:4317"),
// for logs. It never includes headers (they may carry credentials).
func (p *Provider) Exporters() []string {
	if p == nil {
		return nil
	}
	return p.exporters
}

// ForceFlush exports every span recorded so far.
func (p *Provider) ForceFlush(ctx context.Context) error {
	if p == nil {
		return nil
	}
	return p.tp.ForceFlush(ctx)
}

// Shutdown exports what is left and stops the exporters; ctx bounds the
// wait (an unreachable collector must not hold the process). Nil-safe.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p == nil {
		return nil
	}
	return p.tp.Shutdown(ctx)
}

// presetSpanID is the context key under which Run.Request hands the
// generator the span id that Run.Header reserved (and sent to the engine).
type presetSpanID struct{}

// idGenerator is the SDK's random generator, except that a span started
// with a reserved id in its context gets that id.
type idGenerator struct{}

var _ sdktrace.IDGenerator = idGenerator{}

func (idGenerator) NewIDs(context.Context) (trace.TraceID, trace.SpanID) {
	var tid trace.TraceID
	for !tid.IsValid() {
		binary.NativeEndian.PutUint64(tid[:8], rand.Uint64())
		binary.NativeEndian.PutUint64(tid[8:], rand.Uint64())
	}
	return tid, newSpanID()
}

func (idGenerator) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	if sid, ok := ctx.Value(presetSpanID{}).(trace.SpanID); ok && sid.IsValid() {
		return sid
	}
	return newSpanID()
}

func newSpanID() trace.SpanID {
	var sid trace.SpanID
	for !sid.IsValid() {
		binary.NativeEndian.PutUint64(sid[:], rand.Uint64())
	}
	return sid
}
