package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/lmbench/lmbench/core/engine"
	"github.com/lmbench/lmbench/core/export"
	"github.com/lmbench/lmbench/core/report"
	exporterv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/exporter/v1"
	pluginv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/plugin/v1"
	workloadv1 "github.com/lmbench/lmbench/sdk/proto/lmbench/workload/v1"
)

// fakeWorkload is a func-field fake of the workload protocol.
type fakeWorkload struct {
	step       func(req *workloadv1.StepRequest) (*workloadv1.StepResponse, error)
	onFinished func(req *workloadv1.OnFinishedRequest) error
}

func (f *fakeWorkload) Step(_ context.Context, r *workloadv1.StepRequest) (*workloadv1.StepResponse, error) {
	return f.step(r)
}

func (f *fakeWorkload) OnFinished(_ context.Context, r *workloadv1.OnFinishedRequest) (*workloadv1.OnFinishedResponse, error) {
	if f.onFinished == nil {
		return &workloadv1.OnFinishedResponse{}, nil
	}
	return &workloadv1.OnFinishedResponse{}, f.onFinished(r)
}

// batches is a workload that sends all of warmup, then all of measure, in
// one Step each.
func batches(warmup, measure []*workloadv1.Request) *fakeWorkload {
	return &fakeWorkload{step: func(r *workloadv1.StepRequest) (*workloadv1.StepResponse, error) {
		reqs := measure
		if r.Phase == workloadv1.Phase_PHASE_WARMUP {
			reqs = warmup
		}
		return &workloadv1.StepResponse{Requests: reqs, Next: done()}, nil
	}}
}

func done() *workloadv1.StepResponse_Done { return &workloadv1.StepResponse_Done{Done: true} }

func chat(id string, tags map[string]string) *workloadv1.Request {
	return &workloadv1.Request{Id: id, MaxTokens: 8, Tags: tags, Body: &workloadv1.Request_Chat{Chat: &workloadv1.Chat{
		Messages: []*workloadv1.Message{{Role: "user", Content: []*workloadv1.Segment{{Kind: &workloadv1.Segment_Text{Text: "hi " + id}}}}},
	}}}
}

func scheduledAt(r *workloadv1.Request, d time.Duration) *workloadv1.Request {
	ns := int64(d)
	r.ScheduledNs = &ns
	return r
}

// outcome is what the fake engine does with one request.
type outcome struct {
	fail         bool
	ttft, decode time.Duration // defaults 100 ms and 1 s
	in, out      int           // tokens, defaults 10 and 4
	wait         time.Duration // real time before answering
	beforeAnswer func()        // called before the result is returned
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// fakeSender answers each request by its outcome (the zero outcome is a
// success). Timestamps are derived from one time.Now() at submit, so
// first-token − submit is exactly the outcome's ttft.
type fakeSender struct {
	mu       sync.Mutex
	outcomes map[string]outcome
	got      []string
}

func (s *fakeSender) Send(ctx context.Context, req engine.Request) engine.Result {
	s.mu.Lock()
	o := s.outcomes[req.ID]
	s.got = append(s.got, req.ID)
	s.mu.Unlock()
	res := engine.Result{ID: req.ID, Submit: time.Now()}
	if o.wait > 0 {
		select {
		case <-time.After(o.wait):
		case <-ctx.Done():
		}
	}
	if o.beforeAnswer != nil {
		o.beforeAnswer()
	}
	if o.fail {
		res.Finish = res.Submit.Add(o.ttft)
		res.Error = "HTTP 500: engine on fire"
		return res
	}
	ttft, decode := orDefault(o.ttft, 100*time.Millisecond), orDefault(o.decode, time.Second)
	res.Success = true
	res.FirstToken = res.Submit.Add(ttft)
	res.LastToken = res.FirstToken.Add(decode)
	res.Finish = res.LastToken
	res.InputTokens, res.OutputTokens = orDefault(o.in, 10), orDefault(o.out, 4)
	res.Chunks = res.OutputTokens
	res.ITL = decode / time.Duration(res.Chunks-1)
	res.Text = "answer to " + req.ID
	return res
}

// fakeExporter is an ExporterClient that keeps what it was given.
type fakeExporter struct {
	mu        sync.Mutex
	configure func(*exporterv1.ConfigureRequest) (*exporterv1.ConfigureResponse, error)
	writeErr  error
	cfgReq    *exporterv1.ConfigureRequest
	records   []*exporterv1.Record
	summary   *exporterv1.Summary
	events    []string // "configure", "write", "finish" in call order
}

func (f *fakeExporter) Configure(_ context.Context, r *exporterv1.ConfigureRequest) (*exporterv1.ConfigureResponse, error) {
	f.mu.Lock()
	f.cfgReq = r
	f.events = append(f.events, "configure")
	f.mu.Unlock()
	if f.configure != nil {
		return f.configure(r)
	}
	return &exporterv1.ConfigureResponse{}, nil
}

func (f *fakeExporter) Write(_ context.Context, r *exporterv1.WriteRequest) (*exporterv1.WriteResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, "write")
	if f.summary != nil {
		return nil, errors.New("write after finish")
	}
	if f.writeErr != nil {
		return nil, f.writeErr
	}
	f.records = append(f.records, r.GetRecords()...)
	return &exporterv1.WriteResponse{}, nil
}

func (f *fakeExporter) Finish(_ context.Context, r *exporterv1.FinishRequest) (*exporterv1.FinishResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, "finish")
	f.summary = r.GetSummary()
	return &exporterv1.FinishResponse{Files: []*exporterv1.WrittenFile{{Path: "/out/fake.csv", Rows: int64(len(f.records))}}}, nil
}

func (f *fakeExporter) exporter() Exporter {
	return Exporter{
		Name:    "fake",
		Client:  f,
		Options: map[string]*pluginv1.OptionValue{"path": {}},
		Flag:    func(o string) string { return "--fake-" + o },
		Wrap:    func(op string, err error) error { return fmt.Errorf("exporter plugin fake: %s failed: %w", op, err) },
	}
}

// plan returns a Plan writing into a fresh temporary directory.
func plan(t *testing.T, wl *fakeWorkload, snd *fakeSender, exps ...*fakeExporter) (Plan, *bytes.Buffer) {
	t.Helper()
	var stdout bytes.Buffer
	p := Plan{
		Workload: wl, Sender: snd, TagKeys: []string{"doc"},
		Report: report.Config{
			EngineURL: "http://localhost:8000", Model: "test-model", Workload: "fake-workload",
			KVCacheVolumeGB: 1, TokensPerGB: 1000, Seed: 7, OutputDir: filepath.Join(t.TempDir(), "out"),
		},
		ConfigJSON: `{"model":"test-model"}`, Version: "0.0.0-test",
		Log: zerolog.Nop(), Stdout: &stdout, DrainTimeout: 5 * time.Second,
	}
	for _, e := range exps {
		p.Exporters = append(p.Exporters, e.exporter())
	}
	return p, &stdout
}

func readJournal(t *testing.T, p Plan) (*exporterv1.RunMetadata, []*exporterv1.Record) {
	t.Helper()
	meta, recs, err := export.ReadJournal(filepath.Join(p.Report.OutputDir, export.JournalName))
	if err != nil {
		t.Fatal(err)
	}
	return meta, recs
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b)) }

type summaryDoc struct {
	Results map[string]float64 `json:"results"`
	Run     struct {
		RunID       string `json:"run_id"`
		Interrupted bool   `json:"interrupted"`
	} `json:"run"`
}

func parseSummary(t *testing.T, s string) summaryDoc {
	t.Helper()
	var d summaryDoc
	if err := json.Unmarshal([]byte(s), &d); err != nil {
		t.Fatalf("summary JSON does not parse: %v\n%s", err, s)
	}
	return d
}

// The whole happy path: both phases journalled, only MEASURE counted, the
// exporter fed everything and then finished with the summary.
func TestExecuteRecordsBothPhasesCountsOnlyMeasure(t *testing.T) {
	t.Parallel()
	warmup := []*workloadv1.Request{chat("w0", nil), chat("w1", nil)}
	measure := []*workloadv1.Request{
		chat("m0", map[string]string{"doc": "0"}), chat("m1", map[string]string{"doc": "1"}),
		chat("m2", map[string]string{"doc": "2"}), chat("m3", map[string]string{"doc": "3"}),
	}
	snd := &fakeSender{outcomes: map[string]outcome{
		// Warmup numbers are absurd so any leak into the stats shows.
		"w0": {ttft: 50 * time.Second, in: 1_000_000, out: 1_000_000},
		"w1": {fail: true},
		"m0": {ttft: 100 * time.Millisecond, decode: 2 * time.Second, in: 100, out: 20},
		"m1": {ttft: 200 * time.Millisecond, decode: time.Second, in: 200, out: 10},
		"m2": {ttft: 300 * time.Millisecond, decode: 500 * time.Millisecond, in: 300, out: 5},
		"m3": {fail: true, ttft: 40 * time.Millisecond},
	}}
	exp := &fakeExporter{}
	p, stdout := plan(t, batches(warmup, measure), snd, exp)

	before := time.Now()
	res, err := Execute(context.Background(), p)
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if res.Err != nil || res.Interrupted {
		t.Fatalf("Result.Err = %v, Interrupted = %v", res.Err, res.Interrupted)
	}

	// Journal: every request of both phases, in completion order.
	meta, recs := readJournal(t, p)
	if meta.GetRunId() != res.RunID || meta.GetWorkload() != "fake-workload" || meta.GetConfigJson() != p.ConfigJSON {
		t.Errorf("journal header = %v", meta)
	}
	if len(recs) != 6 {
		t.Fatalf("journal has %d records, want 6 (2 warmup + 4 measure)", len(recs))
	}
	wantPhase := map[string]exporterv1.Phase{}
	for _, r := range warmup {
		wantPhase[r.GetId()] = exporterv1.Phase_PHASE_WARMUP
	}
	for _, r := range measure {
		wantPhase[r.GetId()] = exporterv1.Phase_PHASE_MEASURE
	}
	for i, r := range recs {
		if r.GetSeq() != int64(i+1) {
			t.Errorf("record %d (%s) seq = %d, want %d", i, r.GetRequestId(), r.GetSeq(), i+1)
		}
		if r.GetPhase() != wantPhase[r.GetRequestId()] {
			t.Errorf("%s phase = %v, want %v", r.GetRequestId(), r.GetPhase(), wantPhase[r.GetRequestId()])
		}
		if i < 2 && r.GetPhase() != exporterv1.Phase_PHASE_WARMUP {
			t.Errorf("record %d (%s) is not warmup: warmup must finish before measure starts", i, r.GetRequestId())
		}
		if r.GetRunId() != res.RunID || r.GetWorkload() != "fake-workload" {
			t.Errorf("%s run/workload = %q/%q", r.GetRequestId(), r.GetRunId(), r.GetWorkload())
		}
		var wantTags map[string]string
		for _, q := range append(warmup[:len(warmup):len(warmup)], measure...) {
			if q.GetId() == r.GetRequestId() {
				wantTags = q.GetTags()
			}
		}
		if diff := cmp.Diff(wantTags, r.GetTags()); diff != "" {
			t.Errorf("%s tags (-want +got):\n%s", r.GetRequestId(), diff)
		}
		// Epoch timestamps: submit within the run, and the gaps between
		// them equal the measured durations.
		if s := r.GetSubmitUnixNs(); s < before.UnixNano() || s > after.UnixNano() {
			t.Errorf("%s submit_unix_ns %d outside the run [%d, %d]", r.GetRequestId(), s, before.UnixNano(), after.UnixNano())
		}
		if got := float64(r.GetFinishUnixNs()-r.GetSubmitUnixNs()) / 1e9; !near(got, r.GetLatencyS()) {
			t.Errorf("%s finish-submit = %vs, latency_s = %v", r.GetRequestId(), got, r.GetLatencyS())
		}
		if r.GetScheduledUnixNs() == 0 || r.GetScheduledUnixNs() > r.GetSubmitUnixNs() {
			t.Errorf("%s scheduled_unix_ns %d, submit %d", r.GetRequestId(), r.GetScheduledUnixNs(), r.GetSubmitUnixNs())
		}
		if !r.GetSuccess() {
			if r.GetFirstTokenUnixNs() != 0 || r.GetTtftS() != -1 || r.GetError() == "" {
				t.Errorf("failed %s: first_token_unix_ns %d, ttft %v, error %q", r.GetRequestId(), r.GetFirstTokenUnixNs(), r.GetTtftS(), r.GetError())
			}
			continue
		}
		ttft := snd.outcomes[r.GetRequestId()].ttft
		if got := r.GetFirstTokenUnixNs() - r.GetSubmitUnixNs(); got != int64(ttft) {
			t.Errorf("%s first_token-submit = %v, want the TTFT %v", r.GetRequestId(), time.Duration(got), ttft)
		}
		if !near(r.GetTtftS(), ttft.Seconds()) {
			t.Errorf("%s ttft_s = %v, want %v", r.GetRequestId(), r.GetTtftS(), ttft.Seconds())
		}
	}

	// Stats: MEASURE only.
	f := res.Final
	if f.TotalRequests != 4 || f.SuccessfulRequests != 3 || f.FailedRequests != 1 {
		t.Errorf("total/successful/failed = %d/%d/%d, want 4/3/1", f.TotalRequests, f.SuccessfulRequests, f.FailedRequests)
	}
	if f.TotalInputTokens != 600 || f.TotalOutputTokens != 35 {
		t.Errorf("tokens in/out = %d/%d, want 600/35 (measure only)", f.TotalInputTokens, f.TotalOutputTokens)
	}
	if !near(f.MeanTTFTMs, 200) || !near(f.P50TTFTMs, 200) {
		t.Errorf("mean/p50 TTFT = %v/%v ms, want 200/200", f.MeanTTFTMs, f.P50TTFTMs)
	}
	if !near(f.MeanDecodeSpeed, 10) { // 20/2, 10/1, 5/0.5
		t.Errorf("mean decode = %v, want 10", f.MeanDecodeSpeed)
	}
	if f.ElapsedTime <= 0 {
		t.Errorf("elapsed = %v", f.ElapsedTime)
	}

	// Exporter: configured with the run, fed every record, then finished.
	exp.mu.Lock()
	defer exp.mu.Unlock()
	if exp.cfgReq.GetRun().GetRunId() != res.RunID || !cmp.Equal(exp.cfgReq.GetRun().GetTagKeys(), []string{"doc"}) {
		t.Errorf("Configure run metadata = %v", exp.cfgReq.GetRun())
	}
	if diff := cmp.Diff(recs, exp.records, protocmp.Transform()); diff != "" {
		t.Errorf("exporter records differ from the journal (-journal +exporter):\n%s", diff)
	}
	if n := len(exp.events); n < 3 || exp.events[0] != "configure" || exp.events[n-1] != "finish" {
		t.Errorf("exporter calls = %v, want configure, write…, finish", exp.events)
	}
	s := exp.summary
	if s.GetRunId() != res.RunID || s.GetTotalRequests() != 4 || s.GetSuccessfulRequests() != 3 ||
		s.GetFailedRequests() != 1 || s.GetElapsedS() != f.ElapsedTime || s.GetInterrupted() {
		t.Errorf("summary = %v, want it to match Final %+v", s, f)
	}
	doc := parseSummary(t, s.GetSummaryJson())
	for k, want := range map[string]float64{
		"total_requests": float64(f.TotalRequests), "successful_requests": float64(f.SuccessfulRequests),
		"failed_requests": float64(f.FailedRequests), "elapsed_time": f.ElapsedTime, "mean_ttft_ms": f.MeanTTFTMs,
		"total_input_tokens": float64(f.TotalInputTokens), "p99_ttft_ms": f.P99TTFTMs,
	} {
		if got, ok := doc.Results[k]; !ok || got != want {
			t.Errorf("summary_json results.%s = %v (present %v), want %v", k, got, ok, want)
		}
	}
	if doc.Run.RunID != res.RunID || doc.Run.Interrupted {
		t.Errorf("summary_json run = %+v", doc.Run)
	}
	wantJSON := report.SummaryJSON(p.Report, report.Run{ID: res.RunID, Version: p.Version}, f)
	if diff := cmp.Diff(string(wantJSON), s.GetSummaryJson()); diff != "" {
		t.Errorf("summary_json (-report.SummaryJSON +got):\n%s", diff)
	}

	// Files: the exporter's, and no bench_summary.json without ExportJSON.
	if diff := cmp.Diff([]string{"/out/fake.csv"}, res.Files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(p.Report.OutputDir, "bench_summary.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("bench_summary.json exists without ExportJSON (stat err %v)", err)
	}
	if !strings.Contains(stdout.String(), "Engine Benchmark Result (fake-workload)") ||
		!strings.Contains(stdout.String(), fmt.Sprintf("Successful requests:%s3", strings.Repeat(" ", 56-len("Successful requests:")-1))) {
		t.Errorf("terminal summary:\n%s", stdout)
	}
}

func TestExecuteWritesSummaryJSONOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	for _, exportJSON := range []bool{false, true} {
		t.Run(fmt.Sprint("ExportJSON=", exportJSON), func(t *testing.T) {
			t.Parallel()
			exp := &fakeExporter{}
			p, _ := plan(t, batches(nil, []*workloadv1.Request{chat("a", nil)}), &fakeSender{}, exp)
			p.Report.ExportJSON = exportJSON
			res, err := Execute(context.Background(), p)
			if err != nil || res.Err != nil {
				t.Fatalf("Execute = %v, %v", err, res.Err)
			}
			path := filepath.Join(p.Report.OutputDir, "bench_summary.json")
			got, err := os.ReadFile(path)
			if !exportJSON {
				if !errors.Is(err, os.ErrNotExist) {
					t.Errorf("bench_summary.json written without ExportJSON (err %v)", err)
				}
				if slices.Contains(res.Files, path) {
					t.Errorf("files = %v", res.Files)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(exp.summary.GetSummaryJson(), string(got)); diff != "" {
				t.Errorf("bench_summary.json differs from the exporter's summary (-exporter +file):\n%s", diff)
			}
			if bytes.HasSuffix(got, []byte("\n")) {
				t.Error("bench_summary.json ends with a newline; json.dumps writes none")
			}
			if diff := cmp.Diff([]string{"/out/fake.csv", path}, res.Files); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExecuteExporterConfigureErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		configure func(*exporterv1.ConfigureRequest) (*exporterv1.ConfigureResponse, error)
		noWrap    bool
		want      []string
	}{
		{
			name: "field errors name the flag",
			configure: func(*exporterv1.ConfigureRequest) (*exporterv1.ConfigureResponse, error) {
				return &exporterv1.ConfigureResponse{Errors: []*pluginv1.FieldError{
					{Option: "path", Message: "must not be empty"},
					{Message: "no option: reported as is"},
				}}, nil
			},
			want: []string{"--fake-path: must not be empty", "no option: reported as is"},
		},
		{
			name: "rpc error goes through Wrap",
			configure: func(*exporterv1.ConfigureRequest) (*exporterv1.ConfigureResponse, error) {
				return nil, errors.New("connection reset")
			},
			want: []string{"exporter plugin fake: configure failed: connection reset"},
		},
		{
			name: "rpc error without Wrap",
			configure: func(*exporterv1.ConfigureRequest) (*exporterv1.ConfigureResponse, error) {
				return nil, errors.New("connection reset")
			},
			noWrap: true,
			want:   []string{"fake", "configure", "connection reset"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			stepped := false
			wl := &fakeWorkload{step: func(*workloadv1.StepRequest) (*workloadv1.StepResponse, error) {
				stepped = true
				return &workloadv1.StepResponse{Next: done()}, nil
			}}
			p, _ := plan(t, wl, &fakeSender{}, &fakeExporter{configure: tt.configure})
			if tt.noWrap {
				p.Exporters[0].Wrap = nil
			}
			res, err := Execute(context.Background(), p)
			if err == nil {
				t.Fatalf("Execute succeeded (%+v), want a configure error", res)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if stepped {
				t.Error("the workload was stepped although an exporter could not be configured")
			}
		})
	}
	t.Run("FieldError type", func(t *testing.T) {
		t.Parallel()
		err := FieldErrors([]*pluginv1.FieldError{{Option: "qps", Message: "must be > 0, got 0"}},
			func(o string) string { return "--fp-" + o })
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Flag != "--fp-qps" || fe.Error() != "--fp-qps: must be > 0, got 0" {
			t.Errorf("FieldErrors = %v (%#v)", err, fe)
		}
		if err := FieldErrors([]*pluginv1.FieldError{{Option: "qps", Message: "bad"}}, nil); err.Error() != "bad" {
			t.Errorf("without a flag mapping: %q, want %q", err, "bad")
		}
	})
}

// A broken exporter costs its own output only: the journal and the
// summary are complete, and the failure is in Result.Err.
func TestExecuteFailingExporterWriteKeepsJournal(t *testing.T) {
	t.Parallel()
	measure := []*workloadv1.Request{chat("a", nil), chat("b", nil), chat("c", nil)}
	exp := &fakeExporter{writeErr: errors.New("disk full")}
	good := &fakeExporter{}
	p, stdout := plan(t, batches([]*workloadv1.Request{chat("w", nil)}, measure), &fakeSender{}, exp, good)
	p.Report.ExportJSON = true
	res, err := Execute(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if res.Err == nil || !strings.Contains(res.Err.Error(), "disk full") || !strings.Contains(res.Err.Error(), "write") {
		t.Errorf("Result.Err = %v, want the exporter's write failure", res.Err)
	}
	if _, recs := readJournal(t, p); len(recs) != 4 {
		t.Errorf("journal has %d records, want 4", len(recs))
	}
	if len(good.records) != 4 || good.summary == nil {
		t.Errorf("healthy exporter got %d records, summary %v", len(good.records), good.summary)
	}
	if exp.summary == nil {
		t.Error("failing exporter was not finished")
	}
	if res.Final.TotalRequests != 3 {
		t.Errorf("TotalRequests = %d, want 3", res.Final.TotalRequests)
	}
	if _, err := os.Stat(filepath.Join(p.Report.OutputDir, "bench_summary.json")); err != nil {
		t.Errorf("bench_summary.json: %v", err)
	}
	if !strings.Contains(stdout.String(), "Engine Benchmark Result") {
		t.Errorf("no terminal summary:\n%s", stdout)
	}
}

// A workload that fails mid-run: the requests it already sent finish and
// are journalled, and every file is still written.
func TestExecuteWorkloadErrorMidRun(t *testing.T) {
	t.Parallel()
	calls := 0
	wl := &fakeWorkload{step: func(r *workloadv1.StepRequest) (*workloadv1.StepResponse, error) {
		if r.Phase == workloadv1.Phase_PHASE_WARMUP {
			return &workloadv1.StepResponse{Next: done()}, nil
		}
		calls++
		if calls == 2 {
			return nil, errors.New("plugin crashed")
		}
		return &workloadv1.StepResponse{Requests: []*workloadv1.Request{chat("a", nil), chat("b", nil)},
			Next: &workloadv1.StepResponse_WakeAtNs{WakeAtNs: 0}}, nil
	}}
	snd := &fakeSender{outcomes: map[string]outcome{"a": {wait: 20 * time.Millisecond}, "b": {wait: 30 * time.Millisecond}}}
	exp := &fakeExporter{}
	p, stdout := plan(t, wl, snd, exp)
	p.Report.ExportJSON = true
	res, err := Execute(context.Background(), p)
	if err != nil {
		t.Fatalf("Execute error = %v; a mid-run failure belongs in Result.Err", err)
	}
	if res.Err == nil || !strings.Contains(res.Err.Error(), "plugin crashed") {
		t.Fatalf("Result.Err = %v, want the step error", res.Err)
	}
	_, recs := readJournal(t, p)
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.GetRequestId())
	}
	if diff := cmp.Diff([]string{"a", "b"}, ids); diff != "" {
		t.Errorf("journal request ids (-want +got):\n%s", diff)
	}
	if res.Final.TotalRequests != 2 || len(exp.records) != 2 || exp.summary == nil {
		t.Errorf("final total %d, exporter records %d, summary %v", res.Final.TotalRequests, len(exp.records), exp.summary)
	}
	if _, err := os.Stat(filepath.Join(p.Report.OutputDir, "bench_summary.json")); err != nil {
		t.Errorf("bench_summary.json: %v", err)
	}
	if !strings.Contains(stdout.String(), "Successful requests:") {
		t.Errorf("no terminal summary:\n%s", stdout)
	}
}

// Ctrl-C mid-run: no new requests, in-flight ones finish, and everything
// says "interrupted".
func TestExecuteInterrupted(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	k := 0
	wl := &fakeWorkload{step: func(r *workloadv1.StepRequest) (*workloadv1.StepResponse, error) {
		if r.Phase == workloadv1.Phase_PHASE_WARMUP {
			return &workloadv1.StepResponse{Next: done()}, nil
		}
		if k == 100 {
			return &workloadv1.StepResponse{Next: done()}, nil
		}
		k++
		// One request now, the next far in the future: the run can only
		// end early through the cancellation.
		return &workloadv1.StepResponse{Requests: []*workloadv1.Request{chat(fmt.Sprint("r", k), nil)},
			Next: &workloadv1.StepResponse_WakeAtNs{WakeAtNs: int64(time.Duration(k) * time.Minute)}}, nil
	}}
	snd := &fakeSender{outcomes: map[string]outcome{"r1": {wait: 20 * time.Millisecond, beforeAnswer: cancel}}}
	exp := &fakeExporter{}
	p, stdout := plan(t, wl, snd, exp)
	p.Report.ExportJSON = true
	res, err := Execute(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted {
		t.Fatalf("Interrupted = false, Err = %v", res.Err)
	}
	if k != 1 {
		t.Errorf("workload stepped %d times, want 1", k)
	}
	if _, recs := readJournal(t, p); len(recs) != 1 || recs[0].GetRequestId() != "r1" || !recs[0].GetSuccess() {
		t.Errorf("journal = %v, want r1 (in flight at Ctrl-C) recorded as a success", recs)
	}
	if !exp.summary.GetInterrupted() {
		t.Error("exporter summary not marked interrupted")
	}
	if doc := parseSummary(t, exp.summary.GetSummaryJson()); !doc.Run.Interrupted || doc.Results["total_requests"] != 1 {
		t.Errorf("summary_json = %+v", doc)
	}
	file, err := os.ReadFile(filepath.Join(p.Report.OutputDir, "bench_summary.json"))
	if err != nil || !strings.Contains(string(file), `"interrupted": true`) {
		t.Errorf("bench_summary.json (err %v):\n%s", err, file)
	}
	if !strings.Contains(stdout.String(), "Engine Benchmark Result (fake-workload, interrupted)") {
		t.Errorf("terminal title does not say interrupted:\n%s", stdout)
	}
}

func TestExecuteProgressLines(t *testing.T) {
	t.Parallel()
	measure := []*workloadv1.Request{chat("a", nil), chat("b", nil), chat("c", nil)}
	snd := &fakeSender{outcomes: map[string]outcome{
		"w": {wait: 30 * time.Millisecond},
		"a": {wait: 10 * time.Millisecond}, "b": {wait: 40 * time.Millisecond}, "c": {wait: 60 * time.Millisecond},
	}}
	p, _ := plan(t, batches([]*workloadv1.Request{chat("w", nil)}, measure), snd)
	var progress bytes.Buffer // read only after Execute, which stops the writer first
	p.Progress, p.ProgressEvery, p.Planned = PlainProgress(&progress), 2*time.Millisecond, 3
	if _, err := Execute(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
	var warm, meas int
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "[warmup] done ") && strings.Contains(l, "/?"):
			warm++
		case strings.HasPrefix(l, "[measure] done ") && strings.Contains(l, "/3 ") &&
			strings.Contains(l, "in-flight") && strings.Contains(l, "mean TTFT"):
			meas++
		}
	}
	if warm == 0 || meas == 0 {
		t.Errorf("want warmup and measure progress lines, got:\n%s", progress.String())
	}
}

// The Dispatch Lag section appears only when a measured request carried an
// explicit scheduled time.
func TestExecuteDispatchLagSectionNeedsExplicitSchedule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		warmup, measure []*workloadv1.Request
		want            bool
	}{
		{"no schedule", nil, []*workloadv1.Request{chat("a", nil), chat("b", nil)}, false},
		{"scheduled", nil, []*workloadv1.Request{scheduledAt(chat("a", nil), 0), chat("b", nil)}, true},
		{"only warmup scheduled", []*workloadv1.Request{scheduledAt(chat("w", nil), 0)}, []*workloadv1.Request{chat("a", nil)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, stdout := plan(t, batches(tt.warmup, tt.measure), &fakeSender{})
			if _, err := Execute(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(stdout.String(), "Dispatch Lag"); got != tt.want {
				t.Errorf("Dispatch Lag section shown = %v, want %v:\n%s", got, tt.want, stdout)
			}
		})
	}
}

func TestExecuteExplicitScheduleInJournal(t *testing.T) {
	t.Parallel()
	const due = 30 * time.Millisecond
	step := 0
	wl := &fakeWorkload{step: func(r *workloadv1.StepRequest) (*workloadv1.StepResponse, error) {
		if r.Phase == workloadv1.Phase_PHASE_WARMUP {
			return &workloadv1.StepResponse{Next: done()}, nil
		}
		step++
		if step == 1 {
			return &workloadv1.StepResponse{Next: &workloadv1.StepResponse_WakeAtNs{WakeAtNs: int64(due)}}, nil
		}
		// Sent at `due`, but claims it was due 10 ms earlier.
		return &workloadv1.StepResponse{Requests: []*workloadv1.Request{scheduledAt(chat("a", nil), due-10*time.Millisecond)}, Next: done()}, nil
	}}
	p, _ := plan(t, wl, &fakeSender{})
	res, err := Execute(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	_, recs := readJournal(t, p)
	if len(recs) != 1 {
		t.Fatalf("journal has %d records", len(recs))
	}
	lag := time.Duration(recs[0].GetSubmitUnixNs() - recs[0].GetScheduledUnixNs())
	if lag < 10*time.Millisecond || lag > time.Second {
		t.Errorf("submit - scheduled = %v, want >= 10ms", lag)
	}
	if got := res.Final.MeanDispatchLagMs; !near(got, lag.Seconds()*1000) {
		t.Errorf("mean dispatch lag = %v ms, journal says %v", got, lag)
	}
}

func TestNewRunID(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 4, 5, 6, 7, 0, time.FixedZone("X", 3600))
	a, b := NewRunID(at), NewRunID(at)
	if !strings.HasPrefix(a, "20250304T040607Z-") || len(a) != len("20250304T040607Z-")+8 {
		t.Errorf("NewRunID = %q, want 20250304T040607Z-<8 hex>", a)
	}
	if a == b {
		t.Errorf("two run ids in the same second are equal: %q", a)
	}
}
