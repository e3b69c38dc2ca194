// Package telemetry records a benchmark run as OpenTelemetry traces, on the
// host side only (plugins never see any of it).
//
// A run is one trace: a root "lmbench run" span, one child span per phase
// ("warmup", "measure") and, under its phase, one client span per request
// named after the GenAI semantic conventions ("chat <model>",
// "text_completion <model>"). A request span starts at the request's
// measured submit time and ends at its measured finish time, in the same
// Unix nanoseconds the run journal records, with a "first_token" and a
// "finish" event; a failed request has an error status carrying its error.
//
// The engine joins the trace: [Run.Header] reserves the request span's id
// before the request is sent and returns the W3C traceparent header naming
// it, and [Run.Request] later records the span under exactly that id, with
// the measured timestamps. (The span cannot be started before the HTTP call
// with its final start time, because that time is only measured right
// before the call; reserving the id gives the engine the right parent and
// the span the exact times.)
//
// How to start:
//
//	p, err := telemetry.FromEnv(ctx, telemetry.Options{ServiceVersion: version})
//	if err != nil { ... }          // a bad OTEL_* variable, named in the error
//	defer p.Shutdown(shutdownCtx)  // flushes; nil-safe
//	// p is nil when nothing asks for traces: pass it on, nothing runs.
//
// FromEnv follows the standard variables: OTEL_TRACES_EXPORTER (otlp,
// console, none), OTEL_EXPORTER_OTLP_ENDPOINT and
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL and
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL (http/protobuf or grpc),
// OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,
// OTEL_TRACES_SAMPLER, OTEL_BSP_*, OTEL_SDK_DISABLED, and TRACEPARENT (the
// run span becomes a child of the trace that launched lmbench). With none
// of them set, FromEnv returns nil and tracing costs nothing.
package telemetry
