package exporter_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/lmbench/lmbench/sdk/exporter"
	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/wire"
)

// recorder is an Exporter that remembers what it was given.
type recorder struct {
	mu        sync.Mutex
	writes    [][]exporter.Record
	summaries []exporter.Summary
	writeErr  error
	finishErr error
}

func (r *recorder) Write(_ context.Context, recs []exporter.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, recs)
	return r.writeErr
}

func (r *recorder) Finish(_ context.Context, s exporter.Summary) ([]exporter.File, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.summaries = append(r.summaries, s)
	if r.finishErr != nil {
		return nil, r.finishErr
	}
	return []exporter.File{{Path: "/out/results.csv", Rows: int64(len(r.writes)), Description: "results"}}, nil
}

type testOptions struct {
	File  string `opt:"file" help:"Output file."`
	Every int    `opt:"flush-every" min:"1"`
}

func definition(newFn func(testOptions, exporter.Env) (exporter.Exporter, error)) exporter.Definition[testOptions] {
	return exporter.Definition[testOptions]{
		Name: "test-exp", Prefix: "te", Summary: "a test exporter", Version: "0.0.1",
		Defaults: testOptions{File: "out.csv", Every: 10},
		New:      newFn,
	}
}

func serverFor(rec *recorder) protocol.ExporterService {
	return exporter.NewServer(definition(func(testOptions, exporter.Env) (exporter.Exporter, error) { return rec, nil }), zerolog.Nop())
}

var host = protocol.HostInfo{Version: "test", ProtocolMinor: protocol.Minor, Capabilities: protocol.HostCapabilities}

// overGRPC serves srv over an in-memory gRPC connection and returns its
// client, as the host sees the plugin.
func overGRPC(t *testing.T, srv protocol.ExporterService) protocol.ExporterService {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	s := grpc.NewServer(wire.GRPCServerOptions()...)
	wire.RegisterExporter(s, srv)
	go s.Serve(lis)
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		s.Stop()
	})
	return wire.ExporterClient(conn)
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	got, err := serverFor(&recorder{}).Describe(context.Background(), host)
	if err != nil {
		t.Fatal(err)
	}
	want := protocol.ExporterDescription{
		Info: protocol.PluginInfo{
			Kind: protocol.ExporterKind, Name: "test-exp", Version: "0.0.1", Summary: "a test exporter", Prefix: "te",
			ProtocolMinor: protocol.Minor, SDKVersion: wire.SDKVersion,
		},
		Options: []protocol.OptionSpec{
			{Name: "file", Type: protocol.OptionString, Help: "Output file.", Default: "out.csv"},
			{Name: "flush-every", Type: protocol.OptionInt, Min: new(1.0), Default: int64(10)},
		},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Describe (-want +got):\n%s", d)
	}
}

func TestConfigure(t *testing.T) {
	t.Parallel()
	started := time.Unix(1700000000, 123456789)
	run := exporter.RunMetadata{
		RunID: "r1", Workload: "long-doc-qa", Model: "m", OutputDir: "/out", LMBenchVersion: "1.0",
		TagKeys: []string{"doc"}, ConfigJSON: "{}", Started: started,
	}
	tests := []struct {
		name     string
		cfg      protocol.ExporterConfig
		newErr   error
		wantOpts testOptions
		wantEnv  exporter.Env
		want     protocol.Configured
	}{
		{
			name:     "run metadata and options",
			cfg:      protocol.ExporterConfig{Options: protocol.Values{"file": "x.csv"}, Run: run},
			wantOpts: testOptions{File: "x.csv", Every: 10},
			wantEnv:  exporter.Env{Run: run, Host: host},
			want:     protocol.Configured{Resolved: protocol.Values{"file": "x.csv", "flush-every": int64(10)}},
		},
		{
			name:     "no start time stays zero",
			wantOpts: testOptions{File: "out.csv", Every: 10},
			wantEnv:  exporter.Env{Host: host},
			want:     protocol.Configured{Resolved: protocol.Values{"file": "out.csv", "flush-every": int64(10)}},
		},
		{
			name: "bad option",
			cfg:  protocol.ExporterConfig{Options: protocol.Values{"flush-every": int64(0)}},
			want: protocol.Configured{Errors: []protocol.FieldError{{Option: "flush-every", Message: "must be >= 1, got 0"}}},
		},
		{
			name: "mistyped and unknown options",
			cfg:  protocol.ExporterConfig{Options: protocol.Values{"file": int64(1), "fil": "x"}},
			want: protocol.Configured{Errors: []protocol.FieldError{
				{Option: "fil", Message: "unknown option"},
				{Option: "file", Message: "expected a string, got 1"},
			}},
		},
		{
			name:     "error from New",
			newErr:   option.Errorf("file", "cannot create %s", "out.csv"),
			wantOpts: testOptions{File: "out.csv", Every: 10},
			wantEnv:  exporter.Env{Host: host},
			want:     protocol.Configured{Errors: []protocol.FieldError{{Option: "file", Message: "cannot create out.csv"}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var (
				gotOpts testOptions
				gotEnv  exporter.Env
			)
			srv := exporter.NewServer(definition(func(o testOptions, env exporter.Env) (exporter.Exporter, error) {
				gotOpts, gotEnv = o, env
				if tc.newErr != nil {
					return nil, tc.newErr
				}
				return &recorder{}, nil
			}), zerolog.Nop())
			if _, err := srv.Describe(context.Background(), host); err != nil {
				t.Fatal(err)
			}
			got, err := srv.Configure(context.Background(), tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Configure (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantOpts, gotOpts); d != "" {
				t.Errorf("options (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantEnv.Run, gotEnv.Run); d != "" {
				t.Errorf("Env.Run (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantEnv.Host, gotEnv.Host); d != "" {
				t.Errorf("Env.Host (-want +got):\n%s", d)
			}
		})
	}
}

// call is one call in a lifecycle test.
type call int

const (
	configure call = iota
	write
	finish
)

func (c call) do(srv protocol.ExporterService) error {
	ctx := context.Background()
	var err error
	switch c {
	case configure:
		var resp protocol.Configured
		resp, err = srv.Configure(ctx, protocol.ExporterConfig{})
		if err == nil && len(resp.Errors) > 0 {
			err = errors.New(resp.Errors[0].Message)
		}
	case write:
		err = srv.Write(ctx, []exporter.Record{{RequestID: "q"}})
	case finish:
		_, err = srv.Finish(ctx, exporter.Summary{})
	}
	return err
}

func TestLifecycle(t *testing.T) {
	t.Parallel()
	const ok, out = "ok", "out of order"
	tests := []struct {
		name  string
		calls []call
		want  []string
	}{
		{"write before configure", []call{write}, []string{out}},
		{"finish before configure", []call{finish}, []string{out}},
		{"finish without write", []call{configure, finish}, []string{ok, ok}},
		{"write then finish", []call{configure, write, write, finish}, []string{ok, ok, ok, ok}},
		{"write after finish", []call{configure, write, finish, write}, []string{ok, ok, ok, out}},
		{"finish twice", []call{configure, finish, finish}, []string{ok, ok, out}},
		{"configure again starts over", []call{configure, finish, configure, write, finish}, []string{ok, ok, ok, ok, ok}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := serverFor(&recorder{})
			var got []string
			for _, c := range tc.calls {
				switch err := c.do(srv); {
				case err == nil:
					got = append(got, ok)
				case errors.Is(err, protocol.ErrOutOfOrder):
					got = append(got, out)
				default:
					got = append(got, err.Error())
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("outcomes (-want +got):\n%s", d)
			}
		})
	}
}

func TestLifecycleMessages(t *testing.T) {
	t.Parallel()
	srv := serverFor(&recorder{})
	if err := write.do(srv); err == nil || err.Error() != "exporter used before a successful Configure: called out of order" {
		t.Errorf("Write before Configure: %v", err)
	}
	for _, c := range []call{configure, finish} {
		if err := c.do(srv); err != nil {
			t.Fatal(err)
		}
	}
	if err := write.do(srv); err == nil || err.Error() != "exporter used after Finish: called out of order" {
		t.Errorf("Write after Finish: %v", err)
	}
}

// Over gRPC a call out of order is FailedPrecondition, and the client
// gives ErrOutOfOrder back.
func TestLifecycleOverGRPC(t *testing.T) {
	t.Parallel()
	c := overGRPC(t, serverFor(&recorder{}))
	for _, step := range []call{configure, finish} {
		if err := step.do(c); err != nil {
			t.Fatal(err)
		}
	}
	err := write.do(c)
	if status.Code(err) != codes.FailedPrecondition || !errors.Is(err, protocol.ErrOutOfOrder) {
		t.Errorf("Write after Finish: %v (code %v), want FailedPrecondition and ErrOutOfOrder", err, status.Code(err))
	}
}

func TestWriteAndFinish(t *testing.T) {
	t.Parallel()
	for name, via := range map[string]func(t *testing.T, srv protocol.ExporterService) protocol.ExporterService{
		"in-process": func(_ *testing.T, srv protocol.ExporterService) protocol.ExporterService { return srv },
		"over gRPC":  overGRPC,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			srv := via(t, serverFor(rec))
			ctx := context.Background()
			if _, err := srv.Configure(ctx, protocol.ExporterConfig{}); err != nil {
				t.Fatal(err)
			}
			at := time.Unix(1700000000, 5)
			batches := [][]exporter.Record{
				{{RequestID: "a", Phase: exporter.Measure, Tags: map[string]string{"doc": "0"}, Success: true, Finish: at},
					{RequestID: "b", Phase: exporter.Measure, TTFT: -1, Error: "HTTP 500"}},
				{{RequestID: "c", Phase: exporter.Warmup, Seq: 3}},
			}
			for _, b := range batches {
				if err := srv.Write(ctx, b); err != nil {
					t.Fatal(err)
				}
			}
			summary := exporter.Summary{RunID: "r", JSON: `{"n":3}`, Total: 3, Successful: 2, Failed: 1, Elapsed: 1.5, Interrupted: true}
			files, err := srv.Finish(ctx, summary)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(batches, rec.writes); d != "" {
				t.Errorf("writes (-want +got):\n%s", d)
			}
			if d := cmp.Diff([]exporter.Summary{summary}, rec.summaries); d != "" {
				t.Errorf("summary (-want +got):\n%s", d)
			}
			wantFiles := []exporter.File{{Path: "/out/results.csv", Rows: 2, Description: "results"}}
			if d := cmp.Diff(wantFiles, files); d != "" {
				t.Errorf("Finish (-want +got):\n%s", d)
			}
		})
	}
}

func TestExporterErrors(t *testing.T) {
	t.Parallel()
	rec := &recorder{writeErr: errors.New("disk full"), finishErr: errors.New("cannot close")}
	srv := serverFor(rec)
	ctx := context.Background()
	if _, err := srv.Configure(ctx, protocol.ExporterConfig{}); err != nil {
		t.Fatal(err)
	}
	err := srv.Write(ctx, nil)
	if !errors.Is(err, rec.writeErr) || err.Error() != "write: disk full" || errors.Is(err, protocol.ErrOutOfOrder) {
		t.Errorf("Write error = %v, want %q", err, "write: disk full")
	}
	_, err = srv.Finish(ctx, exporter.Summary{})
	if !errors.Is(err, rec.finishErr) || err.Error() != "finish: cannot close" || errors.Is(err, protocol.ErrOutOfOrder) {
		t.Errorf("Finish error = %v, want %q", err, "finish: cannot close")
	}
}

// Concurrent Finish calls must reach the exporter once.
func TestFinishOnce(t *testing.T) {
	t.Parallel()
	var finishes atomic.Int32
	srv := exporter.NewServer(definition(func(testOptions, exporter.Env) (exporter.Exporter, error) {
		return countingExporter{&finishes}, nil
	}), zerolog.Nop())
	if _, err := srv.Configure(context.Background(), protocol.ExporterConfig{}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() { _, _ = srv.Finish(context.Background(), exporter.Summary{}) })
	}
	wg.Wait()
	if n := finishes.Load(); n != 1 {
		t.Errorf("exporter finished %d times, want 1", n)
	}
}

type countingExporter struct{ n *atomic.Int32 }

func (countingExporter) Write(context.Context, []exporter.Record) error { return nil }
func (c countingExporter) Finish(context.Context, exporter.Summary) ([]exporter.File, error) {
	c.n.Add(1)
	time.Sleep(time.Millisecond) // widen the window a second Finish would slip through
	return nil, nil
}

func TestPhaseString(t *testing.T) {
	t.Parallel()
	for p, want := range map[exporter.Phase]string{exporter.Warmup: "warmup", exporter.Measure: "measure", 3: "unspecified"} {
		if got := p.String(); got != want {
			t.Errorf("Phase(%d).String() = %q, want %q", p, got, want)
		}
	}
}
