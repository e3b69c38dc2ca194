package telemetry

import (
	"bytes"
	"context"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/telemetry/otlptest"
)

// otelVars are cleared before each environment test, so the machine's own
// settings cannot leak in.
var otelVars = []string{
	envSDKDisabled, envTracesExporter, envEndpoint, envTracesEndpoint, envProtocol, envTracesProtocol,
	envBSPMaxQueueSize, envTraceparent, envTracestate, "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES",
	"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG",
}

func setEnv(t *testing.T, kv map[string]string) {
	t.Helper()
	for _, k := range otelVars {
		t.Setenv(k, "")
	}
	for k, v := range kv {
		t.Setenv(k, v)
	}
}

// Nothing set, or an explicit off switch: no provider, so nothing runs.
func TestFromEnvOff(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"nothing set":               {},
		"exporter none":             {envTracesExporter: "none", envEndpoint: "http://127.0.0.1:4318"},
		"sdk disabled":              {envSDKDisabled: "true", envEndpoint: "http://127.0.0.1:4318"},
		"only a protocol":           {envProtocol: "grpc"},
		"resource attributes only":  {"OTEL_SERVICE_NAME": "x", "OTEL_RESOURCE_ATTRIBUTES": "a=b"},
		"exporter list with spaces": {envTracesExporter: " , "},
	} {
		t.Run(name, func(t *testing.T) {
			setEnv(t, env)
			p, err := FromEnv(context.Background(), Options{})
			if err != nil || p != nil {
				t.Fatalf("FromEnv = %v, %v; want nil, nil", p, err)
			}
		})
	}
}

// A malformed variable is an error naming it and the value given.
func TestFromEnvErrors(t *testing.T) {
	for name, c := range map[string]struct {
		env  map[string]string
		opts Options
		want []string
	}{
		"endpoint without scheme": {env: map[string]string{envEndpoint: "localhost:4317"}, want: []string{envEndpoint, `"localhost:4317"`, "http://localhost:4317"}},
		"traces endpoint garbage": {env: map[string]string{envTracesEndpoint: "::nope"}, want: []string{envTracesEndpoint, `"::nope"`}},
		"flag endpoint":           {opts: Options{Endpoint: "collector:4317"}, want: []string{"--otlp-endpoint", `"collector:4317"`}},
		"protocol":                {env: map[string]string{envEndpoint: "http://127.0.0.1:1", envProtocol: "http/json"}, want: []string{envProtocol, `"http/json"`, "http/protobuf or grpc"}},
		"traces protocol":         {env: map[string]string{envEndpoint: "http://127.0.0.1:1", envTracesProtocol: "udp"}, want: []string{envTracesProtocol, `"udp"`}},
		"exporter":                {env: map[string]string{envTracesExporter: "zipkin"}, want: []string{envTracesExporter, `"zipkin"`, "otlp, console or none"}},
		"sdk disabled":            {env: map[string]string{envSDKDisabled: "maybe"}, want: []string{envSDKDisabled, `"maybe"`}},
		"resource attributes":     {env: map[string]string{envTracesExporter: "console", "OTEL_RESOURCE_ATTRIBUTES": "novalue"}, want: []string{"OTEL_RESOURCE_ATTRIBUTES", "key=value"}},
	} {
		t.Run(name, func(t *testing.T) {
			setEnv(t, c.env)
			p, err := FromEnv(context.Background(), c.opts)
			if err == nil {
				p.Shutdown(context.Background())
				t.Fatal("FromEnv succeeded, want an error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// recordOne records a run with one measured request and returns the
// traceparent that was sent for it.
func recordOne(p *Provider) string {
	t0 := time.Now()
	r := p.StartRun(context.Background(), RunInfo{RunID: "r1", Workload: "w", Model: "m", EngineURL: "http://127.0.0.1:8000/v1", Start: t0})
	r.StartPhase("measure", t0)
	h := r.Header()
	r.Request(&record.Record{
		Phase: record.Measure, RequestID: "q1", Success: true, TTFT: 0.001,
		InputTokens: 10, OutputTokens: 2, Submit: t0.Add(1),
		FirstToken: t0.Add(1_000_001), Finish: t0.Add(2_000_001),
		Tags: map[string]string{"doc": "1"},
	}, Sent{Header: h, MaxTokens: 2})
	r.EndPhase(t0.Add(3 * time.Millisecond))
	r.End(RunEnd{End: t0.Add(4 * time.Millisecond), Requests: 1})
	return h.Get("traceparent")
}

// The environment alone sends spans to a real OTLP endpoint, over gRPC and
// over HTTP/protobuf, with the resource and headers it names.
func TestFromEnvExportsOverOTLP(t *testing.T) {
	for _, proto := range []string{"grpc", "http/protobuf"} {
		t.Run(proto, func(t *testing.T) {
			start := otlptest.StartHTTP
			if proto == "grpc" {
				start = otlptest.StartGRPC
			}
			rcv, err := start()
			if err != nil {
				t.Fatal(err)
			}
			defer rcv.Close()
			setEnv(t, map[string]string{
				envEndpoint: rcv.Endpoint(), envProtocol: proto,
				"OTEL_SERVICE_NAME": "bench-ci", "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=lab,service.name=ignored",
				"OTEL_EXPORTER_OTLP_HEADERS": "x-tenant=team-a",
			})
			p, err := FromEnv(context.Background(), Options{ServiceVersion: "9.9.9"})
			if err != nil || p == nil {
				t.Fatalf("FromEnv = %v, %v", p, err)
			}
			if got := strings.Join(p.Exporters(), ","); got != "otlp "+proto+" "+rcv.Endpoint() {
				t.Errorf("Exporters() = %q", got)
			}
			tp := recordOne(p)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := p.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			spans := rcv.Spans()
			if len(spans) != 3 {
				t.Fatalf("receiver got %d spans, want 3", len(spans))
			}
			var req otlptest.Span
			for _, s := range spans {
				if s.GetName() == "chat m" {
					req = s
				}
				if got := s.Resource["service.name"]; got != "bench-ci" {
					t.Errorf("service.name = %q, want bench-ci (OTEL_SERVICE_NAME wins)", got)
				}
				if s.Resource["service.version"] != "9.9.9" || s.Resource["deployment.environment.name"] != "lab" {
					t.Errorf("resource %v lacks the version or OTEL_RESOURCE_ATTRIBUTES", s.Resource)
				}
				if _, ok := s.Resource["process.command_args"]; ok {
					t.Error("the command line (which may hold credentials) is in the resource")
				}
			}
			if req.Span == nil {
				t.Fatal("no request span received")
			}
			want := "00-" + hex.EncodeToString(req.GetTraceId()) + "-" + hex.EncodeToString(req.GetSpanId()) + "-01"
			if tp != want {
				t.Errorf("traceparent sent %q, span received %q", tp, want)
			}
			if got := rcv.Headers()[0].Get("x-tenant"); got != "team-a" {
				t.Errorf("OTEL_EXPORTER_OTLP_HEADERS not sent: x-tenant = %q", got)
			}
		})
	}
}

// OTEL_TRACES_EXPORTER=console prints spans to the Console writer.
func TestFromEnvConsole(t *testing.T) {
	setEnv(t, map[string]string{envTracesExporter: "console"})
	var buf bytes.Buffer
	p, err := FromEnv(context.Background(), Options{Console: &buf})
	if err != nil || p == nil {
		t.Fatalf("FromEnv = %v, %v", p, err)
	}
	recordOne(p)
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`"Name": "chat m"`, `"Name": "measure"`, `"Name": "lmbench run"`, `"gen_ai.request.model"`} {
		if !strings.Contains(buf.String(), w) {
			t.Errorf("console output lacks %s:\n%.2000s", w, buf.String())
		}
	}
}

// An endpoint from a flag turns OTLP on even with OTEL_TRACES_EXPORTER=none
// (the command line wins over the environment), and TRACEPARENT makes the
// run a child of the caller's trace.
func TestFromEnvFlagEndpointAndTraceparent(t *testing.T) {
	rcv, err := otlptest.StartHTTP()
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Close()
	setEnv(t, map[string]string{
		envTracesExporter: "none", envEndpoint: "http://127.0.0.1:9", // unused: the flag wins
		envTraceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
	})
	p, err := FromEnv(context.Background(), Options{Endpoint: rcv.Endpoint() + "/v1/traces"})
	if err != nil || p == nil {
		t.Fatalf("FromEnv = %v, %v", p, err)
	}
	recordOne(p)
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := rcv.Spans()
	if len(spans) != 3 {
		t.Fatalf("receiver got %d spans, want 3", len(spans))
	}
	for _, s := range spans {
		if got := hex.EncodeToString(s.GetTraceId()); got != "4bf92f3577b34da6a3ce929d0e0e4736" {
			t.Errorf("span %q in trace %s, want TRACEPARENT's", s.GetName(), got)
		}
		if s.GetName() == "lmbench run" && hex.EncodeToString(s.GetParentSpanId()) != "00f067aa0ba902b7" {
			t.Errorf("run span parent = %x, want TRACEPARENT's span", s.GetParentSpanId())
		}
	}
}
