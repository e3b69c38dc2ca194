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
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/core/dispatch"
	"github.com/lmbench/lmbench/core/export"
	"github.com/lmbench/lmbench/core/pluginset"
	"github.com/lmbench/lmbench/core/progress"
	"github.com/lmbench/lmbench/core/record"
	"github.com/lmbench/lmbench/core/report"
	"github.com/lmbench/lmbench/sdk/host/runloop"
	"github.com/lmbench/lmbench/sdk/protocol"
)

// fakeExporter is an ExportTarget that keeps what it was given. Like the
// plugin adapter, its errors name it.
type fakeExporter struct {
	configure func(opts protocol.Values, run record.Run) (protocol.Configured, error)
	writeErr  error
	// writes, when set, is a file Finish writes into the output directory.
	writes string

	mu      sync.Mutex
	opts    protocol.Values
	run     record.Run
	records []*record.Record
	summary *record.Summary
	events  []string // "configure", "write", "finish" in call order
}

func (f *fakeExporter) Configure(_ context.Context, opts protocol.Values, run record.Run) (protocol.Configured, error) {
	f.mu.Lock()
	f.opts, f.run = opts, run
	f.events = append(f.events, "configure")
	f.mu.Unlock()
	if f.configure != nil {
		return f.configure(opts, run)
	}
	return protocol.Configured{}, nil
}

func (f *fakeExporter) Write(_ context.Context, recs []*record.Record) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, "write")
	if f.summary != nil {
		return errors.New("write after finish")
	}
	if f.writeErr != nil {
		return f.writeErr
	}
	f.records = append(f.records, recs...)
	return nil
}

func (f *fakeExporter) Finish(_ context.Context, s record.Summary) ([]export.File, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, "finish")
	f.summary = &s
	if f.writes != "" {
		path := filepath.Join(f.run.OutputDir, f.writes)
		return []export.File{{Path: path, Rows: int64(len(f.records))}}, os.WriteFile(path, []byte(s.RunID), 0o644)
	}
	return []export.File{{Path: "/out/fake.csv", Rows: int64(len(f.records))}}, nil
}

func (f *fakeExporter) exporter() pluginset.Exporter {
	return pluginset.Exporter{
		Name:    "fake",
		Plugin:  f,
		Options: protocol.Values{"path": ""},
		Flag:    func(o string) string { return "--fake-" + o },
	}
}

// plan returns a Plan writing into a fresh temporary directory.
func plan(t *testing.T, wl protocol.WorkloadService, snd dispatch.Sender, exps ...*fakeExporter) (Plan, *bytes.Buffer) {
	t.Helper()
	var stdout bytes.Buffer
	p := Plan{
		Workload: wl, Plugin: "fake-workload", Sender: snd, TagKeys: []string{"doc"},
		Report: report.Config{
			EngineURL: "http://localhost:8000", Model: "test-model", Workload: "fake-workload",
			KVCacheVolumeGB: 1, TokensPerGB: 1000, Seed: 7, OutputDir: filepath.Join(t.TempDir(), "out"),
		},
		Config: json.RawMessage(`{"model":"test-model"}`), Version: "0.0.0-test",
		Log: zerolog.Nop(), Stdout: &stdout, DrainTimeout: 5 * time.Second,
	}
	for _, e := range exps {
		p.Exporters = append(p.Exporters, e.exporter())
	}
	return p, &stdout
}

func readJournal(t *testing.T, p Plan) *record.Contents {
	t.Helper()
	c, err := record.ReadJournal(filepath.Join(p.Report.OutputDir, record.JournalName))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b)) }

type summaryDoc struct {
	Results map[string]float64 `json:"results"`
	Run     struct {
		RunID       string `json:"run_id"`
		Interrupted bool   `json:"interrupted"`
	} `json:"run"`
}

func parseSummary(t *testing.T, s []byte) summaryDoc {
	t.Helper()
	var d summaryDoc
	if err := json.Unmarshal(s, &d); err != nil {
		t.Fatalf("summary JSON does not parse: %v\n%s", err, s)
	}
	return d
}

func compactJSON(t *testing.T, b []byte) string {
	t.Helper()
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return out.String()
}

// The whole happy path: both phases journalled, only the measured phase
// counted, the exporter fed everything and then finished with the summary.
func TestExecuteRecordsBothPhasesCountsOnlyMeasure(t *testing.T) {
	t.Parallel()
	warmup := []protocol.Request{chat("w0", nil), chat("w1", nil)}
	measure := []protocol.Request{
		chat("m0", map[string]string{"doc": "0"}), chat("m1", map[string]string{"doc": "1"}),
		chat("m2", map[string]string{"doc": "2"}), chat("m3", map[string]string{"doc": "3"}),
	}
	snd := &fakeSender{outcomes: map[string]answer{
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
	// w1's failure is counted, not fatal, with --allow-warmup-failures
	// (TestWarmupFailureStopsBeforeMeasuring covers the default).
	p.Abort.AllowWarmupFailures = true

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
	j := readJournal(t, p)
	if j.Run.ID != res.RunID || j.Run.Workload != "fake-workload" || string(j.Run.Config) != string(p.Config) ||
		j.Run.Version != p.Version || !slices.Equal(j.Run.TagKeys, []string{"doc"}) {
		t.Errorf("journal header = %+v", j.Run)
	}
	recs := j.Records
	if len(recs) != 6 {
		t.Fatalf("journal has %d records, want 6 (2 warmup + 4 measure)", len(recs))
	}
	wantPhase := map[string]record.Phase{}
	wantTags := map[string]map[string]string{}
	for _, r := range warmup {
		wantPhase[r.ID] = record.Warmup
	}
	for _, r := range measure {
		wantPhase[r.ID], wantTags[r.ID] = record.Measure, r.Tags
	}
	for i, r := range recs {
		if r.Seq != int64(i+1) {
			t.Errorf("record %d (%s) seq = %d, want %d", i, r.RequestID, r.Seq, i+1)
		}
		if r.Phase != wantPhase[r.RequestID] {
			t.Errorf("%s phase = %v, want %v", r.RequestID, r.Phase, wantPhase[r.RequestID])
		}
		if i < 2 && r.Phase != record.Warmup {
			t.Errorf("record %d (%s) is not warmup: warmup must finish before measure starts", i, r.RequestID)
		}
		if r.RunID != res.RunID || r.Workload != "fake-workload" {
			t.Errorf("%s run/workload = %q/%q", r.RequestID, r.RunID, r.Workload)
		}
		if diff := cmp.Diff(wantTags[r.RequestID], r.Tags, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s tags (-want +got):\n%s", r.RequestID, diff)
		}
		// Wall-clock timestamps: submit within the run, and the gaps
		// between them equal the measured durations.
		if s := r.Submit.UnixNano(); s < before.UnixNano() || s > after.UnixNano() {
			t.Errorf("%s submit %d outside the run [%d, %d]", r.RequestID, s, before.UnixNano(), after.UnixNano())
		}
		if got := r.Finish.Sub(r.Submit).Seconds(); !near(got, r.Latency) {
			t.Errorf("%s finish-submit = %vs, latency = %v", r.RequestID, got, r.Latency)
		}
		if r.Scheduled.IsZero() || r.Scheduled.After(r.Submit) || r.ExplicitSchedule {
			t.Errorf("%s scheduled %v (explicit %v), submit %v", r.RequestID, r.Scheduled, r.ExplicitSchedule, r.Submit)
		}
		if !r.Success {
			if !r.FirstToken.IsZero() || r.TTFT != -1 || r.Error == "" {
				t.Errorf("failed %s: first token %v, ttft %v, error %q", r.RequestID, r.FirstToken, r.TTFT, r.Error)
			}
			continue
		}
		ttft := snd.outcomes[r.RequestID].ttft
		if got := r.FirstToken.Sub(r.Submit); got != ttft {
			t.Errorf("%s first token - submit = %v, want the TTFT %v", r.RequestID, got, ttft)
		}
		if !near(r.TTFT, ttft.Seconds()) {
			t.Errorf("%s ttft = %v, want %v", r.RequestID, r.TTFT, ttft.Seconds())
		}
	}

	// Stats: the measured phase only.
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
	if exp.run.ID != res.RunID || !slices.Equal(exp.run.TagKeys, []string{"doc"}) || exp.run.Workload != "fake-workload" ||
		string(exp.run.Config) != string(p.Config) || exp.run.OutputDir != p.Report.OutputDir {
		t.Errorf("Configure run = %+v", exp.run)
	}
	if diff := cmp.Diff(protocol.Values{"path": ""}, exp.opts); diff != "" {
		t.Errorf("Configure options (-want +got):\n%s", diff)
	}
	var exported []record.Record
	for _, r := range exp.records {
		exported = append(exported, *r)
	}
	if diff := cmp.Diff(recs, exported, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("exporter records differ from the journal (-journal +exporter):\n%s", diff)
	}
	if n := len(exp.events); n < 3 || exp.events[0] != "configure" || exp.events[n-1] != "finish" {
		t.Errorf("exporter calls = %v, want configure, write…, finish", exp.events)
	}
	s := exp.summary
	if s.RunID != res.RunID || s.Total != 4 || s.Successful != 3 || s.Failed != 1 || s.Elapsed != f.ElapsedTime || s.Interrupted {
		t.Errorf("summary = %+v, want it to match Final %+v", s, f)
	}
	doc := parseSummary(t, s.JSON)
	for k, want := range map[string]float64{
		"total_requests": float64(f.TotalRequests), "successful_requests": float64(f.SuccessfulRequests),
		"failed_requests": float64(f.FailedRequests), "elapsed_time": f.ElapsedTime, "mean_ttft_ms": f.MeanTTFTMs,
		"total_input_tokens": float64(f.TotalInputTokens), "p99_ttft_ms": f.P99TTFTMs,
	} {
		if got, ok := doc.Results[k]; !ok || got != want {
			t.Errorf("summary JSON results.%s = %v (present %v), want %v", k, got, ok, want)
		}
	}
	if doc.Run.RunID != res.RunID || doc.Run.Interrupted {
		t.Errorf("summary JSON run = %+v", doc.Run)
	}
	wantJSON := report.SummaryJSON(p.Report, report.Run{ID: res.RunID, Version: p.Version, Overhead: res.Overhead,
		Status: record.Completed, Sent: 4, Finished: 4, Engine: res.Engine, Ledger: res.Ledger}, f)
	if diff := cmp.Diff(string(wantJSON), string(s.JSON)); diff != "" {
		t.Errorf("summary JSON (-report.SummaryJSON +got):\n%s", diff)
	}
	// The journal ends with the same summary.
	if js := j.Summary; js == nil || js.RunID != s.RunID || js.Total != s.Total || js.Successful != s.Successful ||
		js.Failed != s.Failed || js.Elapsed != s.Elapsed || js.Interrupted || compactJSON(t, js.JSON) != compactJSON(t, s.JSON) {
		t.Errorf("journal summary = %+v, want the exporter's %+v", js, s)
	}

	// Files: the exporter's, and no bench_summary.json without ExportJSON.
	if diff := cmp.Diff([]string{"/out/fake.csv"}, res.Files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(p.Report.OutputDir, "bench_summary.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("bench_summary.json exists without ExportJSON (stat err %v)", err)
	}
	if !strings.Contains(stdout.String(), "Engine Benchmark Result (fake-workload)") ||
		!strings.Contains(stdout.String(), fmt.Sprintf("Successful requests:%s3", strings.Repeat(" ", report.Width-len("Successful requests:")-1))) {
		t.Errorf("terminal summary:\n%s", stdout)
	}
}

func TestExecuteWritesSummaryJSONOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	for _, exportJSON := range []bool{false, true} {
		t.Run(fmt.Sprint("ExportJSON=", exportJSON), func(t *testing.T) {
			t.Parallel()
			exp := &fakeExporter{}
			p, _ := plan(t, batches(nil, []protocol.Request{chat("a", nil)}), &fakeSender{}, exp)
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
			if diff := cmp.Diff(string(exp.summary.JSON), string(got)); diff != "" {
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

// An exporter that cannot be configured fails the run before anything is
// sent: its field errors name the flags, its other errors come back as
// the target returned them (the plugin adapter names the plugin).
func TestExecuteExporterConfigureErrors(t *testing.T) {
	t.Parallel()
	reset := errors.New("connection reset")
	tests := []struct {
		name      string
		configure func(protocol.Values, record.Run) (protocol.Configured, error)
		want      []string // the error's lines
		wantIs    error
	}{
		{
			name: "field errors name the flag, or the exporter",
			configure: func(protocol.Values, record.Run) (protocol.Configured, error) {
				return protocol.Configured{Errors: []protocol.FieldError{
					{Option: "path", Message: "must not be empty"},
					{Message: "no option: reported with the exporter's name"},
				}}, nil
			},
			want: []string{"--fake-path: must not be empty", "fake: no option: reported with the exporter's name"},
		},
		{
			name: "an error is returned as is",
			configure: func(protocol.Values, record.Run) (protocol.Configured, error) {
				return protocol.Configured{}, fmt.Errorf("exporter plugin fake: Configure failed: %w", reset)
			},
			want: []string{"exporter plugin fake: Configure failed: connection reset"}, wantIs: reset,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			stepped := false
			wl := &fakeWorkload{step: func(protocol.StepRequest) (protocol.StepResponse, error) {
				stepped = true
				return protocol.StepResponse{Next: nextDone}, nil
			}}
			snd := &fakeSender{}
			p, _ := plan(t, wl, snd, &fakeExporter{configure: tt.configure})
			res, err := Execute(context.Background(), p)
			if err == nil {
				t.Fatalf("Execute succeeded (%+v), want a configure error", res)
			}
			if diff := cmp.Diff(tt.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("error lines (-want +got):\n%s", diff)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error %v does not wrap %v", err, tt.wantIs)
			}
			if stepped || len(snd.sent()) > 0 {
				t.Error("the workload was stepped although an exporter could not be configured")
			}
		})
	}
}

// A broken exporter costs its own output only: the journal and the
// summary are complete, and the failure is in Result.Err.
func TestExecuteFailingExporterWriteKeepsJournal(t *testing.T) {
	t.Parallel()
	measure := []protocol.Request{chat("a", nil), chat("b", nil), chat("c", nil)}
	exp := &fakeExporter{writeErr: errors.New("exporter plugin fake: Write failed: disk full")}
	good := &fakeExporter{}
	p, stdout := plan(t, batches([]protocol.Request{chat("w", nil)}, measure), &fakeSender{}, exp, good)
	p.Report.ExportJSON = true
	res, err := Execute(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res.Err, exp.writeErr) {
		t.Errorf("Result.Err = %v, want the exporter's write failure", res.Err)
	}
	if j := readJournal(t, p); len(j.Records) != 4 || j.Summary == nil {
		t.Errorf("journal has %d records, summary %v; want 4 and a summary", len(j.Records), j.Summary)
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
	crashed := make(chan struct{}) // the requests answer only after the crash
	calls := 0
	wl := &fakeWorkload{step: func(r protocol.StepRequest) (protocol.StepResponse, error) {
		if r.Phase == protocol.Warmup {
			return protocol.StepResponse{Next: nextDone}, nil
		}
		calls++
		if calls == 2 {
			close(crashed)
			return protocol.StepResponse{}, errors.New("plugin crashed")
		}
		return protocol.StepResponse{Requests: []protocol.Request{chat("a", nil), chat("b", nil)}, Next: wakeAt(0)}, nil
	}}
	snd := &fakeSender{all: answer{hold: crashed}}
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
	var ids []string
	for _, r := range readJournal(t, p).Records {
		ids = append(ids, r.RequestID)
		if !r.Success {
			t.Errorf("%s failed (%s): the drain should have let it finish", r.RequestID, r.Error)
		}
	}
	slices.Sort(ids)
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
	wl := &fakeWorkload{step: func(r protocol.StepRequest) (protocol.StepResponse, error) {
		if r.Phase == protocol.Warmup || k == 100 {
			return protocol.StepResponse{Next: nextDone}, nil
		}
		k++
		// One request now, the next far in the future: the run can only
		// end early through the cancellation.
		return protocol.StepResponse{Requests: []protocol.Request{chat(fmt.Sprint("r", k), nil)},
			Next: wakeAt(time.Duration(k) * time.Minute)}, nil
	}}
	snd := &fakeSender{outcomes: map[string]answer{"r1": {wait: 20 * time.Millisecond, beforeAnswer: cancel}}}
	exp := &fakeExporter{}
	p, stdout := plan(t, wl, snd, exp)
	p.Report.ExportJSON = true
	res, err := Execute(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.Err != nil {
		t.Fatalf("Interrupted = %v, Err = %v; want interrupted, no error", res.Interrupted, res.Err)
	}
	if k != 1 {
		t.Errorf("workload stepped %d times, want 1", k)
	}
	j := readJournal(t, p)
	if recs := j.Records; len(recs) != 1 || recs[0].RequestID != "r1" || !recs[0].Success {
		t.Errorf("journal = %+v, want r1 (in flight at Ctrl-C) recorded as a success", recs)
	}
	if j.Summary == nil || !j.Summary.Interrupted {
		t.Errorf("journal summary %+v, want one marked interrupted", j.Summary)
	}
	if !exp.summary.Interrupted {
		t.Error("exporter summary not marked interrupted")
	}
	if doc := parseSummary(t, exp.summary.JSON); !doc.Run.Interrupted || doc.Results["total_requests"] != 1 {
		t.Errorf("summary JSON = %+v", doc)
	}
	file, err := os.ReadFile(filepath.Join(p.Report.OutputDir, "bench_summary.json"))
	if err != nil || !strings.Contains(string(file), `"interrupted": true`) {
		t.Errorf("bench_summary.json (err %v):\n%s", err, file)
	}
	if !strings.Contains(stdout.String(), "Engine Benchmark Result (fake-workload, interrupted)") {
		t.Errorf("terminal title does not say interrupted:\n%s", stdout)
	}
}

// What the Plan says of the workload reaches the loop: its name in errors,
// whether it wants response text, and how results travel to it.
func TestExecutePassesWorkloadSettings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		caps      protocol.Capabilities
		wantsText bool
		want      []string
	}{
		{"FinishedInStep and text", protocol.Capabilities{protocol.FinishedInStep}, true,
			[]string{"step []", "step [a:answer to a]"}},
		{"OnFinished, no text", nil, false,
			[]string{"step []", "told [a:]", "step []"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var log []string
			show := func(rs []protocol.Result) string {
				var s []string
				for _, r := range rs {
					s = append(s, r.ID+":"+r.Text)
				}
				return "[" + strings.Join(s, " ") + "]"
			}
			wl := &fakeWorkload{
				step: func(r protocol.StepRequest) (protocol.StepResponse, error) {
					if r.Phase == protocol.Warmup {
						return protocol.StepResponse{Next: nextDone}, nil
					}
					log = append(log, "step "+show(r.Finished))
					if len(log) == 1 {
						return protocol.StepResponse{Requests: []protocol.Request{chat("a", nil)}, Next: waitForFinish}, nil
					}
					return protocol.StepResponse{Next: waitForFinish}, nil // stalls: nothing in flight
				},
				onFinished: func(rs []protocol.Result) error {
					log = append(log, "told "+show(rs))
					return nil
				},
			}
			p, _ := plan(t, wl, &fakeSender{})
			p.Capabilities, p.WantsText = tc.caps, tc.wantsText
			res, err := Execute(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			if !errors.Is(res.Err, runloop.ErrStalled) || !strings.Contains(res.Err.Error(), "workload fake-workload") {
				t.Errorf("Result.Err = %v, want the stall, naming the workload", res.Err)
			}
			if diff := cmp.Diff(tc.want, log); diff != "" {
				t.Errorf("measure phase calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExecuteProgressLines(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer // read only after Execute, which stops the writer first
	sink := watch(progress.Plain(&out))
	snd := &fakeSender{outcomes: map[string]answer{
		// Each phase's requests answer once a snapshot of it was taken.
		"w": {hold: sink.when(func(s progress.Snapshot) bool { return s.Phase == progress.PhaseWarmup }), wait: 30 * time.Second},
		"a": {hold: sink.when(func(s progress.Snapshot) bool { return s.Phase == progress.PhaseMeasure }), wait: 30 * time.Second},
	}}
	p, _ := plan(t, batches([]protocol.Request{chat("w", nil)}, []protocol.Request{chat("a", nil), chat("b", nil), chat("c", nil)}), snd)
	p.Progress, p.ProgressEvery, p.Planned = sink, 2*time.Millisecond, 3
	if _, err := Execute(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
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
		t.Errorf("want warmup and measure progress lines, got:\n%s", out.String())
	}
}

// The Dispatch Lag section appears only when a measured request carried an
// explicit scheduled time.
func TestExecuteDispatchLagSectionNeedsExplicitSchedule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		warmup, measure []protocol.Request
		want            bool
	}{
		{"no schedule", nil, []protocol.Request{chat("a", nil), chat("b", nil)}, false},
		{"scheduled", nil, []protocol.Request{scheduledAt(chat("a", nil), 0), chat("b", nil)}, true},
		{"only warmup scheduled", []protocol.Request{scheduledAt(chat("w", nil), 0)}, []protocol.Request{chat("a", nil)}, false},
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
	wl := &fakeWorkload{step: func(r protocol.StepRequest) (protocol.StepResponse, error) {
		if r.Phase == protocol.Warmup {
			return protocol.StepResponse{Next: nextDone}, nil
		}
		step++
		if step == 1 {
			return protocol.StepResponse{Next: wakeAt(due)}, nil
		}
		// Sent at `due` or later, but claims it was due 10 ms earlier.
		return protocol.StepResponse{Requests: []protocol.Request{scheduledAt(chat("a", nil), due-10*time.Millisecond)}, Next: nextDone}, nil
	}}
	p, _ := plan(t, wl, &fakeSender{})
	res, err := Execute(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	recs := readJournal(t, p).Records
	if len(recs) != 1 {
		t.Fatalf("journal has %d records", len(recs))
	}
	if !recs[0].ExplicitSchedule {
		t.Error("explicit_schedule not set for a request with a schedule")
	}
	lag := recs[0].Submit.Sub(recs[0].Scheduled)
	if lag < 10*time.Millisecond {
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
