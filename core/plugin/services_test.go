package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/export"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// noZeroFields fails for every field of the struct v left at its zero
// value, so a field added to the protocol but not converted is noticed.
func noZeroFields(t *testing.T, v any) {
	t.Helper()
	rv := reflect.ValueOf(v)
	for i := range rv.NumField() {
		if rv.Field(i).IsZero() {
			t.Errorf("%s.%s is not set by the conversion", rv.Type().Name(), rv.Type().Field(i).Name)
		}
	}
}

var (
	tStart = time.Unix(1_796_115_783, 17_003_781)
	tags   = map[string]string{"doc": "3", "query": "1"}
)

func TestRunMetadata(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   record.Run
		want protocol.RunMetadata
	}{
		{
			name: "every field",
			in: record.Run{ID: "run-1", Workload: "long-doc-qa", Model: "m-7b", OutputDir: "/out", Version: "0.2.0",
				TagKeys: []string{"doc", "query"}, Config: json.RawMessage(`{"seed":42}`), Started: tStart},
			want: protocol.RunMetadata{RunID: "run-1", Workload: "long-doc-qa", Model: "m-7b", OutputDir: "/out", LMBenchVersion: "0.2.0",
				TagKeys: []string{"doc", "query"}, ConfigJSON: `{"seed":42}`, Started: tStart},
		},
		{name: "empty", in: record.Run{}, want: protocol.RunMetadata{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := RunMetadata(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("RunMetadata (-want +got):\n%s", diff)
			}
			if tt.name == "every field" {
				noZeroFields(t, got)
			}
		})
	}
}

func TestSummaryOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   record.Summary
		want protocol.Summary
	}{
		{
			name: "every field",
			in: record.Summary{RunID: "run-1", JSON: json.RawMessage(`{"results":{"total_requests":3}}`), Total: 3, Successful: 2,
				Failed: 1, Elapsed: 17.8, Interrupted: true},
			want: protocol.Summary{RunID: "run-1", JSON: `{"results":{"total_requests":3}}`, Total: 3, Successful: 2,
				Failed: 1, Elapsed: 17.8, Interrupted: true},
		},
		{name: "empty", in: record.Summary{}, want: protocol.Summary{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := SummaryOf(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("SummaryOf (-want +got):\n%s", diff)
			}
			if tt.name == "every field" {
				noZeroFields(t, got)
			}
		})
	}
}

func TestHost(t *testing.T) {
	t.Parallel()
	want := protocol.HostInfo{Version: "1.2.3", ProtocolMinor: protocol.Minor, Capabilities: protocol.HostCapabilities}
	if diff := cmp.Diff(want, Host("1.2.3")); diff != "" {
		t.Errorf("Host (-want +got):\n%s", diff)
	}
}

func TestParseDescribe(t *testing.T) {
	t.Parallel()
	d, err := ParseDescribe([]byte("\n  {\"info\":{\"kind\":\"exporter\",\"name\":\"csv\",\"prefix\":\"csv\"}}\n\n"))
	if err != nil || d.Info.Name != "csv" || d.Info.Kind != protocol.ExporterKind || d.Info.Prefix != "csv" {
		t.Errorf("ParseDescribe = %+v, %v", d, err)
	}
	if _, err := ParseDescribe([]byte("Usage: x [flags]\n")); err == nil {
		t.Error("ParseDescribe of a usage message: no error")
	}
}

// fakeExporter is an exporter service that records what it was sent.
type fakeExporter struct {
	cfg     protocol.ExporterConfig
	records []protocol.Record
	summary protocol.Summary
	err     error
}

func (f *fakeExporter) Describe(context.Context, protocol.HostInfo) (protocol.ExporterDescription, error) {
	return protocol.ExporterDescription{}, f.err
}

func (f *fakeExporter) Configure(_ context.Context, cfg protocol.ExporterConfig) (protocol.Configured, error) {
	f.cfg = cfg
	return protocol.Configured{Resolved: cfg.Options}, f.err
}

func (f *fakeExporter) Write(_ context.Context, recs []protocol.Record) error {
	f.records = append(f.records, recs...)
	return f.err
}

func (f *fakeExporter) Finish(_ context.Context, s protocol.Summary) ([]protocol.File, error) {
	f.summary = s
	if f.err != nil {
		return nil, f.err
	}
	return []protocol.File{{Path: "/out/bench_results.csv", Rows: 2, Description: "CSV"}}, nil
}

// fakeClient is a Client whose service is in-process (no plugin process).
func fakeClient(kind, name string, svc any) *Client {
	return &Client{Kind: kind, Path: "/plugins/lmbench-" + kind + "-" + name, Name: name, stderr: newRing(40), raw: svc}
}

// The Exporter adapter converts the host's types both ways.
func TestExporterAdapter(t *testing.T) {
	t.Parallel()
	fake := &fakeExporter{}
	e := NewExporter(fakeClient(protocol.ExporterKind, "csv", fake))
	var _ export.Exporter = e
	if e.Name() != "csv" {
		t.Errorf("Name() = %q", e.Name())
	}
	ctx := context.Background()
	run := record.Run{ID: "run-1", Workload: "w", TagKeys: []string{"doc"}, Config: json.RawMessage(`{}`), Started: tStart}
	opts := protocol.Values{"include-warmup": true}
	res, err := e.Configure(ctx, opts, run)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(protocol.ExporterConfig{Options: opts, Run: RunMetadata(run)}, fake.cfg); diff != "" {
		t.Errorf("Configure sent (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(opts, res.Resolved); diff != "" {
		t.Errorf("Configure answer (-want +got):\n%s", diff)
	}

	recs := []*record.Record{
		{RunID: "run-1", Phase: record.Warmup, RequestID: "a", Seq: 1, Submit: tStart},
		{RunID: "run-1", Phase: record.Measure, RequestID: "b", Seq: 2, Tags: tags, Success: true,
			Scheduled: tStart, ExplicitSchedule: true, StatedPromptTokens: 2005, InputTokens: 2007},
	}
	if err := e.Write(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]protocol.Record{*recs[0], *recs[1]}, fake.records); diff != "" {
		t.Errorf("Write sent (-want +got):\n%s", diff)
	}

	s := record.Summary{RunID: "run-1", JSON: json.RawMessage(`{"results":{}}`), Total: 1, Successful: 1}
	files, err := e.Finish(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(SummaryOf(s), fake.summary); diff != "" {
		t.Errorf("Finish sent (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]export.File{{Path: "/out/bench_results.csv", Rows: 2, Description: "CSV"}}, files); diff != "" {
		t.Errorf("Finish files (-want +got):\n%s", diff)
	}
}

// Every call's error names the plugin and the call, and keeps its cause.
func TestExporterAdapterErrors(t *testing.T) {
	t.Parallel()
	cause := errors.New("disk full")
	e := NewExporter(fakeClient(protocol.ExporterKind, "csv", &fakeExporter{err: cause}))
	ctx := context.Background()
	_, cerr := e.Configure(ctx, nil, record.Run{})
	werr := e.Write(ctx, []*record.Record{{}})
	files, ferr := e.Finish(ctx, record.Summary{})
	for op, err := range map[string]error{"Configure": cerr, "Write": werr, "Finish": ferr} {
		if want := "exporter plugin csv: " + op + " failed: disk full"; err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %q", op, err, want)
		}
		if !errors.Is(err, cause) {
			t.Errorf("%s: error %v does not wrap its cause", op, err)
		}
	}
	if files != nil {
		t.Errorf("files %v after a failed Finish", files)
	}
	if err := e.Wrap("x", nil); err != nil {
		t.Errorf("Wrap(nil) = %v", err)
	}
}

// fakeWorkload answers every call with err.
type fakeWorkload struct{ err error }

func (f fakeWorkload) Describe(context.Context, protocol.HostInfo) (protocol.WorkloadDescription, error) {
	return protocol.WorkloadDescription{Info: protocol.PluginInfo{Name: "w"}}, f.err
}

func (f fakeWorkload) Configure(context.Context, protocol.WorkloadConfig) (protocol.Configured, error) {
	return protocol.Configured{Title: "w"}, f.err
}

func (f fakeWorkload) Step(context.Context, protocol.StepRequest) (protocol.StepResponse, error) {
	return protocol.StepResponse{Next: protocol.Next{Kind: protocol.NextDone}}, f.err
}

func (f fakeWorkload) OnFinished(context.Context, []protocol.Result) error { return f.err }

func TestWorkloadServiceNamesThePlugin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ok := fakeClient(protocol.WorkloadKind, "long-doc-qa", fakeWorkload{}).WorkloadService()
	if d, err := ok.Describe(ctx, Host("v")); err != nil || d.Info.Name != "w" {
		t.Errorf("Describe = %+v, %v", d, err)
	}
	if c, err := ok.Configure(ctx, protocol.WorkloadConfig{}); err != nil || c.Title != "w" {
		t.Errorf("Configure = %+v, %v", c, err)
	}
	if s, err := ok.Step(ctx, protocol.StepRequest{}); err != nil || s.Next.Kind != protocol.NextDone {
		t.Errorf("Step = %+v, %v", s, err)
	}
	if err := ok.OnFinished(ctx, nil); err != nil {
		t.Errorf("OnFinished = %v", err)
	}

	cause := errors.New("bad state")
	w := fakeClient(protocol.WorkloadKind, "long-doc-qa", fakeWorkload{err: cause}).WorkloadService()
	_, derr := w.Describe(ctx, Host("v"))
	_, cerr := w.Configure(ctx, protocol.WorkloadConfig{})
	_, serr := w.Step(ctx, protocol.StepRequest{})
	oerr := w.OnFinished(ctx, nil)
	for op, err := range map[string]error{"Describe": derr, "Configure": cerr, "Step": serr, "OnFinished": oerr} {
		if want := "workload plugin long-doc-qa: " + op + " failed: bad state"; err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %q", op, err, want)
		}
		if !errors.Is(err, cause) {
			t.Errorf("%s: error %v does not wrap its cause", op, err)
		}
	}
}

func TestLineLogger(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	var name atomic.Pointer[string]
	first, renamed := "lmbench-workload-x", "x"
	name.Store(&first)
	l := &lineLogger{log: zerolog.New(&buf), name: &name, stream: "stdout"}
	for _, w := range []string{"hello\nwor", "ld\n", "\n"} {
		if n, err := l.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	name.Store(&renamed)
	l.Write([]byte(strings.Repeat("y", 5000) + "\nunterminated"))
	got := logLines(t, buf.String())
	msg := "a plugin printed outside its logger (plugins log through the SDK's logger; stdout is not theirs)"
	line := func(plugin, text string) map[string]any {
		return map[string]any{"level": "warn", "plugin": plugin, "stream": "stdout", "line": text, "message": msg}
	}
	want := []map[string]any{
		line(first, "hello"), line(first, "world"), line(first, ""),
		line(renamed, strings.Repeat("y", 4096)), // capped; the unterminated rest waits for its newline
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("log lines (-want +got):\n%s", diff)
	}
}
