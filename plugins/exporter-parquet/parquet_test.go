package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
	"github.com/rs/zerolog"

	"github.com/lmbench/lmbench/sdk/exporter"
	"github.com/lmbench/lmbench/sdk/sdktest"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// readRow is how a reader with fixed structs sees a file written for the
// tag keys doc and query: the columns are matched by name. (Two reads: the
// parquet-go reader mishandles nulls in an embedded struct.)
type readRow struct {
	Row
	TagRow
}

type TagRow struct {
	TagDoc   *string `parquet:"tag_doc,optional"`
	TagQuery *string `parquet:"tag_query,optional"`
}

// at is an epoch time with nanoseconds.
func at(sec, nsec int64) time.Time { return time.Unix(sec, nsec) }

// sampleRecords cover a success, a warmup record, failures (one with an
// error needing quoting in CSV), extra and missing tags, zero times, a
// successful request without a first token, float edge cases, and chunk
// offsets: several (cut short), none and an empty list.
func sampleRecords() []exporter.Record {
	return []exporter.Record{
		{
			RunID: "run-1", Workload: "long-doc-qa", Phase: exporter.Warmup, Seq: 1, RequestID: "warmup_doc0",
			Tags: map[string]string{"doc": "0"}, Success: true, TTFT: 0.5, Latency: 0.5, InputTokens: 10012, OutputTokens: 1,
			Submit: at(1699999990, 1), FirstToken: at(1699999990, 500000001), Finish: at(1699999990, 500000002),
			Chunks: 1, UsageOutputTokens: 1, ChunkOffsetsUs: []int64{500000}, FinishReason: "length", ResponseID: "chatcmpl-w0", ResponseModel: "m",
		},
		{
			RunID: "run-1", Workload: "long-doc-qa", Phase: exporter.Measure, Seq: 2, RequestID: "doc0_q1",
			Tags: map[string]string{"doc": "0", "query": "1"}, Success: true, TTFT: 0.123, Latency: 2.5, DecodeSpeed: 51.2, ITL: 0.0185,
			InputTokens: 10012, OutputTokens: 128, CachedTokens: 9984,
			Scheduled: at(1700000000, 250000000), Submit: at(1700000000, 250000123), FirstToken: at(1700000000, 373000123), Finish: at(1700000002, 750000999),
			Chunks: 130, UsageOutputTokens: 128, ChunkOffsetsUs: []int64{123000, 140500, 2500000}, ChunkOffsetsTruncated: true,
			FinishReason: "stop", ResponseID: "chatcmpl-1", ResponseModel: "org/m",
			ExplicitSchedule: true, StatedPromptTokens: 10005,
			OutputText: "The code is 4832.", Scores: map[string]float64{"exact": 0, "contains": 1}, TargetTier: "blend",
		},
		{
			RunID: "run-1", Workload: "long-doc-qa", Phase: exporter.Measure, Seq: 3, RequestID: "doc1_q0",
			Tags:    map[string]string{"doc": "1", "query": "0", "node": "gpu 1", "lora": "a&b=c"},
			Success: false, Error: `HTTP 500: upstream said "no", retry later`, TTFT: -1, Latency: 0.0625,
			Scheduled: at(1700000001, 0), Submit: at(1700000001, 125000000), Finish: at(1700000001, 187500000),
			ExplicitSchedule: true,
		},
		{
			RunID: "run-1", Workload: "long-doc-qa", Phase: exporter.Measure, Seq: 4, RequestID: "doc2_q0",
			Tags: map[string]string{"doc": "2"}, Success: false, Error: "stream ended:\nconnection reset", TTFT: -1, Latency: 1e-05,
			Submit: at(1700000003, 500000000), Finish: at(1700000003, 500000000),
		},
		{
			RunID: "run-1", Workload: "long-doc-qa", Phase: exporter.Measure, Seq: 5, RequestID: "doc3_q1",
			Tags: map[string]string{"doc": "3", "query": "1"}, Success: true, TTFT: 0.1 + 0.2, Latency: 1e16, DecodeSpeed: 100, ITL: 0.00001,
			InputTokens: 1, OutputTokens: 2, Submit: at(1700000004, 0), FirstToken: at(1700000004, 5e8), Finish: at(1700000005, 0),
			Chunks: 2, ChunkOffsetsUs: []int64{}, // no usage, no finish reason, an empty offset list: nulls
		},
		{
			RunID: "run-1", Workload: "long-doc-qa", Phase: exporter.Measure, Seq: 6, RequestID: "doc4_q0",
			Success: true, TTFT: -1, Latency: 0.25, Submit: at(1700000006, 0), Finish: at(1700000006, 25e7),
		},
	}
}

var sampleRun = exporter.RunMetadata{
	RunID: "run-1", Workload: "long-doc-qa", Model: "m", LMBenchVersion: "9.9.9", TagKeys: []string{"doc", "query"},
	ConfigJSON: `{"model":"m","workload":"long-doc-qa"}`, Started: time.Unix(1699999989, 5),
}

func openParquet(t *testing.T, path string) *parquet.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatalf("%s is not a readable Parquet file: %v", path, err)
	}
	return pf
}

func readRows(t *testing.T, pf *parquet.File) []readRow {
	t.Helper()
	rows := readAll[Row](t, pf)
	tags := readAll[TagRow](t, pf)
	out := make([]readRow, len(rows))
	for i := range rows {
		out[i] = readRow{rows[i], tags[i]}
	}
	return out
}

func readAll[T any](t *testing.T, pf *parquet.File) []T {
	t.Helper()
	r := parquet.NewGenericReader[T](pf)
	defer r.Close()
	out := make([]T, pf.NumRows())
	n, err := r.Read(out)
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	return out[:n]
}

// TestSchemaGolden pins the columns, their types, nullability and the
// timestamp unit, as a reader sees them in a written file. Rewrite with
// `go test -run TestSchemaGolden -update` only together with a schema
// version bump and docs/results-schema.md.
func TestSchemaGolden(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := sampleRun
	run.OutputDir = dir
	if _, err := sdktest.RunExporter(t, Definition, nil, run, nil, exporter.Summary{JSON: "{}"}); err != nil {
		t.Fatal(err)
	}
	pf := openParquet(t, filepath.Join(dir, "bench_results.parquet"))
	got := fmt.Sprintf("# results schema version %d, tag keys %q\n%s\n", SchemaVersion, run.TagKeys, pf.Schema())
	sdktest.Golden(t, filepath.Join("testdata", "schema.golden"), []byte(got), *update)
	if d := cmp.Diff(Schema(run.TagKeys).String(), pf.Schema().String()); d != "" {
		t.Errorf("Schema() differs from the written file's schema (-Schema +file):\n%s", d)
	}
}

// TestRoundTrip writes in several batches into row groups of two rows and
// reads every value back.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := sampleRun
	run.OutputDir = dir
	recs := sampleRecords()
	summary := exporter.Summary{RunID: "run-1", JSON: `{"total_requests":5}`, Total: 5, Successful: 3, Failed: 2, Interrupted: true}
	files, err := sdktest.RunExporter(t, Definition, map[string]any{"row-group-size": 2},
		run, [][]exporter.Record{recs[:3], recs[3:4], recs[4:]}, summary)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "bench_results.parquet")
	if d := cmp.Diff([]exporter.File{{Path: path, Rows: 6, Description: "per-request results (Parquet)"}}, files); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	pf := openParquet(t, path)
	if n := len(pf.RowGroups()); n != 3 {
		t.Errorf("%d row groups, want 3 (6 rows, 2 per group)", n)
	}
	for _, rg := range pf.Metadata().RowGroups {
		for _, c := range rg.Columns {
			if c.MetaData.Codec != format.Zstd {
				t.Errorf("column %v: codec %v, want ZSTD", c.MetaData.PathInSchema, c.MetaData.Codec)
			}
		}
	}
	got := readRows(t, pf)
	if len(got) != len(recs) {
		t.Fatalf("read %d rows, wrote %d", len(got), len(recs))
	}
	// The schema-2 columns of each row, as a reader must see them.
	type v2 struct {
		Chunks                                  int64
		UsageOutputTokens                       *int64
		ChunkOffsetsUs                          []int64
		Truncated                               bool
		FinishReason, ResponseID, Model         *string
		TPOTMs, TTFTFromSchedMs, E2EFromSchedMs *float64
	}
	wantV2 := []v2{
		{1, new(int64(1)), []int64{500000}, false, new("length"), new("chatcmpl-w0"), new("m"), nil, nil, nil}, // one token, no schedule
		{130, new(int64(128)), []int64{123000, 140500, 2500000}, true, new("stop"), new("chatcmpl-1"), new("org/m"),
			new(18.716535433070863), new(123.000123), new(2500.000999)},
		{0, nil, nil, false, nil, nil, nil, nil, nil, new(187.5)}, // failed: only from scheduled to the end
		{0, nil, nil, false, nil, nil, nil, nil, nil, nil},        // failed, no schedule
		{2, nil, nil, false, nil, nil, nil, new(1e19), nil, nil},  // (1e16 s - 0.3 s) / 1 token
		{0, nil, nil, false, nil, nil, nil, nil, nil, nil},        // success without a first token
	}
	for i, r := range recs {
		g := got[i]
		gotV2 := v2{g.Chunks, g.UsageOutputTokens, g.ChunkOffsetsUs, g.ChunkOffsetsTruncated, g.FinishReason, g.ResponseID,
			g.ResponseModel, g.TPOTMs, g.TTFTFromScheduledMs, g.E2EFromScheduledMs}
		if d := cmp.Diff(wantV2[i], gotV2, cmpopts.EquateApprox(0, 1e-9)); d != "" {
			t.Errorf("row %d (%s) schema-2 columns (-want +got):\n%s", i, r.RequestID, d)
		}
		g.Row.Chunks, g.UsageOutputTokens, g.ChunkOffsetsUs, g.ChunkOffsetsTruncated = 0, nil, nil, false
		g.FinishReason, g.ResponseID, g.ResponseModel, g.TPOTMs, g.TTFTFromScheduledMs, g.E2EFromScheduledMs = nil, nil, nil, nil, nil, nil
		want := readRow{Row: Row{
			RunID: r.RunID, Workload: r.Workload, Phase: r.Phase.String(), Seq: r.Seq, RequestID: r.RequestID,
			Success: r.Success, LatencyMs: r.Latency * 1000, ITLMs: r.ITL * 1000, DecodeSpeed: r.DecodeSpeed,
			InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, CachedTokens: r.CachedTokens,
			ExplicitSchedule: r.ExplicitSchedule, Tags: r.Tags, Scores: r.Scores,
		}}
		if r.OutputText != "" { // null when the run kept no outputs
			want.OutputText = &r.OutputText
		}
		if r.TargetTier != "" {
			want.TargetTier = &r.TargetTier
		}
		if want.Scores == nil { // a map column reads back empty, not null
			want.Scores = map[string]float64{}
		}
		if r.StatedPromptTokens > 0 { // null when none was stated
			want.StatedPromptTokens = &r.StatedPromptTokens
		}
		if !r.Success {
			want.Error = &r.Error
		}
		if r.TTFT >= 0 && !r.FirstToken.IsZero() {
			v := r.TTFT * 1000
			want.TTFTMs = &v
		}
		for _, p := range []struct {
			dst **time.Time
			t   time.Time
		}{{&want.ScheduledTime, r.Scheduled}, {&want.SubmitTime, r.Submit}, {&want.FirstTokenTime, r.FirstToken}, {&want.FinishTime, r.Finish}} {
			if !p.t.IsZero() {
				u := p.t.UTC()
				*p.dst = &u
			}
		}
		if v, ok := r.Tags["doc"]; ok {
			want.TagRow.TagDoc = &v
		}
		if v, ok := r.Tags["query"]; ok {
			want.TagRow.TagQuery = &v
		}
		if want.Tags == nil {
			want.Tags = map[string]string{}
		}
		if g.Tags == nil {
			g.Tags = map[string]string{}
		}
		if d := cmp.Diff(want, g); d != "" {
			t.Errorf("row %d (%s) (-want +got):\n%s", i, r.RequestID, d)
		}
	}
	// Nanosecond timestamps survive exactly.
	if got[1].SubmitTime.UnixNano() != recs[1].Submit.UnixNano() {
		t.Errorf("submit_time %d ns, want %d", got[1].SubmitTime.UnixNano(), recs[1].Submit.UnixNano())
	}

	wantMeta := map[string]string{
		metaSchemaVersion: strconv.Itoa(SchemaVersion),
		metaRunID:         "run-1",
		metaVersion:       "9.9.9",
		metaWorkload:      "long-doc-qa",
		metaModel:         "m",
		metaStarted:       "2023-11-14T22:13:09.000000005Z",
		metaTagKeys:       `["doc","query"]`,
		metaConfig:        run.ConfigJSON,
		metaSummary:       summary.JSON,
		metaInterrupted:   "true",
	}
	for k, want := range wantMeta {
		if got, ok := pf.Lookup(k); !ok || got != want {
			t.Errorf("metadata %s = %q (present %v), want %q", k, got, ok, want)
		}
	}
	if cb := pf.Metadata().CreatedBy; cb != "lmbench version 9.9.9(build )" {
		t.Errorf("created_by %q", cb)
	}
}

// TestTemporaryNameUntilFinish: while the run goes, the target name does
// not exist (a reader can never open a file without its footer); Finish
// renames the complete file into place and leaves nothing else behind.
func TestTemporaryNameUntilFinish(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := sampleRun
	run.OutputDir = dir
	e, err := Definition.New(Options{File: "sub/out.parquet", Compression: "snappy", RowGroupSize: 1}, exporter.Env{Run: run, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := e.Write(ctx, sampleRecords()); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "sub", "out.parquet")
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s exists before Finish (err %v)", target, err)
	}
	partial, _ := filepath.Glob(filepath.Join(dir, "sub", "out.parquet.*.partial"))
	if len(partial) != 1 {
		t.Fatalf("partial files %v, want one", partial)
	}
	if _, err := e.Finish(ctx, exporter.Summary{}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "sub"))
	if len(entries) != 1 || entries[0].Name() != "out.parquet" {
		t.Errorf("directory holds %v, want only out.parquet", entries)
	}
	pf := openParquet(t, target)
	if pf.NumRows() != 6 || len(pf.RowGroups()) != 6 {
		t.Errorf("%d rows in %d row groups, want 6 in 6", pf.NumRows(), len(pf.RowGroups()))
	}
	if c := pf.Metadata().RowGroups[0].Columns[0].MetaData.Codec; c != format.Snappy {
		t.Errorf("codec %v, want SNAPPY", c)
	}
}

// A failed Finish (here: the target became a directory) reports the error,
// removes the temporary file and leaves the target alone.
func TestFinishFailureCleansUp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := sampleRun
	run.OutputDir = dir
	e, err := Definition.New(Definition.Defaults, exporter.Env{Run: run, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "bench_results.parquet")
	if err := os.MkdirAll(filepath.Join(target, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Finish(context.Background(), exporter.Summary{}); err == nil {
		t.Fatal("Finish succeeded although the target is a non-empty directory")
	}
	partial, _ := filepath.Glob(filepath.Join(dir, "*.partial"))
	if len(partial) != 0 {
		t.Errorf("temporary files left: %v", partial)
	}
	if _, err := e.Finish(context.Background(), exporter.Summary{}); err == nil {
		t.Error("a second Finish succeeded")
	}
}

func TestOptionErrors(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		opts map[string]any
		want string
	}{
		"compression":    {map[string]any{"compression": "brotli"}, "compression"},
		"row group size": {map[string]any{"row-group-size": 0}, "row-group-size"},
		"empty file":     {map[string]any{"file": " "}, "file"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := sdktest.RunExporter(t, Definition, tc.opts, sampleRun, nil, exporter.Summary{})
			var ce *sdktest.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("got %v, want a configuration error", err)
			}
			if fields := ce.Fields(); len(fields) != 1 || fields[0].Option != tc.want {
				t.Errorf("error fields %v (%v), want [%s]", fields, err, tc.want)
			}
		})
	}
	// A directory in the file's place is named in the error.
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "bench_results.parquet"), 0o755)
	run := sampleRun
	run.OutputDir = dir
	_, err := sdktest.RunExporter(t, Definition, nil, run, nil, exporter.Summary{})
	var ce *sdktest.ConfigError
	if !errors.As(err, &ce) || len(ce.Fields()) != 1 || ce.Fields()[0].Option != "file" {
		t.Errorf("got %v, want an error on file", err)
	}
}

// TestTagColumnNames: any tag key makes a valid, distinct column.
func TestTagColumnNames(t *testing.T) {
	t.Parallel()
	got := tagColumns([]string{"doc", "a-b", "a_b", "doc", "x y", "ünï"})
	want := []tagColumn{{"doc", "tag_doc"}, {"a-b", "tag_a_b"}, {"a_b", "tag_a_b_2"}, {"x y", "tag_x_y"}, {"ünï", "tag__n_"}}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(tagColumn{})); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	dir := t.TempDir()
	run := sampleRun
	run.OutputDir, run.TagKeys = dir, []string{"a-b", "a_b"}
	rec := exporter.Record{RequestID: "r", Success: true, Tags: map[string]string{"a-b": "1", "a_b": "2"}}
	if _, err := sdktest.RunExporter(t, Definition, nil, run, [][]exporter.Record{{rec}}, exporter.Summary{}); err != nil {
		t.Fatal(err)
	}
	type row struct {
		A *string `parquet:"tag_a_b,optional"`
		B *string `parquet:"tag_a_b_2,optional"`
	}
	rows, err := parquet.ReadFile[row](filepath.Join(dir, "bench_results.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].A == nil || *rows[0].A != "1" || rows[0].B == nil || *rows[0].B != "2" {
		t.Errorf("tag columns read back as %+v", rows)
	}
}

// syntheticRecord is the i-th record of a long run.
func syntheticRecord(i int) exporter.Record {
	t0 := time.Unix(1700000000, 0).Add(time.Duration(i) * time.Millisecond)
	return exporter.Record{
		RunID: "20261129T000000Z-deadbeef", Workload: "long-doc-qa", Phase: exporter.Measure, Seq: int64(i),
		RequestID: "doc" + strconv.Itoa(i%500) + "_q" + strconv.Itoa(i/500),
		Tags:      map[string]string{"doc": strconv.Itoa(i % 500), "query": strconv.Itoa(i / 500)},
		Success:   i%97 != 0, TTFT: 0.05 + float64(i%1000)/1e4, Latency: 1.5 + float64(i%777)/1e3,
		DecodeSpeed: 40 + float64(i%13), ITL: 0.02, InputTokens: 10000 + int64(i%64), OutputTokens: 128, CachedTokens: 9984,
		Scheduled: t0, Submit: t0.Add(time.Microsecond), FirstToken: t0.Add(50 * time.Millisecond), Finish: t0.Add(1500 * time.Millisecond),
		Chunks: 128, UsageOutputTokens: 128, ChunkOffsetsUs: syntheticOffsets, FinishReason: "length",
		ResponseID: "chatcmpl-" + strconv.Itoa(i), ResponseModel: "org/m-7b",
	}
}

// syntheticOffsets are a 128-chunk answer's offsets, 11.4 ms apart after
// a 50 ms TTFT.
var syntheticOffsets = func() []int64 {
	out := make([]int64, 128)
	for i := range out {
		out[i] = 50_000 + int64(i)*11_400
	}
	return out
}()

// BenchmarkExport100k exports 100,000 synthetic records in batches of
// 1024 (as the host's fan-out sends them) with the default options and
// reports the exporter's peak live heap (sampled after a forced GC every
// 8 batches). The 10k and 400k variants show that it depends on the row
// group size, not on the run's length.
func BenchmarkExport100k(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 400_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) { benchmarkExport(b, n) })
	}
}

func benchmarkExport(b *testing.B, n int) {
	const batch = 1024
	recs := make([]exporter.Record, batch)
	run := sampleRun
	run.OutputDir = b.TempDir()
	ctx := context.Background()
	var peak uint64
	var ms runtime.MemStats
	live := func() uint64 {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	for b.Loop() {
		base := live()
		e, err := Definition.New(Definition.Defaults, exporter.Env{Run: run, Logger: zerolog.Nop()})
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < n; i += batch {
			m := min(batch, n-i)
			for j := range m {
				recs[j] = syntheticRecord(i + j)
			}
			if err := e.Write(ctx, recs[:m]); err != nil {
				b.Fatal(err)
			}
			if (i/batch)%8 == 7 {
				v := live()
				peak = max(peak, v-min(base, v))
			}
		}
		if _, err := e.Finish(ctx, exporter.Summary{JSON: "{}"}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-live-heap-MiB")
}

// TestTagMapEntriesInKeyOrder: the tags map is written in key order, so
// identical tag sets are identical maps (DuckDB groups by them) and
// exporting the same records twice gives the same bytes.
func TestTagMapEntriesInKeyOrder(t *testing.T) {
	t.Parallel()
	keys := []string{"session", "round", "pass", "prefix", "doc", "query", "order"}
	var recs []exporter.Record
	for i := range 40 {
		tags := map[string]string{}
		for j, k := range keys {
			tags[k] = strconv.Itoa(i*10 + j)
		}
		recs = append(recs, exporter.Record{RequestID: "r" + strconv.Itoa(i), Seq: int64(i + 1), Success: true, Tags: tags})
	}
	var files [2][]byte
	for n := range files {
		dir := t.TempDir()
		run := sampleRun
		run.OutputDir, run.TagKeys = dir, keys
		if _, err := sdktest.RunExporter(t, Definition, nil, run, [][]exporter.Record{recs}, exporter.Summary{JSON: "{}"}); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "bench_results.parquet")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files[n] = b
		pf := openParquet(t, path)
		key, ok := pf.Schema().Lookup("tags", "key_value", "key")
		if !ok {
			t.Fatal("no tags.key_value.key column")
		}
		r := parquet.NewReader(pf)
		rows := make([]parquet.Row, len(recs))
		if m, err := r.ReadRows(rows); m != len(recs) || (err != nil && !errors.Is(err, io.EOF)) {
			t.Fatalf("read %d rows: %v", m, err)
		}
		r.Close()
		for i, row := range rows {
			var got []string
			for _, v := range row {
				if v.Column() == key.ColumnIndex {
					got = append(got, v.String())
				}
			}
			if !slices.IsSorted(got) || len(got) != len(keys) {
				t.Fatalf("row %d: tags map keys in file order %v, want the %d keys sorted", i, got, len(keys))
			}
		}
		m := readAll[Row](t, pf)
		for i := range m {
			if d := cmp.Diff(recs[i].Tags, m[i].Tags); d != "" {
				t.Fatalf("row %d tags (-want +got):\n%s", i, d)
			}
		}
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("two exports of the same records differ")
	}
}

// TestLongAnswersEndRowGroupsEarly: a row group ends once it holds
// maxGroupOffsets chunk offsets, whatever the row group size, so long
// answers cannot make the exporter buffer more; every offset survives.
func TestLongAnswersEndRowGroupsEarly(t *testing.T) {
	t.Parallel()
	long := make([]int64, 16384)
	for i := range long {
		long[i] = 40_000 + int64(i)*10_000
	}
	const n = 200
	perGroup := maxGroupOffsets / len(long) // 128
	recs := make([]exporter.Record, n)
	for i := range recs {
		recs[i] = exporter.Record{RequestID: "r" + strconv.Itoa(i), Seq: int64(i + 1), Success: true,
			Chunks: int64(len(long)), ChunkOffsetsUs: long}
	}
	recs[n-1].ChunkOffsetsUs = long[:3]
	dir := t.TempDir()
	run := sampleRun
	run.OutputDir = dir
	if _, err := sdktest.RunExporter(t, Definition, nil, run, [][]exporter.Record{recs[:50], recs[50:]}, exporter.Summary{JSON: "{}"}); err != nil {
		t.Fatal(err)
	}
	pf := openParquet(t, filepath.Join(dir, "bench_results.parquet"))
	var sizes []int64
	for _, rg := range pf.RowGroups() {
		sizes = append(sizes, rg.NumRows())
	}
	if d := cmp.Diff([]int64{int64(perGroup), int64(n - perGroup)}, sizes); d != "" {
		t.Errorf("rows per row group (-want +got):\n%s", d)
	}
	rows := readAll[Row](t, pf)
	if len(rows) != n || !slices.Equal(rows[0].ChunkOffsetsUs, long) || !slices.Equal(rows[n-1].ChunkOffsetsUs, long[:3]) {
		t.Errorf("%d rows; offsets of the first %d, of the last %v", len(rows), len(rows[0].ChunkOffsetsUs), rows[n-1].ChunkOffsetsUs)
	}
}
