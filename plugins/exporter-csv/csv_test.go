package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-plugin"
	"github.com/rs/zerolog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/lmbench/lmbench/sdk/exporter"
	"github.com/lmbench/lmbench/sdk/option"
	"github.com/lmbench/lmbench/sdk/protocol"
	"github.com/lmbench/lmbench/sdk/sdktest"
	"github.com/lmbench/lmbench/sdk/wire"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

const header = "request_id,successful,ttft,request_latency,num_input_tokens,num_output_tokens,decode_speed," +
	"submit_time,first_token_time,finish_time,error,phase,inter_token_latency,scheduled_time,cached_tokens," +
	"tpot,ttft_from_scheduled,e2e_from_scheduled,finish_reason,num_chunks,stated_prompt_tokens,explicit_schedule," +
	"tag_doc,tag_query,extra_tags\r\n"

// sum is a run-time float sum (a constant 0.1 + 0.2 would be exactly 0.3).
func sum(a, b float64) float64 { return a + b }

// at is an epoch time with an exact binary fraction, so its float form is exact.
func at(sec int64, frac float64) time.Time { return time.Unix(sec, int64(frac*1e9)) }

// goldenRecords cover a success, a warmup record, a failure whose error
// needs quoting, a record with extra tags and a missing tag, float edge
// cases, and the derived timings defined and not.
func goldenRecords() []exporter.Record {
	return []exporter.Record{
		{
			Phase: exporter.Measure, RequestID: "doc0_q1", Tags: map[string]string{"doc": "0", "query": "1"},
			Success: true, TTFT: 0.123, Latency: 2.5, DecodeSpeed: 51.2, ITL: 0.0185,
			InputTokens: 10012, OutputTokens: 128, CachedTokens: 9984,
			Scheduled: at(1700000000, 0.25), Submit: at(1700000000, 0.25), FirstToken: at(1700000000, 0.375), Finish: at(1700000002, 0.75),
			Chunks: 128, UsageOutputTokens: 128, ChunkOffsetsUs: []int64{125000, 140000}, FinishReason: "stop", ResponseID: "chatcmpl-1",
			ExplicitSchedule: true, StatedPromptTokens: 10005,
		},
		{
			Phase: exporter.Warmup, RequestID: "warmup_doc0", Tags: map[string]string{"doc": "0"},
			Success: true, TTFT: 0.5, Latency: 0.5, InputTokens: 10012, OutputTokens: 1,
			Submit: at(1699999990, 0), FirstToken: at(1699999990, 0.5), Finish: at(1699999990, 0.5),
		},
		{
			Phase: exporter.Measure, RequestID: "doc1_q0", Tags: map[string]string{"doc": "1", "query": "0", "node": "gpu 1", "lora": "a&b=c"},
			Success: false, Error: `HTTP 500: upstream said "no", retry later`, TTFT: -1, Latency: 0.0625,
			InputTokens: 0, OutputTokens: 0,
			Scheduled: at(1700000001, 0), Submit: at(1700000001, 0.125), Finish: at(1700000001, 0.1875),
			ExplicitSchedule: true, StatedPromptTokens: 9,
		},
		{
			Phase: exporter.Measure, RequestID: "doc2_q0", Tags: map[string]string{"doc": "2"},
			Success: false, Error: "stream ended:\nconnection reset", TTFT: -1, Latency: 1e-05,
			Submit: at(1700000003, 0.5), Finish: at(1700000003, 0.5),
		},
		{
			Phase: exporter.Measure, RequestID: "doc3_q1", Tags: map[string]string{"doc": "3", "query": "1"},
			Success: true, TTFT: sum(0.1, 0.2), Latency: 1e16, DecodeSpeed: 100, ITL: 0.00001,
			InputTokens: 1, OutputTokens: 2, CachedTokens: 0,
			Submit: at(1700000004, 0), FirstToken: at(1700000004, 0.5), Finish: at(1700000005, 0),
			Chunks: 2, FinishReason: "length",
		},
	}
}

func newExporter(t *testing.T, o Options, run exporter.RunMetadata) *csvExporter {
	t.Helper()
	e, err := Definition.New(o, exporter.Env{Run: run, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	return e.(*csvExporter)
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s is not valid CSV: %v", path, err)
	}
	return rows
}

// TestGolden pins the file's bytes. testdata/golden.csv was checked once
// against Python 3.11: csv.DictWriter over the same values (extra_tags via
// urllib.parse.urlencode) writes the identical file. Rewrite it with
// `go test -run TestGolden -update`.
func TestGolden(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := newExporter(t, Definition.Defaults, exporter.RunMetadata{OutputDir: dir, TagKeys: []string{"doc", "query"}})
	recs := goldenRecords()
	ctx := context.Background()
	// Two batches: rows follow the order Write receives them.
	if err := e.Write(ctx, recs[:2]); err != nil {
		t.Fatal(err)
	}
	if err := e.Write(ctx, recs[2:]); err != nil {
		t.Fatal(err)
	}
	files, err := e.Finish(ctx, exporter.Summary{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "bench_results.csv")
	if d := cmp.Diff([]exporter.File{{Path: path, Rows: 4, Description: "per-request results"}}, files); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sdktest.Golden(t, filepath.Join("testdata", "golden.csv"), got, *update)
}

func TestHeaderOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := newExporter(t, Definition.Defaults, exporter.RunMetadata{OutputDir: dir, TagKeys: []string{"doc", "query"}})
	files, err := e.Finish(context.Background(), exporter.Summary{})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Rows != 0 {
		t.Errorf("files = %+v, want one with 0 rows", files)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "bench_results.csv"))
	if string(got) != header {
		t.Errorf("file = %q, want the header only", got)
	}
}

func TestHeaderWrittenAtOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	newExporter(t, Definition.Defaults, exporter.RunMetadata{OutputDir: dir}) // never finished: a killed run
	got, _ := os.ReadFile(filepath.Join(dir, "bench_results.csv"))
	if want := strings.Replace(header, ",tag_doc,tag_query", "", 1); string(got) != want {
		t.Errorf("file = %q, want %q", got, want)
	}
}

func TestWarmupRows(t *testing.T) {
	t.Parallel()
	for _, include := range []bool{false, true} {
		dir := t.TempDir()
		e := newExporter(t, Options{File: "out.csv", IncludeWarmup: include}, exporter.RunMetadata{OutputDir: dir, TagKeys: []string{"doc", "query"}})
		if err := e.Write(context.Background(), goldenRecords()); err != nil {
			t.Fatal(err)
		}
		files, err := e.Finish(context.Background(), exporter.Summary{})
		if err != nil {
			t.Fatal(err)
		}
		var ids, phases []string
		for _, row := range readCSV(t, filepath.Join(dir, "out.csv"))[1:] {
			ids, phases = append(ids, row[0]), append(phases, row[11])
		}
		wantIDs := []string{"doc0_q1", "doc1_q0", "doc2_q0", "doc3_q1"}
		wantPhases := []string{"measure", "measure", "measure", "measure"}
		if include {
			wantIDs = slices.Insert(wantIDs, 1, "warmup_doc0")
			wantPhases = slices.Insert(wantPhases, 1, "warmup")
		}
		if d := cmp.Diff(wantIDs, ids); d != "" {
			t.Errorf("include-warmup %v: ids (-want +got):\n%s", include, d)
		}
		if d := cmp.Diff(wantPhases, phases); d != "" {
			t.Errorf("include-warmup %v: phases (-want +got):\n%s", include, d)
		}
		if files[0].Rows != int64(len(wantIDs)) {
			t.Errorf("include-warmup %v: reported %d rows, want %d", include, files[0].Rows, len(wantIDs))
		}
	}
}

// TestRowsDurableBeforeFinish: a run killed after a Write keeps its rows.
func TestRowsDurableBeforeFinish(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := newExporter(t, Definition.Defaults, exporter.RunMetadata{OutputDir: dir, TagKeys: []string{"doc", "query"}})
	if err := e.Write(context.Background(), goldenRecords()[:3]); err != nil {
		t.Fatal(err)
	}
	rows := readCSV(t, filepath.Join(dir, "bench_results.csv")) // no Finish
	want := [][]string{
		strings.Split(strings.TrimSuffix(header, "\r\n"), ","),
		{"doc0_q1", "True", "0.123", "2.5", "10012", "128", "51.2", "1700000000.25", "1700000000.375", "1700000002.75", "",
			"measure", "0.0185", "1700000000.25", "9984", "0.018716535433070863", "0.125", "2.5", "stop", "128", "10005", "True", "0", "1", ""},
		{"doc1_q0", "False", "-1.0", "0.0625", "0", "0", "0.0", "1700000001.125", "0.0", "1700000001.1875", `HTTP 500: upstream said "no", retry later`,
			"measure", "0.0", "1700000001.0", "0", "", "", "0.1875", "", "0", "9", "True", "1", "0", "lora=a%26b%3Dc&node=gpu+1"},
	}
	if d := cmp.Diff(want, rows); d != "" {
		t.Errorf("rows read back before Finish (-want +got):\n%s", d)
	}
}

func TestFloatFormatting(t *testing.T) {
	t.Parallel()
	// due at 0, sent at 62.5 ms, first token at 312.5 ms, done at 1.3125 s, 11 tokens
	timed := exporter.Record{Success: true, TTFT: 0.25, Latency: 1.25, OutputTokens: 11, Scheduled: at(1700000000, 0),
		Submit: at(1700000000, 0.0625), FirstToken: at(1700000000, 0.3125), Finish: at(1700000001, 0.3125)}
	tests := []struct {
		name string
		rec  exporter.Record
		col  string
		want string
	}{
		{"integral keeps .0", exporter.Record{Latency: 100}, "request_latency", "100.0"},
		{"failed ttft", exporter.Record{TTFT: -1}, "ttft", "-1.0"},
		{"zero", exporter.Record{}, "decode_speed", "0.0"},
		{"shortest round trip", exporter.Record{TTFT: sum(0.1, 0.2)}, "ttft", "0.30000000000000004"},
		{"small uses exponent", exporter.Record{ITL: 1e-5}, "inter_token_latency", "1e-05"},
		{"0.0001 stays fixed", exporter.Record{ITL: 1e-4}, "inter_token_latency", "0.0001"},
		{"large uses exponent", exporter.Record{DecodeSpeed: 1e16}, "decode_speed", "1e+16"},
		{"just below 1e16 stays fixed", exporter.Record{DecodeSpeed: 9999999999999998}, "decode_speed", "9999999999999998.0"},
		{"zero time", exporter.Record{}, "first_token_time", "0.0"},
		{"whole second", exporter.Record{Submit: time.Unix(1700000000, 0)}, "submit_time", "1700000000.0"},
		{"microseconds", exporter.Record{Finish: time.Unix(1700000000, 123456000)}, "finish_time", "1700000000.123456"},
		{"scheduled", exporter.Record{Scheduled: time.Unix(1700000000, 500000000)}, "scheduled_time", "1700000000.5"},
		{"ints are decimal", exporter.Record{CachedTokens: 1234567}, "cached_tokens", "1234567"},
		{"booleans", exporter.Record{Success: true}, "successful", "True"},
		{"tpot", timed, "tpot", "0.1"},
		{"tpot needs two output tokens", recordWith(timed, func(r *exporter.Record) { r.OutputTokens = 1 }), "tpot", ""},
		{"tpot needs a success", recordWith(timed, func(r *exporter.Record) { r.Success = false }), "tpot", ""},
		{"ttft from scheduled", timed, "ttft_from_scheduled", "0.3125"},
		{"ttft from scheduled needs a first token", recordWith(timed, func(r *exporter.Record) { r.FirstToken = time.Time{} }), "ttft_from_scheduled", ""},
		{"e2e from scheduled", timed, "e2e_from_scheduled", "1.3125"},
		{"e2e from scheduled needs a schedule", recordWith(timed, func(r *exporter.Record) { r.Scheduled = time.Time{} }), "e2e_from_scheduled", ""},
		{"finish reason as sent", exporter.Record{FinishReason: "tool_calls"}, "finish_reason", "tool_calls"},
		{"no finish reason", exporter.Record{}, "finish_reason", ""},
		{"chunks are decimal", exporter.Record{Chunks: 16390}, "num_chunks", "16390"},
		{"a stated prompt length", exporter.Record{StatedPromptTokens: 2005}, "stated_prompt_tokens", "2005"},
		{"none stated", exporter.Record{}, "stated_prompt_tokens", ""},
		{"an explicit schedule", exporter.Record{ExplicitSchedule: true}, "explicit_schedule", "True"},
		{"no explicit schedule", exporter.Record{}, "explicit_schedule", "False"},
	}
	e := &csvExporter{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := tc.rec
			rec.Phase = exporter.Measure
			e.fill(&rec)
			i := slices.Index(baseColumns, tc.col)
			if got := e.row[i]; got != tc.want {
				t.Errorf("%s = %q, want %q", tc.col, got, tc.want)
			}
		})
	}
}

func TestQuoting(t *testing.T) {
	t.Parallel()
	// Expected bytes from Python 3.11: csv.writer(buf).writerow([...]).
	var b bytes.Buffer
	w := bufioWriter(&b)
	writeRow(w, []string{" lead", "a\rb", "x\ny", "", "tab\t", `q"`, "semi;", "a,b"})
	w.Flush()
	if want := " lead,\"a\rb\",\"x\ny\",,tab\t,\"q\"\"\",semi;,\"a,b\"\r\n"; b.String() != want {
		t.Errorf("row = %q, want %q", b.String(), want)
	}
}

func TestPaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	abs := filepath.Join(dir, "elsewhere", "x.csv")
	tests := []struct {
		name, file, outDir, want string
	}{
		{"default in output dir, created", "bench_results.csv", filepath.Join(dir, "new", "out"), filepath.Join(dir, "new", "out", "bench_results.csv")},
		{"relative subdir", "csv/r.csv", filepath.Join(dir, "o2"), filepath.Join(dir, "o2", "csv", "r.csv")},
		{"absolute ignores output dir", abs, filepath.Join(dir, "unused"), abs},
	}
	for _, tc := range tests {
		e := newExporter(t, Options{File: tc.file}, exporter.RunMetadata{OutputDir: tc.outDir})
		files, err := e.Finish(context.Background(), exporter.Summary{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if files[0].Path != tc.want {
			t.Errorf("%s: wrote %s, want %s", tc.name, files[0].Path, tc.want)
		}
		if _, err := os.Stat(tc.want); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func TestWriteAfterFinish(t *testing.T) {
	t.Parallel()
	e := newExporter(t, Definition.Defaults, exporter.RunMetadata{OutputDir: t.TempDir()})
	ctx := context.Background()
	if _, err := e.Finish(ctx, exporter.Summary{}); err != nil {
		t.Fatal(err)
	}
	if err := e.Write(ctx, goldenRecords()); err == nil {
		t.Error("Write after Finish succeeded")
	}
}

func TestInvalidOptions(t *testing.T) {
	t.Parallel()
	if d := cmp.Diff([]*option.FieldError{{Option: "file", Message: "must not be empty"}}, option.FieldErrors(Options{File: " "}.Validate())); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// An output directory that cannot be created names the option.
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Definition.New(Definition.Defaults, exporter.Env{Run: exporter.RunMetadata{OutputDir: filepath.Join(blocker, "sub")}, Logger: zerolog.Nop()})
	if fe := option.FieldErrors(err); len(fe) != 1 || fe[0].Option != "file" {
		t.Errorf("err = %v, want a field error on file", err)
	}
}

// TestGRPC runs the exporter through the real protocol (in-process gRPC):
// Describe, Configure, Write, Finish, and the SDK's refusal to Write after
// Finish.
func TestGRPC(t *testing.T) {
	t.Parallel()
	set := plugin.PluginSet{protocol.ExporterKind: &wire.ExporterPlugin{Impl: exporter.NewServer(Definition, zerolog.Nop())}}
	// Closing the client stops the server (go-plugin's Shutdown RPC); calling
	// the server's Stop as well races with that under -race.
	conn, _ := plugin.TestPluginGRPCConn(t, false, set)
	defer conn.Close()
	raw, err := conn.Dispense(protocol.ExporterKind)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := raw.(protocol.ExporterService)
	if !ok {
		t.Fatalf("dispensed %T, want a protocol.ExporterService", raw)
	}
	ctx := context.Background()

	desc, err := c.Describe(ctx, protocol.HostInfo{Version: "test", ProtocolMinor: protocol.Minor})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range desc.Options {
		names = append(names, o.Name)
	}
	if desc.Info.Name != "csv" || desc.Info.Prefix != "csv" || desc.Info.Kind != protocol.ExporterKind || !slices.Equal(names, []string{"file", "include-warmup"}) {
		t.Errorf("describe = %+v", desc)
	}

	bad, err := c.Configure(ctx, protocol.ExporterConfig{Options: protocol.Values{"file": ""}})
	if err != nil || len(bad.Errors) != 1 || bad.Errors[0].Option != "file" {
		t.Errorf("configure with an empty file = %+v, %v; want a field error on file", bad, err)
	}

	dir := filepath.Join(t.TempDir(), "results")
	cr, err := c.Configure(ctx, protocol.ExporterConfig{Run: exporter.RunMetadata{OutputDir: dir, TagKeys: []string{"doc", "query"}}})
	if err != nil || len(cr.Errors) > 0 {
		t.Fatalf("configure: %v %v", cr.Errors, err)
	}
	if d := cmp.Diff(protocol.Values{"file": "bench_results.csv", "include-warmup": false}, cr.Resolved); d != "" {
		t.Errorf("resolved options (-want +got):\n%s", d)
	}
	recs := goldenRecords()
	for _, batch := range [][]exporter.Record{recs[:2], recs[2:]} {
		if err := c.Write(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	files, err := c.Finish(ctx, exporter.Summary{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "bench_results.csv")
	if d := cmp.Diff([]exporter.File{{Path: path, Rows: 4, Description: "per-request results"}}, files); d != "" {
		t.Errorf("finish (-want +got):\n%s", d)
	}
	got, _ := os.ReadFile(path)
	want, _ := os.ReadFile(filepath.Join("testdata", "golden.csv"))
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("CSV over gRPC differs from the golden file (-want +got):\n%s", d)
	}
	err = c.Write(ctx, nil)
	if status.Code(err) != codes.FailedPrecondition || !errors.Is(err, protocol.ErrOutOfOrder) {
		t.Errorf("Write after Finish: %v, want FailedPrecondition (protocol.ErrOutOfOrder)", err)
	}
}

func bufioWriter(b *bytes.Buffer) *bufio.Writer { return bufio.NewWriter(b) }

func recordWith(r exporter.Record, edit func(*exporter.Record)) exporter.Record {
	edit(&r)
	return r
}
