package exporter_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/rs/zerolog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/lmbench/lmbench/sdk/exporter"
	"github.com/lmbench/lmbench/sdk/handshake"
	"github.com/lmbench/lmbench/sdk/option"
	exporterv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/exporter/v1"
	pluginv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/plugin/v1"
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

func serverFor(rec *recorder) exporterv1.ExporterServiceServer {
	return exporter.NewServer(definition(func(testOptions, exporter.Env) (exporter.Exporter, error) { return rec, nil }), zerolog.Nop())
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	got, err := serverFor(&recorder{}).Describe(context.Background(), &exporterv1.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := &exporterv1.DescribeResponse{
		Info: &pluginv1.PluginInfo{
			Kind: handshake.ExporterKind, Name: "test-exp", Version: "0.0.1", Summary: "a test exporter", Prefix: "te",
			ProtocolMinor: handshake.ProtocolMinor, SdkVersion: handshake.SDKVersion,
		},
		Options: []*pluginv1.OptionSpec{
			{Name: "file", Type: pluginv1.OptionType_OPTION_TYPE_STRING, Help: "Output file.", Default: option.Value("out.csv")},
			{Name: "flush-every", Type: pluginv1.OptionType_OPTION_TYPE_INT, Min: proto.Float64(1), Default: option.Value(10)},
		},
	}
	if d := cmp.Diff(want, got, protocmp.Transform()); d != "" {
		t.Errorf("Describe (-want +got):\n%s", d)
	}
}

func TestConfigure(t *testing.T) {
	t.Parallel()
	started := time.Unix(1700000000, 123456789)
	tests := []struct {
		name     string
		req      *exporterv1.ConfigureRequest
		newErr   error
		wantOpts testOptions
		wantEnv  exporter.RunMetadata
		want     *exporterv1.ConfigureResponse
	}{
		{
			name: "run metadata and options",
			req: &exporterv1.ConfigureRequest{
				Options: map[string]*pluginv1.OptionValue{"file": option.Value("x.csv")},
				Run: &exporterv1.RunMetadata{
					RunId: "r1", Workload: "long-doc-qa", Model: "m", OutputDir: "/out", LmbenchVersion: "1.0",
					TagKeys: []string{"doc"}, ConfigJson: "{}", StartedUnixNs: started.UnixNano(),
				},
			},
			wantOpts: testOptions{File: "x.csv", Every: 10},
			wantEnv: exporter.RunMetadata{
				RunID: "r1", Workload: "long-doc-qa", Model: "m", OutputDir: "/out", LMBenchVersion: "1.0",
				TagKeys: []string{"doc"}, ConfigJSON: "{}", Started: started,
			},
			want: &exporterv1.ConfigureResponse{Resolved: map[string]*pluginv1.OptionValue{
				"file": option.Value("x.csv"), "flush-every": option.Value(10),
			}},
		},
		{
			name:     "no start time stays zero",
			req:      &exporterv1.ConfigureRequest{},
			wantOpts: testOptions{File: "out.csv", Every: 10},
			want: &exporterv1.ConfigureResponse{Resolved: map[string]*pluginv1.OptionValue{
				"file": option.Value("out.csv"), "flush-every": option.Value(10),
			}},
		},
		{
			name: "bad option",
			req:  &exporterv1.ConfigureRequest{Options: map[string]*pluginv1.OptionValue{"flush-every": option.Value(0)}},
			want: &exporterv1.ConfigureResponse{Errors: []*pluginv1.FieldError{{Option: "flush-every", Message: "must be >= 1, got 0"}}},
		},
		{
			name:     "error from New",
			req:      &exporterv1.ConfigureRequest{},
			newErr:   option.Errorf("file", "cannot create %s", "out.csv"),
			wantOpts: testOptions{File: "out.csv", Every: 10},
			want:     &exporterv1.ConfigureResponse{Errors: []*pluginv1.FieldError{{Option: "file", Message: "cannot create out.csv"}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var (
				gotOpts testOptions
				gotEnv  exporter.RunMetadata
			)
			srv := exporter.NewServer(definition(func(o testOptions, env exporter.Env) (exporter.Exporter, error) {
				gotOpts, gotEnv = o, env.Run
				if tc.newErr != nil {
					return nil, tc.newErr
				}
				return &recorder{}, nil
			}), zerolog.Nop())
			got, err := srv.Configure(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got, protocmp.Transform()); d != "" {
				t.Errorf("Configure (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantOpts, gotOpts); d != "" {
				t.Errorf("options (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantEnv, gotEnv); d != "" {
				t.Errorf("run metadata (-want +got):\n%s", d)
			}
		})
	}
}

// call is one RPC in a lifecycle test.
type call int

const (
	configure call = iota
	write
	finish
)

func (c call) do(srv exporterv1.ExporterServiceServer) error {
	ctx := context.Background()
	var err error
	switch c {
	case configure:
		var resp *exporterv1.ConfigureResponse
		resp, err = srv.Configure(ctx, &exporterv1.ConfigureRequest{})
		if err == nil && len(resp.GetErrors()) > 0 {
			err = errors.New(resp.GetErrors()[0].GetMessage())
		}
	case write:
		_, err = srv.Write(ctx, &exporterv1.WriteRequest{Records: []*exporterv1.Record{{RequestId: "q"}}})
	case finish:
		_, err = srv.Finish(ctx, &exporterv1.FinishRequest{})
	}
	return err
}

func TestLifecycle(t *testing.T) {
	t.Parallel()
	ok := codes.OK
	pre := codes.FailedPrecondition
	tests := []struct {
		name  string
		calls []call
		want  []codes.Code
	}{
		{"write before configure", []call{write}, []codes.Code{pre}},
		{"finish before configure", []call{finish}, []codes.Code{pre}},
		{"finish without write", []call{configure, finish}, []codes.Code{ok, ok}},
		{"write then finish", []call{configure, write, write, finish}, []codes.Code{ok, ok, ok, ok}},
		{"write after finish", []call{configure, write, finish, write}, []codes.Code{ok, ok, ok, pre}},
		{"finish twice", []call{configure, finish, finish}, []codes.Code{ok, ok, pre}},
		{"configure again starts over", []call{configure, finish, configure, write, finish}, []codes.Code{ok, ok, ok, ok, ok}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := serverFor(&recorder{})
			var got []codes.Code
			for _, c := range tc.calls {
				got = append(got, status.Code(c.do(srv)))
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("codes (-want +got):\n%s", d)
			}
		})
	}
}

func TestWriteAndFinish(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	srv := serverFor(rec)
	ctx := context.Background()
	if _, err := srv.Configure(ctx, &exporterv1.ConfigureRequest{}); err != nil {
		t.Fatal(err)
	}
	for _, batch := range [][]string{{"a", "b"}, {"c"}} {
		var recs []*exporterv1.Record
		for _, id := range batch {
			recs = append(recs, &exporterv1.Record{RequestId: id, Phase: exporterv1.Phase_PHASE_MEASURE})
		}
		if _, err := srv.Write(ctx, &exporterv1.WriteRequest{Records: recs}); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := srv.Finish(ctx, &exporterv1.FinishRequest{Summary: &exporterv1.Summary{
		RunId: "r", SummaryJson: `{"n":3}`, TotalRequests: 3, SuccessfulRequests: 2, FailedRequests: 1, ElapsedS: 1.5, Interrupted: true,
	}})
	if err != nil {
		t.Fatal(err)
	}
	wantWrites := [][]exporter.Record{
		{{RequestID: "a", Phase: exporter.Measure}, {RequestID: "b", Phase: exporter.Measure}},
		{{RequestID: "c", Phase: exporter.Measure}},
	}
	if d := cmp.Diff(wantWrites, rec.writes); d != "" {
		t.Errorf("writes (-want +got):\n%s", d)
	}
	wantSummary := []exporter.Summary{{RunID: "r", JSON: `{"n":3}`, Total: 3, Successful: 2, Failed: 1, Elapsed: 1.5, Interrupted: true}}
	if d := cmp.Diff(wantSummary, rec.summaries); d != "" {
		t.Errorf("summary (-want +got):\n%s", d)
	}
	wantResp := &exporterv1.FinishResponse{Files: []*exporterv1.WrittenFile{{Path: "/out/results.csv", Rows: 2, Description: "results"}}}
	if d := cmp.Diff(wantResp, resp, protocmp.Transform()); d != "" {
		t.Errorf("Finish (-want +got):\n%s", d)
	}
}

func TestExporterErrors(t *testing.T) {
	t.Parallel()
	rec := &recorder{writeErr: errors.New("disk full"), finishErr: errors.New("cannot close")}
	srv := serverFor(rec)
	ctx := context.Background()
	if _, err := srv.Configure(ctx, &exporterv1.ConfigureRequest{}); err != nil {
		t.Fatal(err)
	}
	_, err := srv.Write(ctx, &exporterv1.WriteRequest{})
	if st, _ := status.FromError(err); st.Code() != codes.Unknown || st.Message() != "write: disk full" {
		t.Errorf("Write error = %v", err)
	}
	_, err = srv.Finish(ctx, &exporterv1.FinishRequest{})
	if st, _ := status.FromError(err); st.Code() != codes.Unknown || st.Message() != "finish: cannot close" {
		t.Errorf("Finish error = %v", err)
	}
}

// Concurrent Finish calls must reach the exporter once.
func TestFinishOnce(t *testing.T) {
	t.Parallel()
	var finishes atomic.Int32
	srv := exporter.NewServer(definition(func(testOptions, exporter.Env) (exporter.Exporter, error) {
		return countingExporter{&finishes}, nil
	}), zerolog.Nop())
	if _, err := srv.Configure(context.Background(), &exporterv1.ConfigureRequest{}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() { _, _ = srv.Finish(context.Background(), &exporterv1.FinishRequest{}) })
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

func TestRecordRoundTrip(t *testing.T) {
	t.Parallel()
	at := func(sec, nsec int64) time.Time { return time.Unix(sec, nsec) }
	tests := []struct {
		name string
		rec  exporter.Record
	}{
		{"zero", exporter.Record{}},
		{"full", exporter.Record{
			RunID: "r", Workload: "long-doc-qa", Phase: exporter.Measure, RequestID: "doc0_q1",
			Tags: map[string]string{"doc": "0", "query": "1"}, Success: true, TTFT: 0.125, Latency: 2.5,
			DecodeSpeed: 51.2, ITL: 0.0185, InputTokens: 10012, OutputTokens: 128, CachedTokens: 9984,
			Scheduled: at(1700000000, 250000000), Submit: at(1700000000, 250000001),
			FirstToken: at(1700000000, 375000000), Finish: at(1700000002, 750000000), Seq: 7,
		}},
		{"failed, some times unset", exporter.Record{
			Phase: exporter.Warmup, RequestID: "w0", Error: "HTTP 500", TTFT: -1, Latency: 0.0625,
			Submit: at(1700000001, 0), Finish: at(1700000001, 1),
		}},
		{"empty tags", exporter.Record{RequestID: "q", Tags: map[string]string{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// Through the wire bytes, as the host sends them.
			b, err := proto.Marshal(exporter.ToProto(tc.rec))
			if err != nil {
				t.Fatal(err)
			}
			var pr exporterv1.Record
			if err := proto.Unmarshal(b, &pr); err != nil {
				t.Fatal(err)
			}
			// cmp compares times with Equal, so a zero time that came back as
			// the epoch (or anything else) is a difference.
			got := exporter.FromProto(&pr)
			if d := cmp.Diff(tc.rec, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("round trip (-want +got):\n%s", d)
			}
		})
	}
}

func TestPhaseString(t *testing.T) {
	t.Parallel()
	for p, want := range map[exporter.Phase]string{exporter.Warmup: "warmup", exporter.Measure: "measure", 3: "unspecified"} {
		if got := p.String(); got != want {
			t.Errorf("Phase(%d).String() = %q, want %q", p, got, want)
		}
	}
}
