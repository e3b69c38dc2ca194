package wire_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/wire"
)

// serve registers a service on a real gRPC server listening on a Unix
// socket in the test's temp dir and returns a client connection, with the
// message limits a plugin and the host use.
func serve(t *testing.T, register func(*grpc.Server)) *grpc.ClientConn {
	t.Helper()
	lis, err := net.Listen("unix", filepath.Join(t.TempDir(), "plugin.sock"))
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(wire.GRPCServerOptions()...)
	register(s)
	go s.Serve(lis)
	opts := append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, wire.GRPCDialOptions()...)
	conn, err := grpc.NewClient("unix://"+lis.Addr().String(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		s.Stop()
	})
	return conn
}

// workloadFake answers every call with its fields and records what it got.
type workloadFake struct {
	err error // returned by every call when set

	host     protocol.HostInfo
	cfg      protocol.WorkloadConfig
	step     protocol.StepRequest
	finished []protocol.Result

	desc       protocol.WorkloadDescription
	configured protocol.Configured
	resp       protocol.StepResponse
}

func (f *workloadFake) Describe(_ context.Context, h protocol.HostInfo) (protocol.WorkloadDescription, error) {
	f.host = h
	return f.desc, f.err
}

func (f *workloadFake) Configure(_ context.Context, c protocol.WorkloadConfig) (protocol.Configured, error) {
	f.cfg = c
	return f.configured, f.err
}

func (f *workloadFake) Step(_ context.Context, r protocol.StepRequest) (protocol.StepResponse, error) {
	f.step = r
	return f.resp, f.err
}

func (f *workloadFake) OnFinished(_ context.Context, rs []protocol.Result) error {
	f.finished = rs
	return f.err
}

type exporterFake struct {
	err error

	host    protocol.HostInfo
	cfg     protocol.ExporterConfig
	records []protocol.Record
	summary protocol.Summary

	desc  protocol.ExporterDescription
	files []protocol.File
}

func (f *exporterFake) Describe(_ context.Context, h protocol.HostInfo) (protocol.ExporterDescription, error) {
	f.host = h
	return f.desc, f.err
}

func (f *exporterFake) Configure(_ context.Context, c protocol.ExporterConfig) (protocol.Configured, error) {
	f.cfg = c
	return protocol.Configured{Resolved: c.Options}, f.err
}

func (f *exporterFake) Write(_ context.Context, rs []protocol.Record) error {
	f.records = rs
	return f.err
}

func (f *exporterFake) Finish(_ context.Context, s protocol.Summary) ([]protocol.File, error) {
	f.summary = s
	return f.files, f.err
}

// scoringFake is workloadFake with the Scores capability's OnFinished.
type scoringFake struct {
	workloadFake
	scores []protocol.Score
}

func (f *scoringFake) OnFinishedScored(_ context.Context, rs []protocol.Result) ([]protocol.Score, error) {
	f.finished = rs
	return f.scores, f.err
}

// OnFinished's answer carries a scoring plugin's scores back; a plugin
// that scores nothing answers none.
func TestOnFinishedScoredOverGRPC(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	results := []protocol.Result{{ID: "q1", Phase: protocol.Measure, Success: true, Text: "4832"}}
	want := []protocol.Score{{RequestID: "q1", Phase: protocol.Measure, Values: map[string]float64{"exact": 1, "contains": 1}}}
	scoring := &scoringFake{scores: want}
	c := wire.WorkloadClient(serve(t, func(s *grpc.Server) { wire.RegisterWorkload(s, scoring) }))
	got, err := c.(protocol.Scorer).OnFinishedScored(ctx, results)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("scores (-want +got):\n%s", d)
	}
	if d := cmp.Diff(results, scoring.finished); d != "" {
		t.Errorf("results the plugin saw (-want +got):\n%s", d)
	}
	plain := &workloadFake{}
	c = wire.WorkloadClient(serve(t, func(s *grpc.Server) { wire.RegisterWorkload(s, plain) }))
	got, err = c.(protocol.Scorer).OnFinishedScored(ctx, results)
	if err != nil || got != nil {
		t.Errorf("a plugin that scores nothing: got %v, %v; want no scores, no error", got, err)
	}
}

var host = protocol.HostInfo{Version: "1.4.0", ProtocolMinor: protocol.Minor, Capabilities: protocol.HostCapabilities}

// Every call carries its request to the service and its answer back.
func TestWorkloadOverGRPC(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := &workloadFake{
		desc: protocol.WorkloadDescription{
			Info:    protocol.PluginInfo{Kind: protocol.WorkloadKind, Name: "w", Version: "1", ProtocolMinor: 1, Capabilities: []string{protocol.ToolCalls}},
			Options: []protocol.OptionSpec{{Name: "n", Type: protocol.OptionInt, Default: int64(3), Min: new(1.0)}},
			TagKeys: []string{"doc"}, WantsResponseText: true, ScoreKeys: []string{"exact"}, Deterministic: true,
		},
		configured: protocol.Configured{Resolved: protocol.Values{"n": int64(3)}, Title: "w", PlannedRequests: 9},
		resp: protocol.StepResponse{
			Contents: []protocol.Content{{ID: "d", Text: "doc"}},
			Requests: []protocol.Request{{ID: "q", Messages: []protocol.Message{{Role: "user", Content: []protocol.Segment{{Ref: "d"}}}}, MaxTokens: 5}},
			Released: []string{"old"},
			Next:     protocol.Next{Kind: protocol.NextWakeAtOrFinish, At: time.Second},
			Scores:   []protocol.Score{{RequestID: "a", Phase: protocol.Measure, Values: map[string]float64{"exact": 1}}},
		},
	}
	c := wire.WorkloadClient(serve(t, func(s *grpc.Server) { wire.RegisterWorkload(s, fake) }))

	desc, err := c.Describe(ctx, host)
	if err != nil {
		t.Fatal(err)
	}
	cfg := protocol.WorkloadConfig{Options: protocol.Values{"n": int64(3)}, Common: protocol.Common{Seed: 1, Model: "m"}}
	configured, err := c.Configure(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	stepReq := protocol.StepRequest{Phase: protocol.Measure, Offset: time.Second, InFlight: 2,
		Finished: []protocol.Result{{ID: "a", Phase: protocol.Measure, Success: true, Latency: 1}}}
	resp, err := c.Step(ctx, stepReq)
	if err != nil {
		t.Fatal(err)
	}
	results := []protocol.Result{{ID: "b", Phase: protocol.Measure, Error: "boom", TTFT: -1}}
	if err := c.OnFinished(ctx, results); err != nil {
		t.Fatal(err)
	}
	for _, d := range []struct {
		what      string
		want, got any
	}{
		{"host the plugin saw", host, fake.host},
		{"description", fake.desc, desc},
		{"config the plugin saw", cfg, fake.cfg},
		{"configured", fake.configured, configured},
		{"step request the plugin saw", stepReq, fake.step},
		{"step response", fake.resp, resp},
		{"results the plugin saw", results, fake.finished},
	} {
		if diff := cmp.Diff(d.want, d.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", d.what, diff)
		}
	}
}

func TestExporterOverGRPC(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := &exporterFake{
		desc: protocol.ExporterDescription{Info: protocol.PluginInfo{Kind: protocol.ExporterKind, Name: "csv"},
			Options: []protocol.OptionSpec{{Name: "file", Type: protocol.OptionString, Default: "out.csv"}}},
		files: []protocol.File{{Path: "/out/a.csv", Rows: 2, Description: "requests"}},
	}
	c := wire.ExporterClient(serve(t, func(s *grpc.Server) { wire.RegisterExporter(s, fake) }))
	desc, err := c.Describe(ctx, host)
	if err != nil {
		t.Fatal(err)
	}
	cfg := protocol.ExporterConfig{Options: protocol.Values{"file": "a.csv"}, Run: protocol.RunMetadata{RunID: "r", Started: time.Unix(1700000000, 1)}}
	configured, err := c.Configure(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	records := []protocol.Record{{RunID: "r", RequestID: "q0", Phase: protocol.Measure, Success: true, Seq: 1, Finish: time.Unix(1700000001, 0)},
		{RunID: "r", RequestID: "q1", Phase: protocol.Measure, TTFT: -1, Seq: 2}}
	if err := c.Write(ctx, records); err != nil {
		t.Fatal(err)
	}
	summary := protocol.Summary{RunID: "r", JSON: "{}", Total: 2, Successful: 1, Failed: 1}
	files, err := c.Finish(ctx, summary)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []struct {
		what      string
		want, got any
	}{
		{"host the plugin saw", host, fake.host},
		{"description", fake.desc, desc},
		{"config the plugin saw", cfg, fake.cfg},
		{"configured", protocol.Configured{Resolved: cfg.Options}, configured},
		{"records the plugin saw", records, fake.records},
		{"summary the plugin saw", summary, fake.summary},
		{"files", fake.files, files},
	} {
		if diff := cmp.Diff(d.want, d.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", d.what, diff)
		}
	}
}

// A service error wrapping ErrOutOfOrder crosses gRPC as
// FailedPrecondition and comes back as ErrOutOfOrder; any other error is
// Unknown with its text; a status error passes as it is.
func TestErrorsOverGRPC(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		err        error
		wantCode   codes.Code
		wantMsg    string
		outOfOrder bool
	}{
		{"out of order", fmt.Errorf("Step before a successful Configure: %w", protocol.ErrOutOfOrder),
			codes.FailedPrecondition, "Step before a successful Configure: called out of order", true},
		{"out of order, wrapped twice", fmt.Errorf("exporter: %w", fmt.Errorf("used after Finish: %w", protocol.ErrOutOfOrder)),
			codes.FailedPrecondition, "exporter: used after Finish: called out of order", true},
		{"plain", errors.New("step: out of documents"), codes.Unknown, "step: out of documents", false},
		{"status", status.Error(codes.ResourceExhausted, "too big"), codes.ResourceExhausted, "too big", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wl := &workloadFake{err: tc.err}
			ex := &exporterFake{err: tc.err}
			conn := serve(t, func(s *grpc.Server) {
				wire.RegisterWorkload(s, wl)
				wire.RegisterExporter(s, ex)
			})
			w, e := wire.WorkloadClient(conn), wire.ExporterClient(conn)
			ctx := context.Background()
			calls := map[string]func() error{
				"workload Describe":   func() error { _, err := w.Describe(ctx, host); return err },
				"workload Configure":  func() error { _, err := w.Configure(ctx, protocol.WorkloadConfig{}); return err },
				"workload Step":       func() error { _, err := w.Step(ctx, protocol.StepRequest{}); return err },
				"workload OnFinished": func() error { return w.OnFinished(ctx, nil) },
				"exporter Describe":   func() error { _, err := e.Describe(ctx, host); return err },
				"exporter Configure":  func() error { _, err := e.Configure(ctx, protocol.ExporterConfig{}); return err },
				"exporter Write":      func() error { return e.Write(ctx, nil) },
				"exporter Finish":     func() error { _, err := e.Finish(ctx, protocol.Summary{}); return err },
			}
			for name, call := range calls {
				err := call()
				var rpc *wire.RPCError
				if !errors.As(err, &rpc) {
					t.Errorf("%s: error %v (%T) is not a *wire.RPCError", name, err, err)
					continue
				}
				if got := status.Code(err); got != tc.wantCode {
					t.Errorf("%s: code %v, want %v", name, got, tc.wantCode)
				}
				if err.Error() != tc.wantMsg {
					t.Errorf("%s: message %q, want %q", name, err.Error(), tc.wantMsg)
				}
				if got := errors.Is(err, protocol.ErrOutOfOrder); got != tc.outOfOrder {
					t.Errorf("%s: errors.Is(ErrOutOfOrder) = %v, want %v", name, got, tc.outOfOrder)
				}
			}
		})
	}
}

func TestDescribeJSON(t *testing.T) {
	t.Parallel()
	wl := protocol.WorkloadDescription{
		Info:    protocol.PluginInfo{Kind: protocol.WorkloadKind, Name: "w", Version: "1", Summary: "s", Prefix: "w", ProtocolMinor: 1, Capabilities: []string{protocol.ToolCalls}, SDKVersion: wire.SDKVersion},
		Options: []protocol.OptionSpec{{Name: "timeout", Type: protocol.OptionDuration, Default: int64(time.Second), Help: "h", Min: new(0.0)}},
		TagKeys: []string{"doc"}, WantsResponseText: true,
	}
	ex := protocol.ExporterDescription{Info: protocol.PluginInfo{Kind: protocol.ExporterKind, Name: "csv"},
		Options: []protocol.OptionSpec{{Name: "file", Type: protocol.OptionString, Default: "out.csv"}}}
	for name, tc := range map[string]struct {
		in   any
		want protocol.WorkloadDescription
	}{
		"workload": {wl, wl},
		"exporter": {ex, protocol.WorkloadDescription{Info: ex.Info, Options: ex.Options}},
	} {
		b, err := wire.DescribeJSON(tc.in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := wire.ParseDescribeJSON(b)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, b)
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s: (-want +got):\n%s", name, d)
		}
	}
	if _, err := wire.DescribeJSON(&wl); err == nil {
		t.Error("DescribeJSON(pointer) = nil error, want one")
	}
	if _, err := wire.ParseDescribeJSON([]byte("{not json")); err == nil {
		t.Error("ParseDescribeJSON(garbage) = nil error, want one")
	}
	// Fields a newer plugin adds are ignored.
	got, err := wire.ParseDescribeJSON([]byte(`{"info":{"name":"x"},"fromTheFuture":1}`))
	if err != nil || got.Info.Name != "x" {
		t.Errorf("ParseDescribeJSON with an unknown field = %+v, %v", got, err)
	}
}

func TestHandshake(t *testing.T) {
	t.Parallel()
	h := wire.Handshake(protocol.Major)
	if h.ProtocolVersion != uint(protocol.Major) || h.MagicCookieKey != wire.CookieKey || h.MagicCookieValue != wire.CookieValue {
		t.Errorf("Handshake = %+v", h)
	}
	plugins := wire.HostPlugins()
	for _, major := range wire.SupportedMajors {
		set, ok := plugins[major]
		if !ok {
			t.Errorf("HostPlugins has no set for major %d", major)
			continue
		}
		if _, ok := set[protocol.WorkloadKind].(*wire.WorkloadPlugin); !ok {
			t.Errorf("major %d: no workload plugin", major)
		}
		if _, ok := set[protocol.ExporterKind].(*wire.ExporterPlugin); !ok {
			t.Errorf("major %d: no exporter plugin", major)
		}
	}
}
