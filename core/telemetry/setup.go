package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// Options configure FromEnv.
type Options struct {
	// ServiceVersion is recorded as service.version (lmbench's version).
	ServiceVersion string
	// Endpoint, when set, is the OTLP endpoint URL for traces (as a
	// command-line flag would give it): it wins over the OTEL_EXPORTER_OTLP_*
	// endpoint variables and turns OTLP export on by itself.
	Endpoint string
	// Console receives spans for OTEL_TRACES_EXPORTER=console; nil means
	// os.Stderr (stdout carries the results).
	Console io.Writer
}

// Environment variables read here; the OTLP exporters read the rest of
// OTEL_EXPORTER_OTLP_* (headers, timeout, TLS, compression) themselves.
const (
	envSDKDisabled     = "OTEL_SDK_DISABLED"
	envTracesExporter  = "OTEL_TRACES_EXPORTER"
	envEndpoint        = "OTEL_EXPORTER_OTLP_ENDPOINT"
	envTracesEndpoint  = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envProtocol        = "OTEL_EXPORTER_OTLP_PROTOCOL"
	envTracesProtocol  = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	envBSPMaxQueueSize = "OTEL_BSP_MAX_QUEUE_SIZE"
	envTraceparent     = "TRACEPARENT"
	envTracestate      = "TRACESTATE"
)

// defaultQueueSize replaces the SDK's 2048 spans: a fast run finishes
// thousands of requests between two exports, and a full queue drops spans.
const defaultQueueSize = 16384

// FromEnv builds a Provider from the standard OTEL_* environment variables
// (see the package documentation) and opts. It returns nil, nil when
// nothing asks for traces: OTEL_TRACES_EXPORTER unset with no OTLP
// endpoint, OTEL_TRACES_EXPORTER=none, or OTEL_SDK_DISABLED=true. Unlike
// the SDK's own default, an unset exporter with no endpoint does not send
// to localhost. A malformed variable is an error naming it.
func FromEnv(ctx context.Context, opts Options) (*Provider, error) {
	if v := os.Getenv(envSDKDisabled); v != "" {
		off, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("%s: expected true or false, got %q", envSDKDisabled, v)
		}
		if off {
			return nil, nil
		}
	}
	endpoint, err := tracesEndpoint(opts.Endpoint)
	if err != nil {
		return nil, err
	}
	var names []string
	for n := range strings.SplitSeq(os.Getenv(envTracesExporter), ",") {
		if n = strings.ToLower(strings.TrimSpace(n)); n != "" && n != "none" {
			names = append(names, n)
		} else if n == "none" && opts.Endpoint == "" {
			return nil, nil // "none" wins over endpoints set for other tools
		}
	}
	if len(names) == 0 {
		if endpoint == "" {
			return nil, nil
		}
		names = []string{"otlp"}
	}

	var (
		exps      []sdktrace.SpanExporter
		described []string
	)
	fail := func(err error) (*Provider, error) {
		for _, e := range exps {
			_ = e.Shutdown(ctx)
		}
		return nil, err
	}
	for _, name := range names {
		switch name {
		case "otlp":
			exp, desc, err := otlpExporter(ctx, opts.Endpoint, endpoint)
			if err != nil {
				return fail(err)
			}
			exps, described = append(exps, exp), append(described, desc)
		case "console":
			w := opts.Console
			if w == nil {
				w = os.Stderr
			}
			exp, err := stdouttrace.New(stdouttrace.WithWriter(w), stdouttrace.WithPrettyPrint())
			if err != nil {
				return fail(fmt.Errorf("console span exporter: %w", err))
			}
			exps, described = append(exps, exp), append(described, "console")
		default:
			return fail(fmt.Errorf("%s: unknown exporter %q; expected otlp, console or none", envTracesExporter, name))
		}
	}

	res, err := newResource(ctx, opts.ServiceVersion)
	if err != nil {
		return fail(err)
	}
	var bsp []sdktrace.BatchSpanProcessorOption
	if os.Getenv(envBSPMaxQueueSize) == "" {
		bsp = append(bsp, sdktrace.WithMaxQueueSize(defaultQueueSize))
	}
	tpOpts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	for _, e := range exps {
		tpOpts = append(tpOpts, sdktrace.WithBatcher(e, bsp...))
	}
	p := New(tpOpts...)
	p.exporters = described
	p.parent = parentFromEnv()
	return p, nil
}

// tracesEndpoint returns the OTLP traces endpoint in effect ("" if none)
// after checking that each one given is a URL.
func tracesEndpoint(flag string) (string, error) {
	check := func(name, v string) (string, error) {
		if v == "" {
			return "", nil
		}
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", fmt.Errorf("%s: expected a URL such as http://localhost:4318 (http/protobuf) or http://localhost:4317 (grpc), got %q", name, v)
		}
		return v, nil
	}
	if flag != "" {
		return check("--otlp-endpoint", flag)
	}
	traces, err := check(envTracesEndpoint, os.Getenv(envTracesEndpoint))
	if err != nil {
		return "", err
	}
	all, err := check(envEndpoint, os.Getenv(envEndpoint))
	if err != nil {
		return "", err
	}
	if traces != "" {
		return traces, nil
	}
	return all, nil
}

// otlpExporter builds the OTLP exporter for the protocol in effect. The
// exporters read the endpoint, headers, TLS and timeout variables
// themselves; an explicit endpoint (flag) overrides theirs.
func otlpExporter(ctx context.Context, flagEndpoint, endpoint string) (sdktrace.SpanExporter, string, error) {
	name, proto := envTracesProtocol, os.Getenv(envTracesProtocol)
	if proto == "" {
		name, proto = envProtocol, os.Getenv(envProtocol)
	}
	proto = strings.ToLower(strings.TrimSpace(proto))
	switch proto {
	case "grpc":
		var o []otlptracegrpc.Option
		if flagEndpoint != "" {
			o = append(o, otlptracegrpc.WithEndpointURL(flagEndpoint))
		}
		exp, err := otlptracegrpc.New(ctx, o...)
		if err != nil {
			return nil, "", fmt.Errorf("OTLP gRPC span exporter: %w", err)
		}
		return exp, describe("otlp grpc", endpoint, "http://localhost:4317"), nil
	case "", "http/protobuf":
		var o []otlptracehttp.Option
		if flagEndpoint != "" {
			o = append(o, otlptracehttp.WithEndpointURL(flagEndpoint))
		}
		exp, err := otlptracehttp.New(ctx, o...)
		if err != nil {
			return nil, "", fmt.Errorf("OTLP HTTP span exporter: %w", err)
		}
		return exp, describe("otlp http/protobuf", endpoint, "http://localhost:4318"), nil
	default:
		return nil, "", fmt.Errorf("%s: unsupported protocol %q; expected http/protobuf or grpc", name, proto)
	}
}

// describe names an exporter and its endpoint without credentials.
func describe(kind, endpoint, def string) string {
	if endpoint == "" {
		endpoint = def
	}
	if u, err := url.Parse(endpoint); err == nil {
		u.User, u.RawQuery = nil, ""
		endpoint = u.String()
	}
	return kind + " " + endpoint
}

// newResource describes the process: service.name "lmbench" unless
// OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say otherwise, the version,
// the host and the SDK. Not the command line: it may hold credentials.
func newResource(ctx context.Context, version string) (*resource.Resource, error) {
	fromEnv, err := resource.New(ctx, resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: expected key=value pairs separated by commas: %w", err)
	}
	attrs := []attribute.KeyValue{semconv.ServiceName("lmbench")}
	if version != "" {
		attrs = append(attrs, semconv.ServiceVersion(version))
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attrs...),
		resource.WithTelemetrySDK(),
		resource.WithHost(),
		resource.WithProcessPID(),
		resource.WithProcessRuntimeName(),
		resource.WithProcessRuntimeVersion(),
	)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("trace resource: %w", err)
	}
	// The environment wins over the defaults (Merge keeps the second's values).
	if res, err = resource.Merge(res, fromEnv); err != nil {
		return nil, fmt.Errorf("trace resource: %w", err)
	}
	return res, nil
}

// parentFromEnv reads TRACEPARENT/TRACESTATE, which a CI job or script
// sets so that the processes it starts join its trace.
func parentFromEnv() trace.SpanContext {
	tp := os.Getenv(envTraceparent)
	if tp == "" {
		return trace.SpanContext{}
	}
	carrier := propagation.MapCarrier{"traceparent": tp, "tracestate": os.Getenv(envTracestate)}
	ctx := propagation.TraceContext{}.Extract(context.Background(), carrier)
	return trace.SpanContextFromContext(ctx)
}
