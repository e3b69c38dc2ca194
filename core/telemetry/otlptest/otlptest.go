// Package otlptest is an OTLP trace receiver for tests: a real OTLP/gRPC
// or OTLP/HTTP (protobuf) endpoint on a loopback port that keeps every span
// it is sent, so a test can check what an exporter (or the lmbench binary)
// really put on the wire.
//
//	rcv, err := otlptest.StartGRPC()        // or StartHTTP()
//	defer rcv.Close()
//	os.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.Endpoint())
//	... run, flush ...
//	spans := rcv.Spans()
package otlptest

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	collectortracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// Span is one received span with the resource and scope it came under.
type Span struct {
	Resource map[string]string // resource attributes, values as strings
	Scope    string
	*tracepb.Span
}

// Attr returns a span attribute's value and whether it is present.
func (s Span) Attr(key string) (*commonpb.AnyValue, bool) {
	return Attr(s.GetAttributes(), key)
}

// Attr finds key among attrs.
func Attr(attrs []*commonpb.KeyValue, key string) (*commonpb.AnyValue, bool) {
	for _, kv := range attrs {
		if kv.GetKey() == key {
			return kv.GetValue(), true
		}
	}
	return nil, false
}

// Receiver is a running OTLP trace endpoint.
type Receiver struct {
	endpoint string
	close    func()

	mu      sync.Mutex
	spans   []Span
	headers []http.Header // request headers (HTTP) or metadata (gRPC), per export
	notify  chan struct{}
}

func newReceiver() *Receiver { return &Receiver{notify: make(chan struct{}, 1)} }

// Endpoint is the URL to give an exporter (OTEL_EXPORTER_OTLP_ENDPOINT):
// http://127.0.0.1:PORT.
func (r *Receiver) Endpoint() string { return r.endpoint }

// Close stops the receiver.
func (r *Receiver) Close() { r.close() }

// Spans returns every span received so far, in arrival order.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Headers returns the headers (HTTP) or metadata (gRPC) of each export call.
func (r *Receiver) Headers() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.headers...)
}

// WaitFor waits until at least n spans arrived or timeout passed, and
// returns the spans it has.
func (r *Receiver) WaitFor(n int, timeout time.Duration) []Span {
	deadline := time.After(timeout)
	for {
		if s := r.Spans(); len(s) >= n {
			return s
		}
		select {
		case <-r.notify:
		case <-deadline:
			return r.Spans()
		}
	}
}

func (r *Receiver) add(req *collectortracepb.ExportTraceServiceRequest, h http.Header) {
	r.mu.Lock()
	r.headers = append(r.headers, h)
	for _, rs := range req.GetResourceSpans() {
		res := map[string]string{}
		for _, kv := range rs.GetResource().GetAttributes() {
			res[kv.GetKey()] = valueString(kv.GetValue())
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				r.spans = append(r.spans, Span{Resource: res, Scope: ss.GetScope().GetName(), Span: sp})
			}
		}
	}
	r.mu.Unlock()
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

func valueString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	}
	return v.String()
}

type grpcService struct {
	collectortracepb.UnimplementedTraceServiceServer
	r *Receiver
}

func (s grpcService) Export(ctx context.Context, req *collectortracepb.ExportTraceServiceRequest) (*collectortracepb.ExportTraceServiceResponse, error) {
	h := http.Header{}
	if md, ok := metadataFrom(ctx); ok {
		h = md
	}
	s.r.add(req, h)
	return &collectortracepb.ExportTraceServiceResponse{}, nil
}

// StartGRPC starts an OTLP/gRPC receiver (the collector TraceService) on
// a loopback port.
func StartGRPC() (*Receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := newReceiver()
	srv := grpc.NewServer()
	collectortracepb.RegisterTraceServiceServer(srv, grpcService{r: r})
	go func() { _ = srv.Serve(ln) }()
	r.endpoint = "http://" + ln.Addr().String()
	r.close = srv.Stop
	return r, nil
}

// StartHTTP starts an OTLP/HTTP receiver accepting protobuf (optionally
// gzip-compressed) at /v1/traces on a loopback port.
func StartHTTP() (*Receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := newReceiver()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		var body io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			gz, err := gzip.NewReader(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = gz
		}
		b, err := io.ReadAll(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
			http.Error(w, "expected Content-Type application/x-protobuf, got "+ct, http.StatusUnsupportedMediaType)
			return
		}
		var msg collectortracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.add(&msg, req.Header.Clone())
		out, _ := proto.Marshal(&collectortracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = io.Copy(w, bytes.NewReader(out))
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	r.endpoint = "http://" + ln.Addr().String()
	r.close = func() { _ = srv.Close() }
	return r, nil
}

// metadataFrom returns the incoming gRPC metadata as an http.Header.
func metadataFrom(ctx context.Context) (http.Header, bool) {
	md, ok := metadata.FromIncomingContext(ctx)
	if !ok {
		return nil, false
	}
	h := http.Header{}
	for k, vs := range md {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	return h, true
}
